/* mkdir -p, one for every program: the directories a command writes in,
 * made on a fresh host (or a fresh --root) with the modes SECURITY.md
 * gives them.  Parents that are missing are made 0755 (listable, as
 * Debian's /var/lib and /etc are); the last one with the mode its
 * contents need. */
#ifndef LODGE_MKDIRS_H
#define LODGE_MKDIRS_H

#include <stddef.h>
#include <sys/types.h>

/* The modes of Lodge's own directories, defined once. */
#define DIR_MODE_PUBLIC 0755     /* /etc/lodge, images, templates, domains */
#define DIR_MODE_LOG 0750        /* /var/log/lodge: root and adm's */
#define DIR_MODE_PRIVATE 0700    /* crash evidence, saved guests' memory */

/* path and its missing parents: 0 or -errno; on failure the level that
 * failed into failed[len] when failed is not NULL (a message's "at").
 * An existing directory keeps its mode. */
int mkdirs(const char *path, mode_t last_mode, char *failed, size_t len);

#endif
