/* Modern virtio-pci (virtio 1.x) for Mini-OS: find a device, negotiate,
 * set up split virtqueues, add buffers, kick, reap. */
#ifndef MINIOS_VIRTIO_H
#define MINIOS_VIRTIO_H

#include <stdint.h>

#define VIRTIO_F_VERSION_1 32
#define VRING_DESC_F_NEXT  1
#define VRING_DESC_F_WRITE 2
#define VRING_AVAIL_F_NO_INTERRUPT 1
#define VRING_USED_F_NO_NOTIFY     1
#define VEC_VIRTIO         0x30

struct vring_desc { uint64_t addr; uint32_t len; uint16_t flags, next; };
struct vring_avail { uint16_t flags, idx, ring[]; };
struct vring_used_elem { uint32_t id, len; };
struct vring_used { uint16_t flags, idx; struct vring_used_elem ring[]; };

struct vq {
	uint16_t size, index;
	volatile struct vring_desc *desc;
	volatile struct vring_avail *avail;
	volatile struct vring_used *used;
	uint16_t free_head, nfree, last_used;
	uint64_t notify;
};

struct vdev {
	unsigned pci;                 /* slot on bus 0 */
	uint16_t type;                /* VIRTIO_ID_* */
	uint64_t common, isr, device, notify_base;
	uint32_t notify_mult;
	uint64_t features;            /* negotiated */
};

struct vbuf { uint64_t addr; uint32_t len; int write; };

/* The nth device of a type on bus 0 (modern or transitional). 0 or -1. */
int virtio_find(uint16_t type, unsigned nth, struct vdev *d);
/* The device in PCI slot dev, if it is a virtio device of type. 0 or -1. */
int virtio_probe(unsigned dev, uint16_t type, struct vdev *d);
/* Reset, acknowledge, negotiate want & offered (VERSION_1 required). */
int virtio_init(struct vdev *d, uint64_t want);
int virtio_vq_setup(struct vdev *d, unsigned index, struct vq *q, unsigned max_size);
/* Config changes interrupt like the queues (virtio_init turns them off). */
void virtio_config_irq(struct vdev *d);
void virtio_driver_ok(struct vdev *d);
uint8_t virtio_status(struct vdev *d);
/* Chain n buffers; returns the head, or -1 if the ring has no room. */
int vq_add(struct vq *q, const struct vbuf *bufs, unsigned n);
/* Notify the device of new buffers, unless it said it will look by itself. */
void vq_kick(struct vq *q);
/* Next completed chain: its head (descriptors freed), or -1. */
int vq_get(struct vq *q, uint32_t *len);
/* Return to the free list a chain taken off the used ring by hand (by a
 * driver that keeps its chains built and posts them again). */
void vq_free_chain(struct vq *q, uint16_t head);

/* A zeroed, aligned allocation that is never freed. */
void *kalloc(uint64_t size, uint64_t align);
/* As kalloc, not zeroed: the guest's first touch of a page costs a
 * shadow-paging fault on PVM (12 MiB zeroed: 6.5 s), and a buffer only
 * the device fills need not be touched by the guest at all. */
void *kalloc_dirty(uint64_t size, uint64_t align);

#endif
