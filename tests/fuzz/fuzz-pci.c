/* PCI configuration space and the virtio-pci transport (src/hyp/dev/pci.c,
 * src/hyp/virtio/virtio-pci.c) against a guest that reads and writes any
 * register in any order: the header and BARs, the capability list, the
 * MSI-X capability and table, the common configuration, ISR, notify and
 * device-config regions, and the PCI_CFG window into the BARs.  A
 * virtio-balloon (no backend) is the device, on its slot (31) beside the host
 * bridge on slot 0; its I/O thread runs whenever the ops set DRIVER_OK.
 * Input: 8-byte ops {kind, size, offset (le16), value (le32)}: kind bits
 * 0-1 the space (0: its config space, 1: BAR 0 wherever the guest
 * put it, 2: BAR 1, 3: slot 0's config space or, with bit 3, the conf1
 * ports themselves), bit 2 write; size 1 << (size & 3).  Before each input
 * the harness undoes what the last one did (BARs, command, MSI-X, status).
 * Properties: IDs and the capability chain are read-only, BAR sizing
 * reads back the size, the device has at most one I/O thread however
 * often the ops set DRIVER_OK, and none after a reset, nothing outside the
 * device's structures is touched (ASan). */
#include "fuzz.h"
#include "domain.h"
#include "log.h"
#include "virtio/balloon.h"
#include "virtio/virtio.h"
#include "../unit/vdriver.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define RAM_SIZE (16u << 20)
#define SLOT     DOMAIN_BALLOON_SLOT   /* where the balloon always is */

static struct domain dom = { DOMAIN_DEFAULTS };
static uint32_t bar_init[2];
static uint8_t cfg_init[PCI_CFG_SIZE];
static unsigned msix_cap, pcicfg_cap;

static unsigned threads(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	unsigned n = 0;

	FUZZ_CHECK(f, "/proc/self/status");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %u", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* At most max threads, allowing 200 ms for one joined a moment ago: the
 * kernel counts a thread until it is reaped, a little after the join. */
static bool threads_at_most(unsigned max)
{
	unsigned i;

	for (i = 0; i < 200; i++) {
		if (threads() <= max)
			return true;
		usleep(1000);
	}
	return false;
}

static void setup(void)
{
	struct virtio_balloon *b;
	void *ram;
	unsigned cap, i;

	log_init("fuzz-pci");
	log_set_level(LOG_ERR);
	ram = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	FUZZ_CHECK(ram != MAP_FAILED, "mmap guest RAM");
	guest_mem_wrap(&dom.mem, ram, RAM_SIZE);
	FUZZ_CHECK(pci_init() == 0, "pci_init");
	FUZZ_CHECK(virtio_balloon_create(&dom, 0, &b) == 0, "virtio_balloon_create");
	FUZZ_CHECK(probe_device(SLOT, 0x1045) == 0, "the balloon on its slot");
	bar_init[0] = cfg_read(SLOT, PCI_BAR0, 4);
	bar_init[1] = cfg_read(SLOT, PCI_BAR0 + 4, 4);
	for (cap = cfg_read(SLOT, PCI_CAPABILITY_LIST, 1); cap; cap = cfg_read(SLOT, cap + 1, 1)) {
		if (cfg_read(SLOT, cap, 1) == PCI_CAP_ID_MSIX)
			msix_cap = cap;
		else if (cfg_read(SLOT, cap + 3, 1) == 5)
			pcicfg_cap = cap;
	}
	FUZZ_CHECK(msix_cap && pcicfg_cap, "the MSI-X and PCI_CFG capabilities");
	cfg_write(SLOT, PCI_COMMAND, 2, 0);
	for (i = 0; i < PCI_CFG_SIZE; i += 4) {
		uint32_t v = cfg_read(SLOT, i, 4);

		memcpy(cfg_init + i, &v, 4);
	}
}

/* Back to the state after setup(), the way a guest (or firmware) would. */
static void clean(void)
{
	uint32_t bar = bar_init[0] & ~0xfu, v;
	unsigned i;

	cfg_write(SLOT, PCI_BAR0, 4, 0xffffffff);
	v = cfg_read(SLOT, PCI_BAR0, 4);
	FUZZ_CHECK((v & ~0xfu) == (uint32_t)~(0x4000u - 1) && !(v & 0xf), "BAR 0 sizing does not read back 16 KiB");
	cfg_write(SLOT, PCI_BAR0, 4, bar_init[0]);
	cfg_write(SLOT, PCI_BAR0 + 4, 4, bar_init[1]);
	for (i = 2; i < PCI_MAX_BARS; i++) {
		cfg_write(SLOT, PCI_BAR0 + 4 * i, 4, 0xffffffff);
		FUZZ_CHECK(cfg_read(SLOT, PCI_BAR0 + 4 * i, 4) == 0, "an unimplemented BAR reads back nonzero");
	}
	cfg_write(SLOT, PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	mmio_write(bar + common_off + 0x14, 1, 0);          /* device reset */
	for (i = 0; i < 16; i++) {                          /* MSI-X entries: masked, zero */
		mmio_write((bar_init[1] & ~0xfu) + 16 * i, 8, 0);
		mmio_write((bar_init[1] & ~0xfu) + 16 * i + 8, 4, 0);
		mmio_write((bar_init[1] & ~0xfu) + 16 * i + 12, 4, 1);
	}
	cfg_write(SLOT, msix_cap + 2, 2, 0);
	for (i = 4; i < 16; i += 4)
		cfg_write(SLOT, pcicfg_cap + i, 4, 0);
	cfg_write(SLOT, PCI_INTERRUPT_LINE, 1, cfg_init[PCI_INTERRUPT_LINE]);
	cfg_write(SLOT, PCI_COMMAND, 2, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	static unsigned baseline;
	size_t i;
	unsigned cap, n;

	if (!ready) {
		setup();
		baseline = threads();
		ready = true;
	}
	clean();
	FUZZ_CHECK(threads_at_most(baseline), "an I/O thread survived the device's reset");
	for (i = 0; i + 8 <= size; i += 8) {
		unsigned kind = data[i], sz = 1u << (data[i + 1] & 3), write = kind & 4;
		uint16_t off;
		uint32_t val;
		uint64_t v64, gpa;

		memcpy(&off, data + i + 2, 2);
		memcpy(&val, data + i + 4, 4);
		v64 = (uint64_t)val * 0x100000001ULL;
		switch (kind & 3) {
		case 0:
		case 3: {
			unsigned slot = (kind & 3) ? 0 : SLOT;

			if (sz == 8)
				sz = 4;
			if ((kind & 3) == 3 && (kind & 8)) {
				uint32_t v = val;

				bus_access(BUS_PIO, 0xcf8 + (off & 7), sz, write, &v);
				break;
			}
			if (write)
				cfg_write(slot, off & 0xff, sz, val);
			else
				cfg_read(slot, off & 0xff, sz);
			break;
		}
		case 1:
		case 2:
			gpa = cfg_read(SLOT, PCI_BAR0 + 4 * ((kind & 3) - 1), 4) & ~0xfu;
			gpa += off & ((kind & 3) == 1 ? 0x3fff : 0xfff);
			if (write)
				mmio_write(gpa, sz, v64);
			else
				mmio_read(gpa, sz);
			break;
		}
	}
	FUZZ_CHECK(threads_at_most(baseline + 1), "two I/O threads serving one device");
	/* The guest changed nothing it may only read. */
	FUZZ_CHECK(cfg_read(SLOT, PCI_VENDOR_ID, 4) == (uint32_t)(cfg_init[0] | cfg_init[1] << 8 |
		   cfg_init[2] << 16 | (uint32_t)cfg_init[3] << 24), "vendor or device ID changed");
	FUZZ_CHECK(cfg_read(SLOT, PCI_CLASS_PROG, 1) == cfg_init[PCI_CLASS_PROG], "class changed");
	for (n = 0, cap = cfg_read(SLOT, PCI_CAPABILITY_LIST, 1); cap && n < 64; cap = cfg_read(SLOT, cap + 1, 1), n++)
		FUZZ_CHECK(cap >= 0x40 && cfg_read(SLOT, cap + 1, 1) == cfg_init[cap + 1] &&
			   cfg_read(SLOT, cap, 1) == cfg_init[cap], "the capability chain changed");
	FUZZ_CHECK(n < 64, "a capability loop");
	return 0;
}
