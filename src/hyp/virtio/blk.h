#ifndef LODGE_VIRTIO_BLK_H
#define LODGE_VIRTIO_BLK_H

struct domain;
struct disk;

/* A virtio-blk device on the given (opened, locked) disk; requests are
 * served by an I/O thread through io_uring, off the vCPU threads. */
int virtio_blk_create(struct domain *dom, struct disk *disk);
/* The same in PCI slot slot (0: the first free); *out (if out) the device,
 * for virtio_pci_destroy once hot-unplugged (the disk stays the caller's). */
struct virtio_dev;
int virtio_blk_create_at(struct domain *dom, struct disk *disk, unsigned slot, struct virtio_dev **out);

#endif
