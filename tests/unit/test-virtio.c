/* virtio-pci and virtio-blk without KVM: this program plays the guest
 * driver against the real transport and device, through the same port and
 * MMIO dispatch a vCPU exit would take, on a buffer standing in for guest
 * RAM and a real file as the disk.  Then it feeds malformed rings and
 * checks that the device enters NEEDS_RESET, touches nothing outside
 * guest memory, and recovers after a reset. */
#include "backend/disk.h"
#include "bus.h"
#include "dev/pci.h"
#include "domain.h"
#include "log.h"
#include "platform.h"
#include "unit.h"
#include "vdriver.h"
#include "virtio/blk.h"
#include "virtio/virtio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RAM_SIZE   (16u << 20)
#define QSIZE      8
#define DESC_GPA   0x100000
#define AVAIL_GPA  0x101000
#define USED_GPA   0x102000
#define HDR_GPA    0x110000
#define DATA_GPA   0x120000
#define STATUS_GPA 0x1f0000
#define IND_GPA    0x1f8000

static struct domain dom = { DOMAIN_DEFAULTS };
static uint8_t *ram;
static uint16_t avail_idx, used_seen;

static int probe(unsigned slot) { return probe_device(slot, 0x1042); }

static int driver_init(void)
{
	avail_idx = used_seen = 0;
	return vdriver_start(ram, QSIZE, DESC_GPA, AVAIL_GPA, USED_GPA, -1);
}

static struct virtq_desc *desc(unsigned i) { return (struct virtq_desc *)(ram + DESC_GPA) + i; }

/* Publish chain head, kick, and wait for the device (or NEEDS_RESET). */
static int submit_and_wait(uint16_t head)
{
	struct virtq_avail *av = (void *)(ram + AVAIL_GPA);
	volatile struct virtq_used *used = (void *)(ram + USED_GPA);
	int i;

	av->ring[avail_idx % QSIZE] = head;
	__atomic_store_n(&av->idx, ++avail_idx, __ATOMIC_RELEASE);
	mmio_write(bar0 + notify_off, 2, 0);
	for (i = 0; i < 2000; i++) {
		if (used->idx != used_seen) {
			used_seen++;
			return 0;
		}
		if (COMMON(0x14, 1) & VIRTIO_STATUS_NEEDS_RESET)
			return -EIO;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

/* A standard three-descriptor request: header, data, status. */
static int blk_request(uint32_t type, uint64_t sector, uint32_t len, uint8_t *status)
{
	uint32_t hdr[4] = { type, 0, (uint32_t)sector, (uint32_t)(sector >> 32) };
	int rc;

	memcpy(ram + HDR_GPA, hdr, 16);
	ram[STATUS_GPA] = 0xee;
	*desc(0) = (struct virtq_desc){ HDR_GPA, 16, VIRTQ_DESC_F_NEXT, 1 };
	if (len) {
		*desc(1) = (struct virtq_desc){ DATA_GPA, len,
			VIRTQ_DESC_F_NEXT | (type == 0 || type == 8 ? VIRTQ_DESC_F_WRITE : 0), 2 };
		*desc(2) = (struct virtq_desc){ STATUS_GPA, 1, VIRTQ_DESC_F_WRITE, 0 };
	} else {
		*desc(1) = (struct virtq_desc){ STATUS_GPA, 1, VIRTQ_DESC_F_WRITE, 0 };
	}
	rc = submit_and_wait(0);
	*status = ram[STATUS_GPA];
	return rc;
}

static void test_io(const char *path)
{
	uint8_t st, buf[4096];
	int fd;

	CHECK("blk: driver init", driver_init() == 0);
	CHECK("blk: capacity in config", mmio_read(bar0 + device_off, 8) == 2048);
	memset(ram + DATA_GPA, 0x5a, 4096);
	CHECK("blk: write 4 KiB", blk_request(1, 8, 4096, &st) == 0 && st == 0);
	CHECK("blk: flush", blk_request(4, 0, 0, &st) == 0 && st == 0);
	fd = open(path, O_RDONLY);
	CHECK("blk: written bytes on the host, at sector 8",
	      pread(fd, buf, 4096, 4096) == 4096 && buf[0] == 0x5a && buf[4095] == 0x5a);
	close(fd);
	memset(ram + DATA_GPA, 0, 4096);
	CHECK("blk: read back", blk_request(0, 8, 4096, &st) == 0 && st == 0 &&
	      ram[DATA_GPA] == 0x5a && ram[DATA_GPA + 4095] == 0x5a);
	CHECK("blk: read beyond the end is an I/O error", blk_request(0, 2047, 1024, &st) == 0 && st == 1);
	CHECK("blk: unaligned length is an I/O error", blk_request(0, 0, 100, &st) == 0 && st == 1);
	CHECK("blk: GET_ID", blk_request(8, 0, 20, &st) == 0 && st == 0 &&
	      memcmp(ram + DATA_GPA, "lodge-test", 10) == 0);
	CHECK("blk: unknown request type unsupported", blk_request(99, 0, 0, &st) == 0 && st == 2);

	/* Header split across two descriptors, and a zero-length buffer. */
	{
		uint32_t hdr[4] = { 0, 0, 8, 0 };

		memcpy(ram + HDR_GPA, hdr, 16);
		*desc(3) = (struct virtq_desc){ HDR_GPA, 8, VIRTQ_DESC_F_NEXT, 4 };
		*desc(4) = (struct virtq_desc){ HDR_GPA + 8, 8, VIRTQ_DESC_F_NEXT, 5 };
		*desc(5) = (struct virtq_desc){ DATA_GPA, 0, VIRTQ_DESC_F_NEXT | VIRTQ_DESC_F_WRITE, 6 };
		*desc(6) = (struct virtq_desc){ DATA_GPA, 512, VIRTQ_DESC_F_NEXT | VIRTQ_DESC_F_WRITE, 7 };
		*desc(7) = (struct virtq_desc){ STATUS_GPA, 1, VIRTQ_DESC_F_WRITE, 0 };
		memset(ram + DATA_GPA, 0, 512);
		CHECK("blk: header split across descriptors, zero-length buffer",
		      submit_and_wait(3) == 0 && ram[STATUS_GPA] == 0 && ram[DATA_GPA] == 0x5a);
	}
	/* Indirect table with the whole request. */
	{
		struct virtq_desc *ind = (void *)(ram + IND_GPA);
		uint32_t hdr[4] = { 0, 0, 8, 0 };

		memcpy(ram + HDR_GPA, hdr, 16);
		ind[0] = (struct virtq_desc){ HDR_GPA, 16, VIRTQ_DESC_F_NEXT, 1 };
		ind[1] = (struct virtq_desc){ DATA_GPA, 512, VIRTQ_DESC_F_NEXT | VIRTQ_DESC_F_WRITE, 2 };
		ind[2] = (struct virtq_desc){ STATUS_GPA, 1, VIRTQ_DESC_F_WRITE, 0 };
		*desc(0) = (struct virtq_desc){ IND_GPA, 48, VIRTQ_DESC_F_INDIRECT, 0 };
		ram[STATUS_GPA] = 0xee;
		CHECK("blk: indirect descriptors", submit_and_wait(0) == 0 && ram[STATUS_GPA] == 0);
	}
}

/* Each malformed ring: NEEDS_RESET, then a reset and re-init recovers. */
static void expect_needs_reset(const char *name, uint16_t (*corrupt)(void))
{
	char label[128];
	uint8_t st;

	CHECK("blk: re-init after reset", driver_init() == 0);
	snprintf(label, sizeof(label), "malformed: %s -> NEEDS_RESET", name);
	CHECK(label, submit_and_wait(corrupt()) == -EIO);
	snprintf(label, sizeof(label), "malformed: %s -> device works after reset", name);
	CHECK(label, driver_init() == 0 && blk_request(0, 8, 512, &st) == 0 && st == 0);
}

static uint16_t bad_addr(void)
{
	*desc(0) = (struct virtq_desc){ RAM_SIZE - 8, 16, VIRTQ_DESC_F_NEXT, 1 };
	*desc(1) = (struct virtq_desc){ STATUS_GPA, 1, VIRTQ_DESC_F_WRITE, 0 };
	return 0;
}
static uint16_t addr_in_hole(void)
{
	*desc(0) = (struct virtq_desc){ 0xfee00000, 16, 0, 0 };
	return 0;
}
static uint16_t huge_len(void)
{
	*desc(0) = (struct virtq_desc){ HDR_GPA, 0xffffffff, VIRTQ_DESC_F_NEXT, 1 };
	return 0;
}
static uint16_t loop(void)
{
	*desc(0) = (struct virtq_desc){ HDR_GPA, 16, VIRTQ_DESC_F_NEXT, 1 };
	*desc(1) = (struct virtq_desc){ HDR_GPA, 16, VIRTQ_DESC_F_NEXT, 0 };
	return 0;
}
static uint16_t too_long(void)
{
	unsigned i;

	for (i = 0; i < QSIZE; i++)
		*desc(i) = (struct virtq_desc){ HDR_GPA, 16, VIRTQ_DESC_F_NEXT, (i + 1) % QSIZE };
	return 0;
}
static uint16_t next_out_of_range(void)
{
	*desc(0) = (struct virtq_desc){ HDR_GPA, 16, VIRTQ_DESC_F_NEXT, 200 };
	return 0;
}
static uint16_t head_out_of_range(void)
{
	return 77;           /* the avail ring names a descriptor the table lacks */
}
static uint16_t status_missing(void)
{
	uint32_t hdr[4] = { 0, 0, 0, 0 };

	memcpy(ram + HDR_GPA, hdr, 16);
	*desc(0) = (struct virtq_desc){ HDR_GPA, 16, 0, 0 };
	return 0;
}
static uint16_t writable_before_readable(void)
{
	*desc(0) = (struct virtq_desc){ STATUS_GPA, 1, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 1 };
	*desc(1) = (struct virtq_desc){ HDR_GPA, 16, 0, 0 };
	return 0;
}
static uint16_t indirect_loop(void)
{
	struct virtq_desc *ind = (void *)(ram + IND_GPA);

	ind[0] = (struct virtq_desc){ HDR_GPA, 16, VIRTQ_DESC_F_NEXT, 1 };
	ind[1] = (struct virtq_desc){ HDR_GPA, 16, VIRTQ_DESC_F_NEXT, 0 };
	*desc(0) = (struct virtq_desc){ IND_GPA, 32, VIRTQ_DESC_F_INDIRECT, 0 };
	return 0;
}
static uint16_t indirect_nested(void)
{
	struct virtq_desc *ind = (void *)(ram + IND_GPA);

	ind[0] = (struct virtq_desc){ IND_GPA, 16, VIRTQ_DESC_F_INDIRECT, 0 };
	*desc(0) = (struct virtq_desc){ IND_GPA, 16, VIRTQ_DESC_F_INDIRECT, 0 };
	return 0;
}
static uint16_t indirect_outside_ram(void)
{
	*desc(0) = (struct virtq_desc){ RAM_SIZE - 16, 64, VIRTQ_DESC_F_INDIRECT, 0 };
	return 0;
}
static uint16_t avail_idx_jump(void)
{
	struct virtq_avail *av = (void *)(ram + AVAIL_GPA);

	/* The driver claims far more entries than the ring holds. */
	avail_idx += 100;
	av->idx = avail_idx;
	*desc(0) = (struct virtq_desc){ HDR_GPA, 16, 0, 0 };
	return 0;
}

static void test_queue_placement(void)
{
	SET_COMMON(0x14, 1, 0);
	SET_COMMON(0x14, 1, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	SET_COMMON(0x16, 2, 0);
	SET_COMMON(0x18, 2, QSIZE);
	SET_COMMON(0x20, 8, RAM_SIZE - 64);      /* the table would run past RAM */
	SET_COMMON(0x28, 8, AVAIL_GPA);
	SET_COMMON(0x30, 8, USED_GPA);
	SET_COMMON(0x1c, 2, 1);
	CHECK("queue outside RAM refused with NEEDS_RESET",
	      (COMMON(0x14, 1) & VIRTIO_STATUS_NEEDS_RESET) && COMMON(0x1c, 2) == 0);
	SET_COMMON(0x14, 1, 0);
	SET_COMMON(0x16, 2, 0);
	SET_COMMON(0x18, 2, 6);                  /* not a power of two */
	SET_COMMON(0x20, 8, DESC_GPA);
	SET_COMMON(0x1c, 2, 1);
	CHECK("queue size not a power of two refused", COMMON(0x1c, 2) == 0);

	/* DRIVER_OK with no queue enabled, then a kick: the device thread
	 * runs with no ring at all (found by Mini-OS's hostile mode). */
	SET_COMMON(0x14, 1, 0);
	SET_COMMON(0x14, 1, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	SET_COMMON(0x0c, 4, 0);
	SET_COMMON(0x08, 4, 1);
	SET_COMMON(0x0c, 4, 1);                  /* VERSION_1 */
	SET_COMMON(0x14, 1, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
	SET_COMMON(0x14, 1, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |
			    VIRTIO_STATUS_DRIVER_OK);
	mmio_write(bar0 + notify_off, 2, 0);
	usleep(100000);
	SET_COMMON(0x14, 1, 0);                  /* reset joins the device thread */
	CHECK("DRIVER_OK without an enabled queue, kicked: the device survives and resets",
	      COMMON(0x14, 1) == 0);
}

/* The advisory lock: one writer, or any number of readers. */
static void test_disk_locks(const char *path, struct disk *held)
{
	struct disk a;
	char err[256];
	pid_t pid;
	int st;

	CHECK("second writable open of a disk in this process (domain) refused, naming both",
	      disk_parse(path, &a, err, sizeof(err)) == 0 && disk_open(&a, err, sizeof(err)) == -EBUSY &&
	      strstr(err, "of this domain are the same blocks"));
	CHECK("read-only open of a disk open writable refused",
	      disk_parse(path, &a, err, sizeof(err)) == 0 && (a.readonly = true) &&
	      disk_open(&a, err, sizeof(err)) == -EBUSY);
	/* Another process is another domain (one that shares none of this
	 * one's descriptors: the lock stays this one's). */
	pid = fork();
	if (pid == 0) {
		disk_close(held);
		_exit(disk_parse(path, &a, err, sizeof(err)) == 0 && disk_open(&a, err, sizeof(err)) == -EBUSY &&
		      strstr(err, "in use by another domain") ? 0 : 1);
	}
	CHECK("another domain's writable open of it refused",
	      pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_shared_readonly(void)
{
	char path[] = "/tmp/lodge-test-ro.XXXXXX";
	struct disk a, b;
	char err[256], spec[300];
	int fd = mkstemp(path);

	if (fd < 0 || ftruncate(fd, 4096) < 0)
		return;
	close(fd);
	snprintf(spec, sizeof(spec), "%s,ro", path);
	CHECK("two read-only opens of one disk share it",
	      disk_parse(spec, &a, err, sizeof(err)) == 0 && disk_open(&a, err, sizeof(err)) == 0 &&
	      disk_parse(spec, &b, err, sizeof(err)) == 0 && disk_open(&b, err, sizeof(err)) == 0);
	disk_close(&a);
	disk_close(&b);
	unlink(path);
}

int main(void)
{
	char path[] = "/tmp/lodge-test-disk.XXXXXX";
	struct disk *disk = calloc(1, sizeof(*disk));
	char err[256], spec[300];
	int fd;

	log_init("test-virtio");
	ram = aligned_alloc(4096, RAM_SIZE);
	memset(ram, 0, RAM_SIZE);
	guest_mem_wrap(&dom.mem, ram, RAM_SIZE);
	fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, 1 << 20) < 0)
		return 1;
	close(fd);
	snprintf(spec, sizeof(spec), "%s,id=lodge-test", path);
	CHECK("disk parses", disk_parse(spec, disk, err, sizeof(err)) == 0);
	CHECK("disk opens", disk_open(disk, err, sizeof(err)) == 0);
	CHECK("pci bus", pci_init() == 0);
	CHECK("virtio-blk created", virtio_blk_create(&dom, disk) == 0);
	CHECK("virtio-blk found on PCI slot 1", probe(1) == 0 && common_off == 0 && notify_off);

	test_io(path);
	expect_needs_reset("descriptor beyond RAM", bad_addr);
	expect_needs_reset("descriptor in the MMIO hole", addr_in_hole);
	expect_needs_reset("descriptor length 4 GiB", huge_len);
	expect_needs_reset("descriptor loop", loop);
	expect_needs_reset("chain longer than the queue", too_long);
	expect_needs_reset("next index out of range", next_out_of_range);
	expect_needs_reset("head index out of range", head_out_of_range);
	expect_needs_reset("request without a status byte", status_missing);
	expect_needs_reset("writable before readable", writable_before_readable);
	expect_needs_reset("indirect table loop", indirect_loop);
	expect_needs_reset("nested indirect table", indirect_nested);
	expect_needs_reset("indirect table beyond RAM", indirect_outside_ram);
	expect_needs_reset("avail index beyond the ring", avail_idx_jump);
	test_queue_placement();
	test_disk_locks(path, disk);
	test_shared_readonly();
	unlink(path);
	UNIT_EXIT();
}
