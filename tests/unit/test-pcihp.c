/* The PCI hot-plug controller and the bus under it, without KVM: a guest's
 * view through the I/O ports of src/common/pcihp.h, the GPE0 block and
 * configuration mechanism #1.  A device plugged into a slot raises GPE 1
 * and shows in PCIHP_UP once; an eject request shows in PCIHP_DOWN; the
 * guest's write to PCIHP_EJECT takes the device off the bus at once (its
 * BARs stop decoding, its vendor ID reads 0xffff), wakes the control loop's
 * eventfd, and nothing it may not eject (an empty slot, the host bridge)
 * is touched.  Each slot's BARs are where they were whatever came before. */
#include "bus.h"
#include "dev/devices.h"
#include "dev/hotplug.h"
#include "dev/pci.h"
#include "domain.h"
#include "pcihp.h"
#include "platform.h"
#include "unit.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

static struct domain dom = { DOMAIN_DEFAULTS };
static unsigned moved_to_zero;

static void fake_bar_moved(struct pci_dev *pd, unsigned bar, uint64_t gpa)
{
	if (!gpa)
		moved_to_zero++;
}

static const struct pci_dev_ops fake_ops = { .bar_moved = fake_bar_moved };

static uint32_t pio_in(uint16_t port, unsigned size)
{
	uint64_t v = 0;

	bus_access(BUS_PIO, port, size, 0, &v);
	return (uint32_t)v;
}

static void pio_out(uint16_t port, unsigned size, uint32_t val)
{
	uint64_t v = val;

	bus_access(BUS_PIO, port, size, 1, &v);
}

static uint32_t cfg_read(unsigned slot, unsigned reg)
{
	pio_out(PCI_CONF1_PORT, 4, 0x80000000u | slot << 11 | reg);
	return pio_in(PCI_CONF1_PORT + 4, 4);
}

static void cfg_write16(unsigned slot, unsigned reg, uint16_t v)
{
	pio_out(PCI_CONF1_PORT, 4, 0x80000000u | slot << 11 | (reg & ~3u));
	pio_out(PCI_CONF1_PORT + 4 + (reg & 3), 2, v);
}

static void fake_dev(struct pci_dev *pd, const char *name)
{
	pci_dev_init(pd, 0x1af4, 0x1042, 0x010000, 1, 0x1af4, 0x42);
	pci_dev_add_bar(pd, 0, 0x4000);
	pci_dev_add_bar(pd, 1, 0x1000);
	pd->ops = &fake_ops;
	pd->name = name;
}

static bool event_ready(void)
{
	struct pollfd p = { pcihp_event_fd(), POLLIN, 0 };

	return poll(&p, 1, 0) == 1;
}

int main(void)
{
	static struct pci_dev a, b, c;
	uint32_t gpe_bit = 1u << PCIHP_GPE_BIT;

	CHECK("ACPI PM, PCI bus and hot-plug controller set up",
	      acpi_pm_init(&dom) == 0 && pci_init() == 0 && pcihp_init() == 0);

	/* Boot-time devices: the first free slots, not announced. */
	fake_dev(&a, "a");
	fake_dev(&b, "b");
	CHECK("boot devices take slots 1 and 2", pci_register(&a) == 0 && a.slot == 1 &&
	      pci_register(&b) == 0 && b.slot == 2);
	pcihp_plugged(&a, false);
	pcihp_plugged(&b, false);
	CHECK("BARs in each slot's own window",
	      cfg_read(2, 0x10) == GPA_PCI_MMIO_BASE + 2 * 0x100000u &&
	      cfg_read(2, 0x14) == GPA_PCI_MMIO_BASE + 2 * 0x100000u + 0x4000);
	CHECK("boot devices are present, not announced as new",
	      pio_in(PCIHP_PORT + PCIHP_PRESENT, 4) == 0x6 && pio_in(PCIHP_PORT + PCIHP_UP, 4) == 0 &&
	      !(pio_in(PCIHP_GPE0_PORT, 1) & gpe_bit));

	/* The guest enables GPE 1 (the GPE0_EN half, byte access as ACPICA). */
	pio_out(PCIHP_GPE0_PORT + PCIHP_GPE0_LEN / 2, 1, gpe_bit);
	CHECK("GPE0_EN takes the hot-plug bit", pio_in(PCIHP_GPE0_PORT + 2, 1) == gpe_bit);

	/* Hot-plug into the first free slot. */
	fake_dev(&c, "c");
	CHECK("the first free slot is 3", pci_free_slot() == 3);
	CHECK("a taken slot is refused", pci_register_slot(&c, 2) == -EBUSY);
	CHECK("slot 0 (the host bridge) and 32 are refused",
	      pci_register_slot(&c, 0) == -EINVAL && pci_register_slot(&c, 32) == -EINVAL);
	CHECK("plugged into slot 3", pci_register_slot(&c, 3) == 0 && c.slot == 3);
	pcihp_plugged(&c, true);
	CHECK("GPE 1 status set", pio_in(PCIHP_GPE0_PORT, 1) & gpe_bit);
	CHECK("PCIHP_UP says slot 3, once", pio_in(PCIHP_PORT + PCIHP_UP, 4) == 1u << 3 &&
	      pio_in(PCIHP_PORT + PCIHP_UP, 4) == 0);
	CHECK("a 16-bit read of a register is refused (all ones)", pio_in(PCIHP_PORT + PCIHP_PRESENT, 2) == 0xffff);
	pio_out(PCIHP_GPE0_PORT, 1, gpe_bit);
	CHECK("GPE 1 status cleared by writing it", !(pio_in(PCIHP_GPE0_PORT, 1) & gpe_bit));
	CHECK("the new device answers config reads", (cfg_read(3, 0) & 0xffff) == 0x1af4);
	cfg_write16(3, 0x04, 0x2);      /* memory decoding on: its BARs decode */
	CHECK("its BARs decode", pci_bar_gpa(&c, 0) == GPA_PCI_MMIO_BASE + 3 * 0x100000u);

	/* Detach: the host asks, the guest ejects. */
	pcihp_request_eject(3);
	CHECK("eject request: PCIHP_DOWN slot 3 and GPE 1",
	      pio_in(PCIHP_PORT + PCIHP_DOWN, 4) == 1u << 3 && (pio_in(PCIHP_GPE0_PORT, 1) & gpe_bit));
	CHECK("no eject yet: the control loop sleeps", !event_ready());
	pio_out(PCIHP_PORT + PCIHP_EJECT, 4, 1u << 2);
	CHECK("an eject the host did not ask for is ignored",
	      pci_slot_dev(2) == &b && !event_ready() && pio_in(PCIHP_PORT + PCIHP_PRESENT, 4) == (1u << 1 | 1u << 2 | 1u << 3));
	pio_out(PCIHP_PORT + PCIHP_EJECT, 4, 1u << 3 | 1u << 9 | 1u << 0);
	CHECK("the guest's eject takes the device off the bus at once",
	      pci_slot_dev(3) == NULL && cfg_read(3, 0) == 0xffffffffu && moved_to_zero == 2);
	CHECK("... and not the host bridge, nor an empty slot",
	      pci_slot_dev(0) != NULL && (cfg_read(0, 0) & 0xffff) == 0x8086);
	CHECK("PCIHP_DOWN and PRESENT drop slot 3",
	      pio_in(PCIHP_PORT + PCIHP_DOWN, 4) == 0 && pio_in(PCIHP_PORT + PCIHP_PRESENT, 4) == 0x6);
	CHECK("the control loop is woken and told slot 3", event_ready() && pcihp_take_ejected() == 1u << 3);
	CHECK("told once", !event_ready() && pcihp_take_ejected() == 0);

	/* Plugged again: the same slot, the same BAR addresses. */
	CHECK("the freed slot is reused", pci_free_slot() == 3 && pci_register_slot(&c, 3) == 0);
	CHECK("same BARs as before", cfg_read(3, 0x10) == GPA_PCI_MMIO_BASE + 3 * 0x100000u);
	pcihp_plugged(&c, true);

	/* A guest that does not answer: the host withdraws, or forces. */
	pcihp_request_eject(1);
	pcihp_withdraw(1);
	CHECK("a withdrawn request leaves PCIHP_DOWN", pio_in(PCIHP_PORT + PCIHP_DOWN, 4) == 0);
	pci_unregister(&a);
	pcihp_forget(1);
	pio_out(PCIHP_PORT + PCIHP_EJECT, 4, 1u << 1);
	CHECK("a forced removal: a late eject of the slot does nothing",
	      !event_ready() && pio_in(PCIHP_PORT + PCIHP_PRESENT, 4) == (1u << 2 | 1u << 3));
	UNIT_EXIT();
}
