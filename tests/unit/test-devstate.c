/* Device save and restore without KVM.  A child process plays the source
 * lodge-hyp: it creates a UART, the PCI bus, a virtio-blk on a temporary
 * file and the balloon, drives them as a guest would (requests left in
 * flight on purpose), quiesces, and writes every state entry to a stream
 * file.  The parent is the destination: a fresh process that creates the
 * same devices, is refused forged and truncated payloads (and does not
 * crash), loads the stream, and checks that each device carries on where
 * it was: the disk serves new requests from the restored ring indices with
 * the right data, the UART's registers and unread input survive, the
 * balloon's target and actual too.  Guest RAM is a shared mapping, which
 * stands in for the pages a migration copies. */
#include "backend/disk.h"
#include "bus.h"
#include "dev/devices.h"
#include "dev/pci.h"
#include "domain.h"
#include "log.h"
#include "save/state.h"
#include "unit.h"
#include "vdriver.h"
#include "virtio/balloon.h"
#include "virtio/blk.h"
#include "virtio/virtio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define RAM_SIZE   (16u << 20)
#define QSIZE      8
#define BLK_SLOT   1
#define BAL_SLOT   31    /* DOMAIN_BALLOON_SLOT */
/* The disk's rings and buffers... */
#define DESC_GPA   0x100000
#define AVAIL_GPA  0x101000
#define USED_GPA   0x102000
#define HDR_GPA    0x110000
#define DATA_GPA   0x120000
#define STATUS_GPA 0x1f0000
/* ... and the balloon's. */
#define B_DESC_GPA  0x300000
#define B_AVAIL_GPA 0x301000
#define B_USED_GPA  0x302000
#define B_PFNS_GPA  0x310000

#define OK_STATUS (VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK | \
		   VIRTIO_STATUS_DRIVER_OK)

static struct domain dom = { DOMAIN_DEFAULTS };
static uint8_t *ram;
static struct disk disk;
static struct uart *com1;
static struct virtio_balloon *balloon;
static char disk_path[] = "/tmp/lodge-test-devstate.XXXXXX";
static char stream_path[] = "/tmp/lodge-test-devstate-stream.XXXXXX";

/* ---- the machine, created the same way at both ends ----------------------- */

static int create_devices(void)
{
	char err[256], spec[300];

	snprintf(spec, sizeof(spec), "%s,id=lodge-state", disk_path);
	if (disk_parse(spec, &disk, err, sizeof(err)) || disk_open(&disk, err, sizeof(err)))
		return -1;
	if (!(com1 = uart_create(&dom, 0x3f8, 4)) || pci_init() ||
	    virtio_blk_create(&dom, &disk) || virtio_balloon_create(&dom, 0, &balloon))
		return -1;
	return 0;
}

/* ---- a guest driver for the disk ---------------------------------------------- */

static struct virtq_desc *desc(uint64_t table, unsigned i) { return (struct virtq_desc *)(ram + table) + i; }
static struct virtq_avail *avail(uint64_t gpa) { return (void *)(ram + gpa); }
static volatile struct virtq_used *used(uint64_t gpa) { return (void *)(ram + gpa); }

/* Queue 0 on MSI-X vector 0. */
static int driver_init(uint64_t d, uint64_t a, uint64_t u)
{
	return vdriver_start(ram, QSIZE, d, a, u, 0);
}

/* Request k of at most two at once: descriptors 3k..3k+2, its own header
 * and status byte; data at DATA_GPA + 64 KiB * k.  Published, kicked, not
 * waited for. */
static void blk_submit(unsigned k, uint32_t type, uint64_t sector, uint32_t len)
{
	uint32_t hdr[4] = { type, 0, (uint32_t)sector, (uint32_t)(sector >> 32) };
	struct virtq_avail *av = avail(AVAIL_GPA);
	uint64_t h = HDR_GPA + 16 * k, data = DATA_GPA + 0x10000 * k, st = STATUS_GPA + k;

	memcpy(ram + h, hdr, 16);
	ram[st] = 0xee;
	*desc(DESC_GPA, 3 * k) = (struct virtq_desc){ h, 16, VIRTQ_DESC_F_NEXT, 3 * k + 1 };
	if (len) {
		*desc(DESC_GPA, 3 * k + 1) = (struct virtq_desc){ data, len,
			VIRTQ_DESC_F_NEXT | (type == 0 ? VIRTQ_DESC_F_WRITE : 0), 3 * k + 2 };
		*desc(DESC_GPA, 3 * k + 2) = (struct virtq_desc){ st, 1, VIRTQ_DESC_F_WRITE, 0 };
	} else {
		*desc(DESC_GPA, 3 * k + 1) = (struct virtq_desc){ st, 1, VIRTQ_DESC_F_WRITE, 0 };
	}
	av->ring[av->idx % QSIZE] = 3 * k;
	__atomic_store_n(&av->idx, av->idx + 1, __ATOMIC_RELEASE);
	mmio_write(bar0 + notify_off, 2, 0);
}

/* Wait until the used ring has caught up with avail (every request done). */
static int blk_wait_all(void)
{
	int i;

	for (i = 0; i < 2000; i++) {
		if (used(USED_GPA)->idx == avail(AVAIL_GPA)->idx)
			return 0;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

static int blk_io(uint32_t type, uint64_t sector, uint32_t len)
{
	blk_submit(0, type, sector, len);
	return blk_wait_all() == 0 && ram[STATUS_GPA] == 0 ? 0 : -1;
}

static int host_byte(uint64_t off, uint8_t *v)
{
	int fd = open(disk_path, O_RDONLY), rc;

	rc = fd >= 0 && pread(fd, v, 1, off) == 1 ? 0 : -1;
	if (fd >= 0)
		close(fd);
	return rc;
}

/* ---- the source ---------------------------------------------------------------- */

static uint8_t pio_in(uint16_t port)
{
	uint64_t v = 0;

	bus_access(BUS_PIO, port, 1, 0, &v);
	return v;
}

static void pio_out(uint16_t port, uint8_t v)
{
	uint64_t x = v;

	bus_access(BUS_PIO, port, 1, 1, &x);
}

static int write_stream(void)
{
	int fd = open(stream_path, O_WRONLY | O_TRUNC), rc;
	unsigned i;

	if (fd < 0)
		return -errno;
	rc = state_write_magic(fd);
	for (i = 0; !rc && i < state_count(); i++) {
		struct state_buf b;
		struct iovec iov;

		state_buf_init(&b);
		rc = state_save_entry(i, &b);
		iov = (struct iovec){ b.data, b.len };
		if (!rc)
			rc = state_write_section(fd, STATE_DEV, 1, state_name(i), &iov, 1);
		state_buf_free(&b);
	}
	if (!rc)
		rc = state_write_section(fd, STATE_END, 0, "", NULL, 0);
	close(fd);
	return rc;
}

static void source(void)
{
	uint16_t used_before;
	uint64_t bar1;
	unsigned done;

	CHECK("src: devices created", create_devices() == 0);
	CHECK("src: entries registered in creation order",
	      state_count() == 4 && strcmp(state_name(0), "uart.3f8") == 0 &&
	      strcmp(state_name(1), "pci") == 0 && strcmp(state_name(2), "virtio-blk.0") == 0 &&
	      strcmp(state_name(3), "virtio-balloon") == 0);

	/* The disk: some I/O, then a request quiesce must finish. */
	CHECK("src: blk probed", probe_device(BLK_SLOT, 0x1042) == 0);
	CHECK("src: blk DRIVER_OK", driver_init(DESC_GPA, AVAIL_GPA, USED_GPA) == 0);
	bar1 = cfg_read(BLK_SLOT, PCI_BAR0 + 4, 4) & ~0xfULL;
	mmio_write(bar1 + 0, 4, 0xfee00000);    /* MSI-X entry 0: address, data */
	mmio_write(bar1 + 8, 4, 0x4021);
	memset(ram + DATA_GPA, 0x5a, 4096);
	CHECK("src: write sector 8", blk_io(1, 8, 4096) == 0);
	CHECK("src: flush", blk_io(4, 0, 0) == 0);
	memset(ram + DATA_GPA, 0, 4096);
	CHECK("src: read sector 8 back", blk_io(0, 8, 4096) == 0 && ram[DATA_GPA + 4095] == 0x5a);
	used_before = used(USED_GPA)->idx;

	/* Two requests as the vCPUs park: quiesce completes whichever the
	 * device had taken, and leaves the other in the avail ring. */
	memset(ram + DATA_GPA + 0x10000, 0x5a, 4096);
	blk_submit(0, 4, 0, 0);
	blk_submit(1, 1, 32, 4096);
	state_quiesce_all();
	done = (ram[STATUS_GPA] == 0) + (ram[STATUS_GPA + 1] == 0);
	CHECK("src: quiesced, each request is done or untouched",
	      (ram[STATUS_GPA] == 0 || ram[STATUS_GPA] == 0xee) &&
	      (ram[STATUS_GPA + 1] == 0 || ram[STATUS_GPA + 1] == 0xee) &&
	      (uint16_t)(used(USED_GPA)->idx - used_before) == done);
	usleep(50000);
	CHECK("src: quiesced, the device takes no more",
	      (uint16_t)(used(USED_GPA)->idx - used_before) == done);
	state_resume_all();
	CHECK("src: resumed, it serves the requests that waited", blk_wait_all() == 0 &&
	      ram[STATUS_GPA] == 0 && ram[STATUS_GPA + 1] == 0);

	/* Two writes in flight, or not yet taken, at the save: either way
	 * the destination must see them done. */
	memset(ram + DATA_GPA, 0x77, 4096);
	memset(ram + DATA_GPA + 0x10000, 0x78, 4096);
	blk_submit(0, 1, 16, 4096);
	blk_submit(1, 1, 24, 4096);

	/* The UART: divisor, line settings, an interrupt enabled, scratch, input. */
	pio_out(0x3fb, 0x83);
	pio_out(0x3f8, 1);
	pio_out(0x3f9, 0);
	pio_out(0x3fb, 0x03);
	pio_out(0x3f9, 0x01);
	pio_out(0x3ff, 0x42);
	pio_out(0x3fa, 0x01);
	CHECK("src: uart input queued", uart_receive(com1, (const uint8_t *)"hello", 5) == 5);
	CHECK("src: uart read one byte", pio_in(0x3f8) == 'h');

	/* The balloon: a target, what the driver holds, one inflated page. */
	CHECK("src: balloon probed", probe_device(BAL_SLOT, 0x1045) == 0);
	CHECK("src: balloon DRIVER_OK", driver_init(B_DESC_GPA, B_AVAIL_GPA, B_USED_GPA) == 0);
	virtio_balloon_set_target(balloon, 1234);
	mmio_write(bar0 + device_off + 4, 4, 4);

	state_quiesce_all();
	CHECK("src: quiesced, no write half done",
	      (ram[STATUS_GPA] == 0 || ram[STATUS_GPA] == 0xee) &&
	      (ram[STATUS_GPA + 1] == 0 || ram[STATUS_GPA + 1] == 0xee));
	CHECK("src: stream written", write_stream() == 0);
}

/* ---- the destination -------------------------------------------------------------- */

#define MAX_SECTIONS 8
static struct state_section sec[MAX_SECTIONS];
static uint8_t *payload[MAX_SECTIONS];
static unsigned nsec;

static int read_stream(void)
{
	char why[256];
	int fd = open(stream_path, O_RDONLY), rc;

	if (fd < 0 || state_read_magic(fd, why, sizeof(why)))
		return -1;
	for (nsec = 0; nsec < MAX_SECTIONS; nsec++) {
		if ((rc = state_read_section(fd, &sec[nsec], &payload[nsec], why, sizeof(why))))
			break;
		if (sec[nsec].type == STATE_END)
			break;
	}
	close(fd);
	return rc;
}

static int find(const char *name)
{
	unsigned i;

	for (i = 0; i < nsec; i++)
		if (strcmp(sec[i].name, name) == 0)
			return i;
	return -1;
}

/* Offsets in the virtio-pci payload (format 1), for the forgeries: the
 * transport's registers, 9 MSI-X entries and the PBA, then 36 bytes per
 * queue, then the device's blob. */
#define VP_STATUS       4
#define VP_QUEUE(q)     (197 + 36 * (q))
#define VQ_MSIX         0
#define VQ_SIZE         2
#define VQ_DESC         6
#define VQ_LAST_AVAIL   30
#define VQ_USED_IDX     32
#define VP_BLOB(nq)     VP_QUEUE(nq)

/* Load a copy of section name with len bytes and one change; expect a refusal. */
static void expect_refused(const char *what, const char *name, long len_delta, size_t off,
			   const void *val, size_t vlen)
{
	int i = find(name);
	char why[256] = "", label[200];
	uint8_t *p;
	size_t len;
	int rc;

	if (i < 0) {
		CHECK("section present", 0);
		return;
	}
	len = sec[i].len + len_delta;
	p = calloc(1, len + 16);
	memcpy(p, payload[i], len < sec[i].len ? len : sec[i].len);
	if (vlen)
		memcpy(p + off, val, vlen);
	rc = state_load_named(name, sec[i].version, p, len, why, sizeof(why));
	snprintf(label, sizeof(label), "refused: %s (%s)", what, why);
	CHECK(label, rc < 0 && why[0]);
	free(p);
}

static void forgeries(void)
{
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	uint8_t u8;
	char why[256];

	expect_refused("blk payload one byte short", "virtio-blk.0", -1, 0, NULL, 0);
	expect_refused("blk payload with a byte left over", "virtio-blk.0", 1, 0, NULL, 0);
	expect_refused("blk payload empty", "virtio-blk.0", -(long)sec[find("virtio-blk.0")].len, 0, NULL, 0);
	u8 = OK_STATUS | 0x10;
	expect_refused("unknown device status bit", "virtio-blk.0", 0, VP_STATUS, &u8, 1);
	u16 = 6;
	expect_refused("queue size not a power of two", "virtio-blk.0", 0, VP_QUEUE(0) + VQ_SIZE, &u16, 2);
	u16 = 512;
	expect_refused("queue size above the device's", "virtio-blk.0", 0, VP_QUEUE(0) + VQ_SIZE, &u16, 2);
	u64 = RAM_SIZE - 64;
	expect_refused("descriptor table past RAM", "virtio-blk.0", 0, VP_QUEUE(0) + VQ_DESC, &u64, 8);
	u64 = 0xfee00000;
	expect_refused("descriptor table in the MMIO hole", "virtio-blk.0", 0, VP_QUEUE(0) + VQ_DESC, &u64, 8);
	u16 = 1000;
	expect_refused("ring indices further apart than the ring", "virtio-blk.0", 0,
		       VP_QUEUE(0) + VQ_USED_IDX, &u16, 2);
	memcpy(&u16, payload[find("virtio-blk.0")] + VP_QUEUE(0) + VQ_LAST_AVAIL, 2);
	u16 -= 1;
	expect_refused("a request in flight", "virtio-blk.0", 0, VP_QUEUE(0) + VQ_USED_IDX, &u16, 2);
	u16 = 40;
	expect_refused("queue vector beyond the MSI-X table", "virtio-blk.0", 0, VP_QUEUE(0) + VQ_MSIX, &u16, 2);
	u32 = 0x7fffffff;
	expect_refused("device blob longer than the payload", "virtio-blk.0", 0, VP_BLOB(1), &u32, 4);
	u64 = 1;
	expect_refused("a disk of another size", "virtio-blk.0", 0, VP_BLOB(1) + 4, &u64, 8);

	expect_refused("uart payload short", "uart.3f8", -1, 0, NULL, 0);
	u16 = 300;
	expect_refused("uart with more input than its FIFO", "uart.3f8", 0, 8, &u16, 2);
	u8 = 0xff;
	expect_refused("uart IER with reserved bits", "uart.3f8", 0, 0, &u8, 1);

	expect_refused("balloon payload short", "virtio-balloon", -4, 0, NULL, 0);
	u32 = 0xffffffff;
	expect_refused("balloon target above guest RAM", "virtio-balloon", 0, VP_BLOB(3) + 4, &u32, 4);
	u32 = 5;
	expect_refused("balloon holding a stats buffer it never took", "virtio-balloon", 0,
		       VP_BLOB(3) + 4 + 49, &u32, 4);

	expect_refused("pci payload short", "pci", -2, 0, NULL, 0);
	u16 = 0x1234;
	expect_refused("pci slot with another device", "pci", 0, 8 + 31 + 2, &u16, 2);

	CHECK("a section no entry claims is refused",
	      state_load_named("virtio-net.0", 1, "", 0, why, sizeof(why)) == -ENOENT && why[0]);
	CHECK("a section of another format version is refused",
	      state_load_named("uart.3f8", 99, payload[find("uart.3f8")], sec[find("uart.3f8")].len,
			       why, sizeof(why)) == -EPROTO && why[0]);
}

static void destination(void)
{
	struct balloon_info bi;
	uint16_t used_before;
	char why[256], label[300];
	unsigned i;
	uint64_t bar1;
	uint8_t v;
	int all = 0;

	CHECK("dst: fresh devices created", create_devices() == 0);
	CHECK("dst: stream read back", read_stream() == 0 && nsec == 4);
	forgeries();
	CHECK("dst: after the refusals the disk is still unconfigured", cfg_read(BLK_SLOT, PCI_COMMAND, 2) == 0);

	for (i = 0; i < nsec; i++) {
		int rc = state_load_named(sec[i].name, sec[i].version, payload[i], sec[i].len, why, sizeof(why));

		snprintf(label, sizeof(label), "dst: %s loads%s%s", sec[i].name, rc ? ": " : "", rc ? why : "");
		CHECK(label, rc == 0);
		all |= rc;
	}
	if (all)
		return;

	/* PCI: decoding is back where the guest put it, without probing. */
	CHECK("dst: memory decoding restored", cfg_read(BLK_SLOT, PCI_COMMAND, 2) & PCI_COMMAND_MEMORY);
	bar1 = cfg_read(BLK_SLOT, PCI_BAR0 + 4, 4) & ~0xfULL;
	CHECK("dst: MSI-X table entry restored",
	      mmio_read(bar1, 4) == 0xfee00000 && mmio_read(bar1 + 8, 4) == 0x4021);

	/* The disk carries on from the restored indices. */
	CHECK("dst: blk found", probe_device(BLK_SLOT, 0x1042) == 0);
	SET_COMMON(0x16, 2, 0);
	CHECK("dst: blk status DRIVER_OK, queue as the driver left it",
	      COMMON(0x14, 1) == OK_STATUS && COMMON(0x18, 2) == QSIZE && COMMON(0x1c, 2) == 1 &&
	      COMMON(0x1a, 2) == 0 && COMMON(0x20, 8) == DESC_GPA);
	CHECK("dst: the writes the source left are done", blk_wait_all() == 0 &&
	      ram[STATUS_GPA] == 0 && ram[STATUS_GPA + 1] == 0);
	CHECK("dst: ... and on the disk", host_byte(16 * 512, &v) == 0 && v == 0x77 &&
	      host_byte(24 * 512 + 4095, &v) == 0 && v == 0x78);
	used_before = used(USED_GPA)->idx;
	CHECK("dst: rings mid-way (not at 0)", used_before == avail(AVAIL_GPA)->idx && used_before == 7);
	memset(ram + DATA_GPA, 0, 4096);
	CHECK("dst: read what the source wrote before the save",
	      blk_io(0, 16, 4096) == 0 && ram[DATA_GPA] == 0x77 && ram[DATA_GPA + 4095] == 0x77);
	usleep(20000);
	CHECK("dst: exactly one more used entry, in the next slot (no request replayed)",
	      used(USED_GPA)->idx == (uint16_t)(used_before + 1) &&
	      used(USED_GPA)->ring[used_before % QSIZE].id == 0 &&
	      used(USED_GPA)->ring[used_before % QSIZE].len == 4097);
	memset(ram + DATA_GPA, 0x33, 4096);
	CHECK("dst: a new write and flush", blk_io(1, 40, 4096) == 0 && blk_io(4, 0, 0) == 0);
	CHECK("dst: ... on the host's disk", host_byte(40 * 512 + 100, &v) == 0 && v == 0x33);
	memset(ram + DATA_GPA + 0x10000, 0, 4096);
	blk_submit(1, 0, 24, 4096);
	CHECK("dst: the source's second write reads back",
	      blk_wait_all() == 0 && ram[STATUS_GPA + 1] == 0 && ram[DATA_GPA + 0x10000] == 0x78);

	/* The UART. */
	CHECK("dst: uart scratch, line control and IER", pio_in(0x3ff) == 0x42 && pio_in(0x3fb) == 0x03 &&
	      pio_in(0x3f9) == 0x01);
	CHECK("dst: uart IIR: input pending, FIFO on", pio_in(0x3fa) == 0xc4);
	pio_out(0x3fb, 0x83);
	CHECK("dst: uart divisor", pio_in(0x3f8) == 1 && pio_in(0x3f9) == 0);
	pio_out(0x3fb, 0x03);
	CHECK("dst: uart unread input, in order",
	      pio_in(0x3f8) == 'e' && pio_in(0x3f8) == 'l' && pio_in(0x3f8) == 'l' &&
	      pio_in(0x3f8) == 'o' && !(pio_in(0x3fd) & 1));

	/* The balloon. */
	virtio_balloon_info(balloon, &bi);
	CHECK("dst: balloon target and actual", bi.target_pages == 1234 && bi.actual_pages == 4);
	CHECK("dst: balloon found", probe_device(BAL_SLOT, 0x1045) == 0);
	CHECK("dst: balloon config space", mmio_read(bar0 + device_off, 4) == 1234 &&
	      mmio_read(bar0 + device_off + 4, 4) == 4 && COMMON(0x14, 1) == OK_STATUS);
	{
		uint32_t pfn = 0x500;
		struct virtq_avail *av = avail(B_AVAIL_GPA);
		int t;

		memcpy(ram + B_PFNS_GPA, &pfn, 4);
		*desc(B_DESC_GPA, 0) = (struct virtq_desc){ B_PFNS_GPA, 4, 0, 0 };
		av->ring[av->idx % QSIZE] = 0;
		__atomic_store_n(&av->idx, av->idx + 1, __ATOMIC_RELEASE);
		mmio_write(bar0 + notify_off, 2, 0);
		for (t = 0; t < 2000 && used(B_USED_GPA)->idx != av->idx; t++)
			usleep(1000);
		CHECK("dst: balloon serves its inflate queue", used(B_USED_GPA)->idx == av->idx);
	}
	state_quiesce_all();                    /* the threads stop before exit */
}

int main(void)
{
	int fd, status;
	pid_t pid;

	log_init("test-devstate");
	ram = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ram == MAP_FAILED)
		return 1;
	guest_mem_wrap(&dom.mem, ram, RAM_SIZE);
	fd = mkstemp(disk_path);
	if (fd < 0 || ftruncate(fd, 1 << 20) < 0)
		return 1;
	close(fd);
	if ((fd = mkstemp(stream_path)) < 0)
		return 1;
	close(fd);

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		source();
		fflush(stdout);
		_exit(unit_failures ? 1 : 0);   /* the disk's lock goes with the process */
	}
	CHECK("source ran", pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	destination();
	unlink(disk_path);
	unlink(stream_path);
	UNIT_EXIT();
}
