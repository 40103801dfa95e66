#include "disk.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Loops of loops, partitions of loops: deeper than this is not followed. */
#define NAME_DEPTH_MAX 4

/* The disks this process has open: two of them may be one (a domain given
 * a file and a loop device over it), which the message should say. */
static struct disk *open_disks[32];

int disk_parse(const char *spec, struct disk *d, char *err, size_t errlen)
{
	char buf[4200], *opt, *save = NULL;
	const char *slash;

	memset(d, 0, sizeof(*d));
	d->fd = d->fd_buffered = -1;
	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "disk spec too long");
		return -EINVAL;
	}
	strcpy(buf, spec);
	opt = strtok_r(buf, ",", &save);
	if (!opt || !*opt) {
		snprintf(err, errlen, "disk '%s': no path", spec);
		return -EINVAL;
	}
	snprintf(d->path, sizeof(d->path), "%s", opt);
	while ((opt = strtok_r(NULL, ",", &save))) {
		if (strcmp(opt, "ro") == 0)
			d->readonly = true;
		else if (strcmp(opt, "rw") == 0)
			d->readonly = false;
		else if (strcmp(opt, "direct") == 0 || strcmp(opt, "cache=none") == 0)
			d->direct = true;
		else if (strncmp(opt, "id=", 3) == 0 && strlen(opt + 3) <= DISK_ID_MAX)
			snprintf(d->id, sizeof(d->id), "%s", opt + 3);
		else {
			snprintf(err, errlen, "disk '%s': unknown option '%s' (ro, id=NAME up to %d bytes, direct)",
				 spec, opt, DISK_ID_MAX);
			return -EINVAL;
		}
	}
	if (!d->id[0]) {
		slash = strrchr(d->path, '/');
		snprintf(d->id, sizeof(d->id), "%.20s", slash ? slash + 1 : d->path);
	}
	return 0;
}

/* ---- the names of a disk's blocks ------------------------------------------
 * Locks are flock()s, one per name the blocks go by:
 *   - the opened file or device node itself;
 *   - a block device: the kernel's node for it, /dev/DEVNAME (as in
 *     /sys/dev/block/MAJ:MIN/uevent), so that another node of the same
 *     device (a udev symlink, a mknod elsewhere) is the same lock;
 *   - a loop device: its backing file (/sys/dev/block/MAJ:MIN/loop/
 *     backing_file, checked against LOOP_GET_STATUS64's device and inode),
 *     and that one's names if it is a device itself;
 *   - a partition: its whole disk and that one's names, shared whatever
 *     the mode: the whole disk cannot be written elsewhere while sibling
 *     partitions serve other domains.  A loop over a slice of its backing
 *     file (an offset or size limit) holds the file the same way.
 * A writable disk locks its own names exclusively, a read-only one shared. */

/* Add a name held open on fd (taken over); a second name of the same file
 * is dropped, the stronger lock kept. */
static void name_add(struct disk *d, int fd, bool shared, const char *fmt, ...)
{
	struct disk_name *n;
	struct stat st;
	va_list ap;
	unsigned i;

	if (fstat(fd, &st) < 0)
		goto drop;
	for (i = 0; i < d->nnames; i++)
		if (d->names[i].dev == st.st_dev && d->names[i].ino == st.st_ino) {
			d->names[i].shared &= shared;
			goto drop;
		}
	if (d->nnames == DISK_NAMES_MAX) {
		log_warn("disk %s: more names than %d (loops of loops?): the rest is not locked", d->path,
			 DISK_NAMES_MAX);
		goto drop;
	}
	n = &d->names[d->nnames++];
	*n = (struct disk_name){ .fd = fd, .shared = shared, .dev = st.st_dev, .ino = st.st_ino };
	va_start(ap, fmt);
	vsnprintf(n->what, sizeof(n->what), fmt, ap);
	va_end(ap);
	return;
drop:
	if (fd != d->fd_buffered)
		close(fd);
}

/* A small sysfs file's first line, or -errno. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int rc = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		rc = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return rc;
}

/* The kernel's node of block device rdev, opened: /dev/DEVNAME, if it is
 * that device.  Its path in node. */
static int open_kernel_node(const char *sys, dev_t rdev, char *node, size_t len)
{
	char path[128], line[256];
	struct stat st;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/uevent", sys);
	if (!(f = fopen(path, "re")))
		return -errno;
	node[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "DEVNAME=", 8) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(node, len, "/dev/%s", line + 8);
		}
	fclose(f);
	if (!node[0] || strstr(node, ".."))
		return -ENOENT;
	if ((fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != rdev) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

static void name_block_device(struct disk *d, int dev_fd, dev_t rdev, bool shared, const char *role, int depth);

/* A loop device's backing file, checked to be the file the loop device
 * uses (a name may be another file by now, or in another mount namespace).
 * 0 also when it is no loop device (or an unbound one); else -errno. */
static int name_loop_backing(struct disk *d, const char *sys, int loop_fd, const char *node, bool shared,
			     int depth)
{
	struct loop_info64 info;
	char path[128], file[4096], role[4300];
	struct stat st;
	bool slice;
	int fd, rc;

	snprintf(path, sizeof(path), "%s/loop/backing_file", sys);
	if ((rc = read_line(path, file, sizeof(file))))
		return rc == -ENOENT ? 0 : rc;
	if (loop_fd < 0)
		return -ENODEV;
	if (ioctl(loop_fd, LOOP_GET_STATUS64, &info) < 0)
		return errno == ENXIO ? 0 : -errno;      /* ENXIO: detached meanwhile, nothing behind it */
	if ((fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_ino != info.lo_inode ||
	    major(st.st_dev) != major(info.lo_device) || minor(st.st_dev) != minor(info.lo_device)) {
		close(fd);
		return -ESTALE;
	}
	/* A loop over a slice of its file is like a partition of a disk. */
	slice = shared || info.lo_offset || info.lo_sizelimit;
	name_add(d, fd, slice, "%s (the backing file of %s)", file, node);
	if (S_ISBLK(st.st_mode)) {
		snprintf(role, sizeof(role), "the backing device of %s", node);
		name_block_device(d, -1, st.st_rdev, slice, role, depth + 1);
	}
	return 0;
}

/* Every name of block device rdev: its kernel node, a loop's backing file,
 * a partition's whole disk.  dev_fd: the disk's own node of it (-1 below
 * the disk itself); role: what it is to the disk ("" the disk itself). */
static void name_block_device(struct disk *d, int dev_fd, dev_t rdev, bool shared, const char *role, int depth)
{
	char sys[64], node[4200], path[128], parent[32], whole[4300];
	unsigned maj, min;
	int fd, rc;

	if (depth > NAME_DEPTH_MAX)
		return;
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", major(rdev), minor(rdev));
	if ((fd = open_kernel_node(sys, rdev, node, sizeof(node))) < 0)
		snprintf(node, sizeof(node), "%s", dev_fd >= 0 ? d->path : "");
	if (!node[0])
		snprintf(node, sizeof(node), "device %u:%u", major(rdev), minor(rdev));
	rc = name_loop_backing(d, sys, fd >= 0 ? fd : dev_fd, node, shared, depth);
	if (rc)
		log_warn("disk %s: cannot find the backing file of loop device %s (%s): it is locked as a device only",
			 d->path, node, rc == -ESTALE ? "its name now is another file, or in another mount namespace"
			 : rc == -ENODEV ? "no node of the device in /dev to ask" : strerror(-rc));
	if (fd >= 0)
		name_add(d, fd, shared, role[0] ? "%s (%s)" : "%s", node, role);
	/* A partition's directory is inside its whole disk's. */
	snprintf(path, sizeof(path), "%s/partition", sys);
	if (access(path, F_OK) < 0)
		return;
	snprintf(path, sizeof(path), "%s/../dev", sys);
	if (read_line(path, parent, sizeof(parent)) || sscanf(parent, "%u:%u", &maj, &min) != 2) {
		log_warn("disk %s: the whole disk of partition %s cannot be found: it is not locked", d->path, node);
		return;
	}
	snprintf(whole, sizeof(whole), "the whole disk of %s", node);
	name_block_device(d, -1, makedev(maj, min), true, whole, depth + 1);
}

/* Open every name of the disk (before the sandbox: by path). */
static void disk_name(struct disk *d, const struct stat *st)
{
	d->nnames = 0;
	name_add(d, d->fd_buffered, d->readonly, "%s", "");
	if (S_ISBLK(st->st_mode))
		name_block_device(d, d->fd_buffered, st->st_rdev, d->readonly, "", 0);
}

int disk_open(struct disk *d, char *err, size_t errlen)
{
	int flags = (d->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	struct stat st;
	uint64_t size;
	unsigned i;

	/* O_NONBLOCK until it is known to be a file or a device: opening a
	 * FIFO read-only would wait for a writer forever. */
	d->fd_buffered = open(d->path, flags | O_NONBLOCK);
	if (d->fd_buffered < 0) {
		snprintf(err, errlen, "cannot open disk %s: %s", d->path, strerror(errno));
		return -errno;
	}
	if (fstat(d->fd_buffered, &st) < 0)
		goto fail_errno;
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "disk %s is neither a regular file nor a block device", d->path);
		disk_close(d);
		return -EINVAL;
	}
	if (fcntl(d->fd_buffered, F_SETFL, fcntl(d->fd_buffered, F_GETFL) & ~O_NONBLOCK) < 0)
		goto fail_errno;
	disk_name(d, &st);
	for (i = 0; i < sizeof(open_disks) / sizeof(open_disks[0]) && open_disks[i]; i++)
		;
	if (i < sizeof(open_disks) / sizeof(open_disks[0]))
		open_disks[i] = d;
	if (!d->lock_later && disk_lock(d, err, errlen)) {
		disk_close(d);
		return -EBUSY;
	}
	if (S_ISBLK(st.st_mode)) {
		d->is_blockdev = true;
		if (ioctl(d->fd_buffered, BLKGETSIZE64, &size) < 0)
			goto fail_errno;
	} else {
		size = st.st_size;
	}
	if (size % 512)
		log_warn("disk %s: size %llu is not a multiple of 512; the last %llu bytes are not used",
			 d->path, (unsigned long long)size, (unsigned long long)(size % 512));
	d->size = size & ~511ULL;
	if (d->size == 0) {
		snprintf(err, errlen, "disk %s is empty", d->path);
		disk_close(d);
		return -EINVAL;
	}
	d->fd = d->fd_buffered;
	if (d->direct) {
		char self[64];

		/* The file just checked, not whatever the path names by now. */
		snprintf(self, sizeof(self), "/proc/self/fd/%d", d->fd_buffered);
		d->fd = open(self, flags | O_DIRECT);
		if (d->fd < 0) {
			log_warn("disk %s: O_DIRECT not possible (%s); using the page cache",
				 d->path, strerror(errno));
			d->fd = d->fd_buffered;
		}
	}
	return 0;

fail_errno:
	snprintf(err, errlen, "disk %s: %s", d->path, strerror(errno));
	disk_close(d);
	return -EIO;
}

/* Another disk of this domain that holds name n of d, if any. */
static const struct disk *held_here(const struct disk *d, const struct disk_name *n)
{
	unsigned i, k;

	for (i = 0; i < sizeof(open_disks) / sizeof(open_disks[0]); i++) {
		const struct disk *o = open_disks[i];

		if (!o || o == d || !o->locked)
			continue;
		for (k = 0; k < o->nnames; k++)
			if (o->names[k].dev == n->dev && o->names[k].ino == n->ino)
				return o;
	}
	return NULL;
}

int disk_lock(struct disk *d, char *err, size_t errlen)
{
	unsigned i, k;

	/* One writer, or any number of readers, of each name on the host. */
	for (i = 0; i < d->nnames; i++) {
		const struct disk_name *n = &d->names[i];
		bool shared = n->shared;
		const struct disk *here;
		int e;

		if (flock(n->fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0)
			continue;
		e = errno;
		for (k = 0; k < i; k++)
			flock(d->names[k].fd, LOCK_UN);
		if (e != EWOULDBLOCK)
			snprintf(err, errlen, "cannot lock disk %s%s%s: %s", d->path, n->what[0] ? " through " : "",
				 n->what, strerror(e));
		else if ((here = held_here(d, n)))
			snprintf(err, errlen, "disks %s and %s of this domain are the same blocks%s%s",
				 here->path, d->path, n->what[0] ? ": both use " : "", n->what);
		else
			snprintf(err, errlen, "disk %s is in use by another domain%s%s%s%s", d->path,
				 n->what[0] ? ": " : "", n->what, n->what[0] ? " is in use" : "",
				 shared ? " (opened writable there)" : "");
		return -EBUSY;
	}
	d->locked = true;
	return 0;
}

void disk_unlock(struct disk *d)
{
	unsigned i;

	for (i = 0; i < d->nnames; i++)
		flock(d->names[i].fd, LOCK_UN);
	d->locked = false;
}

void disk_close(struct disk *d)
{
	unsigned i;

	for (i = 0; i < sizeof(open_disks) / sizeof(open_disks[0]); i++)
		if (open_disks[i] == d)
			open_disks[i] = NULL;
	for (i = 0; i < d->nnames; i++)
		if (d->names[i].fd != d->fd_buffered)
			close(d->names[i].fd);
	d->nnames = 0;
	d->locked = false;
	if (d->fd >= 0 && d->fd != d->fd_buffered)
		close(d->fd);
	if (d->fd_buffered >= 0)
		close(d->fd_buffered);
	d->fd = d->fd_buffered = -1;
}
