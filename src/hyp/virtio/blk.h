#ifndef LODGE_VIRTIO_BLK_H
#define LODGE_VIRTIO_BLK_H

struct domain;
struct disk;

/* A virtio-blk device on the given (opened, locked) disk; requests are
 * served by an I/O thread through io_uring, off the vCPU threads. */
int virtio_blk_create(struct domain *dom, struct disk *disk);

#endif
