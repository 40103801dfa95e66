/* The names a disk's blocks go by on this host, each held open so that it
 * can be locked (flock) later, inside a sandbox too.  Used by lodge-hyp
 * for the disks it is started with (backend/disk.c) and by liblodge for a
 * disk it attaches to a running domain, which opens them with its
 * caller's own rights and passes them in. */
#ifndef LODGE_DISKNAMES_H
#define LODGE_DISKNAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DISK_NAMES_MAX 6 /* the disk, its device node, backing file, whole disk and that one's */

/* One name the disk's blocks go by (disknames.c says which). */
struct disk_name {
	int fd;              /* the disk's own fd for the first */
	bool shared;         /* reached through a partition or a slice: LOCK_SH whatever the mode */
	uint64_t dev, ino;   /* what it is: two names of one file are one lock */
	char what[300];      /* how a message names it ("" for the disk itself) */
};

struct disk_names {
	const char *path;    /* for warnings */
	int fd;              /* the disk itself: names[0].fd */
	unsigned n;
	struct disk_name names[DISK_NAMES_MAX];
	char warn[1024];     /* what could not be named, "" if all was ("; " between) */
};

/* Every name of the disk open on fd (a regular file or a block device,
 * opened by path): fd itself first, then for a block device its kernel
 * node, a loop device's backing file, a partition's whole disk.  A
 * writable disk's own names are exclusive, a read-only one's shared. */
/* A small file's first line (sysfs, /proc), without its newline, or -errno. */
int file_first_line(const char *path, char *buf, size_t len);
void disk_names_collect(struct disk_names *d, const char *path, int fd, bool readonly);

#endif
