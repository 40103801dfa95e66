#include "queue.h"
#include "log.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

/* Ordering between our reads/writes of the ring and the driver's, on x86:
 * loads are not reordered with loads nor stores with stores, so the
 * acquire/release fences compile to nothing but keep the compiler honest;
 * store-then-load (publish used idx, then read the driver's event index)
 * needs a real fence. */
#define acquire_fence() atomic_thread_fence(memory_order_acquire)
#define release_fence() atomic_thread_fence(memory_order_release)
#define full_fence()    atomic_thread_fence(memory_order_seq_cst)


static uint16_t read16(const volatile uint16_t *p) { return *p; }

int virtq_enable(struct virtq *q, const struct guest_mem *mem)
{
	uint64_t n = q->size;

	if (n == 0 || n > VIRTQ_MAX_SIZE || (n & (n - 1)))
		return -EINVAL;
	if ((q->desc_gpa & 15) || (q->avail_gpa & 1) || (q->used_gpa & 3))
		return -EINVAL;
	q->desc = gpa_ptr(mem, q->desc_gpa, 16 * n);
	q->avail = gpa_ptr(mem, q->avail_gpa, 6 + 2 * n);
	q->used = gpa_ptr(mem, q->used_gpa, 6 + 8 * n);
	if (!q->desc || !q->avail || !q->used) {
		q->desc = NULL;
		q->avail = NULL;
		q->used = NULL;
		return -EINVAL;
	}
	q->mem = mem;
	q->last_avail = 0;
	q->used_idx = 0;
	q->signalled_used = 0;
	q->ready = true;
	return 0;
}

void virtq_reset(struct virtq *q)
{
	*q = (struct virtq){ 0 };
}

/* Add one descriptor's buffer to the request, keeping readable before
 * writable as the spec requires of drivers (2.7.4.2). */
static int virtq_add_buffer(struct virtq *q, struct virtq_req *req, const struct virtq_desc *d)
{
	void *host;
	unsigned i = req->n_out + req->n_in;

	if (d->len == 0)
		return 0;               /* nothing to transfer; harmless */
	if (i == VIRTQ_MAX_SEGS)
		return -EIO;
	host = gpa_ptr(q->mem, d->addr, d->len);
	if (!host)
		return -EIO;
	if (d->flags & VIRTQ_DESC_F_WRITE) {
		/* The device will write it, perhaps long after this (an I/O
		 * in flight): a migration resends such pages at the end. */
		guest_mem_mark_dirty(q->mem, host, d->len);
		req->n_in++;
		req->in_len += d->len;
	} else {
		if (req->n_in)
			return -EIO;    /* readable after writable */
		req->n_out++;
		req->out_len += d->len;
	}
	req->iov[i] = (struct iovec){ host, d->len };
	return 0;
}

/* Walk an indirect table (2.7.5.3): a descriptor array in guest memory,
 * itself bounds-checked, with no further indirection allowed. */
static int virtq_walk_indirect(struct virtq *q, struct virtq_req *req, const struct virtq_desc *ind)
{
	const struct virtq_desc *table;
	uint32_t n = ind->len / sizeof(struct virtq_desc), i = 0, hops = 0;

	if (ind->len == 0 || ind->len % sizeof(struct virtq_desc) || n > VIRTQ_MAX_SEGS)
		return -EIO;
	table = gpa_ptr(q->mem, ind->addr, ind->len);
	if (!table)
		return -EIO;
	for (;;) {
		struct virtq_desc d = table[i];

		if (d.flags & VIRTQ_DESC_F_INDIRECT || ++hops > n)
			return -EIO;
		if (virtq_add_buffer(q, req, &d))
			return -EIO;
		if (!(d.flags & VIRTQ_DESC_F_NEXT))
			return 0;
		if (d.next >= n)
			return -EIO;
		i = d.next;
	}
}

int virtq_pop(struct virtq *q, struct virtq_req *req)
{
	uint16_t avail_idx, head, i;
	unsigned hops = 0;

	if (!q->ready)
		return 0;
	avail_idx = read16(&q->avail->idx);
	if (avail_idx == q->last_avail)
		return 0;
	/* More entries than the ring holds means a confused or hostile driver. */
	if ((uint16_t)(avail_idx - q->last_avail) > q->size)
		return -EIO;
	acquire_fence();   /* ring entries are read after the index that published them */
	head = read16(&q->avail->ring[q->last_avail % q->size]);
	if (head >= q->size)
		return -EIO;
	q->last_avail++;

	req->head = head;
	req->n_out = req->n_in = 0;
	req->out_len = req->in_len = 0;
	i = head;
	for (;;) {
		struct virtq_desc d = q->desc[i];   /* one copy: the guest may change it */

		if (++hops > q->size)
			return -EIO;                /* a loop, or a chain longer than the queue */
		if (d.flags & VIRTQ_DESC_F_INDIRECT) {
			if (d.flags & VIRTQ_DESC_F_NEXT)
				return -EIO;
			return virtq_walk_indirect(q, req, &d) ? -EIO : 1;
		}
		if (virtq_add_buffer(q, req, &d))
			return -EIO;
		if (!(d.flags & VIRTQ_DESC_F_NEXT))
			return 1;
		if (d.next >= q->size)
			return -EIO;
		i = d.next;
	}
}

int virtq_pop_quiet(struct virtq *q, struct virtq_req *req)
{
	int rc = virtq_pop(q, req);

	if (rc)
		return rc;
	virtq_set_notify(q, true);
	if ((rc = virtq_pop(q, req)) != 0)
		virtq_set_notify(q, false);
	return rc;
}

void virtq_unpop(struct virtq *q, uint16_t n)
{
	q->last_avail -= n;
}

void virtq_push(struct virtq *q, uint16_t head, uint32_t written)
{
	struct virtq_used_elem *e = &q->used->ring[q->used_idx % q->size];

	guest_mem_mark_dirty(q->mem, q->used, 6 + 8ULL * q->size);
	e->id = head;
	e->len = written;
	release_fence();   /* the element is visible before the index that publishes it */
	q->used_idx++;
	*(volatile uint16_t *)&q->used->idx = q->used_idx;
}

bool virtq_need_interrupt(struct virtq *q)
{
	uint16_t old = q->signalled_used, now = q->used_idx, event;

	/* A driver may set DRIVER_OK without enabling every queue (or with
	 * one its placement made us refuse): there is no ring to look at. */
	if (!q->ready)
		return false;
	full_fence();      /* our used idx store before the driver's event index load */
	if (!q->event_idx) {
		if (read16(&q->avail->flags) & VIRTQ_AVAIL_F_NO_INTERRUPT)
			return false;
		q->signalled_used = now;
		return now != old;
	}
	/* used_event follows the avail ring (2.7.10). */
	event = read16(&q->avail->ring[q->size]);
	q->signalled_used = now;
	/* vring_need_event(): did used_idx cross event since the last interrupt? */
	return (uint16_t)(now - event - 1) < (uint16_t)(now - old);
}

void virtq_set_notify(struct virtq *q, bool enable)
{
	if (!q->ready)
		return;
	if (q->event_idx) {
		/* avail_event follows the used ring: ask for a kick at the next entry. */
		*(volatile uint16_t *)&q->used->ring[q->size] = enable ? q->last_avail : (uint16_t)(q->last_avail - 1);
	} else {
		*(volatile uint16_t *)&q->used->flags = enable ? 0 : VIRTQ_USED_F_NO_NOTIFY;
	}
	full_fence();
}

/* Copy between a flat buffer and the bytes [off, off+len) of an iovec
 * array, in either direction; returns the bytes copied. */
static size_t iov_copy(const struct iovec *iov, unsigned n, size_t off, uint8_t *buf, size_t len,
		       bool to_iov)
{
	size_t done = 0;
	unsigned i;

	for (i = 0; i < n && done < len; i++) {
		uint8_t *base = iov[i].iov_base;
		size_t take;

		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		take = iov[i].iov_len - off;
		if (take > len - done)
			take = len - done;
		if (to_iov)
			memcpy(base + off, buf + done, take);
		else
			memcpy(buf + done, base + off, take);
		done += take;
		off = 0;
	}
	return done;
}

size_t iov_copy_from(const struct iovec *iov, unsigned n, size_t off, void *dst, size_t len)
{
	return iov_copy(iov, n, off, dst, len, false);
}

size_t iov_copy_to(const struct iovec *iov, unsigned n, size_t off, const void *src, size_t len)
{
	return iov_copy(iov, n, off, (uint8_t *)src, len, true);
}

/* ---- save and restore ------------------------------------------------------ */

void virtq_get_state(const struct virtq *q, struct virtq_state *s)
{
	*s = (struct virtq_state){
		.size = q->size, .ready = q->ready, .event_idx = q->event_idx,
		.desc_gpa = q->desc_gpa, .avail_gpa = q->avail_gpa, .used_gpa = q->used_gpa,
		.last_avail = q->last_avail, .used_idx = q->used_idx,
		.signalled_used = q->signalled_used,
	};
}

int virtq_set_state(struct virtq *q, const struct guest_mem *mem, const struct virtq_state *s,
		    uint16_t max_size)
{
	struct virtq t = {
		.size = s->size, .event_idx = s->event_idx,
		.desc_gpa = s->desc_gpa, .avail_gpa = s->avail_gpa, .used_gpa = s->used_gpa,
	};

	if (s->size > max_size)
		return -EINVAL;
	if (s->ready) {
		/* The same placement checks as the driver's enable: the ring
		 * pointers are derived here, never taken from the stream. */
		if (virtq_enable(&t, mem))
			return -EINVAL;
		if ((uint16_t)(s->last_avail - s->used_idx) > s->size)
			return -ERANGE;
		t.last_avail = s->last_avail;
		t.used_idx = s->used_idx;
		t.signalled_used = s->signalled_used;
	} else if (s->last_avail || s->used_idx || s->signalled_used) {
		return -ERANGE;         /* a queue never enabled has no position */
	}
	*q = t;
	return 0;
}
