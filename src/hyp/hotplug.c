/* Hot-plug of a running domain's devices (hotplug.h). */
#include "hotplug.h"
#include "backend/disk.h"
#include "dev/hotplug.h"
#include "dev/pci.h"
#include "domain.h"
#include "log.h"
#include "pcihp.h"
#include "virtio/blk.h"
#include "virtio/virtio.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct {
	struct virtio_dev *vdev;
	struct disk *disk;
} slots[PCIHP_SLOTS];
static bool changed;

void hotplug_note_disk(struct disk *disk, struct virtio_dev *vdev)
{
	if (vdev->slot < PCIHP_SLOTS) {
		slots[vdev->slot].vdev = vdev;
		slots[vdev->slot].disk = disk;
	}
}

bool hotplug_changed(void)
{
	return changed;
}

/* A disk entry no slot uses. */
static struct disk *free_disk(struct domain *dom)
{
	unsigned i, s;

	for (i = 0; i < DOMAIN_DISKS_MAX; i++) {
		bool used = false;

		for (s = 0; s < PCIHP_SLOTS; s++)
			if (slots[s].disk == &dom->disks[i])
				used = true;
		if (!used)
			return &dom->disks[i];
	}
	return NULL;
}

int hotplug_attach_disk(struct domain *dom, const char *spec, const int *fds, unsigned nfds,
			uint32_t shared, unsigned *slot, char *why, size_t whylen)
{
	struct disk *d = free_disk(dom);
	struct virtio_dev *vdev;
	int rc, free_slot = pci_free_slot();
	unsigned i;

	if (!d || free_slot < 0) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		if (!d)
			snprintf(why, whylen, "domain %s has %d disks already, the most it may have", dom->name,
				 DOMAIN_DISKS_MAX);
		else
			snprintf(why, whylen, "domain %s has no free PCI slot", dom->name);
		return -ENOSPC;
	}
	if ((rc = disk_parse(spec, d, why, whylen))) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		return rc;
	}
	if ((rc = disk_adopt(d, fds, nfds, shared, why, whylen)))
		return rc;
	if ((rc = virtio_blk_create_at(dom, d, (unsigned)free_slot, &vdev))) {
		snprintf(why, whylen, "cannot create the disk's device: %s", strerror(-rc));
		disk_close(d);
		return rc;
	}
	if ((unsigned)(d - dom->disks) >= dom->ndisks)
		dom->ndisks = (unsigned)(d - dom->disks) + 1;
	hotplug_note_disk(d, vdev);
	changed = true;
	pcihp_plugged(virtio_pci_dev(vdev), true);
	*slot = vdev->slot;
	log_info("disk %s attached in PCI slot %u", d->path, vdev->slot);
	return 0;
}

bool hotplug_present(unsigned slot, char *what, size_t len)
{
	if (slot >= PCIHP_SLOTS || !slots[slot].vdev)
		return false;
	snprintf(what, len, "disk %s", slots[slot].disk->path);
	return true;
}

void hotplug_remove(struct domain *dom, unsigned slot)
{
	struct disk *d;

	if (slot >= PCIHP_SLOTS || !slots[slot].vdev)
		return;
	d = slots[slot].disk;
	pcihp_forget(slot);
	virtio_pci_destroy(slots[slot].vdev);
	log_info("disk %s detached from PCI slot %u", d->path, slot);
	disk_close(d);
	slots[slot].vdev = NULL;
	slots[slot].disk = NULL;
	changed = true;
}
