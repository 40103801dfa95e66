/* The virtio-pci transport's saved state (virtio-pci.h): one entry per
 * device, loaded into a device that has not run. */
#include "virtio/virtio-pci.h"
#include "domain.h"
#include "log.h"
#include "save/state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One state entry per device: the transport's registers, the MSI-X
 * capability, table and PBA, each queue's placement and ring position,
 * then the device's own part as a length-prefixed blob.  The PCI header
 * (BARs, command) is the "pci" entry's, loaded before this one.
 *
 * Interrupts go out by KVM_SIGNAL_MSI from the loaded table, so there are
 * no MSI routes or irqfds to rebuild; the ioeventfds follow BAR 0, which
 * the "pci" entry's load put back.  What is left on load is to start the
 * device when its driver had reached DRIVER_OK. */
#define VPCI_STATE_VERSION 1
#define VPCI_STATUS_BITS   (VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | \
			    VIRTIO_STATUS_DRIVER_OK | VIRTIO_STATUS_FEATURES_OK | \
			    VIRTIO_STATUS_NEEDS_RESET | VIRTIO_STATUS_FAILED)
/* The writable bytes of the PCI_CFG capability: bar ... length (4.1.4.9). */
#define VPCI_PCICFG_LO     4
#define VPCI_PCICFG_HI     16

/* Quiesce: the I/O thread finishes what it took and stops (a disk's
 * flushes are on the disk before any state is saved); resume starts it
 * again where it was (a ring found broken stays broken). */
static void vpci_state_quiesce(void *obj)
{
	struct virtio_pci *vp = obj;

	/* The vCPUs are parked: nothing changes started under us. */
	if (vp->started && !vp->quiesced) {
		virtio_worker_stop(&vp->vdev->worker);
		vp->quiesced = true;
	}
}

static void vpci_state_resume(void *obj)
{
	struct virtio_pci *vp = obj;

	if (vp->quiesced) {
		vp->quiesced = false;
		if (virtio_worker_start(&vp->vdev->worker))
			virtio_needs_reset(vp->vdev, "cannot restart the I/O thread");
	}
}

static int vpci_state_save(void *obj, struct state_buf *b)
{
	struct virtio_pci *vp = obj;
	struct virtio_dev *vdev = vp->vdev;
	struct state_buf dev;
	unsigned q, v;
	int rc = 0;

	state_buf_init(&dev);
	if (vdev->ops->save && (rc = vdev->ops->save(vdev, &dev)) == 0)
		rc = dev.err;
	if (rc) {
		state_buf_free(&dev);
		return rc;
	}
	pthread_mutex_lock(&vp->lock);
	state_put_u16(b, vdev->ops->device_id);
	state_put_u16(b, vdev->ops->num_queues);
	state_put_u8(b, vdev->status);
	state_put_u8(b, vdev->config_generation);
	state_put_u64(b, vdev->driver_features);
	state_put_u32(b, vp->device_feature_select);
	state_put_u32(b, vp->driver_feature_select);
	state_put_u16(b, vp->queue_select);
	state_put_u16(b, vp->config_msix);
	state_put_u8(b, vp->isr);
	state_put_u16(b, vpci_msix_ctrl(vp) & (MSIX_CTRL_ENABLE | MSIX_CTRL_MASKALL));
	state_put(b, vp->pci.cfg + vp->pci_cfg_cap + VPCI_PCICFG_LO, VPCI_PCICFG_HI - VPCI_PCICFG_LO);
	state_put_u32(b, VPCI_MAX_VECTORS);
	for (v = 0; v < VPCI_MAX_VECTORS; v++) {
		state_put_u32(b, vp->msix[v].addr_lo);
		state_put_u32(b, vp->msix[v].addr_hi);
		state_put_u32(b, vp->msix[v].data);
		state_put_u32(b, vp->msix[v].ctrl);
	}
	state_put_u64(b, vp->msix_pending);
	for (q = 0; q < vdev->ops->num_queues; q++) {
		struct virtq_state qs;

		virtq_get_state(&vdev->vq[q], &qs);
		state_put_u16(b, vp->queue_msix[q]);
		state_put_u16(b, qs.size);
		state_put_u8(b, qs.ready);
		state_put_u8(b, qs.event_idx);
		state_put_u64(b, qs.desc_gpa);
		state_put_u64(b, qs.avail_gpa);
		state_put_u64(b, qs.used_gpa);
		state_put_u16(b, qs.last_avail);
		state_put_u16(b, qs.used_idx);
		state_put_u16(b, qs.signalled_used);
	}
	pthread_mutex_unlock(&vp->lock);
	state_put_blob(b, dev.data, dev.len);
	state_buf_free(&dev);
	return 0;
}

/* Everything the stream says, read and checked before any of it is used. */
struct vpci_loaded {
	uint8_t status, config_generation, isr;
	uint64_t driver_features;
	uint32_t device_feature_select, driver_feature_select;
	uint16_t queue_select, config_msix, msix_ctrl;
	uint8_t pcicfg[VPCI_PCICFG_HI - VPCI_PCICFG_LO];
	struct msix_entry msix[VPCI_MAX_VECTORS];
	uint64_t msix_pending;
	uint16_t queue_msix[VIRTIO_MAX_QUEUES];
	struct virtq vq[VIRTIO_MAX_QUEUES];
	struct state_in dev;        /* the device's part */
};

static bool vpci_vector_ok(uint16_t vec)
{
	return vec < VPCI_MAX_VECTORS || vec == VIRTIO_MSI_NO_VECTOR;
}

static int vpci_state_parse(struct virtio_pci *vp, struct state_in *in, struct vpci_loaded *l,
			    char *why, size_t whylen)
{
	struct virtio_dev *vdev = vp->vdev;
	const char *name = vdev->ops->name;
	uint16_t device_id = state_get_u16(in), nq = state_get_u16(in);
	uint32_t nvec, devlen;
	unsigned q, v;

	if (in->bad)
		return -EBADMSG;
	if (device_id != vdev->ops->device_id || nq != vdev->ops->num_queues) {
		snprintf(why, whylen, "%s: saved from virtio device %u with %u queues, not this one",
			 name, device_id, nq);
		return -EINVAL;
	}
	l->status = state_get_u8(in);
	l->config_generation = state_get_u8(in);
	l->driver_features = state_get_u64(in);
	l->device_feature_select = state_get_u32(in);
	l->driver_feature_select = state_get_u32(in);
	l->queue_select = state_get_u16(in);
	l->config_msix = state_get_u16(in);
	l->isr = state_get_u8(in);
	l->msix_ctrl = state_get_u16(in);
	state_get(in, l->pcicfg, sizeof(l->pcicfg));
	nvec = state_get_u32(in);
	if (in->bad)
		return -EBADMSG;
	if (l->status & ~VPCI_STATUS_BITS) {
		snprintf(why, whylen, "%s: device status %#x has unknown bits", name, l->status);
		return -EINVAL;
	}
	/* As vpci_set_status() lets FEATURES_OK stand: offered features only, modern. */
	if ((l->status & VIRTIO_STATUS_FEATURES_OK) &&
	    ((l->driver_features & ~vpci_offered_features(vp)) ||
	     !(l->driver_features & (1ULL << VIRTIO_F_VERSION_1)))) {
		snprintf(why, whylen, "%s: features %#llx were never offered", name,
			 (unsigned long long)l->driver_features);
		return -EINVAL;
	}
	if (!vpci_vector_ok(l->config_msix) || (l->isr & ~(ISR_QUEUE | ISR_CONFIG)) ||
	    (l->msix_ctrl & ~(MSIX_CTRL_ENABLE | MSIX_CTRL_MASKALL))) {
		snprintf(why, whylen, "%s: bad config vector, ISR or MSI-X control", name);
		return -EINVAL;
	}
	if (nvec != VPCI_MAX_VECTORS) {
		snprintf(why, whylen, "%s: %u MSI-X vectors saved, this device has %u", name, nvec,
			 VPCI_MAX_VECTORS);
		return -EINVAL;
	}
	for (v = 0; v < VPCI_MAX_VECTORS; v++) {
		l->msix[v].addr_lo = state_get_u32(in);
		l->msix[v].addr_hi = state_get_u32(in);
		l->msix[v].data = state_get_u32(in);
		l->msix[v].ctrl = state_get_u32(in);
	}
	l->msix_pending = state_get_u64(in);
	if (l->msix_pending >> VPCI_MAX_VECTORS) {
		snprintf(why, whylen, "%s: MSI-X pending bits beyond the table", name);
		return -EINVAL;
	}
	for (q = 0; q < nq; q++) {
		struct virtq_state qs;
		int rc;

		l->queue_msix[q] = state_get_u16(in);
		qs.size = state_get_u16(in);
		qs.ready = state_get_u8(in);
		qs.event_idx = state_get_u8(in);
		qs.desc_gpa = state_get_u64(in);
		qs.avail_gpa = state_get_u64(in);
		qs.used_gpa = state_get_u64(in);
		qs.last_avail = state_get_u16(in);
		qs.used_idx = state_get_u16(in);
		qs.signalled_used = state_get_u16(in);
		if (in->bad)
			return -EBADMSG;
		if (!vpci_vector_ok(l->queue_msix[q])) {
			snprintf(why, whylen, "%s: queue %u vector %u beyond the MSI-X table", name, q,
				 l->queue_msix[q]);
			return -EINVAL;
		}
		if (qs.size > vdev->ops->queue_max_size) {
			snprintf(why, whylen, "%s: queue %u of size %u, the device's are at most %u",
				 name, q, qs.size, vdev->ops->queue_max_size);
			return -EINVAL;
		}
		rc = virtq_set_state(&l->vq[q], &vdev->dom->mem, &qs, vdev->ops->queue_max_size);
		if (rc == -EINVAL) {
			snprintf(why, whylen, "%s: queue %u (size %u, desc %#llx) misplaced or outside guest RAM",
				 name, q, qs.size, (unsigned long long)qs.desc_gpa);
			return rc;
		}
		if (rc) {
			snprintf(why, whylen, "%s: queue %u ring indices out of range (avail %u, used %u)",
				 name, q, qs.last_avail, qs.used_idx);
			return rc;
		}
	}
	/* The device's part: a blob the device must consume exactly. */
	devlen = state_get_u32(in);
	if (in->bad || devlen > in->len - in->off)
		return -EBADMSG;
	state_in_init(&l->dev, in->data + in->off, devlen);
	in->off += devlen;
	if (devlen && !vdev->ops->load) {
		snprintf(why, whylen, "%s: device state saved, but this device has none", name);
		return -EINVAL;
	}
	return 0;
}

static int vpci_state_load(void *obj, struct state_in *in, char *why, size_t whylen)
{
	struct virtio_pci *vp = obj;
	struct virtio_dev *vdev = vp->vdev;
	struct vpci_loaded *l;
	unsigned q;
	int rc;

	if (vp->started) {
		snprintf(why, whylen, "%s: already running; state loads before the guest runs",
			 vdev->ops->name);
		return -EBUSY;
	}
	if (!(l = calloc(1, sizeof(*l))))
		return -ENOMEM;
	if ((rc = vpci_state_parse(vp, in, l, why, whylen)))
		goto out;
	/* The framework checks this after load() too, but by then the device
	 * would be running on a payload it is about to refuse. */
	if (!state_in_done(in)) {
		snprintf(why, whylen, "%s: state is %s", vdev->ops->name,
			 in->bad ? "short" : "longer than expected");
		rc = -EBADMSG;
		goto out;
	}

	pthread_mutex_lock(&vp->lock);
	vdev->status = l->status;
	vdev->config_generation = l->config_generation;
	vdev->driver_features = l->driver_features;
	vp->device_feature_select = l->device_feature_select;
	vp->driver_feature_select = l->driver_feature_select;
	vp->queue_select = l->queue_select;
	vp->config_msix = l->config_msix;
	vp->isr = l->isr;
	memcpy(vp->msix, l->msix, sizeof(vp->msix));
	vp->msix_pending = l->msix_pending;
	for (q = 0; q < vdev->ops->num_queues; q++) {
		vdev->vq[q] = l->vq[q];
		vp->queue_msix[q] = l->queue_msix[q];
	}
	pthread_mutex_unlock(&vp->lock);

	if (vdev->ops->load) {
		rc = vdev->ops->load(vdev, &l->dev, why, whylen);
		if (!rc && !state_in_done(&l->dev)) {
			snprintf(why, whylen, "%s: device state is %s", vdev->ops->name,
				 l->dev.bad ? "short" : "longer than expected");
			rc = -EBADMSG;
		}
		if (rc) {
			/* Back to a device fresh from reset: nothing half-loaded runs. */
			pthread_mutex_lock(&vp->lock);
			vpci_reset_locked(vp);
			pthread_mutex_unlock(&vp->lock);
			goto out;
		}
	}

	pthread_mutex_lock(&vp->lock);
	{
		uint16_t ctrl;

		memcpy(&ctrl, vp->pci.cfg + vp->msix_cap + 2, 2);
		ctrl = (ctrl & ~(MSIX_CTRL_ENABLE | MSIX_CTRL_MASKALL)) | l->msix_ctrl;
		memcpy(vp->pci.cfg + vp->msix_cap + 2, &ctrl, 2);
	}
	memcpy(vp->pci.cfg + vp->pci_cfg_cap + VPCI_PCICFG_LO, l->pcicfg, sizeof(l->pcicfg));
	vp->needs_reset_logged = l->status & VIRTIO_STATUS_NEEDS_RESET;
	vpci_set_intx(vp);               /* a pending INTx is asserted again */
	pthread_mutex_unlock(&vp->lock);

	/* A driver that reached DRIVER_OK finds its device serving again, from
	 * the loaded ring positions.  One that broke it (NEEDS_RESET) or that
	 * the device failed gets a device that waits for its reset, as before. */
	if ((l->status & VIRTIO_STATUS_DRIVER_OK) &&
	    !(l->status & (VIRTIO_STATUS_NEEDS_RESET | VIRTIO_STATUS_FAILED)))
		vpci_start(vp);
	rc = 0;
out:
	free(l);
	return rc;
}

static const struct state_ops vpci_state_ops = {
	.save = vpci_state_save,
	.load = vpci_state_load,
	.version = VPCI_STATE_VERSION,
	.quiesce = vpci_state_quiesce,
	.resume = vpci_state_resume,
};

/* "virtio-blk.0", "virtio-blk.1", ...: the first free index of this kind,
 * which both ends of a migration reach by creating devices in one order. */
int vpci_state_register(struct virtio_pci *vp)
{
	const char *name = vp->vdev->ops->name;
	char n[STATE_NAME_MAX];
	unsigned i;
	int rc;

	if (vp->vdev->ops->state_single)
		return state_register(name, &vpci_state_ops, vp);
	for (i = 0; i < 1000; i++) {
		snprintf(n, sizeof(n), "%s.%u", name, i);
		if ((rc = state_register(n, &vpci_state_ops, vp)) != -EEXIST)
			return rc;
	}
	return -ENOSPC;
}
