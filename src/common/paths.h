/* Paths built and made: one way for every part (lodge-hyp, the library,
 * the faces) to say a path did not fit and to make a directory with its
 * missing parents. */
#ifndef LODGE_PATHS_H
#define LODGE_PATHS_H

#include <stddef.h>
#include <sys/types.h>

/* snprintf into out that says when the path did not fit: 0, or
 * -ENAMETOOLONG (out then holds a cut path no one should use). */
int path_printf(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* mkdir -p: the missing parents of PATH 0755, PATH itself MODE (an
 * existing one is left as it is).  0, or -errno of the mkdir that failed;
 * make_dirs_at also names that directory in failed (when not NULL), so
 * the message says which of the parents could not be made. */
int make_dirs(const char *path, mode_t mode);
int make_dirs_at(const char *path, mode_t mode, char *failed, size_t len);

#endif
