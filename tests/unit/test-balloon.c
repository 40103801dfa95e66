/* virtio-balloon without KVM: this program plays the guest driver against
 * the real transport and device on anonymous memory standing in for guest
 * RAM.  PFN validation on its own (RAM below the hole, the hole, RAM at
 * 4 GiB, beyond), then through the device: inflated pages come back as
 * zeros (MADV_DONTNEED really ran) and their neighbours do not; num_pages
 * and actual travel through config space; a PFN outside RAM, a writable
 * buffer or a ragged PFN array puts the device in NEEDS_RESET.  Its I/O
 * thread (virtio/worker.c) runs from DRIVER_OK to the reset, once, and
 * stops across a quiesce. */
#include "bus.h"
#include "dev/pci.h"
#include "domain.h"
#include "log.h"
#include "platform.h"
#include "save/state.h"
#include "unit.h"
#include "vdriver.h"
#include "virtio/balloon.h"
#include "virtio/virtio.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define RAM_SIZE   (16u << 20)
#define QSIZE      8
#define DESC_GPA   0x100000
#define AVAIL_GPA  0x101000
#define USED_GPA   0x102000
#define PFNS_GPA   0x110000
#define PAGE_PFN   0x200          /* the pages inflated: GPA 2 MiB */

static struct domain dom = { DOMAIN_DEFAULTS };
static uint8_t *ram;
static uint16_t avail_idx, used_seen;

static int probe(unsigned slot) { return probe_device(slot, 0x1045); }

/* Reset, negotiate VERSION_1 only, the inflate queue live, DRIVER_OK. */
static int driver_init(void)
{
	avail_idx = used_seen = 0;
	return vdriver_start(ram, QSIZE, DESC_GPA, AVAIL_GPA, USED_GPA, -1);
}

static struct virtq_desc *desc(unsigned i) { return (struct virtq_desc *)(ram + DESC_GPA) + i; }

/* One inflate chain of n PFNs (flags on its one descriptor), waited for. */
static int inflate(const uint32_t *pfns, uint32_t len, uint16_t flags)
{
	struct virtq_avail *av = (void *)(ram + AVAIL_GPA);
	volatile struct virtq_used *used = (void *)(ram + USED_GPA);
	int i;

	memcpy(ram + PFNS_GPA, pfns, len);
	*desc(0) = (struct virtq_desc){ PFNS_GPA, len, flags, 0 };
	av->ring[avail_idx % QSIZE] = 0;
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

static void test_pfn_ptr(void)
{
	struct guest_mem lo, split = { .host = (uint8_t *)0x10000000, .low_size = GPA_LOW_RAM_MAX,
				       .high_size = 1 << 20 };
	uint32_t last = RAM_SIZE / 4096 - 1;

	split.ram_size = split.low_size + split.high_size;
	guest_mem_wrap(&lo, ram, RAM_SIZE);
	CHECK("PFN 0 is RAM", balloon_pfn_ptr(&lo, 0) == ram);
	CHECK("the last PFN of RAM", balloon_pfn_ptr(&lo, last) == ram + (uint64_t)last * 4096);
	CHECK("the PFN past RAM is refused", balloon_pfn_ptr(&lo, last + 1) == NULL);
	CHECK("PFN 0xffffffff is refused", balloon_pfn_ptr(&lo, 0xffffffffu) == NULL);
	CHECK("a PFN in the MMIO hole is refused", balloon_pfn_ptr(&split, GPA_LOW_RAM_MAX >> 12) == NULL);
	CHECK("the last PFN below the hole", balloon_pfn_ptr(&split, (GPA_LOW_RAM_MAX >> 12) - 1) != NULL);
	CHECK("the first PFN at 4 GiB maps after low RAM",
	      balloon_pfn_ptr(&split, GPA_HIGH_RAM_BASE >> 12) == split.host + GPA_LOW_RAM_MAX);
	CHECK("a PFN past high RAM is refused",
	      balloon_pfn_ptr(&split, (GPA_HIGH_RAM_BASE + (1 << 20)) >> 12) == NULL);
}

static void test_inflate(struct virtio_balloon *b)
{
	uint32_t pfns[4] = { PAGE_PFN, PAGE_PFN + 1, PAGE_PFN + 3, PAGE_PFN + 2 };
	struct balloon_info bi;
	unsigned i, zero = 1, gen;

	memset(ram + PAGE_PFN * 4096, 0xa5, 5 * 4096);
	CHECK("inflate 4 pages", inflate(pfns, sizeof(pfns), 0) == 0);
	for (i = 0; i < 4 * 4096; i++)
		zero &= ram[PAGE_PFN * 4096 + i] == 0;
	CHECK("inflated pages went back to the host (read as zeros)", zero);
	CHECK("the page after them is untouched", ram[(PAGE_PFN + 4) * 4096] == 0xa5);

	gen = COMMON(0x15, 1);
	virtio_balloon_set_target(b, 1234);
	CHECK("num_pages in config space", mmio_read(bar0 + device_off, 4) == 1234);
	CHECK("... and the config generation moved on", COMMON(0x15, 1) == ((gen + 1) & 0xff));
	mmio_write(bar0 + device_off + 4, 4, 4);
	virtio_balloon_info(b, &bi);
	CHECK("actual written by the driver", bi.actual_pages == 4 && bi.target_pages == 1234);
	mmio_write(bar0 + device_off, 4, 99);
	CHECK("num_pages is not the driver's to write", mmio_read(bar0 + device_off, 4) == 1234);
}

/* Threads of this process named name (the balloon's I/O thread: "balloon";
 * "": all). */
static unsigned threads_named(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	char path[300], comm[32];
	unsigned n = 0;
	FILE *f;

	while (d && (de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
		if (de->d_name[0] != '.' && (f = fopen(path, "r"))) {
			if (fgets(comm, sizeof(comm), f) && strncmp(comm, name, strlen(name)) == 0 &&
			    (!name[0] || comm[strlen(name)] == '\n'))
				n++;
			fclose(f);
		}
	}
	if (d)
		closedir(d);
	return n;
}

/* Every thread of this process: a thread just started counts before it
 * has named itself. */
static unsigned threads_all(void)
{
	return threads_named("");
}

/* Whether n threads are named name within 5 s: a new thread names itself
 * once it runs. */
static bool threads_become(const char *name, unsigned n)
{
	int waited;

	for (waited = 0; threads_named(name) != n && waited < 5000; waited++)
		usleep(1000);
	return threads_named(name) == n;
}

static void test_worker(void)
{
	uint8_t ok = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |
		     VIRTIO_STATUS_DRIVER_OK;
	unsigned before, with;

	SET_COMMON(0x14, 1, 0);           /* no thread: the count to start from */
	before = threads_all();
	with = before + 1;

	CHECK("worker: DRIVER_OK starts one I/O thread", driver_init() == 0 && threads_become("balloon", 1) &&
	      threads_all() == with);
	SET_COMMON(0x14, 1, ok);
	CHECK("worker: DRIVER_OK written again starts no second one", threads_all() == with);
	state_quiesce_all();
	CHECK("worker: a quiesce stops it", threads_all() == before);
	state_resume_all();
	CHECK("worker: resume starts it again", threads_become("balloon", 1) && threads_all() == with);
	SET_COMMON(0x14, 1, 0);
	CHECK("worker: a reset stops it", threads_all() == before && COMMON(0x14, 1) == 0);
	state_quiesce_all();
	state_resume_all();
	CHECK("worker: a reset device stays stopped across a save", threads_all() == before);
	CHECK("worker: the driver starts it again", driver_init() == 0 && threads_become("balloon", 1) &&
	      threads_all() == with);
}

static void expect_needs_reset(const char *name, const uint32_t *pfns, uint32_t len, uint16_t flags)
{
	char what[160];

	CHECK("driver (re)initialised", driver_init() == 0);
	snprintf(what, sizeof(what), "%s: NEEDS_RESET", name);
	CHECK(what, inflate(pfns, len, flags) == -EIO);
}

int main(void)
{
	struct virtio_balloon *b = NULL;
	uint32_t outside[2] = { PAGE_PFN, RAM_SIZE / 4096 }, huge[1] = { 0xfffff000u };

	log_init("test-balloon");
	/* Anonymous and private like guest_mem_init's, so MADV_DONTNEED zeroes. */
	ram = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ram == MAP_FAILED)
		return 1;
	guest_mem_wrap(&dom.mem, ram, RAM_SIZE);
	test_pfn_ptr();
	CHECK("pci bus", pci_init() == 0);
	CHECK("virtio-balloon created", virtio_balloon_create(&dom, 0, &b) == 0);
	CHECK("virtio-balloon found on PCI slot 31 (DOMAIN_BALLOON_SLOT)", probe(DOMAIN_BALLOON_SLOT) == 0 && notify_off && device_off);
	CHECK("driver ready", driver_init() == 0);
	test_worker();
	test_inflate(b);
	expect_needs_reset("a PFN past the end of RAM", outside, sizeof(outside), 0);
	expect_needs_reset("a PFN far beyond RAM", huge, sizeof(huge), 0);
	expect_needs_reset("a device-writable PFN array", outside, 4, VIRTQ_DESC_F_WRITE);
	expect_needs_reset("a PFN array of 6 bytes", outside, 6, 0);
	CHECK("the device recovers after a reset", driver_init() == 0 &&
	      inflate(outside, 4, 0) == 0 && !(COMMON(0x14, 1) & VIRTIO_STATUS_NEEDS_RESET));
	UNIT_EXIT();
}
