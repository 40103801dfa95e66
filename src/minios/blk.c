/* virtio-blk driver and the shell commands that drive real I/O through it:
 * blk, blk-pattern, blk-flush, blk-sum, blk-discard, blk-zeroes, ext4,
 * blk-bench.  Disks come and go with PCI hot-plug (hotplug.c): a new one
 * takes the first free name, a removed one leaves its name free.  Requests are
 * large and many are kept in flight, so few guest instructions are spent
 * per byte moved. */
#include "io.h"
#include "minios.h"
#include "pci.h"
#include "virtio.h"

#define VIRTIO_ID_BLOCK  2
#define BLK_F_RO         5
#define BLK_F_DISCARD    13
#define BLK_F_WRITE_ZEROES 14
#define T_IN             0
#define T_OUT            1
#define T_FLUSH          4
#define T_GET_ID         8
#define T_DISCARD        11
#define T_WRITE_ZEROES   13
#define WRITE_ZEROES_UNMAP 1
#define MAX_DISKS        8
#define QUEUE_MAX        256

struct blk_req {
	struct { uint32_t type, reserved; uint64_t sector; } hdr;
	uint8_t status;
};

struct blkdev {
	struct vdev v;
	struct vq q;
	char name[4];
	uint64_t sectors;
	int ro;
	char id[21];
	struct blk_req *reqs;          /* by descriptor head */
	uint64_t done_status;          /* last completion status */
	int gone;                      /* hot-unplugged: the entry is free */
};

static struct blkdev disks[MAX_DISKS];
static unsigned ndisks;

static int blk_submit(struct blkdev *d, uint32_t type, uint64_t sector, void *buf, uint32_t len)
{
	struct blk_req r = { .hdr = { type, 0, sector } };
	struct vbuf b[3];
	unsigned n = 0;
	int head;

	/* The header and status live in the slot of the chain's head, which
	 * is only known once added: stage them in a spare slot, then copy. */
	b[n++] = (struct vbuf){ 0, 16, 0 };
	if (len)
		b[n++] = (struct vbuf){ (uint64_t)buf, len, type == T_IN || type == T_GET_ID };
	b[n++] = (struct vbuf){ 0, 1, 1 };
	/* Peek the head vq_add will use, so the addresses are right first time. */
	head = d->q.free_head;
	if (d->q.nfree < n)
		return -1;
	d->reqs[head] = r;
	d->reqs[head].status = 0xff;
	b[0].addr = (uint64_t)&d->reqs[head].hdr;
	b[n - 1].addr = (uint64_t)&d->reqs[head].status;
	return vq_add(&d->q, b, n);
}

/* Reap one completion; returns its head or -1. */
static int blk_reap(struct blkdev *d)
{
	int head = vq_get(&d->q, NULL);

	if (head >= 0)
		d->done_status = d->reqs[head].status;
	return head;
}

/* One request, waited for. Returns the virtio status (0 ok, 1 I/O error). */
static int blk_sync(struct blkdev *d, uint32_t type, uint64_t sector, void *buf, uint32_t len)
{
	int head = blk_submit(d, type, sector, buf, len);

	if (head < 0)
		return -1;
	vq_kick(&d->q);
	for (;;) {
		int h = blk_reap(d);

		if (h == head)
			return d->done_status;
		if (h < 0) {
			if (virtio_status(&d->v) & 64) {
				printf("blk: %s needs reset\n", d->name);
				return -1;
			}
			cpu_relax();
		}
	}
}

static struct blkdev *disk_named(const char *name)
{
	unsigned i;

	for (i = 0; i < ndisks; i++)
		if (!disks[i].gone && strcmp(disks[i].name, name) == 0)
			return &disks[i];
	printf("blk: no disk %s\n", name);
	return NULL;
}

/* A bounce buffer for the commands, reused. */
static uint8_t *iobuf;
static uint64_t iobuf_size;

static uint8_t *buffer(uint64_t size)
{
	if (size > iobuf_size) {
		iobuf = kalloc(size, 4096);
		iobuf_size = size;
	}
	return iobuf;
}

static void cmd_blk(int argc, char **argv)
{
	unsigned i;

	unsigned n = 0;

	for (i = 0; i < ndisks; i++)
		n += !disks[i].gone;
	if (!n)
		printf("blk: no disks\n");
	for (i = 0; i < ndisks; i++)
		if (!disks[i].gone)
			printf("%s: %lu sectors (%lu MiB), %s, id %s\n", disks[i].name, disks[i].sectors,
		       disks[i].sectors >> 11, disks[i].ro ? "ro" : "rw", disks[i].id);
}

/* blk-pattern DISK SECTOR COUNT SEED: byte at disk offset o = (o*7 + seed)
 * mod 256. Every sector starts at a multiple of 256, so one 512-byte
 * template serves all of them. */
static void cmd_blk_pattern(int argc, char **argv)
{
	struct blkdev *d = argc == 5 ? disk_named(argv[1]) : NULL;
	uint64_t sector, count, seed, i, chunk = 2048;
	uint8_t tmpl[512];
	int st = 0;

	if (!d) {
		if (argc != 5)
			printf("usage: blk-pattern DISK SECTOR COUNT SEED\n");
		return;
	}
	sector = strtou64(argv[2], NULL);
	count = strtou64(argv[3], NULL);
	seed = strtou64(argv[4], NULL);
	for (i = 0; i < 512; i++)
		tmpl[i] = (uint8_t)(i * 7 + seed);
	buffer(chunk * 512);
	for (i = 0; i < (count < chunk ? count : chunk); i++)
		memcpy(iobuf + i * 512, tmpl, 512);
	for (i = 0; i < count; i += chunk) {
		uint64_t n = count - i < chunk ? count - i : chunk;

		st = blk_sync(d, T_OUT, sector + i, iobuf, n * 512);
		if (st)
			break;
	}
	if (st == 0)
		printf("blk-pattern: wrote %lu sectors\n", count);
	else
		printf("blk-pattern: I/O error (status %d) writing sector %lu\n", st, sector + i);
}

static void cmd_blk_flush(int argc, char **argv)
{
	struct blkdev *d = argc == 2 ? disk_named(argv[1]) : NULL;

	if (d)
		printf(blk_sync(d, T_FLUSH, 0, NULL, 0) == 0 ? "blk-flush: ok\n" : "blk-flush: I/O error\n");
}

/* blk-discard DISK SECTOR COUNT and blk-zeroes DISK SECTOR COUNT [unmap]:
 * one DISCARD or WRITE_ZEROES segment per request, each at most the
 * device's limit, so lodge-hyp punches holes (or zeroes) on the host. */
static void blk_range(int argc, char **argv, uint32_t type, unsigned feature, const char *what)
{
	struct blkdev *d = argc >= 4 && argc <= 5 ? disk_named(argv[1]) : NULL;
	struct { uint64_t sector; uint32_t num_sectors, flags; } *seg;
	uint64_t sector, count, i, max;
	uint32_t flags = 0;
	int st = 0;

	if (!d) {
		if (argc < 4 || argc > 5)
			printf("usage: %s DISK SECTOR COUNT%s\n", what, type == T_WRITE_ZEROES ? " [unmap]" : "");
		return;
	}
	if (!((d->v.features >> feature) & 1)) {
		printf("%s: %s does not offer it\n", what, d->name);
		return;
	}
	if (argc == 5 && type == T_WRITE_ZEROES && strcmp(argv[4], "unmap") == 0)
		flags = WRITE_ZEROES_UNMAP;
	/* max_discard_sectors at 0x24, max_write_zeroes_sectors at 0x30 */
	max = mmio_read32(d->v.device + (type == T_DISCARD ? 0x24 : 0x30));
	if (!max)
		max = 1u << 16;
	sector = strtou64(argv[2], NULL);
	count = strtou64(argv[3], NULL);
	seg = (void *)buffer(4096);
	for (i = 0; i < count; i += max) {
		seg->sector = sector + i;
		seg->num_sectors = count - i < max ? count - i : max;
		seg->flags = flags;
		st = blk_sync(d, type, 0, seg, sizeof(*seg));
		if (st)
			break;
	}
	if (st == 0)
		printf("%s: %lu sectors\n", what, count);
	else
		printf("%s: I/O error (status %d) at sector %lu\n", what, st, sector + i);
}

static void cmd_blk_discard(int argc, char **argv)
{
	blk_range(argc, argv, T_DISCARD, BLK_F_DISCARD, "blk-discard");
}

static void cmd_blk_zeroes(int argc, char **argv)
{
	blk_range(argc, argv, T_WRITE_ZEROES, BLK_F_WRITE_ZEROES, "blk-zeroes");
}

/* blk-sum DISK SECTOR COUNT: FNV-1a over little-endian 64-bit words (one
 * multiply per 8 bytes: kernel-mode instructions are dear on PVM). */
static void cmd_blk_sum(int argc, char **argv)
{
	struct blkdev *d = argc == 4 ? disk_named(argv[1]) : NULL;
	uint64_t sector, count, i, h = 0xcbf29ce484222325ULL, chunk = 2048;

	if (!d)
		return;
	sector = strtou64(argv[2], NULL);
	count = strtou64(argv[3], NULL);
	buffer(chunk * 512);
	for (i = 0; i < count; i += chunk) {
		uint64_t n = count - i < chunk ? count - i : chunk, w;
		const uint64_t *p = (const uint64_t *)iobuf;

		if (blk_sync(d, T_IN, sector + i, iobuf, n * 512)) {
			printf("blk-sum: I/O error\n");
			return;
		}
		for (w = 0; w < n * 64; w++)
			h = (h ^ p[w]) * 0x100000001b3ULL;
	}
	printf("blk-sum: fnv1a64w 0x%016lx\n", h);
}

static void cmd_ext4(int argc, char **argv)
{
	struct blkdev *d = argc == 2 ? disk_named(argv[1]) : NULL;
	uint8_t *sb;
	char label[17];
	uint16_t magic;

	if (!d)
		return;
	sb = buffer(4096);
	if (blk_sync(d, T_IN, 2, sb, 1024)) {      /* the superblock is at byte 1024 */
		printf("ext4: I/O error\n");
		return;
	}
	memcpy(&magic, sb + 0x38, 2);
	memcpy(label, sb + 0x78, 16);
	label[16] = '\0';
	printf("ext4: magic 0x%x label '%s'\n", magic, label);
}

/* blk-bench DISK read|write|randread MIB REQ_KIB DEPTH
 *
 * A load generator, as lean per request as fio is on the host: every guest
 * instruction is emulated on PVM (some 2 us each), so the guest's cost per
 * request, not the device's, would otherwise be what is measured.  DEPTH
 * chains are built once (header, the chain's own buffer, status); each one
 * is posted again, with its next sector, as soon as it completes, and the
 * device is kicked once per batch of completions.  The loop polls, so the
 * queue's interrupts are off meanwhile.  What the device sees is the same
 * as from blk_submit(): DEPTH requests of REQ_KIB in flight. */
static void cmd_blk_bench(int argc, char **argv)
{
	static uint8_t *bench_buf;
	static uint64_t bench_buf_size;
	struct blkdev *d = argc == 6 ? disk_named(argv[1]) : NULL;
	uint64_t total, req, depth, nreq, issued = 0, done = 0, t0, ms, span, slot = 0, i;
	uint64_t rnd = 88172645463325252ULL;
	volatile struct vring_used *used;
	volatile struct vring_avail *avail;
	uint16_t mask, last, aidx;
	uint32_t type;
	int randomly, failed = 0;
	uint8_t *bufs;

	if (!d) {
		if (argc != 6)
			printf("usage: blk-bench DISK read|write|randread MIB REQ_KIB DEPTH\n");
		return;
	}
	type = strcmp(argv[2], "write") == 0 ? T_OUT : T_IN;
	randomly = strcmp(argv[2], "randread") == 0;
	total = strtou64(argv[3], NULL) << 20;
	req = strtou64(argv[4], NULL) << 10;
	depth = strtou64(argv[5], NULL);
	if (!req) {
		printf("blk-bench: REQ_KIB must be at least 1\n");
		return;
	}
	if (!depth || depth > d->q.nfree / 3)
		depth = d->q.nfree / 3;
	nreq = total / req;
	span = d->sectors * 512 / req;      /* request-sized slots on the disk */
	if (!span || !nreq) {
		printf("blk-bench: disk too small\n");
		return;
	}
	if (depth > nreq)
		depth = nreq;
	/* Its own buffers, never zeroed: DEPTH MiB-sized buffers zeroed by the
	 * guest took longer than the run they serve.  A larger run reuses them. */
	if (req * depth > bench_buf_size) {
		bench_buf = kalloc_dirty(req * depth, 4096);
		bench_buf_size = req * depth;
	}
	bufs = bench_buf;
	d->q.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	t0 = time_ns();
	for (i = 0; i < depth; i++, issued++) {
		if (randomly) {
			rnd ^= rnd << 13; rnd ^= rnd >> 7; rnd ^= rnd << 17;
			slot = rnd % span;
		}
		blk_submit(d, type, slot * (req / 512), bufs + i * req, req);
		if (!randomly && ++slot == span)
			slot = 0;
	}
	vq_kick(&d->q);
	/* The rings' indices in registers: the ring memory is volatile, and
	 * through d->q every store would make the compiler reload them. */
	used = d->q.used;
	avail = d->q.avail;
	mask = d->q.size - 1;
	last = d->q.last_used;
	aidx = avail->idx;
	while (done < nreq) {
		int posted = 0;

		if (last == used->idx) {
			cpu_relax();
			continue;
		}
		do {
			uint16_t head;
			struct blk_req *r;

			barrier();           /* the entry and its status after the index */
			head = used->ring[last++ & mask].id;
			r = &d->reqs[head];
			done++;
			failed |= r->status;
			if (issued == nreq || failed) {
				vq_free_chain(&d->q, head);
				continue;
			}
			if (randomly) {
				rnd ^= rnd << 13; rnd ^= rnd >> 7; rnd ^= rnd << 17;
				slot = rnd % span;
			}
			r->hdr.sector = slot * (req / 512);
			r->status = 0xff;
			avail->ring[aidx & mask] = head;
			barrier();           /* the entry before the index that publishes it */
			avail->idx = ++aidx;
			issued++;
			posted = 1;
			if (!randomly && ++slot == span)
				slot = 0;
		} while (last != used->idx);
		d->q.last_used = last;
		if (posted)
			vq_kick(&d->q);
		if (failed && done == issued)
			break;
	}
	d->q.last_used = last;
	ms = (time_ns() - t0) / 1000000;
	d->q.avail->flags = 0;
	if (failed) {
		printf("blk-bench: I/O error\n");
		return;
	}
	if (!ms)
		ms = 1;
	printf("blk-bench: %s %lu MiB in %lu ms: %lu MiB/s, %lu IOPS\n", argv[2], total >> 20, ms,
	       (total >> 20) * 1000 / ms, nreq * 1000 / ms);
}

static const struct command blk_commands[] = {
	{ "blk", "", "list the virtio-blk disks", cmd_blk },
	{ "blk-pattern", "DISK SECTOR COUNT SEED", "write the test pattern", cmd_blk_pattern },
	{ "blk-flush", "DISK", "flush the disk's write cache", cmd_blk_flush },
	{ "blk-sum", "DISK SECTOR COUNT", "checksum sectors (FNV-1a, 64-bit words)", cmd_blk_sum },
	{ "blk-discard", "DISK SECTOR COUNT", "discard sectors (the host punches a hole)", cmd_blk_discard },
	{ "blk-zeroes", "DISK SECTOR COUNT [unmap]", "write zeroes (unmap: as a hole)", cmd_blk_zeroes },
	{ "ext4", "DISK", "read an ext4 superblock", cmd_ext4 },
	{ "blk-bench", "DISK read|write|randread MIB REQ_KIB DEPTH", "measure I/O", cmd_blk_bench },
};

/* Start the disk found in d->v and name it vd<letter>. */
static int blk_start(struct blkdev *d, char letter)
{
	if (virtio_init(&d->v, 1ULL << BLK_F_RO | 1ULL << BLK_F_DISCARD | 1ULL << BLK_F_WRITE_ZEROES) ||
	    virtio_vq_setup(&d->v, 0, &d->q, QUEUE_MAX))
		return -1;
	virtio_driver_ok(&d->v);
	d->reqs = kalloc(sizeof(struct blk_req) * d->q.size, 64);
	d->sectors = mmio_read64(d->v.device);
	d->ro = (d->v.features >> BLK_F_RO) & 1;
	d->name[0] = 'v'; d->name[1] = 'd'; d->name[2] = letter; d->name[3] = '\0';
	d->gone = 0;
	if (blk_sync(d, T_GET_ID, 0, d->id, 20) != 0)
		d->id[0] = '\0';
	d->id[20] = '\0';
	return 0;
}

int blk_hotplug_add(unsigned slot)
{
	struct blkdev *d = NULL;
	char letter;
	unsigned i;

	for (i = 0; i < ndisks && !d; i++)
		if (disks[i].gone)
			d = &disks[i];
	if (!d && ndisks < MAX_DISKS)
		d = &disks[ndisks];
	if (!d)
		return -1;
	/* The first name no disk has, as Linux names a new disk. */
	for (letter = 'a'; letter < 'a' + MAX_DISKS; letter++) {
		for (i = 0; i < ndisks; i++)
			if (!disks[i].gone && disks[i].name[2] == letter)
				break;
		if (i == ndisks)
			break;
	}
	if (virtio_probe(slot, VIRTIO_ID_BLOCK, &d->v) || blk_start(d, letter))
		return -1;
	if (d == &disks[ndisks])
		ndisks++;
	printf("blk: %s added (slot %u): %lu sectors, %s, id %s\n", d->name, slot, d->sectors,
	       d->ro ? "ro" : "rw", d->id);
	return 0;
}

int blk_hotplug_remove(unsigned slot)
{
	unsigned i;

	for (i = 0; i < ndisks; i++) {
		struct blkdev *d = &disks[i];

		if (d->gone || d->v.pci != slot)
			continue;
		/* Nothing is in flight (every command waits for its requests):
		 * reset the device so it lets go of our rings, then forget it. */
		mmio_write8(d->v.common + 0x14, 0);
		d->gone = 1;
		printf("blk: %s removed (slot %u)\n", d->name, slot);
		return 0;
	}
	return -1;
}

void blk_hotplug_check(uint32_t plugged)
{
	unsigned i;

	for (i = 0; i < ndisks; i++)
		if (!disks[i].gone && ((plugged >> disks[i].v.pci) & 1 ||
				       (pci_read32(disks[i].v.pci, 0) & 0xffff) == 0xffff)) {
			disks[i].gone = 1;
			printf("blk: %s gone (slot %u): removed without an eject\n", disks[i].name, disks[i].v.pci);
		}
}

void blk_init(void)
{
	while (ndisks < MAX_DISKS) {
		struct blkdev *d = &disks[ndisks];

		if (virtio_find(VIRTIO_ID_BLOCK, ndisks, &d->v) || blk_start(d, 'a' + ndisks))
			break;
		ndisks++;
	}
	if (ndisks)
		printf("blk: %u disk%s\n", ndisks, ndisks > 1 ? "s" : "");
	shell_register(blk_commands, sizeof(blk_commands) / sizeof(blk_commands[0]));
}
