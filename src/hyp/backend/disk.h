/* Disk backends: a regular file (raw, possibly sparse) or a block device
 * (a partition, an LV, a loop device), opened and locked once at start. */
#ifndef LODGE_DISK_H
#define LODGE_DISK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DISK_ID_MAX 20   /* VIRTIO_BLK_ID_BYTES */

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
};

/* Parse "PATH[,ro][,id=NAME][,direct]". Returns 0 or -EINVAL with err set. */
int disk_parse(const char *spec, struct disk *d, char *err, size_t errlen);
/* Open and lock the disk. Returns 0 or -errno with err set (one line). */
int disk_open(struct disk *d, char *err, size_t errlen);
void disk_close(struct disk *d);
/* Take or give up the one-writer lock (a migration hands a disk over). */
int disk_lock(struct disk *d, char *err, size_t errlen);
void disk_unlock(struct disk *d);

#endif
