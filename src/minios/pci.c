/* PCI configuration mechanism #1 and a walk of bus 0. */
#include "io.h"
#include "minios.h"
#include "pci.h"

static uint32_t pci_addr(unsigned dev, unsigned reg)
{
	return 0x80000000u | (dev << 11) | (reg & 0xfc);
}

uint32_t pci_read32(unsigned dev, unsigned reg)
{
	outl(0xcf8, pci_addr(dev, reg));
	return inl(0xcfc);
}

uint16_t pci_read16(unsigned dev, unsigned reg)
{
	return pci_read32(dev, reg) >> ((reg & 2) * 8);
}

uint8_t pci_read8(unsigned dev, unsigned reg)
{
	return pci_read32(dev, reg) >> ((reg & 3) * 8);
}

void pci_write32(unsigned dev, unsigned reg, uint32_t v)
{
	outl(0xcf8, pci_addr(dev, reg));
	outl(0xcfc, v);
}

void pci_write16(unsigned dev, unsigned reg, uint16_t v)
{
	outl(0xcf8, pci_addr(dev, reg));
	outw(0xcfc + (reg & 2), v);
}

/* The address of a memory BAR (32- or 64-bit). */
uint64_t pci_bar(unsigned dev, unsigned bar)
{
	uint32_t lo = pci_read32(dev, 0x10 + 4 * bar);
	uint64_t a = lo & ~0xfULL;

	if ((lo & 0x6) == 0x4)
		a |= (uint64_t)pci_read32(dev, 0x14 + 4 * bar) << 32;
	return a;
}

unsigned pci_find_cap(unsigned dev, uint8_t id, unsigned from)
{
	unsigned cap = from ? pci_read8(dev, from + 1) : pci_read8(dev, 0x34);

	if (!(pci_read16(dev, 0x06) & 0x10))
		return 0;
	for (int hops = 0; cap && hops < 48; hops++) {
		if (pci_read8(dev, cap) == id)
			return cap;
		cap = pci_read8(dev, cap + 1);
	}
	return 0;
}

/* MSI-X entry 0 of dev delivers vector to this CPU; all its vectors use
 * entry 0 (Mini-OS polls its queues after any wake-up). */
int pci_msix_enable(unsigned dev, unsigned vector)
{
	unsigned cap = pci_find_cap(dev, 0x11, 0);
	uint32_t table;
	uint64_t base;

	if (!cap)
		return -1;
	table = pci_read32(dev, cap + 4);
	base = pci_bar(dev, table & 7) + (table & ~7u);
	mmio_write32(base + 0, 0xfee00000u | (lapic_id() << 12));
	mmio_write32(base + 4, 0);
	mmio_write32(base + 8, vector);
	mmio_write32(base + 12, 0);              /* unmasked */
	pci_write16(dev, cap + 2, pci_read16(dev, cap + 2) | 0x8000);
	return 0;
}
