/* A running domain's runtime directory, RUNDIR/NAME/: made and removed by
 * its lodge-hyp, read by the library (lodge, the dashboard), and cleaned
 * by the library after a lodge-hyp that died.  The one list of what is in
 * it, so that whoever removes it removes all of it. */
#ifndef LODGE_RUNTIME_H
#define LODGE_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>

enum runtime_file {
	RT_CONTROL,          /* the control socket (proto.h) */
	RT_CONFIG,           /* the domain's resolved config, written by the library */
	RT_CONSOLE_LOG,      /* the guest's console output, size-capped */
	RT_CONSOLE_LOG_OLD,  /* ... and the part that rotated out of it */
	RT_HYP_LOG,          /* lodge-hyp's own messages once the domain runs */
	RT_CGROUP,           /* the path of the domain's CPU cgroup, for cleaning */
	RT_BOOT_KERNEL,      /* bootloader = "lodge": this boot's kernel, read from its disk */
	RT_BOOT_INITRD,      /* ... and its initrd */
	RT_NFILES
};

/* The file's name inside the directory ("control", "config", ...). */
const char *runtime_file_name(enum runtime_file f);
/* RUNDIR/NAME into out: 0, or -ENAMETOOLONG. */
int runtime_dir_path(char *out, size_t len, const char *rundir, const char *name);
/* RUNDIR/.NAME into out: where lodge-hyp makes NAME's directory before
 * renaming it into place whole, so that no reader ever finds RUNDIR/NAME
 * without its control socket.  No domain's name starts with '.', and
 * whoever lists RUNDIR skips such names.  0, or -ENAMETOOLONG. */
int runtime_dir_temp_path(char *out, size_t len, const char *rundir, const char *name);
/* DIR/FILE (DIR a domain's runtime directory) into out: 0, or -ENAMETOOLONG. */
int runtime_file_path(char *out, size_t len, const char *dir, enum runtime_file f);
/* RUNDIR/NAME/FILE into out: 0, or -ENAMETOOLONG. */
int runtime_path(char *out, size_t len, const char *rundir, const char *name, enum runtime_file f);
/* Remove every file of the list from DIR, then DIR: 0, or -errno of the rmdir. */
int runtime_dir_remove(const char *dir);
/* A control socket at path that answers, or whose backlog is full: a live
 * domain's.  One that refuses, or none, is a dead one's. */
bool runtime_socket_live(const char *path);
/* RUNDIR locked (flock) against lodge-hyp's starts and ends and the
 * library's removal of a dead domain's leftovers, so that neither finds the
 * other half done: the fd to close to unlock, or -errno. */
int runtime_lock(const char *rundir);

#endif
