#include "io.h"
#include "minios.h"
#include "pci.h"
#include "virtio.h"

#define CAP_COMMON 1
#define CAP_NOTIFY 2
#define CAP_ISR    3
#define CAP_DEVICE 4

/* common configuration offsets (virtio 1.2, 4.1.4.3) */
#define C_DFSELECT 0x00
#define C_DF       0x04
#define C_GFSELECT 0x08
#define C_GF       0x0c
#define C_MSIX     0x10
#define C_STATUS   0x14
#define C_QSELECT  0x16
#define C_QSIZE    0x18
#define C_QMSIX    0x1a
#define C_QENABLE  0x1c
#define C_QNOFF    0x1e
#define C_QDESC    0x20
#define C_QDRIVER  0x28
#define C_QDEVICE  0x30

/* Bump allocation from the bottom of the page pool (page.c), which hands
 * pages out from the top: the pages kalloc crosses leave the pool. */
void *kalloc_dirty(uint64_t size, uint64_t align)
{
	extern char _end[];
	static uint64_t next, reserved;
	uint64_t p, end;

	if (!next)
		next = reserved = ((uint64_t)_end + 0xfffff) & ~0xfffffULL;   /* 1 MiB aligned, past the kernel */
	p = (next + align - 1) & ~(align - 1);
	end = p + size;
	if (end > reserved) {
		uint64_t to = (end + 4095) & ~4095ULL;

		if (page_reserve(reserved, to)) {
			printf("kalloc: out of memory (%lu bytes wanted)\n", size);
			for (;;)
				idle();
		}
		reserved = to;
	}
	next = end;
	return (void *)p;
}

void *kalloc(uint64_t size, uint64_t align)
{
	void *p = kalloc_dirty(size, align);

	memset(p, 0, size);
	return p;
}

/* The virtio device type in slot dev, or -1 if there is none. */
static int virtio_type(unsigned dev)
{
	uint32_t id = pci_read32(dev, 0);
	uint16_t vendor = id, device = id >> 16;

	if (vendor != 0x1af4)
		return -1;
	if (device >= 0x1040 && device < 0x1080)
		return device - 0x1040;
	if (device >= 0x1000 && device < 0x1040)
		return pci_read16(dev, 0x2e);              /* transitional: subsystem id */
	return -1;
}

int virtio_find(uint16_t type, unsigned nth, struct vdev *d)
{
	unsigned dev, found = 0;

	for (dev = 0; dev < 32; dev++) {
		if (virtio_type(dev) != type || found++ != nth)
			continue;
		return virtio_probe(dev, type, d);
	}
	return -1;
}

int virtio_probe(unsigned dev, uint16_t type, struct vdev *d)
{
	unsigned cap;

	if (virtio_type(dev) != type)
		return -1;
	memset(d, 0, sizeof(*d));
	d->pci = dev;
	d->type = type;
	pci_write16(dev, 0x04, pci_read16(dev, 0x04) | 0x6);  /* memory, bus master */
	for (cap = pci_find_cap(dev, 0x09, 0); cap; cap = pci_find_cap(dev, 0x09, cap)) {
		uint8_t kind = pci_read8(dev, cap + 3), bar = pci_read8(dev, cap + 4);
		uint64_t addr = pci_bar(dev, bar) + pci_read32(dev, cap + 8);

		if (kind == CAP_COMMON && !d->common) d->common = addr;
		else if (kind == CAP_ISR && !d->isr) d->isr = addr;
		else if (kind == CAP_DEVICE && !d->device) d->device = addr;
		else if (kind == CAP_NOTIFY && !d->notify_base) {
			d->notify_base = addr;
			d->notify_mult = pci_read32(dev, cap + 16);
		}
	}
	return d->common && d->notify_base ? 0 : -1;
}

uint8_t virtio_status(struct vdev *d) { return mmio_read8(d->common + C_STATUS); }

int virtio_init(struct vdev *d, uint64_t want)
{
	uint64_t offered;

	mmio_write8(d->common + C_STATUS, 0);
	while (mmio_read8(d->common + C_STATUS))
		cpu_relax();
	mmio_write8(d->common + C_STATUS, 1 | 2);          /* ACKNOWLEDGE | DRIVER */
	mmio_write32(d->common + C_DFSELECT, 0);
	offered = mmio_read32(d->common + C_DF);
	mmio_write32(d->common + C_DFSELECT, 1);
	offered |= (uint64_t)mmio_read32(d->common + C_DF) << 32;
	d->features = offered & (want | (1ULL << VIRTIO_F_VERSION_1));
	if (!(d->features & (1ULL << VIRTIO_F_VERSION_1)))
		return -1;
	mmio_write32(d->common + C_GFSELECT, 0);
	mmio_write32(d->common + C_GF, (uint32_t)d->features);
	mmio_write32(d->common + C_GFSELECT, 1);
	mmio_write32(d->common + C_GF, d->features >> 32);
	mmio_write8(d->common + C_STATUS, 1 | 2 | 8);      /* FEATURES_OK */
	if (!(mmio_read8(d->common + C_STATUS) & 8))
		return -1;
	if (pci_msix_enable(d->pci, VEC_VIRTIO) == 0)
		mmio_write16(d->common + C_MSIX, 0xffff);     /* no config interrupts */
	return 0;
}

int virtio_vq_setup(struct vdev *d, unsigned index, struct vq *q, unsigned max_size)
{
	uint16_t size, i;

	mmio_write16(d->common + C_QSELECT, index);
	size = mmio_read16(d->common + C_QSIZE);
	if (!size)
		return -1;
	if (size > max_size)
		size = max_size;
	while (size & (size - 1))         /* a power of two, so ring slots are a mask away */
		size &= size - 1;
	memset(q, 0, sizeof(*q));
	q->size = size;
	q->index = index;
	q->desc = kalloc(16 * size, 4096);
	q->avail = kalloc(6 + 2 * size, 4096);
	q->used = kalloc(6 + 8 * size, 4096);
	for (i = 0; i < size; i++)
		q->desc[i].next = i + 1;
	q->nfree = size;
	mmio_write16(d->common + C_QSIZE, size);
	mmio_write64(d->common + C_QDESC, (uint64_t)q->desc);
	mmio_write64(d->common + C_QDRIVER, (uint64_t)q->avail);
	mmio_write64(d->common + C_QDEVICE, (uint64_t)q->used);
	mmio_write16(d->common + C_QMSIX, 0);            /* MSI-X entry 0 (if enabled) */
	q->notify = d->notify_base + (uint64_t)mmio_read16(d->common + C_QNOFF) * d->notify_mult;
	mmio_write16(d->common + C_QENABLE, 1);
	return 0;
}

void virtio_config_irq(struct vdev *d)
{
	mmio_write16(d->common + C_MSIX, 0);             /* MSI-X entry 0, as the queues */
}

void virtio_driver_ok(struct vdev *d)
{
	mmio_write8(d->common + C_STATUS, 1 | 2 | 4 | 8);
}

int vq_add(struct vq *q, const struct vbuf *bufs, unsigned n)
{
	uint16_t head = q->free_head, i = head, last = head;
	unsigned k;

	if (n == 0 || q->nfree < n)
		return -1;
	for (k = 0; k < n; k++) {
		q->desc[i].addr = bufs[k].addr;
		q->desc[i].len = bufs[k].len;
		q->desc[i].flags = (bufs[k].write ? VRING_DESC_F_WRITE : 0) | (k + 1 < n ? VRING_DESC_F_NEXT : 0);
		last = i;
		i = q->desc[i].next;
	}
	q->free_head = i;
	q->nfree -= n;
	(void)last;
	q->avail->ring[q->avail->idx % q->size] = head;
	barrier();                    /* the entry before the index that publishes it */
	q->avail->idx++;
	return head;
}

/* A device that is already working through the ring sets NO_NOTIFY in
 * the used ring's flags (2.7.10): a notify then costs this guest an exit
 * and the device a wake-up for nothing.  The flag is read after the avail
 * index is published, so a device that clears it and looks again sees
 * the new buffers either way. */
void vq_kick(struct vq *q)
{
	mb();                         /* avail idx visible before the flags are read */
	if (q->used->flags & VRING_USED_F_NO_NOTIFY)
		return;
	mmio_write16(q->notify, q->index);
}

/* Return a chain to the free list. */
static inline void free_chain(struct vq *q, uint16_t head)
{
	uint16_t i, n = 1;

	for (i = head; q->desc[i].flags & VRING_DESC_F_NEXT; i = q->desc[i].next)
		n++;
	q->desc[i].next = q->free_head;
	q->free_head = head;
	q->nfree += n;
}

int vq_get(struct vq *q, uint32_t *len)
{
	uint16_t head;

	if (q->last_used == q->used->idx)
		return -1;
	barrier();
	head = q->used->ring[q->last_used % q->size].id;
	if (len)
		*len = q->used->ring[q->last_used % q->size].len;
	q->last_used++;
	free_chain(q, head);
	return head;
}

void vq_free_chain(struct vq *q, uint16_t head)
{
	free_chain(q, head);
}
