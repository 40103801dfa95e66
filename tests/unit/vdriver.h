/* The guest's side of virtio-pci for unit tests without KVM: PCI
 * configuration and MMIO through the same bus dispatch a vCPU exit takes,
 * and finding a device's capabilities the way a driver does.  Included by
 * one test program each (everything is static). */
#ifndef LODGE_TEST_VDRIVER_H
#define LODGE_TEST_VDRIVER_H

#include "bus.h"
#include "dev/pci.h"
#include "virtio/virtio.h"

#include <stdint.h>
#include <string.h>

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

/* Reset, negotiate VERSION_1 and nothing else, queue 0 of QSIZE entries at
 * DESC, AVAIL and USED (its three pages in RAM zeroed first), on MSI-X
 * VECTOR unless that is negative, then DRIVER_OK: 0 once the device holds
 * all four status bits. */
static inline int vdriver_start(uint8_t *ram, unsigned qsize, uint64_t desc, uint64_t avail, uint64_t used, int vector)
{
	const unsigned ok = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
			    VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK;

	SET_COMMON(0x14, 1, 0);
	SET_COMMON(0x14, 1, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	SET_COMMON(0x08, 4, 1);
	SET_COMMON(0x0c, 4, 1);                  /* VERSION_1 */
	SET_COMMON(0x08, 4, 0);
	SET_COMMON(0x0c, 4, 0);
	SET_COMMON(0x14, 1, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
	if (!(COMMON(0x14, 1) & VIRTIO_STATUS_FEATURES_OK))
		return -1;
	SET_COMMON(0x16, 2, 0);
	SET_COMMON(0x18, 2, qsize);
	SET_COMMON(0x20, 8, desc);
	SET_COMMON(0x28, 8, avail);
	SET_COMMON(0x30, 8, used);
	memset(ram + desc, 0, 0x3000);
	if (vector >= 0)
		SET_COMMON(0x1a, 2, vector);
	SET_COMMON(0x1c, 2, 1);
	SET_COMMON(0x14, 1, ok);
	return COMMON(0x14, 1) == ok ? 0 : -1;
}

#endif
