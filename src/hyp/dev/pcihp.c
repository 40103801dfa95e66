/* PCI hot-plug controller in the style of QEMU's PIIX4 (pcihp.h and
 * src/common/pcihp.h).  PIIX4 rather than cloud-hypervisor's Generic Event
 * Device: our FADT already describes real PM1 fixed hardware and an SCI
 * (not a hardware-reduced platform, where a GED is the only way), so a
 * GPE0 block is the natural event source, and Linux serves it with its
 * ACPI core alone (a GED needs the evged driver and an interrupt in
 * _CRS); its registers are in I/O space, which Mini-OS reads with in/out
 * as it does the PM1 block, with no MMIO mapping of its own to set up. */
#include "dev/hotplug.h"
#include "dev/devices.h"
#include "dev/pci.h"
#include "bus.h"
#include "log.h"
#include "pcihp.h"
#include "save/state.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <unistd.h>

static struct {
	pthread_mutex_t lock;
	uint32_t up;               /* plugged, not yet read by the guest */
	uint32_t down;             /* the host asks the guest to eject */
	uint32_t present;          /* hot-pluggable slots with a device */
	uint32_t ejected;          /* ejected by the guest, for the control loop */
	struct pci_dev *devs[PCIHP_SLOTS];
	int event_fd;
} hp = { .lock = PTHREAD_MUTEX_INITIALIZER, .event_fd = -1 };

static uint32_t slot_bit(unsigned slot)
{
	return slot >= PCIHP_FIRST_SLOT && slot < PCIHP_SLOTS ? 1u << slot : 0;
}

static uint64_t pcihp_read(void *dev, uint64_t off, unsigned size)
{
	uint32_t v = 0;

	if (size != 4 || (off & 3))
		return 0xffffffffu;
	pthread_mutex_lock(&hp.lock);
	switch (off) {
	case PCIHP_UP:
		v = hp.up;
		hp.up = 0;            /* as QEMU's: each arrival is told once */
		break;
	case PCIHP_DOWN:
		v = hp.down;
		break;
	case PCIHP_PRESENT:
		v = hp.present;
		break;
	}
	pthread_mutex_unlock(&hp.lock);
	return v;
}

/* The guest's _EJ0 (or Mini-OS): the devices leave the bus now, so a
 * rescan right after finds the slots empty; the control loop finishes. */
static void pcihp_write(void *dev, uint64_t off, unsigned size, uint64_t val)
{
	uint32_t bits;
	uint64_t one = 1;
	unsigned s;

	if (size != 4 || off != PCIHP_EJECT)
		return;
	pthread_mutex_lock(&hp.lock);
	/* Only what the host asked for: a guest that gives up a device on
	 * its own (Linux's "echo 0 > /sys/bus/pci/slots/N/power") has let
	 * its driver go, but the device stays until the host detaches it. */
	bits = (uint32_t)val & hp.present & hp.down;
	for (s = PCIHP_FIRST_SLOT; s < PCIHP_SLOTS; s++)
		if (bits & (1u << s) && hp.devs[s])
			pci_unregister(hp.devs[s]);
	hp.present &= ~bits;
	hp.down &= ~bits;
	hp.up &= ~bits;
	hp.ejected |= bits;
	pthread_mutex_unlock(&hp.lock);
	if (bits && write(hp.event_fd, &one, sizeof(one)) < 0)
		log_warn("pci hot-plug: cannot wake the control loop: %m");
}

static const struct bus_ops pcihp_ops = { .read = pcihp_read, .write = pcihp_write };

int pcihp_event_fd(void)
{
	return hp.event_fd;
}

uint32_t pcihp_take_ejected(void)
{
	uint64_t v;
	uint32_t bits;
	unsigned s;

	if (read(hp.event_fd, &v, sizeof(v)) < 0) {
		/* nothing pending: bits is 0 then, or it was read already */
	}
	pthread_mutex_lock(&hp.lock);
	bits = hp.ejected;
	hp.ejected = 0;
	for (s = PCIHP_FIRST_SLOT; s < PCIHP_SLOTS; s++)
		if (bits & (1u << s))
			hp.devs[s] = NULL;
	pthread_mutex_unlock(&hp.lock);
	return bits;
}

void pcihp_plugged(struct pci_dev *pd, bool notify)
{
	uint32_t bit = slot_bit(pd->slot);

	if (!bit)
		return;
	pthread_mutex_lock(&hp.lock);
	hp.devs[pd->slot] = pd;
	hp.present |= bit;
	if (notify)
		hp.up |= bit;
	pthread_mutex_unlock(&hp.lock);
	if (notify)
		acpi_pm_gpe_raise(PCIHP_GPE_BIT);
}

void pcihp_request_eject(unsigned slot)
{
	uint32_t bit = slot_bit(slot);

	pthread_mutex_lock(&hp.lock);
	hp.down |= bit & hp.present;
	pthread_mutex_unlock(&hp.lock);
	acpi_pm_gpe_raise(PCIHP_GPE_BIT);
}

void pcihp_withdraw(unsigned slot)
{
	pthread_mutex_lock(&hp.lock);
	hp.down &= ~slot_bit(slot);
	pthread_mutex_unlock(&hp.lock);
}

void pcihp_forget(unsigned slot)
{
	uint32_t bit = slot_bit(slot);

	pthread_mutex_lock(&hp.lock);
	hp.present &= ~bit;
	hp.down &= ~bit;
	hp.up &= ~bit;
	hp.ejected &= ~bit;
	if (bit)
		hp.devs[slot] = NULL;
	pthread_mutex_unlock(&hp.lock);
}

/* Save and restore: the bits the guest has not seen yet.  Which slots hold
 * a device is the devices' own (each restored into its slot); a pending
 * eject request is not carried over: the detach that asked is over. */
#define PCIHP_STATE_VERSION 1

static int pcihp_save(void *obj, struct state_buf *b)
{
	pthread_mutex_lock(&hp.lock);
	state_put_u32(b, hp.up);
	pthread_mutex_unlock(&hp.lock);
	return 0;
}

static int pcihp_load(void *obj, struct state_in *in, char *why, size_t whylen)
{
	uint32_t up = state_get_u32(in);

	if (in->bad)
		return -EBADMSG;
	pthread_mutex_lock(&hp.lock);
	if (up & ~hp.present) {
		pthread_mutex_unlock(&hp.lock);
		snprintf(why, whylen, "pcihp: slots %#x told as plugged are not all here (%#x)", up, hp.present);
		return -EINVAL;
	}
	hp.up = up;
	pthread_mutex_unlock(&hp.lock);
	return 0;
}

static const struct state_ops pcihp_state_ops = {
	.save = pcihp_save, .load = pcihp_load, .version = PCIHP_STATE_VERSION,
};

int pcihp_init(void)
{
	int rc;

	hp.event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (hp.event_fd < 0)
		return -errno;
	if ((rc = bus_register(BUS_PIO, PCIHP_PORT, PCIHP_LEN, &pcihp_ops, NULL, "pcihp")))
		return rc;
	return state_register("pcihp", &pcihp_state_ops, NULL);
}
