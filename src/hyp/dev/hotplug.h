/* The PCI hot-plug controller (pcihp.c): the registers of
 * src/common/pcihp.h, raising GPE PCIHP_GPE_BIT through the ACPI PM
 * block's GPE0 (the SCI).  The guest's eject takes the device off the bus
 * at once, in the vCPU's own exit; what takes time (stopping its worker,
 * closing its backend) is the control loop's, woken through event_fd. */
#ifndef LODGE_DEV_HOTPLUG_H
#define LODGE_DEV_HOTPLUG_H

#include <stdbool.h>
#include <stdint.h>

struct pci_dev;

/* Register the ports and the save/restore entry: 0 or -errno. */
int pcihp_init(void);
/* Readable (an eventfd) once the guest has ejected a slot: then call
 * pcihp_take_ejected(). */
int pcihp_event_fd(void);
/* The slots the guest ejected since the last call (their devices are
 * already off the bus); clears them and the eventfd. */
uint32_t pcihp_take_ejected(void);

/* Mark pd's slot as hot-pluggable (PCIHP_PRESENT), so that the guest may
 * eject it; with notify, tell the guest it came (PCIHP_UP and the GPE). */
void pcihp_plugged(struct pci_dev *pd, bool notify);
/* Ask the guest to give up slot's device (PCIHP_DOWN and the GPE). */
void pcihp_request_eject(unsigned slot);
/* The host no longer waits for the eject: clear the request. */
void pcihp_withdraw(unsigned slot);
/* The host removed slot's device itself (a forced detach): forget it. */
void pcihp_forget(unsigned slot);

#endif
