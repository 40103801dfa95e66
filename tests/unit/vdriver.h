/* The guest's side of virtio-pci for unit tests without KVM: PCI
 * configuration and MMIO through the same bus dispatch a vCPU exit takes,
 * and finding a device's capabilities the way a driver does.  Included by
 * one test program each (everything is static). */
#ifndef LODGE_TEST_VDRIVER_H
#define LODGE_TEST_VDRIVER_H

#include "bus.h"
#include "dev/pci.h"

#include <stdint.h>

static uint64_t bar0;
static unsigned common_off, notify_off, device_off;

static uint32_t cfg_read(unsigned slot, unsigned reg, unsigned size)
{
	uint32_t addr = 0x80000000u | (slot << 11) | (reg & 0xfc), v = 0;

	bus_access(BUS_PIO, 0xcf8, 4, 1, &addr);
	bus_access(BUS_PIO, 0xcfc + (reg & 3), size, 0, &v);
	return v;
}

static void cfg_write(unsigned slot, unsigned reg, unsigned size, uint32_t v)
{
	uint32_t addr = 0x80000000u | (slot << 11) | (reg & 0xfc);

	bus_access(BUS_PIO, 0xcf8, 4, 1, &addr);
	bus_access(BUS_PIO, 0xcfc + (reg & 3), size, 1, &v);
}

static uint64_t mmio_read(uint64_t gpa, unsigned size)
{
	uint64_t v = 0;

	bus_access(BUS_MMIO, gpa, size, 0, &v);
	return v;
}

static void mmio_write(uint64_t gpa, unsigned size, uint64_t v)
{
	bus_access(BUS_MMIO, gpa, size, 1, &v);
}

#define COMMON(off, size)        mmio_read(bar0 + common_off + (off), size)
#define SET_COMMON(off, size, v) mmio_write(bar0 + common_off + (off), size, v)

/* The virtio device DEVICE_ID (0x1040 + virtio id) at SLOT: enable it and
 * find its common, notify and device regions in BAR 0. */
static int probe_device(unsigned slot, uint16_t device_id)
{
	unsigned cap;

	if (cfg_read(slot, 0, 2) != 0x1af4 || cfg_read(slot, 2, 2) != device_id)
		return -1;
	cfg_write(slot, PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	bar0 = cfg_read(slot, PCI_BAR0, 4) & ~0xfULL;
	for (cap = cfg_read(slot, PCI_CAPABILITY_LIST, 1); cap; cap = cfg_read(slot, cap + 1, 1)) {
		if (cfg_read(slot, cap, 1) != PCI_CAP_ID_VNDR)
			continue;
		switch (cfg_read(slot, cap + 3, 1)) {
		case 1: common_off = cfg_read(slot, cap + 8, 4); break;
		case 2: notify_off = cfg_read(slot, cap + 8, 4); break;
		case 4: device_off = cfg_read(slot, cap + 8, 4); break;
		}
	}
	return 0;
}

#endif
