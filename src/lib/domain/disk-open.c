/* A host disk opened once, as the caller may (lodge.h).
 *
 * Why once: a check of a path and an open of the same path are two
 * lookups, and whoever may write a directory on the way (a storage
 * directory a web user's files live in) can put a symlink to a root-only
 * file between them.  So the name is looked up one time only, with
 * O_PATH (no driver's open runs, nothing is read: a FIFO, /dev/watchdog
 * or a tape is not touched), what that descriptor IS (its type, its real
 * path from /proc/self/fd) is checked, and the disk is opened again
 * through that descriptor's own /proc/self/fd link, which names the
 * inode already found, never the path.  The descriptor that results is
 * what lodge-hyp gets and locks. */
#include "incoming.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* fd's path as the kernel holds it, st its inode: 0; -EAGAIN if that
 * name no longer leads to it (renamed over or unlinked since: the kernel
 * says "PATH (deleted)"), which the runtime config could not keep; or
 * -errno.  The name is only recorded, never opened. */
static int fd_real_path(int fd, const struct stat *st, char real[PATH_MAX])
{
	struct stat now;
	char self[64];
	ssize_t n;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if ((n = readlink(self, real, PATH_MAX - 1)) < 0)
		return -errno;
	real[n] = '\0';
	if (real[0] != '/')
		return -ENOENT;                 /* not a file of a file system */
	if (stat(real, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino)
		return -EAGAIN;
	return 0;
}

int lodge_disk_open(const struct lodge *lg, const char *path, bool readonly, bool lent_only, char real[PATH_MAX],
		    struct lodge_err *err)
{
	int flags = (readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, pfd, fd, rc;
	struct stat ps, st;
	char self[64];

	if ((pfd = open(path, O_PATH | O_CLOEXEC)) < 0)
		return lodge_fail(err, -errno, "cannot open disk %s: %s", path, strerror(errno));
	rc = fstat(pfd, &ps) < 0 ? -errno : fd_real_path(pfd, &ps, real);
	if (rc) {
		close(pfd);
		return rc == -EAGAIN ? lodge_fail(err, rc, "disk %s changed while it was opened (renamed over or "
						  "removed): try again", path)
			: lodge_fail(err, rc, "disk %s: %s", path, strerror(-rc));
	}
	if (!S_ISREG(ps.st_mode) && !S_ISBLK(ps.st_mode)) {
		close(pfd);
		return lodge_fail(err, -EINVAL, "disk %s is neither a regular file nor a block device", path);
	}
	if (lent_only && !incoming_lends(path, real, ps.st_mode, &lg->hc)) {
		close(pfd);
		return lodge_fail(err, -EACCES, "disk %s is not this host's to give: it is neither a file under "
				  "storage_dirs nor a block device matching storage_devices in lodge.conf%s%s%s", path,
				  strcmp(path, real) ? " (it is " : "", strcmp(path, real) ? real : "",
				  strcmp(path, real) ? ")" : "");
	}
	/* The inode found, opened with the rights asked: the caller's own
	 * (the kernel checks them again on this open). */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, flags);
	rc = -errno;
	close(pfd);
	if (fd < 0)
		return lodge_fail(err, rc, "cannot open disk %s: %s", path, strerror(-rc));
	if (fstat(fd, &st) < 0 || st.st_dev != ps.st_dev || st.st_ino != ps.st_ino) {
		close(fd);
		return lodge_fail(err, -EAGAIN, "disk %s changed while it was opened: try again", path);
	}
	return fd;
}
