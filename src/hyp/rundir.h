/* A domain's runtime directory, RUNDIR/NAME (src/common/runtime.h), as
 * lodge-hyp makes it (rundir.c). */
#ifndef LODGE_RUNDIR_H
#define LODGE_RUNDIR_H

#include <stddef.h>

struct ctl_access;

/* Make RUNDIR if need be and RUNDIR/NAME (into dir) listening on its
 * control socket: mode 0700, or where a group is granted access, 0711
 * with the socket 0666 (the check is on each connection, ctl-access.c).
 *
 * The directory never shows without its socket: the library takes such a
 * directory for a dead domain's and removes it.  So it is made as
 * RUNDIR/.NAME, a name no domain can have, its socket bound there, and
 * renamed into place whole.  A directory a dead lodge-hyp left at
 * RUNDIR/NAME (its socket refuses, or it has none) is kept and gets the
 * new socket in one rename; one whose socket answers is a live domain's:
 * -EEXIST.  Starts are serialized by a lock on RUNDIR, so RUNDIR/.NAME
 * found there is a start's that was killed, and is removed.
 * Returns the listening fd, or -errno with one message logged. */
int rundir_create(const char *rundir, const char *name, const struct ctl_access *access,
		  char *dir, size_t dirlen);
/* Remove RUNDIR/NAME the same way: renamed out of sight (to RUNDIR/.NAME,
 * under the same lock), then emptied and removed.  0 or -errno (-ENOENT:
 * it was not there), nothing logged.  With keep_lock, the lock on RUNDIR
 * is not let go: *keep_lock is its fd (-1 if none was taken) for the
 * caller to close once what must finish before the next start of a
 * domain is done. */
int rundir_remove(const char *rundir, const char *name, int *keep_lock);

#endif
