/* virtio-blk (virtio 1.2 section 5.2).  One I/O thread per disk drives an
 * io_uring: it waits on the queue's kick eventfd and on completions in the
 * same ring, so many requests are in flight and no vCPU thread ever waits
 * for the disk.  FLUSH is an fdatasync ordered after every earlier write
 * (IOSQE_IO_DRAIN): what the guest flushed is on the host's disk.
 *
 * A disk that is a file in memory (tmpfs, ramfs) is read and written by
 * the I/O thread itself: such a request is a copy that never waits for a
 * device, and io_uring would hand each one to a worker thread (shmem has
 * no non-blocking path), a wake-up and a thread switch either side of
 * every copy.  While the thread works through the ring it asks the driver
 * not to notify it (VIRTQ_USED_F_NO_NOTIFY), and looks again once it has
 * asked for notifications back. */
#include "blk.h"
#include "backend/disk.h"
#include "domain.h"
#include "log.h"
#include "save/state.h"
#include "virtio.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VIRTIO_BLK_F_SEG_MAX      2
#define VIRTIO_BLK_F_RO           5
#define VIRTIO_BLK_F_BLK_SIZE     6
#define VIRTIO_BLK_F_FLUSH        9
#define VIRTIO_BLK_F_DISCARD      13
#define VIRTIO_BLK_F_WRITE_ZEROES 14

#define VIRTIO_BLK_T_IN           0
#define VIRTIO_BLK_T_OUT          1
#define VIRTIO_BLK_T_FLUSH        4
#define VIRTIO_BLK_T_GET_ID       8
#define VIRTIO_BLK_T_DISCARD      11
#define VIRTIO_BLK_T_WRITE_ZEROES 13
#define VIRTIO_BLK_S_OK           0
#define VIRTIO_BLK_S_IOERR        1
#define VIRTIO_BLK_S_UNSUPP       2
#define VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP 1

#define BLK_QUEUE_SIZE   256
#define BLK_SEG_MAX      126          /* data segments per request */
#define BLK_MAX_DISCARD_SECTORS (1u << 22)   /* 2 GiB per discard/zeroes request */
#define BLK_KICK_TAG     UINT64_MAX     /* the ring's read of the kick eventfd; a request's tag is its slot */

struct virtio_blk_config {
	uint64_t capacity;
	uint32_t size_max, seg_max;
	struct { uint16_t cylinders; uint8_t heads, sectors; } geometry;
	uint32_t blk_size;
	struct { uint8_t physical_block_exp, alignment_offset; uint16_t min_io_size; uint32_t opt_io_size; } topology;
	uint8_t writeback, unused0;
	uint16_t num_queues;
	uint32_t max_discard_sectors, max_discard_seg, discard_sector_alignment;
	uint32_t max_write_zeroes_sectors, max_write_zeroes_seg;
	uint8_t write_zeroes_may_unmap, unused1[3];
} __attribute__((packed));
_Static_assert(sizeof(struct virtio_blk_config) == 60, "virtio_blk_config layout");

struct virtio_blk_req_hdr { uint32_t type, reserved; uint64_t sector; };
struct virtio_blk_discard { uint64_t sector; uint32_t num_sectors, flags; };

struct blk_slot {
	bool busy;
	uint8_t type;
	uint16_t head;
	uint8_t *status;             /* the request's status byte, in guest RAM */
	uint32_t written;            /* bytes the device wrote, status included */
	uint64_t offset, len;
	unsigned niov;
	struct iovec iov[BLK_SEG_MAX];
	bool retried_buffered;
};

struct virtio_blk {
	struct virtio_dev vdev;
	struct disk *disk;
	struct virtio_blk_config config;
	struct io_uring ring;
	bool broken;                 /* ring malformed: wait for reset */
	bool kick_armed;             /* a read of the kick eventfd is in the ring */
	uint64_t kick_count;
	unsigned inflight;
	struct blk_slot slots[BLK_QUEUE_SIZE];
	struct virtq_req req;        /* scratch for the chain being parsed */
	struct io_counters io;
};

/* Copy the part [off, off+len) of an iovec array into dst (at most max). */
static unsigned iov_slice(const struct iovec *src, unsigned n, uint64_t off, uint64_t len,
			  struct iovec *dst, unsigned max)
{
	unsigned i, k = 0;

	for (i = 0; i < n && len; i++) {
		uint64_t take;

		if (off >= src[i].iov_len) {
			off -= src[i].iov_len;
			continue;
		}
		if (k == max)
			return max + 1;
		take = src[i].iov_len - off;
		if (take > len)
			take = len;
		dst[k++] = (struct iovec){ (uint8_t *)src[i].iov_base + off, take };
		len -= take;
		off = 0;
	}
	return k;
}

static void blk_complete(struct virtio_blk *b, struct blk_slot *s, uint8_t status)
{
	if (status == VIRTIO_BLK_S_IOERR) {
		io_count(&b->io.errors, 1);
	} else if (status == VIRTIO_BLK_S_OK && s->type == VIRTIO_BLK_T_IN) {
		io_count(&b->io.in_ops, 1);
		io_count(&b->io.in_bytes, s->len);
	} else if (status == VIRTIO_BLK_S_OK && s->type == VIRTIO_BLK_T_OUT) {
		io_count(&b->io.out_ops, 1);
		io_count(&b->io.out_bytes, s->len);
	}
	*s->status = status;
	virtq_push(&b->vdev.vq[0], s->head, s->written);
	if (s->busy) {
		s->busy = false;
		b->inflight--;
	}
}

static struct blk_slot *blk_free_slot(struct virtio_blk *b)
{
	unsigned i;

	for (i = 0; i < BLK_QUEUE_SIZE; i++)
		if (!b->slots[i].busy)
			return &b->slots[i];
	return NULL;
}

static void blk_finish(struct virtio_blk *b, struct blk_slot *s, int res);

/* A file in memory: the copy, now, in this thread (see the top). */
static void blk_rw_now(struct virtio_blk *b, struct blk_slot *s)
{
	int fd = b->disk->fd_buffered;
	ssize_t n = s->type == VIRTIO_BLK_T_IN ? preadv(fd, s->iov, s->niov, s->offset)
					       : pwritev(fd, s->iov, s->niov, s->offset);

	blk_finish(b, s, n < 0 ? -errno : (int)n);
}

static void blk_submit_rw(struct virtio_blk *b, struct blk_slot *s, int fd)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&b->ring);

	if (s->type == VIRTIO_BLK_T_IN)
		io_uring_prep_readv(sqe, fd, s->iov, s->niov, s->offset);
	else
		io_uring_prep_writev(sqe, fd, s->iov, s->niov, s->offset);
	io_uring_sqe_set_data64(sqe, s - b->slots);
}

/* Parse one popped chain and either queue its I/O or complete it now.
 * Returns -EIO if the request is malformed (the device needs a reset). */
static int blk_start_request(struct virtio_blk *b, struct blk_slot *s)
{
	struct virtq_req *r = &b->req;
	struct virtio_blk_req_hdr hdr;
	struct iovec status_iov;
	const struct iovec *in = r->iov + r->n_out;
	uint64_t data_len;
	struct io_uring_sqe *sqe;
	bool ro = b->disk->readonly;

	/* Shape: a readable header (possibly split), a writable status byte last. */
	if (r->out_len < sizeof(hdr) || r->in_len < 1)
		return -EIO;
	iov_copy_from(r->iov, r->n_out, 0, &hdr, sizeof(hdr));
	if (iov_slice(in, r->n_in, r->in_len - 1, 1, &status_iov, 1) != 1)
		return -EIO;
	memset(s, 0, offsetof(struct blk_slot, iov));
	s->head = r->head;
	s->status = status_iov.iov_base;
	s->type = hdr.type;
	s->written = 1;

	switch (hdr.type) {
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_OUT:
		if (hdr.type == VIRTIO_BLK_T_IN) {
			if (r->out_len != sizeof(hdr))
				return -EIO;
			data_len = r->in_len - 1;
			s->niov = iov_slice(in, r->n_in, 0, data_len, s->iov, BLK_SEG_MAX);
			s->written = r->in_len;
		} else {
			if (r->in_len != 1)
				return -EIO;
			data_len = r->out_len - sizeof(hdr);
			s->niov = iov_slice(r->iov, r->n_out, sizeof(hdr), data_len, s->iov, BLK_SEG_MAX);
		}
		s->offset = hdr.sector * 512;
		s->len = data_len;
		if (s->niov > BLK_SEG_MAX || data_len % 512 || hdr.sector > b->disk->size / 512 ||
		    data_len > b->disk->size - s->offset || (hdr.type == VIRTIO_BLK_T_OUT && ro)) {
			s->written = 1;
			blk_complete(b, s, VIRTIO_BLK_S_IOERR);
			return 0;
		}
		if (data_len == 0) {
			blk_complete(b, s, VIRTIO_BLK_S_OK);
			return 0;
		}
		if (b->disk->in_memory) {
			blk_rw_now(b, s);
			return 0;
		}
		blk_submit_rw(b, s, b->disk->fd);
		break;
	case VIRTIO_BLK_T_FLUSH:
		sqe = io_uring_get_sqe(&b->ring);
		io_uring_prep_fsync(sqe, b->disk->fd_buffered, IORING_FSYNC_DATASYNC);
		/* After every write submitted before it has completed. */
		io_uring_sqe_set_flags(sqe, IOSQE_IO_DRAIN);
		io_uring_sqe_set_data64(sqe, s - b->slots);
		break;
	case VIRTIO_BLK_T_GET_ID: {
		char id[DISK_ID_MAX] = { 0 };

		memcpy(id, b->disk->id, strnlen(b->disk->id, DISK_ID_MAX));
		s->written = 1 + iov_copy_to(in, r->n_in, 0, id,
					    r->in_len - 1 < DISK_ID_MAX ? r->in_len - 1 : DISK_ID_MAX);
		blk_complete(b, s, VIRTIO_BLK_S_OK);
		return 0;
	}
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES: {
		struct virtio_blk_discard seg;
		int mode = FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE;

		if (r->out_len != sizeof(hdr) + sizeof(seg) || r->in_len != 1)
			return -EIO;
		iov_copy_from(r->iov, r->n_out, sizeof(hdr), &seg, sizeof(seg));
		if (ro || seg.num_sectors > BLK_MAX_DISCARD_SECTORS || seg.sector > b->disk->size / 512 ||
		    (uint64_t)seg.num_sectors * 512 > b->disk->size - seg.sector * 512) {
			blk_complete(b, s, VIRTIO_BLK_S_IOERR);
			return 0;
		}
		if (hdr.type == VIRTIO_BLK_T_WRITE_ZEROES && !(seg.flags & VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP))
			mode = FALLOC_FL_KEEP_SIZE | FALLOC_FL_ZERO_RANGE;
		s->offset = seg.sector * 512;
		s->len = (uint64_t)seg.num_sectors * 512;
		sqe = io_uring_get_sqe(&b->ring);
		io_uring_prep_fallocate(sqe, b->disk->fd_buffered, mode, s->offset, s->len);
		io_uring_sqe_set_data64(sqe, s - b->slots);
		break;
	}
	default:
		blk_complete(b, s, VIRTIO_BLK_S_UNSUPP);
		return 0;
	}
	s->busy = true;
	b->inflight++;
	return 0;
}

/* Zeroes by writing, for files and devices that cannot fallocate them. */
static int blk_write_zeroes_slowly(struct virtio_blk *b, uint64_t off, uint64_t len)
{
	static const uint8_t zeroes[65536];

	while (len) {
		size_t n = len < sizeof(zeroes) ? len : sizeof(zeroes);
		ssize_t w = pwrite(b->disk->fd_buffered, zeroes, n, off);

		if (w <= 0)
			return -EIO;
		off += w;
		len -= w;
	}
	return 0;
}

static void blk_finish(struct virtio_blk *b, struct blk_slot *s, int res)
{
	uint8_t status = VIRTIO_BLK_S_OK;

	switch (s->type) {
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_OUT:
		/* O_DIRECT refuses buffers that are not aligned: retry buffered. */
		if (res == -EINVAL && b->disk->fd != b->disk->fd_buffered && !s->retried_buffered) {
			s->retried_buffered = true;
			blk_submit_rw(b, s, b->disk->fd_buffered);
			return;
		}
		if (res < 0 || (uint64_t)res != s->len) {
			log_debug("%s: %s at %llu: %s", b->disk->path, s->type ? "write" : "read",
				  (unsigned long long)s->offset, res < 0 ? strerror(-res) : "short");
			status = VIRTIO_BLK_S_IOERR;
			if (s->type == VIRTIO_BLK_T_IN)
				s->written = 1;
		}
		break;
	case VIRTIO_BLK_T_WRITE_ZEROES:
		if (res == -EOPNOTSUPP || res == -EINVAL)
			res = blk_write_zeroes_slowly(b, s->offset, s->len);
		status = res < 0 ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK;
		break;
	case VIRTIO_BLK_T_DISCARD:
		/* Discard is a hint: a backend that cannot punch holes ignores it. */
		status = (res < 0 && res != -EOPNOTSUPP) ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK;
		break;
	default:
		status = res < 0 ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK;
	}
	blk_complete(b, s, status);
}

static void blk_arm_kick(struct virtio_blk *b)
{
	struct io_uring_sqe *sqe;

	if (b->kick_armed)
		return;
	sqe = io_uring_get_sqe(&b->ring);
	io_uring_prep_read(sqe, b->vdev.kick_fd[0], &b->kick_count, sizeof(b->kick_count), 0);
	io_uring_sqe_set_data64(sqe, BLK_KICK_TAG);
	b->kick_armed = true;
}

/* The thread waits on its ring alone, so the worker wakes it for a stop
 * through the kick eventfd.  (A read of the stop eventfd kept in the ring
 * would hold back every flush: IOSQE_IO_DRAIN waits for all the requests
 * before it.  The kick's read is armed only between requests.) */
static void blk_wake(struct virtio_dev *vdev)
{
	uint64_t one = 1;

	if (write(vdev->kick_fd[0], &one, sizeof(one)) < 0)
		log_debug("blk stop kick: %s", strerror(errno));
}

/* Before the thread returns: a kick read still in the ring completes
 * against blk_wake's kick; take it, or it would swallow the next start's
 * first kick.  (A guest's kick it takes is not lost: a start looks at the
 * queue first.) */
static void blk_disarm(struct virtio_blk *b)
{
	struct io_uring_cqe *cqe;
	int rc;

	while (b->kick_armed) {
		if ((rc = io_uring_wait_cqe(&b->ring, &cqe)) == -EINTR)
			continue;
		if (rc)
			break;
		if (io_uring_cqe_get_data64(cqe) == BLK_KICK_TAG)
			b->kick_armed = false;
		io_uring_cqe_seen(&b->ring, cqe);
	}
}

/* Take requests while there are free slots, with the driver's
 * notifications off meanwhile (virtq_pop_quiet).  Requests done here and now (a disk in memory) interrupt
 * the driver every BLK_IRQ_BATCH completions, not only at the end. */
#define BLK_IRQ_BATCH 16

static void blk_process_queue(struct virtio_blk *b)
{
	struct virtq *q = &b->vdev.vq[0];
	unsigned done = 0;

	virtq_set_notify(q, false);
	while (!b->broken && b->inflight < BLK_QUEUE_SIZE &&
	       !virtio_worker_stopping(&b->vdev.worker)) {
		struct blk_slot *s = blk_free_slot(b);
		unsigned before = b->inflight;
		int rc;

		if (!s)
			break;
		if ((rc = virtq_pop_quiet(q, &b->req)) == 0)
			return;
		if (rc < 0 || blk_start_request(b, s) < 0) {
			b->broken = true;
			virtio_needs_reset(&b->vdev, "malformed request on the virtqueue");
			break;
		}
		if (b->inflight == before && ++done % BLK_IRQ_BATCH == 0)
			virtio_queue_interrupt(&b->vdev, 0);
	}
	/* Stopped early (slots full, a stop, a broken ring): a completion or
	 * the next start looks at the ring again; notify meanwhile. */
	virtq_set_notify(q, true);
}

/* The I/O thread (worker.h): requests in, completions out, until asked
 * to stop and every request in flight has completed (its used entry
 * written, the driver interrupted): afterwards no request is outstanding
 * and nothing of ours touches guest memory. */
static void blk_serve(struct virtio_dev *vdev)
{
	struct virtio_blk *b = vdev->priv;
	struct virtio_worker *w = &vdev->worker;

	blk_process_queue(b);
	for (;;) {
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;
		bool kicked = false;

		if (!virtio_worker_stopping(w))
			blk_arm_kick(b);
		else if (b->inflight == 0)
			break;
		virtio_queue_interrupt(vdev, 0);
		if (io_uring_submit_and_wait(&b->ring, 1) < 0 && errno != EINTR)
			continue;
		io_uring_for_each_cqe(&b->ring, head, cqe) {
			uint64_t tag = io_uring_cqe_get_data64(cqe);

			if (tag == BLK_KICK_TAG) {
				b->kick_armed = false;
				kicked = true;
			} else if (tag < BLK_QUEUE_SIZE) {
				blk_finish(b, &b->slots[tag], cqe->res);
			}
			seen++;
		}
		io_uring_cq_advance(&b->ring, seen);
		if ((kicked || seen) && !virtio_worker_stopping(w))
			blk_process_queue(b);
	}
	virtio_queue_interrupt(vdev, 0);
	blk_disarm(b);
}

static uint64_t blk_features(struct virtio_dev *vdev)
{
	struct virtio_blk *b = vdev->priv;

	return (1ULL << VIRTIO_BLK_F_SEG_MAX) | (1ULL << VIRTIO_BLK_F_BLK_SIZE) |
	       (1ULL << VIRTIO_BLK_F_FLUSH) | (1ULL << VIRTIO_BLK_F_DISCARD) |
	       (1ULL << VIRTIO_BLK_F_WRITE_ZEROES) |
	       (b->disk->readonly ? 1ULL << VIRTIO_BLK_F_RO : 0);
}

static int blk_start(struct virtio_dev *vdev)
{
	struct virtio_blk *b = vdev->priv;

	b->broken = false;
	return 0;
}

/* The disk's shape, which the guest has seen: the domain restored must have
 * the same disk (its contents are the host's to carry, shared or copied). */
static int blk_save(struct virtio_dev *vdev, struct state_buf *sb)
{
	struct virtio_blk *b = vdev->priv;

	state_put_u64(sb, b->config.capacity);
	state_put_u8(sb, b->disk->readonly);
	return 0;
}

static int blk_load(struct virtio_dev *vdev, struct state_in *in, char *why, size_t whylen)
{
	struct virtio_blk *b = vdev->priv;
	uint64_t capacity = state_get_u64(in);
	uint8_t ro = state_get_u8(in);

	if (in->bad)
		return -EBADMSG;
	if (capacity != b->config.capacity || ro != b->disk->readonly) {
		snprintf(why, whylen, "virtio-blk %s: saved with %llu sectors%s, this disk has %llu%s",
			 b->disk->path, (unsigned long long)capacity, ro ? " read-only" : "",
			 (unsigned long long)b->config.capacity, b->disk->readonly ? " read-only" : "");
		return -EINVAL;
	}
	/* Quiesced, every request had completed: one that had not would
	 * never be answered. */
	if (vdev->vq[0].last_avail != vdev->vq[0].used_idx) {
		snprintf(why, whylen, "virtio-blk: saved with %u requests in flight",
			 (uint16_t)(vdev->vq[0].last_avail - vdev->vq[0].used_idx));
		return -EINVAL;
	}
	return 0;
}

static void blk_destroy(struct virtio_dev *vdev)
{
	struct virtio_blk *b = vdev->priv;

	domain_remove_io(vdev->dom, &b->io);
	io_uring_queue_exit(&b->ring);
	free(b);
}

static const struct virtio_dev_ops blk_ops = {
	.name = "virtio-blk",
	.device_id = VIRTIO_ID_BLOCK,
	.pci_class = 0x010000,
	.num_queues = 1,
	.queue_max_size = BLK_QUEUE_SIZE,
	.features = blk_features,
	.thread_name = "blk-io",
	.serve = blk_serve,
	.wake = blk_wake,
	.start = blk_start,
	.save = blk_save,
	.load = blk_load,
	.destroy = blk_destroy,
};

int virtio_blk_create(struct domain *dom, struct disk *disk)
{
	return virtio_blk_create_at(dom, disk, 0, NULL);
}

int virtio_blk_create_at(struct domain *dom, struct disk *disk, unsigned slot, struct virtio_dev **out)
{
	struct virtio_blk *b = calloc(1, sizeof(*b));
	int rc;

	if (!b)
		return -ENOMEM;
	b->vdev.slot = slot;
	b->disk = disk;
	b->vdev.ops = &blk_ops;
	b->vdev.priv = b;
	b->vdev.config = &b->config;
	b->vdev.config_size = sizeof(b->config);
	b->config = (struct virtio_blk_config){
		.capacity = disk->size / 512,
		.seg_max = BLK_SEG_MAX,
		.blk_size = 512,
		.num_queues = 1,
		.max_discard_sectors = BLK_MAX_DISCARD_SECTORS,
		.max_discard_seg = 1,
		.discard_sector_alignment = 8,
		.max_write_zeroes_sectors = BLK_MAX_DISCARD_SECTORS,
		.max_write_zeroes_seg = 1,
		.write_zeroes_may_unmap = 1,
	};
	rc = io_uring_queue_init(BLK_QUEUE_SIZE + 8, &b->ring, 0);
	if (rc < 0) {
		free(b);
		return rc;
	}
	rc = virtio_pci_create(dom, &b->vdev);
	if (rc) {
		io_uring_queue_exit(&b->ring);
		free(b);
		return rc;
	}
	domain_add_io(dom, IO_DISK, &b->io, b->vdev.slot);
	if (out)
		*out = &b->vdev;
	return 0;
}
