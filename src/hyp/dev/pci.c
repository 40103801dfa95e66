#include "pci.h"
#include "bus.h"
#include "log.h"
#include "platform.h"
#include "save/state.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define PCI_CONF1_ENABLE   0x80000000u
#define PCI_MAX_SLOTS      32
#define PCI_MMIO_END       GPA_PCI_MMIO_END
#define PCI_FIRST_INTX_GSI 16          /* IOAPIC pins above the ISA range */
/* Each slot's BARs are placed in a window of their own, so a device
 * hot-plugged into a slot (or restored into it) gets the same addresses
 * whatever came and went before. */
#define PCI_SLOT_MMIO      0x100000u
_Static_assert(PCI_MAX_SLOTS * (uint64_t)PCI_SLOT_MMIO <= GPA_PCI_MMIO_END - GPA_PCI_MMIO_BASE,
	       "every slot's window fits in the PCI hole");

static struct {
	pthread_rwlock_t lock;             /* config writes vs. BAR decoding */
	uint32_t conf1_addr;
	struct pci_dev *slots[PCI_MAX_SLOTS];
	struct pci_dev host_bridge;
	uint64_t decoded[PCI_MAX_SLOTS][PCI_MAX_BARS];  /* gpa while decoded, else 0 */
} pci = { .lock = PTHREAD_RWLOCK_INITIALIZER };

static uint32_t cfg_get(const struct pci_dev *pd, unsigned off, unsigned size)
{
	uint32_t v = 0;

	memcpy(&v, pd->cfg + off, size);
	return v;
}

static void cfg_put(struct pci_dev *pd, unsigned off, unsigned size, uint32_t v)
{
	memcpy(pd->cfg + off, &v, size);
}

void pci_dev_init(struct pci_dev *pd, uint16_t vendor, uint16_t device, uint32_t class_code,
		  uint8_t revision, uint16_t subsys_vendor, uint16_t subsys_id)
{
	memset(pd->cfg, 0, sizeof(pd->cfg));
	cfg_put(pd, PCI_VENDOR_ID, 2, vendor);
	cfg_put(pd, PCI_DEVICE_ID, 2, device);
	cfg_put(pd, PCI_REVISION_ID, 1, revision);
	cfg_put(pd, PCI_CLASS_PROG, 3, class_code);
	cfg_put(pd, PCI_SUBSYSTEM_VENDOR_ID, 2, subsys_vendor);
	cfg_put(pd, PCI_SUBSYSTEM_ID, 2, subsys_id);
	cfg_put(pd, PCI_INTERRUPT_PIN, 1, 1);      /* INTA# */
	pd->cap_next = 0x40;
}

void pci_dev_add_bar(struct pci_dev *pd, unsigned bar, uint32_t size)
{
	pd->bar_size[bar] = size;
}

unsigned pci_dev_add_cap(struct pci_dev *pd, const void *cap, unsigned len)
{
	unsigned off = pd->cap_next;

	if (off + len > PCI_CFG_SIZE)
		return 0;
	memcpy(pd->cfg + off, cap, len);
	/* Link it at the end of the capability list. */
	pd->cfg[off + 1] = 0;
	if (!(pd->cfg[PCI_STATUS] & PCI_STATUS_CAP_LIST)) {
		pd->cfg[PCI_STATUS] |= PCI_STATUS_CAP_LIST;
		pd->cfg[PCI_CAPABILITY_LIST] = off;
	} else {
		unsigned p = pd->cfg[PCI_CAPABILITY_LIST];

		while (pd->cfg[p + 1])
			p = pd->cfg[p + 1];
		pd->cfg[p + 1] = off;
	}
	pd->cap_next = (off + len + 3) & ~3u;
	return off;
}

uint64_t pci_bar_gpa(const struct pci_dev *pd, unsigned bar)
{
	return pci.decoded[pd->slot][bar];
}

/* Recompute where each memory BAR of a device decodes, and tell the
 * device about any change (it moves its ioeventfds). Lock held for write. */
static void pci_update_decoding(struct pci_dev *pd)
{
	int mem_on = cfg_get(pd, PCI_COMMAND, 2) & PCI_COMMAND_MEMORY;
	unsigned b;

	for (b = 0; b < PCI_MAX_BARS; b++) {
		uint64_t gpa = 0;

		if (!pd->bar_size[b])
			continue;
		if (mem_on) {
			gpa = cfg_get(pd, PCI_BAR0 + 4 * b, 4) & ~0xfULL;
			/* Only inside the PCI window, never over RAM or the APICs. */
			if (gpa < GPA_PCI_MMIO_BASE || gpa + pd->bar_size[b] > PCI_MMIO_END)
				gpa = 0;
		}
		if (gpa != pci.decoded[pd->slot][b]) {
			pci.decoded[pd->slot][b] = gpa;
			if (pd->ops->bar_moved)
				pd->ops->bar_moved(pd, b, gpa);
		}
	}
}

static void pci_cfg_write(struct pci_dev *pd, unsigned off, unsigned size, uint32_t val)
{
	if (off >= PCI_BAR0 && off < PCI_BAR0 + 4 * PCI_MAX_BARS) {
		unsigned b = (off - PCI_BAR0) / 4;

		if (size != 4 || (off & 3))
			return;
		/* Address bits below the size read back as zero: sizing works. */
		val = pd->bar_size[b] ? (val & ~(pd->bar_size[b] - 1)) & ~0xfu : 0;
		cfg_put(pd, off, 4, val);
		pci_update_decoding(pd);
		return;
	}
	if (off == PCI_COMMAND && size >= 2) {
		cfg_put(pd, PCI_COMMAND, 2, val & (PCI_COMMAND_IO | PCI_COMMAND_MEMORY |
						   PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE));
		pci_update_decoding(pd);
		return;
	}
	if (off == PCI_INTERRUPT_LINE && size == 1) {
		pd->cfg[off] = val;
		return;
	}
	if (off >= 0x40 && pd->ops && pd->ops->cfg_write)
		pd->ops->cfg_write(pd, off, size, val);
}

/* 0xCF8: the address register; 0xCFC-0xCFF: the data window. */
static uint64_t conf1_read(void *dev, uint64_t off, unsigned size)
{
	uint32_t addr, val = 0xffffffff;
	struct pci_dev *pd;
	unsigned reg;

	if (off < 4)
		return off == 0 && size == 4 ? pci.conf1_addr : 0xffffffff;
	pthread_rwlock_wrlock(&pci.lock);   /* cfg_read may refresh fields */
	addr = pci.conf1_addr;
	reg = (addr & 0xfc) + (off - 4);
	pd = ((addr & PCI_CONF1_ENABLE) && ((addr >> 16) & 0xff) == 0 && ((addr >> 8) & 7) == 0)
		? pci.slots[(addr >> 11) & 31] : NULL;
	if (pd && reg + size <= PCI_CFG_SIZE) {
		if (pd->ops && pd->ops->cfg_read)
			pd->ops->cfg_read(pd, reg, size);
		val = cfg_get(pd, reg, size);
	}
	pthread_rwlock_unlock(&pci.lock);
	return val;
}

static void conf1_write(void *dev, uint64_t off, unsigned size, uint64_t val)
{
	uint32_t addr;
	struct pci_dev *pd;
	unsigned reg;

	if (off < 4) {
		if (off == 0 && size == 4)
			pci.conf1_addr = val;
		return;
	}
	pthread_rwlock_wrlock(&pci.lock);
	addr = pci.conf1_addr;
	reg = (addr & 0xfc) + (off - 4);
	pd = ((addr & PCI_CONF1_ENABLE) && ((addr >> 16) & 0xff) == 0 && ((addr >> 8) & 7) == 0)
		? pci.slots[(addr >> 11) & 31] : NULL;
	if (pd && reg + size <= PCI_CFG_SIZE)
		pci_cfg_write(pd, reg, size, val);
	pthread_rwlock_unlock(&pci.lock);
}

static const struct bus_ops conf1_ops = { .read = conf1_read, .write = conf1_write };

/* MMIO in the PCI window: find the BAR that decodes the address. */
static struct pci_dev *pci_find_bar(uint64_t addr, unsigned *bar, uint64_t *off)
{
	unsigned s, b;

	for (s = 0; s < PCI_MAX_SLOTS; s++) {
		struct pci_dev *pd = pci.slots[s];

		if (!pd)
			continue;
		for (b = 0; b < PCI_MAX_BARS; b++) {
			uint64_t base = pci.decoded[s][b];

			if (base && addr - base < pd->bar_size[b]) {
				*bar = b;
				*off = addr - base;
				return pd;
			}
		}
	}
	return NULL;
}

static uint64_t pci_mmio_read(void *dev, uint64_t off, unsigned size)
{
	struct pci_dev *pd;
	uint64_t val = ~0ULL, bar_off;
	unsigned bar;

	pthread_rwlock_rdlock(&pci.lock);
	pd = pci_find_bar(GPA_PCI_MMIO_BASE + off, &bar, &bar_off);
	if (pd && pd->ops->bar_read)
		val = pd->ops->bar_read(pd, bar, bar_off, size);
	pthread_rwlock_unlock(&pci.lock);
	return val;
}

static void pci_mmio_write(void *dev, uint64_t off, unsigned size, uint64_t val)
{
	struct pci_dev *pd;
	uint64_t bar_off;
	unsigned bar;

	pthread_rwlock_rdlock(&pci.lock);
	pd = pci_find_bar(GPA_PCI_MMIO_BASE + off, &bar, &bar_off);
	if (pd && pd->ops->bar_write)
		pd->ops->bar_write(pd, bar, bar_off, size, val);
	pthread_rwlock_unlock(&pci.lock);
}

static const struct bus_ops pci_mmio_ops = { .read = pci_mmio_read, .write = pci_mmio_write };
static const struct pci_dev_ops host_bridge_ops = { 0 };

/* ---- save and restore ----------------------------------------------------------
 * The bus's own state (the CF8 address latch) and, for every function, the
 * header fields the guest writes: command, BARs, interrupt line.  Each
 * function's capabilities (MSI-X control, say) are its device's to save.
 * Loading applies them as the guest's own writes would be, masked the
 * same way, and recomputes decoding, so each device re-registers its
 * ioeventfds at the loaded BAR addresses (bar_moved). */
#define PCI_STATE_VERSION 1

static int pci_state_save(void *obj, struct state_buf *b)
{
	uint32_t present = 0;
	unsigned s, i;

	pthread_rwlock_rdlock(&pci.lock);
	for (s = 0; s < PCI_MAX_SLOTS; s++)
		if (pci.slots[s])
			present |= 1u << s;
	state_put_u32(b, pci.conf1_addr);
	state_put_u32(b, present);
	for (s = 0; s < PCI_MAX_SLOTS; s++) {
		struct pci_dev *pd = pci.slots[s];

		if (!pd)
			continue;
		state_put_u16(b, cfg_get(pd, PCI_VENDOR_ID, 2));
		state_put_u16(b, cfg_get(pd, PCI_DEVICE_ID, 2));
		state_put_u16(b, cfg_get(pd, PCI_COMMAND, 2));
		for (i = 0; i < PCI_MAX_BARS; i++)
			state_put_u32(b, cfg_get(pd, PCI_BAR0 + 4 * i, 4));
		state_put_u8(b, pd->cfg[PCI_INTERRUPT_LINE]);
	}
	pthread_rwlock_unlock(&pci.lock);
	return 0;
}

struct pci_fn_state {
	uint16_t command;
	uint32_t bar[PCI_MAX_BARS];
	uint8_t intline;
};

static int pci_state_load(void *obj, struct state_in *in, char *why, size_t whylen)
{
	struct pci_fn_state fn[PCI_MAX_SLOTS];
	uint32_t addr = state_get_u32(in), present = state_get_u32(in), have = 0;
	unsigned s, i;

	for (s = 0; s < PCI_MAX_SLOTS; s++)
		if (pci.slots[s])
			have |= 1u << s;
	if (in->bad)
		return -EBADMSG;
	if (present != have) {
		snprintf(why, whylen, "pci: saved with devices in slots %#x, this domain has %#x",
			 present, have);
		return -EINVAL;
	}
	/* Check every function before changing any. */
	for (s = 0; s < PCI_MAX_SLOTS; s++) {
		struct pci_dev *pd = pci.slots[s];
		uint16_t vendor, device;

		if (!pd)
			continue;
		vendor = state_get_u16(in);
		device = state_get_u16(in);
		fn[s].command = state_get_u16(in);
		for (i = 0; i < PCI_MAX_BARS; i++)
			fn[s].bar[i] = state_get_u32(in);
		fn[s].intline = state_get_u8(in);
		if (in->bad)
			return -EBADMSG;
		if (vendor != cfg_get(pd, PCI_VENDOR_ID, 2) || device != cfg_get(pd, PCI_DEVICE_ID, 2)) {
			snprintf(why, whylen, "pci: slot %u was %04x:%04x, here it is %04x:%04x (%s)", s,
				 vendor, device, cfg_get(pd, PCI_VENDOR_ID, 2), cfg_get(pd, PCI_DEVICE_ID, 2),
				 pd->name);
			return -EINVAL;
		}
	}
	pthread_rwlock_wrlock(&pci.lock);
	pci.conf1_addr = addr;
	for (s = 0; s < PCI_MAX_SLOTS; s++) {
		struct pci_dev *pd = pci.slots[s];

		if (!pd)
			continue;
		cfg_put(pd, PCI_COMMAND, 2, fn[s].command & (PCI_COMMAND_IO | PCI_COMMAND_MEMORY |
							   PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE));
		for (i = 0; i < PCI_MAX_BARS; i++)
			cfg_put(pd, PCI_BAR0 + 4 * i, 4, pd->bar_size[i] ?
				(fn[s].bar[i] & ~(pd->bar_size[i] - 1)) & ~0xfu : 0);
		pd->cfg[PCI_INTERRUPT_LINE] = fn[s].intline;
		pci_update_decoding(pd);
	}
	pthread_rwlock_unlock(&pci.lock);
	return 0;
}

static const struct state_ops pci_state_ops = {
	.save = pci_state_save,
	.load = pci_state_load,
	.version = PCI_STATE_VERSION,
};

int pci_init(void)
{
	int rc;

	/* 8086:0d57, the host bridge ID Firecracker also presents: Linux's
	 * conf1 sanity check wants a host bridge or an Intel device on bus 0. */
	pci_dev_init(&pci.host_bridge, 0x8086, 0x0d57, 0x060000, 0, 0, 0);
	pci.host_bridge.cfg[PCI_INTERRUPT_PIN] = 0;
	pci.host_bridge.ops = &host_bridge_ops;
	pci.host_bridge.name = "host-bridge";
	pci.slots[0] = &pci.host_bridge;
	/* First of the PCI entries: functions' headers load before their
	 * devices' own state (which may start their I/O threads). */
	if ((rc = state_register("pci", &pci_state_ops, NULL)))
		return rc;
	rc = bus_register(BUS_PIO, PCI_CONF1_PORT, PCI_CONF1_PORTS, &conf1_ops, NULL, "pci-conf1");
	if (!rc)
		rc = bus_register(BUS_MMIO, GPA_PCI_MMIO_BASE, PCI_MMIO_END - GPA_PCI_MMIO_BASE,
				  &pci_mmio_ops, NULL, "pci-mmio");
	return rc;
}

int pci_free_slot(void)
{
	unsigned s;
	int found = -ENOSPC;

	pthread_rwlock_rdlock(&pci.lock);
	for (s = 1; s < PCI_MAX_SLOTS; s++)
		if (!pci.slots[s]) {
			found = (int)s;
			break;
		}
	pthread_rwlock_unlock(&pci.lock);
	return found;
}

struct pci_dev *pci_slot_dev(unsigned slot)
{
	struct pci_dev *pd;

	if (slot >= PCI_MAX_SLOTS)
		return NULL;
	pthread_rwlock_rdlock(&pci.lock);
	pd = pci.slots[slot];
	pthread_rwlock_unlock(&pci.lock);
	return pd;
}

uint32_t pci_present_mask(void)
{
	uint32_t mask = 0;
	unsigned s;

	pthread_rwlock_rdlock(&pci.lock);
	for (s = 1; s < PCI_MAX_SLOTS; s++)
		if (pci.slots[s])
			mask |= 1u << s;
	pthread_rwlock_unlock(&pci.lock);
	return mask;
}

int pci_register_slot(struct pci_dev *pd, unsigned slot)
{
	uint64_t next = GPA_PCI_MMIO_BASE + (uint64_t)slot * PCI_SLOT_MMIO;
	uint64_t end = next + PCI_SLOT_MMIO;
	uint32_t bars[PCI_MAX_BARS] = { 0 };
	unsigned b;

	if (slot < 1 || slot >= PCI_MAX_SLOTS)
		return -EINVAL;
	/* Firmware-style assignment: each BAR naturally aligned in the
	 * slot's window, memory decoding left for the guest to enable. */
	for (b = 0; b < PCI_MAX_BARS; b++) {
		uint64_t size = pd->bar_size[b];

		if (!size)
			continue;
		next = (next + size - 1) & ~(size - 1);
		if (next + size > end)
			return -ENOSPC;
		bars[b] = (uint32_t)next;
		next += size;
	}
	pthread_rwlock_wrlock(&pci.lock);
	if (pci.slots[slot]) {
		pthread_rwlock_unlock(&pci.lock);
		return -EBUSY;
	}
	pd->slot = (uint8_t)slot;
	pd->gsi = PCI_FIRST_INTX_GSI + (slot % (IOAPIC_PINS - PCI_FIRST_INTX_GSI));
	pd->cfg[PCI_INTERRUPT_LINE] = pd->gsi;
	for (b = 0; b < PCI_MAX_BARS; b++)
		cfg_put(pd, PCI_BAR0 + 4 * b, 4, bars[b]);
	memset(pci.decoded[slot], 0, sizeof(pci.decoded[slot]));
	pci.slots[slot] = pd;
	pthread_rwlock_unlock(&pci.lock);
	log_debug("pci 00:%02x.0 %s", slot, pd->name);
	return 0;
}

int pci_register(struct pci_dev *pd)
{
	int slot = pci_free_slot();

	return slot < 0 ? slot : pci_register_slot(pd, (unsigned)slot);
}

void pci_unregister(struct pci_dev *pd)
{
	unsigned b;

	pthread_rwlock_wrlock(&pci.lock);
	if (pd->slot && pci.slots[pd->slot] == pd) {
		/* Its BARs stop decoding first: the device drops its ioeventfds. */
		for (b = 0; b < PCI_MAX_BARS; b++)
			if (pci.decoded[pd->slot][b]) {
				pci.decoded[pd->slot][b] = 0;
				if (pd->ops->bar_moved)
					pd->ops->bar_moved(pd, b, 0);
			}
		pci.slots[pd->slot] = NULL;
		log_debug("pci 00:%02x.0 %s removed", pd->slot, pd->name);
	}
	pthread_rwlock_unlock(&pci.lock);
}
