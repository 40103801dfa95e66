/* Split virtqueues (virtio 1.2 section 2.7): the only code that walks
 * descriptor chains.  The ring lives in guest memory and is untrusted:
 * its layout is checked once when the driver enables the queue, every
 * descriptor as it is walked (index in range, buffer inside RAM, a hop
 * budget against loops, indirect tables validated the same way), and any
 * violation is reported as -EIO so the device can enter NEEDS_RESET. */
#ifndef LODGE_VIRTIO_QUEUE_H
#define LODGE_VIRTIO_QUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "mem.h"

#define VIRTQ_DESC_F_NEXT      1
#define VIRTQ_DESC_F_WRITE     2
#define VIRTQ_DESC_F_INDIRECT  4
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1
#define VIRTQ_USED_F_NO_NOTIFY 1

#define VIRTQ_MAX_SIZE   1024   /* largest queue a device offers */
#define VIRTQ_MAX_SEGS   1024   /* most buffers one chain may carry */

struct virtq_desc  { uint64_t addr; uint32_t len; uint16_t flags, next; };
struct virtq_avail { uint16_t flags, idx, ring[]; };
struct virtq_used_elem { uint32_t id, len; };
struct virtq_used  { uint16_t flags, idx; struct virtq_used_elem ring[]; };

struct virtq {
	/* Set by the transport from the driver's writes. */
	uint16_t size;
	uint64_t desc_gpa, avail_gpa, used_gpa;
	bool event_idx;           /* VIRTIO_F_EVENT_IDX negotiated */

	/* Valid once virtq_enable() succeeded. */
	bool ready;
	const struct guest_mem *mem;
	struct virtq_desc *desc;
	struct virtq_avail *avail;
	struct virtq_used *used;
	uint16_t last_avail;      /* next avail entry the device will take */
	uint16_t used_idx;        /* our copy of used->idx */
	uint16_t signalled_used;  /* used_idx when the driver was last interrupted */
};

/* A popped request: the chain's buffers as host iovecs, device-readable
 * ones first (out), then device-writable ones (in). */
struct virtq_req {
	uint16_t head;
	unsigned n_out, n_in;
	uint64_t out_len, in_len;
	struct iovec iov[VIRTQ_MAX_SEGS];
};

/* Check the ring's placement and make it live: -EINVAL if the size is not
 * a power of two up to VIRTQ_MAX_SIZE, a part is misaligned or not in RAM. */
int virtq_enable(struct virtq *q, const struct guest_mem *mem);
void virtq_reset(struct virtq *q);

/* Take the next available chain: 1 and *req filled, 0 if none, -EIO if
 * the ring is malformed (the caller must stop using the queue). */
int virtq_pop(struct virtq *q, struct virtq_req *req);
/* Give back the last n popped chains unused (e.g. no packet to fill them). */
void virtq_unpop(struct virtq *q, uint16_t n);
/* Return a chain to the driver with the number of bytes written into it. */
void virtq_push(struct virtq *q, uint16_t head, uint32_t written);
/* After pushes: does the driver want an interrupt now? */
bool virtq_need_interrupt(struct virtq *q);
/* Suppress or allow the driver's notifications (kicks) while polling. */
void virtq_set_notify(struct virtq *q, bool enable);
/* virtq_pop for a device that works through the ring with notifications
 * off (virtq_set_notify false first): on an empty ring they are asked for
 * again and the ring looked at once more, so a chain posted in between is
 * not left waiting for a kick that will not come.  As virtq_pop; after 0
 * notifications are on, otherwise still off. */
int virtq_pop_quiet(struct virtq *q, struct virtq_req *req);

/* Copy helpers over a request's iovecs, for headers that may be split
 * across descriptors. Return bytes copied. */
size_t iov_copy_from(const struct iovec *iov, unsigned n, size_t off, void *dst, size_t len);
size_t iov_copy_to(const struct iovec *iov, unsigned n, size_t off, const void *src, size_t len);

/* ---- save and restore ----------------------------------------------------
 * A queue's state apart from guest memory: what the driver set up and the
 * device's position in the rings.  Saved with the device quiesced, so no
 * chain is popped and not yet pushed, except ones a device holds by design
 * (the balloon's stats buffer): last_avail - used_idx counts those. */
struct virtq_state {
	uint16_t size;
	bool ready, event_idx;
	uint64_t desc_gpa, avail_gpa, used_gpa;
	uint16_t last_avail, used_idx, signalled_used;
};
void virtq_get_state(const struct virtq *q, struct virtq_state *s);
/* Check a loaded state (untrusted: it may come from a forged file) and, if
 * it is sound, make it q's.  A ready queue is placed as virtq_enable()
 * does it (-EINVAL: size, alignment or RAM); its indices must not claim
 * more chains outstanding than the ring holds (-ERANGE).  max_size is the
 * device's queue_max_size.  On error q is untouched. */
int virtq_set_state(struct virtq *q, const struct guest_mem *mem, const struct virtq_state *s,
		    uint16_t max_size);

#endif
