/* Disk backends: a regular file (raw, possibly sparse) or a block device
 * (a partition, an LV, a loop device), opened and locked once at start:
 * one writer or any number of readers of the same blocks, whatever name
 * they are reached by (a file and a loop device over it, a partition and
 * its whole disk), across all domains and across one domain's disks. */
#ifndef LODGE_DISK_H
#define LODGE_DISK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DISK_ID_MAX 20   /* VIRTIO_BLK_ID_BYTES */
#define DISK_NAMES_MAX 6 /* the disk, its device node, backing file, whole disk and that one's */

/* One name the disk's blocks go by on this host (disk.c says which), held
 * open from disk_open on so that it can be locked inside the sandbox. */
struct disk_name {
	int fd;              /* the disk's own fd_buffered for the first */
	bool shared;         /* reached through a partition or a slice: LOCK_SH whatever the mode */
	uint64_t dev, ino;   /* what it is: two names of one file are one lock */
	char what[300];      /* how a message names it ("" for the disk itself) */
};

struct disk {
	char path[4096];
	char id[DISK_ID_MAX + 1];
	bool readonly;
	bool direct;         /* O_DIRECT requested (cache=none) */
	bool is_blockdev;
	bool lock_later;     /* an incoming migration: the sender holds the lock until it lets go */
	int fd;              /* O_DIRECT when direct; else buffered */
	int fd_buffered;     /* for requests O_DIRECT refuses (misaligned) */
	uint64_t size;       /* bytes, a multiple of 512 */
	unsigned nnames;
	struct disk_name names[DISK_NAMES_MAX];
	bool locked;
};

/* Parse "PATH[,ro][,id=NAME][,direct]". Returns 0 or -EINVAL with err set. */
int disk_parse(const char *spec, struct disk *d, char *err, size_t errlen);
/* Open and lock the disk. Returns 0 or -errno with err set (one line). */
int disk_open(struct disk *d, char *err, size_t errlen);
void disk_close(struct disk *d);
/* Take or give up the one-writer lock on every name of the disk (a
 * migration hands a disk over); works inside the sandbox. */
int disk_lock(struct disk *d, char *err, size_t errlen);
void disk_unlock(struct disk *d);

#endif
