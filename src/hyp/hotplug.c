/* Hot-plug of a running domain's devices (hotplug.h). */
#include "hotplug.h"
#include "backend/disk.h"
#include "dev/hotplug.h"
#include "dev/pci.h"
#include "domain.h"
#include "log.h"
#include "netwatch/netwatch.h"
#include "pcihp.h"
#include "virtio/blk.h"
#include "virtio/net.h"
#include "virtio/virtio.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct {
	struct virtio_dev *vdev;
	struct disk *disk;         /* a disk's, or */
	struct tap *tap;           /* a vif's */
} slots[PCIHP_SLOTS];

void hotplug_note_disk(struct disk *disk, struct virtio_dev *vdev)
{
	if (vdev->slot < PCIHP_SLOTS) {
		slots[vdev->slot].vdev = vdev;
		slots[vdev->slot].disk = disk;
	}
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

	if (free_slot > DOMAIN_PCI_SLOT_MAX)
		free_slot = -ENOSPC;            /* the balloon's is not for a disk */
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
	if (!(rc = disk_parse(spec, d, why, whylen)) && d->given_fd >= 0) {
		/* Its descriptors come with the request, never by number. */
		snprintf(why, whylen, "disk '%s': fd= is for lodge-hyp's command line only", spec);
		rc = -EINVAL;
	}
	if (rc) {
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
	pcihp_plugged(virtio_pci_dev(vdev), true);
	*slot = vdev->slot;
	log_info("disk %s attached in PCI slot %u", d->path, vdev->slot);
	return 0;
}

bool hotplug_present(unsigned slot, char *what, size_t len)
{
	if (slot >= PCIHP_SLOTS || !slots[slot].vdev)
		return false;
	if (slots[slot].disk)
		snprintf(what, len, "disk %s", slots[slot].disk->path);
	else
		snprintf(what, len, "vif %s", slots[slot].tap->name);
	return true;
}

unsigned hotplug_vif_names(const struct domain *dom, const char **names, unsigned max)
{
	unsigned i, n = 0;

	for (i = 0; i < dom->nio && n < max; i++) {
		unsigned s = dom->io[i].slot;

		if (dom->io[i].kind == IO_VIF && s < PCIHP_SLOTS && slots[s].tap)
			names[n++] = slots[s].tap->name;
	}
	return n;
}

bool hotplug_is_disk(unsigned slot)
{
	return slot < PCIHP_SLOTS && slots[slot].vdev && slots[slot].disk;
}

void hotplug_note_vif(struct tap *tap, struct virtio_dev *vdev)
{
	if (vdev->slot < PCIHP_SLOTS) {
		slots[vdev->slot].vdev = vdev;
		slots[vdev->slot].tap = tap;
	}
}

int hotplug_attach_vif(struct domain *dom, const char *spec, int fd, unsigned *slot, char *why, size_t whylen)
{
	struct virtio_dev *vdev;
	struct tap *t = NULL;
	int rc, free_slot = pci_free_slot();
	unsigned i, s;

	for (i = 0; i < DOMAIN_VIFS_MAX && !t; i++) {
		t = &dom->nics[i];
		for (s = 0; s < PCIHP_SLOTS; s++)
			if (slots[s].tap == t)
				t = NULL;
	}
	if (free_slot > DOMAIN_PCI_SLOT_MAX)
		free_slot = -ENOSPC;
	if (!t || free_slot < 0) {
		close(fd);
		if (!t)
			snprintf(why, whylen, "domain %s has %d vifs already, the most it may have", dom->name,
				 DOMAIN_VIFS_MAX);
		else
			snprintf(why, whylen, "domain %s has no free PCI slot", dom->name);
		return -ENOSPC;
	}
	if ((rc = tap_parse(spec, t, why, whylen))) {
		close(fd);
		return rc;
	}
	for (s = 0; s < PCIHP_SLOTS; s++)
		if (slots[s].tap && slots[s].tap != t && !memcmp(slots[s].tap->mac, t->mac, 6)) {
			close(fd);
			snprintf(why, whylen, "domain %s has a vif with MAC %02x:%02x:%02x:%02x:%02x:%02x already",
				 dom->name, t->mac[0], t->mac[1], t->mac[2], t->mac[3], t->mac[4], t->mac[5]);
			t->fd = -1;
			return -EEXIST;
		}
	if ((rc = tap_adopt(t, fd, why, whylen)))
		return rc;
	t->slot = (unsigned)free_slot;
	if ((rc = virtio_net_create_at(dom, t, &vdev))) {
		snprintf(why, whylen, "cannot create the vif's device: %s", strerror(-rc));
		close(t->fd);
		t->fd = -1;
		return rc;
	}
	if ((unsigned)(t - dom->nics) >= dom->nnics)
		dom->nnics = (unsigned)(t - dom->nics) + 1;
	hotplug_note_vif(t, vdev);
	pcihp_plugged(virtio_pci_dev(vdev), true);
	*slot = vdev->slot;
	log_info("vif %s attached in PCI slot %u", t->name, vdev->slot);
	return 0;
}

void hotplug_remove(struct domain *dom, unsigned slot)
{
	struct disk *d;
	struct tap *t;

	if (slot >= PCIHP_SLOTS || !slots[slot].vdev)
		return;
	d = slots[slot].disk;
	t = slots[slot].tap;
	pcihp_forget(slot);
	virtio_pci_destroy(slots[slot].vdev);
	if (d) {
		log_info("disk %s detached from PCI slot %u", d->path, slot);
		disk_close(d);
	} else {
		/* Its last descriptor: a tap Lodge made goes with it. */
		log_info("vif %s detached from PCI slot %u", t->name, slot);
		netwatch_forget(dom->netwatch, t->name);     /* before its tap goes */
		close(t->fd);
		t->fd = -1;
	}
	slots[slot].vdev = NULL;
	slots[slot].disk = NULL;
	slots[slot].tap = NULL;
}
