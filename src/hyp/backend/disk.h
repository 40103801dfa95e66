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
/* Each name the disk's blocks go by on this host (src/common/disknames.h),
 * held open from disk_open on so that it can be locked inside the sandbox. */
#include "disknames.h"

struct disk {
	char path[4096];
	char id[DISK_ID_MAX + 1];
	bool readonly;
	bool direct;         /* O_DIRECT requested (cache=none) */
	bool is_blockdev;
	bool in_memory;      /* a file in tmpfs or ramfs: its reads and writes are copies, never disk waits */
	bool lock_later;     /* an incoming migration: the sender holds the lock until it lets go */
	unsigned slot;       /* its PCI slot (slot=N), 0: the first free */
	int given_fd;        /* fd=N: opened by whoever started lodge-hyp (liblodge), never by path here; -1 none */
	int fd;              /* O_DIRECT when direct; else buffered */
	int fd_buffered;     /* for requests O_DIRECT refuses (misaligned) */
	uint64_t size;       /* bytes, a multiple of 512 */
	unsigned nnames;
	struct disk_name names[DISK_NAMES_MAX];
	bool locked;
};

/* Parse "PATH[,ro][,id=NAME][,direct][,slot=N][,fd=N]". Returns 0 or -EINVAL with err set. */
int disk_parse(const char *spec, struct disk *d, char *err, size_t errlen);
/* Open and lock the disk: a dup of given_fd (fd=N), else PATH opened.
 * Returns 0 or -errno with err set (one line). */
int disk_open(struct disk *d, char *err, size_t errlen);
void disk_close(struct disk *d);
/* "N" within DOMAIN_PCI_SLOT_MIN..MAX: 0, or -EINVAL. */
int parse_slot(const char *s, unsigned *slot);
/* A disk attached to a running domain: d parsed (disk_parse), the
 * descriptors opened by the caller with its own rights (liblodge, by
 * src/common/disknames.h): fds[0] the disk itself, open read-only or
 * read-write as d says, the rest its other names, name i shared when bit
 * i of shared is set.  Takes them over (closed on error), locks and sizes
 * the disk as disk_open does.  0, or -errno with err set (one line). */
int disk_adopt(struct disk *d, const int *fds, unsigned nfds, uint32_t shared, char *err, size_t errlen);
/* Take or give up the one-writer lock on every name of the disk (a
 * migration hands a disk over); works inside the sandbox. */
int disk_lock(struct disk *d, char *err, size_t errlen);
void disk_unlock(struct disk *d);

#endif
