/* A disk's names (disknames.h), moved here from lodge-hyp's disk.c so
 * that liblodge names a disk it attaches exactly as lodge-hyp does. */
#include "disknames.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Loops of loops, partitions of loops: deeper than this is not followed. */
#define NAME_DEPTH_MAX 4

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

static void warn(struct disk_names *d, const char *fmt, ...)
{
	size_t used = strlen(d->warn);
	va_list ap;

	if (used && used + 2 < sizeof(d->warn))
		strcat(d->warn, "; ");
	used = strlen(d->warn);
	va_start(ap, fmt);
	vsnprintf(d->warn + used, sizeof(d->warn) - used, fmt, ap);
	va_end(ap);
}

/* Add a name held open on fd (taken over); a second name of the same file
 * is dropped, the stronger lock kept. */
static void name_add(struct disk_names *d, int fd, bool shared, const char *fmt, ...)
{
	struct disk_name *n;
	struct stat st;
	va_list ap;
	unsigned i;

	if (fstat(fd, &st) < 0)
		goto drop;
	for (i = 0; i < d->n; i++)
		if (d->names[i].dev == st.st_dev && d->names[i].ino == st.st_ino) {
			d->names[i].shared &= shared;
			goto drop;
		}
	if (d->n == DISK_NAMES_MAX) {
		warn(d, "disk %s: more names than %d (loops of loops?): the rest is not locked", d->path,
		     DISK_NAMES_MAX);
		goto drop;
	}
	n = &d->names[d->n++];
	*n = (struct disk_name){ .fd = fd, .shared = shared, .dev = st.st_dev, .ino = st.st_ino };
	va_start(ap, fmt);
	vsnprintf(n->what, sizeof(n->what), fmt, ap);
	va_end(ap);
	return;
drop:
	if (fd != d->fd)
		close(fd);
}

/* A small file's first line (sysfs, /proc), without its newline, or -errno. */
int file_first_line(const char *path, char *buf, size_t len)
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

static void name_block_device(struct disk_names *d, int dev_fd, dev_t rdev, bool shared, const char *role, int depth);

/* A loop device's backing file, checked to be the file the loop device
 * uses (a name may be another file by now, or in another mount namespace).
 * 0 also when it is no loop device (or an unbound one); else -errno. */
static int name_loop_backing(struct disk_names *d, const char *sys, int loop_fd, const char *node, bool shared,
			     int depth)
{
	struct loop_info64 info;
	char path[128], file[4096], role[4300];
	struct stat st;
	bool slice;
	int fd, rc;

	snprintf(path, sizeof(path), "%s/loop/backing_file", sys);
	if ((rc = file_first_line(path, file, sizeof(file))))
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
static void name_block_device(struct disk_names *d, int dev_fd, dev_t rdev, bool shared, const char *role, int depth)
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
		warn(d, "disk %s: cannot find the backing file of loop device %s (%s): it is locked as a device only",
		     d->path, node, rc == -ESTALE ? "its name now is another file, or in another mount namespace"
			 : rc == -ENODEV ? "no node of the device in /dev to ask" : strerror(-rc));
	if (fd >= 0)
		name_add(d, fd, shared, role[0] ? "%s (%s)" : "%s", node, role);
	/* A partition's directory is inside its whole disk's. */
	snprintf(path, sizeof(path), "%s/partition", sys);
	if (access(path, F_OK) < 0)
		return;
	snprintf(path, sizeof(path), "%s/../dev", sys);
	if (file_first_line(path, parent, sizeof(parent)) || sscanf(parent, "%u:%u", &maj, &min) != 2) {
		warn(d, "disk %s: the whole disk of partition %s cannot be found: it is not locked", d->path, node);
		return;
	}
	snprintf(whole, sizeof(whole), "the whole disk of %s", node);
	name_block_device(d, -1, makedev(maj, min), true, whole, depth + 1);
}

void disk_names_collect(struct disk_names *d, const char *path, int fd, bool readonly)
{
	struct stat st;

	d->path = path;
	d->fd = fd;
	d->n = 0;
	d->warn[0] = '\0';
	name_add(d, fd, readonly, "%s", "");
	if (fstat(fd, &st) == 0 && S_ISBLK(st.st_mode))
		name_block_device(d, fd, st.st_rdev, readonly, "", 0);
}

