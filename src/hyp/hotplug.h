/* Hot-plug of a running domain's disks (hotplug.c): which device is in
 * which PCI slot, attaching a disk whose descriptors the caller sent, and
 * taking a device out once the guest ejected it (or by force).  The
 * controller the guest sees is dev/pcihp.c; the control commands that
 * drive this are ctl/ctl-hotplug.c.  All of it runs on the control loop's
 * thread, so the table needs no lock. */
#ifndef LODGE_HOTPLUG_H
#define LODGE_HOTPLUG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct domain;
struct disk;
struct virtio_dev;

/* A device lodge-hyp was started with (build.c): detachable like one
 * attached later. */
void hotplug_note_disk(struct disk *disk, struct virtio_dev *vdev);
struct tap;
void hotplug_note_vif(struct tap *tap, struct virtio_dev *vdev);
/* Attach a vif (spec: lodge-hyp's --net form) on the tap the caller
 * created and sent (fd, taken over) in the first free slot and tell the
 * guest.  0 and the slot, or -errno with one line in why. */
int hotplug_attach_vif(struct domain *dom, const char *spec, int fd, unsigned *slot, char *why, size_t whylen);

/* Attach the disk of spec (lodge-hyp's --disk form) on the descriptors
 * the caller opened (disk_adopt takes them over) in the first free slot
 * and tell the guest.  0 and the slot, or -errno with one line in why:
 * no free disk or slot, the disk in use elsewhere or here. */
int hotplug_attach_disk(struct domain *dom, const char *spec, const int *fds, unsigned nfds,
			uint32_t shared, unsigned *slot, char *why, size_t whylen);

/* Whether slot holds a device that may be detached; its description
 * ("disk PATH") for messages. */
bool hotplug_present(unsigned slot, char *what, size_t len);
/* Take slot's device out: stop and free the device, close its backend
 * (the disk's locks go).  For a device the guest ejected (already off the
 * bus) or a forced detach. */
void hotplug_remove(struct domain *dom, unsigned slot);

#endif
