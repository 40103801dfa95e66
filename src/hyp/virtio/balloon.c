/* virtio-balloon (virtio 1.2 section 5.5).  The host sets num_pages, the
 * number of 4 KiB frames it wants the guest to give up; the driver hands
 * frames over on the inflate queue and takes them back on the deflate
 * queue, and says how many it holds in `actual`.  An inflated frame goes
 * back to the host at once (guest_mem_discard: MADV_DONTNEED on the
 * private anonymous RAM mapping), so the domain's resident memory falls;
 * a deflated one needs nothing: the guest's next touch faults in a zero
 * page.  Every PFN is untrusted: one that is not guest RAM puts the
 * device in NEEDS_RESET with one log line, and nothing is discarded for it.
 *
 * The stats queue (5.5.6.3) works backwards: the driver posts one buffer
 * of (tag, value) pairs, the device keeps it, and returns it whenever it
 * wants fresh figures; the driver refills and posts it again.  One I/O
 * thread per device serves all three queues and asks for stats every
 * STATS_INTERVAL_MS.  Deflate-on-OOM is offered: the driver may then take
 * frames back under memory pressure, which costs the host nothing to allow. */
#include "schema.h"
#include "balloon.h"
#include "domain.h"
#include "log.h"
#include "mem.h"
#include "save/state.h"
#include "virtio.h"

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define VIRTIO_BALLOON_F_MUST_TELL_HOST  0
#define VIRTIO_BALLOON_F_STATS_VQ        1
#define VIRTIO_BALLOON_F_DEFLATE_ON_OOM  2

#define VIRTIO_BALLOON_S_MEMFREE  4      /* bytes the guest leaves unused */
#define VIRTIO_BALLOON_S_MEMTOT   5      /* bytes the guest can use */
#define VIRTIO_BALLOON_S_AVAIL    6      /* bytes it could get without swapping */

#define BALLOON_QUEUE_SIZE  64
#define BALLOON_INFLATE     0
#define BALLOON_DEFLATE     1
#define BALLOON_STATS       2
#define BALLOON_PAGE_SIZE   (1u << BALLOON_PAGE_SHIFT)
#define PFN_BATCH           256          /* PFNs read from a chain at a time */
#define STAT_SIZE           10           /* le16 tag, le64 value, packed */
#define STATS_INTERVAL_MS   2000

struct virtio_balloon_config {
	uint32_t num_pages;     /* written by the device */
	uint32_t actual;        /* written by the driver */
};

struct virtio_balloon {
	struct virtio_dev vdev;
	/* The device's config space: the transport's lock guards it. */
	struct virtio_balloon_config config;
	/* info; taken inside the transport's lock, never held while taking it. */
	pthread_mutex_t lock;
	struct balloon_info info;
	bool broken;
	int stats_head;         /* the stats buffer the device holds, or -1 */
	struct virtq_req req;
};

void *balloon_pfn_ptr(const struct guest_mem *mem, uint32_t pfn)
{
	return gpa_ptr(mem, (uint64_t)pfn << BALLOON_PAGE_SHIFT, BALLOON_PAGE_SIZE);
}

/* The device in NEEDS_RESET, said once (virtio_needs_reset's format). */
#define balloon_broken(b, ...) do {                                   \
		if (!(b)->broken)                                     \
			virtio_needs_reset(&(b)->vdev, __VA_ARGS__);  \
		(b)->broken = true;                                   \
	} while (0)

/* One inflate or deflate chain: an array of le32 PFNs, device-readable
 * only.  Inflated frames are discarded in runs of adjacent host pages, so
 * a large balloon costs few system calls.  Returns -EIO on a bad chain. */
static int balloon_pfns(struct virtio_balloon *b, bool inflate)
{
	const struct guest_mem *mem = &b->vdev.dom->mem;
	uint8_t *run = NULL;
	size_t run_len = 0, off;
	uint32_t pfns[PFN_BATCH];
	uint64_t count = 0;

	if (b->req.n_in) {
		balloon_broken(b, "PFN chain with %u device-writable buffers", b->req.n_in);
		return -EIO;
	}
	if (b->req.out_len % sizeof(uint32_t)) {
		balloon_broken(b, "PFN array of %u bytes, not whole 32-bit PFNs", (uint32_t)b->req.out_len);
		return -EIO;
	}
	for (off = 0; off < b->req.out_len; off += sizeof(pfns)) {
		size_t n = iov_copy_from(b->req.iov, b->req.n_out, off, pfns, sizeof(pfns)) / 4, i;

		for (i = 0; i < n; i++) {
			uint8_t *p = balloon_pfn_ptr(mem, pfns[i]);

			if (!p) {
				if (run_len)
					guest_mem_discard(mem, run, run_len);
				balloon_broken(b, "PFN %#x is not guest RAM", pfns[i]);
				return -EIO;
			}
			count++;
			if (!inflate)
				continue;
			if (run_len && p == run + run_len) {
				run_len += BALLOON_PAGE_SIZE;
				continue;
			}
			if (run_len)
				guest_mem_discard(mem, run, run_len);
			run = p;
			run_len = BALLOON_PAGE_SIZE;
		}
	}
	if (run_len)
		guest_mem_discard(mem, run, run_len);
	pthread_mutex_lock(&b->lock);
	if (inflate)
		b->info.inflated_pages += count;
	else
		b->info.deflated_pages += count;
	pthread_mutex_unlock(&b->lock);
	return 0;
}

static void balloon_serve_pfn_queue(struct virtio_balloon *b, unsigned qi)
{
	struct virtq *q = &b->vdev.vq[qi];
	unsigned pushed = 0;
	int rc;

	if (!q->ready)                  /* a driver need not enable every queue */
		return;
	while (!b->broken && (rc = virtq_pop(q, &b->req)) != 0) {
		if (rc < 0) {
			balloon_broken(b, "malformed ring on queue %u", qi);
			return;
		}
		if (balloon_pfns(b, qi == BALLOON_INFLATE))
			return;
		virtq_push(q, b->req.head, 0);
		pushed++;
	}
	if (pushed)
		virtio_queue_interrupt(&b->vdev, qi);
}

/* The driver posted its stats buffer: read the figures, keep the buffer
 * until we want the next ones. */
static void balloon_take_stats(struct virtio_balloon *b)
{
	struct virtq *q = &b->vdev.vq[BALLOON_STATS];
	int rc;

	if (!q->ready)
		return;
	while (!b->broken && (rc = virtq_pop(q, &b->req)) != 0) {
		uint8_t stat[STAT_SIZE];
		size_t off;

		if (rc < 0 || b->req.n_in) {
			balloon_broken(b, "malformed stats chain (%u writable buffers)", b->req.n_in);
			return;
		}
		if (b->stats_head >= 0)          /* a second buffer: give the older back */
			virtq_push(q, b->stats_head, 0);
		b->stats_head = b->req.head;
		pthread_mutex_lock(&b->lock);
		for (off = 0; off + STAT_SIZE <= b->req.out_len; off += STAT_SIZE) {
			uint16_t tag;
			uint64_t val;

			iov_copy_from(b->req.iov, b->req.n_out, off, stat, STAT_SIZE);
			memcpy(&tag, stat, 2);
			memcpy(&val, stat + 2, 8);
			if (tag == VIRTIO_BALLOON_S_MEMFREE)
				b->info.guest_free = val;
			else if (tag == VIRTIO_BALLOON_S_MEMTOT)
				b->info.guest_total = val;
			else if (tag == VIRTIO_BALLOON_S_AVAIL)
				b->info.guest_avail = val;
			/* other tags (swap, faults, caches) are not shown */
		}
		b->info.stats_valid = true;
		pthread_mutex_unlock(&b->lock);
	}
}

static void balloon_request_stats(struct virtio_balloon *b)
{
	if (b->stats_head < 0 || b->broken)
		return;
	virtq_push(&b->vdev.vq[BALLOON_STATS], b->stats_head, 0);
	b->stats_head = -1;
	virtio_queue_interrupt(&b->vdev, BALLOON_STATS);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The I/O thread (worker.h).  It serves each chain to the end before it
 * looks at stop, so once it returns nothing is in flight but the stats
 * buffer the device holds. */
static void balloon_serve(struct virtio_dev *vdev)
{
	struct virtio_balloon *b = vdev->priv;
	bool stats = virtio_has_feature(vdev, VIRTIO_BALLOON_F_STATS_VQ);
	uint64_t next_stats = now_ms() + STATS_INTERVAL_MS, v;

	while (!virtio_worker_stopping(&vdev->worker)) {
		struct pollfd pfd[4] = {
			{ .fd = vdev->worker.stop_fd, .events = POLLIN },
			{ .fd = b->vdev.kick_fd[BALLOON_INFLATE], .events = POLLIN },
			{ .fd = b->vdev.kick_fd[BALLOON_DEFLATE], .events = POLLIN },
			{ .fd = stats ? b->vdev.kick_fd[BALLOON_STATS] : -1, .events = POLLIN },
		};
		uint64_t now = now_ms();
		int timeout = !stats ? -1 : next_stats > now ? (int)(next_stats - now) : 0;
		unsigned i;

		if (poll(pfd, 4, timeout) < 0 && errno != EINTR)
			break;
		for (i = 1; i < 4; i++)
			if ((pfd[i].revents & POLLIN) && read(pfd[i].fd, &v, sizeof(v)) < 0)
				v = 0;
		/* The queues are cheap to look at: serve all on any wake-up, so a
		 * kick that raced with the last pass is never left waiting. */
		balloon_serve_pfn_queue(b, BALLOON_INFLATE);
		balloon_serve_pfn_queue(b, BALLOON_DEFLATE);
		if (stats) {
			balloon_take_stats(b);
			if (now_ms() >= next_stats) {
				balloon_request_stats(b);
				next_stats = now_ms() + STATS_INTERVAL_MS;
			}
		}
	}
}

static uint64_t balloon_features(struct virtio_dev *vdev)
{
	return (1ULL << VIRTIO_BALLOON_F_STATS_VQ) | (1ULL << VIRTIO_BALLOON_F_DEFLATE_ON_OOM);
}

/* The driver wrote `actual`, its part of config space (5.5.4); the
 * transport's lock is held. */
static void balloon_config_written(struct virtio_dev *vdev)
{
	struct virtio_balloon *b = vdev->priv;

	pthread_mutex_lock(&b->lock);
	b->info.actual_pages = b->config.actual;
	pthread_mutex_unlock(&b->lock);
}

static int balloon_start(struct virtio_dev *vdev)
{
	struct virtio_balloon *b = vdev->priv;

	/* stats_head is -1 after create and reset, or the buffer a restored
	 * device holds: start keeps it. */
	b->broken = false;
	return 0;
}

/* The thread is stopped and the transport's lock held: a reset driver
 * holds nothing, its frames are ordinary RAM again. */
static void balloon_reset(struct virtio_dev *vdev)
{
	struct virtio_balloon *b = vdev->priv;

	b->config.actual = 0;
	pthread_mutex_lock(&b->lock);
	b->info.actual_pages = 0;
	b->info.stats_valid = false;
	pthread_mutex_unlock(&b->lock);
	b->stats_head = -1;
}

/* ---- save and restore ---------------------------------------------------------
 * The target and what the driver says it holds, the guest's last figures,
 * and the stats buffer we keep between requests for fresh ones. */
static int balloon_save(struct virtio_dev *vdev, struct state_buf *sb)
{
	struct virtio_balloon *b = vdev->priv;
	struct virtio_balloon_config c;

	virtio_config_get(vdev, 0, &c, sizeof(c));
	pthread_mutex_lock(&b->lock);
	state_put_u32(sb, c.num_pages);
	state_put_u32(sb, c.actual);
	state_put_u8(sb, b->info.stats_valid);
	state_put_u64(sb, b->info.guest_total);
	state_put_u64(sb, b->info.guest_free);
	state_put_u64(sb, b->info.guest_avail);
	state_put_u64(sb, b->info.inflated_pages);
	state_put_u64(sb, b->info.deflated_pages);
	pthread_mutex_unlock(&b->lock);
	state_put_u32(sb, (uint32_t)b->stats_head);
	return 0;
}

static int balloon_load(struct virtio_dev *vdev, struct state_in *in, char *why, size_t whylen)
{
	struct virtio_balloon *b = vdev->priv;
	struct virtio_balloon_config c;
	struct balloon_info info = { 0 };
	uint64_t ram_pages = vdev->dom->mem.ram_size >> BALLOON_PAGE_SHIFT;
	const struct virtq *sq = &vdev->vq[BALLOON_STATS];
	int32_t head;
	unsigned q;

	c.num_pages = state_get_u32(in);
	c.actual = state_get_u32(in);
	info.stats_valid = state_get_u8(in);
	info.guest_total = state_get_u64(in);
	info.guest_free = state_get_u64(in);
	info.guest_avail = state_get_u64(in);
	info.inflated_pages = state_get_u64(in);
	info.deflated_pages = state_get_u64(in);
	head = (int32_t)state_get_u32(in);
	if (in->bad)
		return -EBADMSG;
	if (c.num_pages > ram_pages) {
		snprintf(why, whylen, "virtio-balloon: target of %u pages, the guest has %llu",
			 c.num_pages, (unsigned long long)ram_pages);
		return -EINVAL;
	}
	/* Quiesced, the device holds no chain but the stats buffer, and that
	 * one must be the chain the stats queue has outstanding. */
	for (q = 0; q < BALLOON_STATS; q++)
		if (vdev->vq[q].last_avail != vdev->vq[q].used_idx) {
			snprintf(why, whylen, "virtio-balloon: queue %u saved with chains in flight", q);
			return -EINVAL;
		}
	if (head < -1 || (head >= 0 && (!sq->ready || head >= sq->size)) ||
	    (uint16_t)(sq->last_avail - sq->used_idx) != (head >= 0)) {
		snprintf(why, whylen, "virtio-balloon: stats buffer %d does not match its queue", head);
		return -EINVAL;
	}
	/* Before the guest runs: nobody reads config space yet. */
	b->config = c;
	pthread_mutex_lock(&b->lock);
	info.target_pages = c.num_pages;
	info.actual_pages = c.actual;
	b->info = info;
	pthread_mutex_unlock(&b->lock);
	b->stats_head = head;
	return 0;
}

static const struct virtio_dev_ops balloon_ops = {
	.name = "virtio-balloon",
	.device_id = VIRTIO_ID_BALLOON,
	.pci_class = 0x050000,              /* memory controller, as QEMU's */
	.num_queues = 3,
	.queue_max_size = BALLOON_QUEUE_SIZE,
	.features = balloon_features,
	.config_writable_off = offsetof(struct virtio_balloon_config, actual),
	.config_writable_len = sizeof(uint32_t),
	.config_written = balloon_config_written,
	.thread_name = "balloon",
	.serve = balloon_serve,
	.start = balloon_start,
	.reset = balloon_reset,
	.save = balloon_save,
	.load = balloon_load,
	.state_single = true,       /* one per domain: "virtio-balloon" */
};

int virtio_balloon_create(struct domain *dom, uint32_t target_pages, struct virtio_balloon **out)
{
	struct virtio_balloon *b = calloc(1, sizeof(*b));
	int rc;

	if (!b)
		return -ENOMEM;
	pthread_mutex_init(&b->lock, NULL);
	b->vdev.ops = &balloon_ops;
	b->vdev.priv = b;
	b->vdev.config = &b->config;
	b->vdev.config_size = sizeof(b->config);
	b->config.num_pages = target_pages;
	b->info.target_pages = target_pages;
	b->stats_head = -1;
	/* Always the last slot: whatever disks and vifs came and went, a
	 * restored domain rebuilds the same bus (schema.h). */
	b->vdev.slot = DOMAIN_BALLOON_SLOT;
	if ((rc = virtio_pci_create(dom, &b->vdev))) {
		free(b);
		return rc;
	}
	*out = b;
	return 0;
}

void virtio_balloon_set_target(struct virtio_balloon *b, uint32_t target_pages)
{
	pthread_mutex_lock(&b->lock);
	b->info.target_pages = target_pages;
	pthread_mutex_unlock(&b->lock);
	/* The transport's lock, ours free: it tells the driver. */
	virtio_config_set(&b->vdev, offsetof(struct virtio_balloon_config, num_pages), &target_pages,
			  sizeof(target_pages));
}

void virtio_balloon_info(struct virtio_balloon *b, struct balloon_info *out)
{
	pthread_mutex_lock(&b->lock);
	*out = b->info;
	pthread_mutex_unlock(&b->lock);
}
