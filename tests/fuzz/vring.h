/* The guest's side of a virtqueue for the device harnesses (fuzz-blk,
 * fuzz-net, fuzz-balloon): the device is created on the real virtio-pci
 * transport, driven through the same bus dispatch a vCPU exit takes
 * (../unit/vdriver.h), and served by its own I/O thread as in lodge-hyp.
 * The harness lays out descriptor chains from the input, sets DRIVER_OK,
 * kicks, and waits until the device has returned every chain it should
 * or entered NEEDS_RESET: every request is then finished, whatever the
 * threads' timing, and the reset that follows joins the I/O thread.
 *
 * Input, after the harness's own leading bytes: chains, each
 *   u8 h: bits 0-3 buffers - 1, bit 4 in an indirect table, bits 5-6 the
 *         queue (modulo the device's), bit 7 raw: the chain is (h & 15) + 1
 *         descriptors of 16 bytes taken as they are from the input
 *   per buffer: u8 f: bit 0 device-writable, bits 1-2 how its length is
 *         given: 0 u8, 1 le16 (readable buffers: that many data bytes
 *         follow, zero-filled where the input ends), 2 le32 (zeroes),
 *         3 le64 guest address and le32 length (anywhere, RAM or not). */
#ifndef LODGE_FUZZ_VRING_H
#define LODGE_FUZZ_VRING_H

#include "fuzz.h"
#include "domain.h"
#include "log.h"
#include "virtio/virtio.h"
#include "../unit/vdriver.h"

#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define VR_RAM_SIZE   (4u << 20)
#define VR_RING_BASE  0x100000u            /* queue q at + q * 0x10000 */
#define VR_DATA_BASE  0x200000u
#define VR_DATA_END   VR_RAM_SIZE
#define VR_MAX_Q      4

static struct domain vr_dom = { DOMAIN_DEFAULTS };
static uint8_t *vr_ram;

struct vr_queue {
	uint16_t size, avail_idx, expect;
	uint64_t writable[1024];         /* by head: device-writable bytes (raw: ~0) */
};
static struct vr_queue vr_q[VR_MAX_Q];
static unsigned vr_nq;
/* A device-writable buffer the input placed anywhere (a raw chain, an
 * address of its own): the device may have rewritten the rings. */
static bool vr_anywhere;

static void vr_init_ram(void)
{
	vr_ram = mmap(NULL, VR_RAM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	FUZZ_CHECK(vr_ram != MAP_FAILED, "mmap guest RAM");
	guest_mem_wrap(&vr_dom.mem, vr_ram, VR_RAM_SIZE);
}

static uint64_t vr_desc_gpa(unsigned q) { return VR_RING_BASE + q * 0x10000u; }
static uint64_t vr_avail_gpa(unsigned q) { return vr_desc_gpa(q) + 0x4000; }
static uint64_t vr_used_gpa(unsigned q) { return vr_desc_gpa(q) + 0x8000; }

/* Reset, negotiate features (what is offered, masked by want), set up nq
 * queues of qsize; DRIVER_OK comes later (vr_go). 0 if FEATURES_OK held. */
static int vr_driver_init(unsigned nq, uint16_t qsize, uint64_t want)
{
	uint64_t offered;
	unsigned q;

	SET_COMMON(0x14, 1, 0);
	SET_COMMON(0x14, 1, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	SET_COMMON(0x00, 4, 0);
	offered = COMMON(0x04, 4);
	SET_COMMON(0x00, 4, 1);
	offered |= COMMON(0x04, 4) << 32;
	want = (want & offered) | (1ULL << VIRTIO_F_VERSION_1);
	SET_COMMON(0x08, 4, 0);
	SET_COMMON(0x0c, 4, (uint32_t)want);
	SET_COMMON(0x08, 4, 1);
	SET_COMMON(0x0c, 4, (uint32_t)(want >> 32));
	SET_COMMON(0x14, 1, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
	if (!(COMMON(0x14, 1) & VIRTIO_STATUS_FEATURES_OK))
		return -1;
	memset(vr_ram + VR_RING_BASE, 0, VR_DATA_END - VR_RING_BASE);
	memset(vr_q, 0, sizeof(vr_q));
	vr_anywhere = false;
	vr_nq = nq;
	for (q = 0; q < nq; q++) {
		vr_q[q].size = qsize;
		SET_COMMON(0x16, 2, q);
		SET_COMMON(0x18, 2, qsize);
		SET_COMMON(0x20, 8, vr_desc_gpa(q));
		SET_COMMON(0x28, 8, vr_avail_gpa(q));
		SET_COMMON(0x30, 8, vr_used_gpa(q));
		SET_COMMON(0x1c, 2, 1);
	}
	return 0;
}

struct vr_in { const uint8_t *p; size_t left; };

static uint64_t vr_take(struct vr_in *in, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < n && in->left; i++, in->left--)
		v |= (uint64_t)*in->p++ << (8 * i);
	return v;
}

/* Lay out every chain of the input; returns how many. */
static unsigned vr_build(struct vr_in *in)
{
	uint64_t data = VR_DATA_BASE;
	uint16_t next_desc[VR_MAX_Q] = { 0 };
	unsigned chains = 0;

	while (in->left) {
		unsigned h = vr_take(in, 1), n = (h & 15) + 1, qi = ((h >> 5) & 3) % vr_nq, i;
		struct vr_queue *q = &vr_q[qi];
		struct virtq_desc *table = (void *)(vr_ram + vr_desc_gpa(qi)), *d = NULL;
		struct virtq_avail *av = (void *)(vr_ram + vr_avail_gpa(qi));
		bool indirect = (h & 16) && !(h & 128);
		uint16_t head = next_desc[qi] % q->size;
		uint64_t writable = 0, ind_gpa = 0;

		/* No descriptor is used twice: every chain stays as laid out. */
		if (q->avail_idx == q->size || next_desc[qi] + n + indirect > q->size)
			break;
		if (h & 128) {
			for (i = 0; i < n; i++) {
				d = &table[next_desc[qi]++ % q->size];
				d->addr = vr_take(in, 8);
				d->len = vr_take(in, 4);
				d->flags = vr_take(in, 2);
				d->next = vr_take(in, 2);
			}
			writable = ~0ULL;
			vr_anywhere = true;
		} else {
			if (indirect) {
				ind_gpa = (data + 15) & ~15ULL;
				data = ind_gpa + 16 * n;
				if (data > VR_DATA_END)
					break;
				d = &table[next_desc[qi]++ % q->size];
				*d = (struct virtq_desc){ ind_gpa, 16 * n, VIRTQ_DESC_F_INDIRECT, 0 };
			}
			for (i = 0; i < n && in->left; i++) {
				unsigned f = vr_take(in, 1), kind = (f >> 1) & 3;
				uint64_t addr, len;
				uint16_t idx;

				if (kind == 3) {
					addr = vr_take(in, 8);
					len = (uint32_t)vr_take(in, 4);
					vr_anywhere |= f & 1;
				} else {
					len = vr_take(in, kind == 0 ? 1 : kind == 1 ? 2 : 4);
					addr = data;
					if (len > VR_DATA_END - data)
						len = VR_DATA_END - data;
					if (!(f & 1) && kind < 2) {
						uint64_t k;

						for (k = 0; k < len; k++)
							vr_ram[addr + k] = vr_take(in, 1);
					}
					data += len;
				}
				if (indirect) {
					d = (struct virtq_desc *)(vr_ram + ind_gpa) + i;
					idx = i + 1;
				} else {
					d = &table[next_desc[qi]++ % q->size];
					idx = next_desc[qi] % q->size;
				}
				*d = (struct virtq_desc){ addr, (uint32_t)len,
					(f & 1 ? VIRTQ_DESC_F_WRITE : 0) | VIRTQ_DESC_F_NEXT, idx };
				if (f & 1)
					writable += (uint32_t)len;
			}
			if (i && d)
				d->flags &= ~VIRTQ_DESC_F_NEXT;     /* the last buffer */
		}
		av->ring[q->avail_idx % q->size] = head;
		q->writable[head] = writable;
		q->avail_idx++;
		chains++;
	}
	return chains;
}

static uint64_t vr_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Publish, DRIVER_OK, kick every queue; wait until each queue q has
 * returned vr_q[q].expect chains, or NEEDS_RESET, or the guest's own
 * rings changed under it (a balloon may discard them).  drain is called
 * while waiting (a backend the device writes to).  Returns true if the
 * device entered NEEDS_RESET. */
static bool vr_go(void (*drain)(void))
{
	uint64_t deadline;
	unsigned q;

	for (q = 0; q < vr_nq; q++) {
		struct virtq_avail *av = (void *)(vr_ram + vr_avail_gpa(q));

		__atomic_store_n(&av->idx, vr_q[q].avail_idx, __ATOMIC_RELEASE);
	}
	SET_COMMON(0x14, 1, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
		   VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK);
	for (q = 0; q < vr_nq; q++)
		mmio_write(bar0 + notify_off + 4 * q, 2, q);
	deadline = vr_now_ms() + 5000;
	for (;;) {
		bool done = true;

		if (COMMON(0x14, 1) & VIRTIO_STATUS_NEEDS_RESET)
			return true;
		for (q = 0; q < vr_nq; q++) {
			struct virtq_avail *av = (void *)(vr_ram + vr_avail_gpa(q));
			struct virtq_used *u = (void *)(vr_ram + vr_used_gpa(q));

			if (__atomic_load_n(&av->idx, __ATOMIC_ACQUIRE) != vr_q[q].avail_idx)
				return false;      /* the guest's ring is gone (ballooned) */
			if (__atomic_load_n(&u->idx, __ATOMIC_ACQUIRE) != vr_q[q].expect)
				done = false;
		}
		if (done)
			break;
		if (drain)
			drain();
		FUZZ_CHECK(vr_now_ms() < deadline, "a request neither completed nor NEEDS_RESET in 5 s");
		sched_yield();
	}
	if (vr_anywhere)
		return false;
	/* Each returned chain: a head the driver made available, and no more
	 * bytes written than the chain had room for. */
	for (q = 0; q < vr_nq; q++) {
		struct virtq_used *u = (void *)(vr_ram + vr_used_gpa(q));
		unsigned i;

		for (i = 0; i < vr_q[q].expect; i++) {
			struct virtq_used_elem e = u->ring[i % vr_q[q].size];

			FUZZ_CHECK(e.id < vr_q[q].size, "a used head outside the ring");
			FUZZ_CHECK(e.len <= vr_q[q].writable[e.id], "the device wrote more than the chain holds");
		}
	}
	return false;
}

#endif
