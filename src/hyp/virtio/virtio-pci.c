/* Modern virtio-pci transport (virtio 1.2 section 4.1): the capabilities
 * in config space, the common/ISR/device/notify structures in BAR 0, the
 * MSI-X table in BAR 1.  Queue kicks go to an ioeventfd per queue, so a
 * guest's notify write never waits for lodge-hyp's vCPU thread.  It runs
 * each device's I/O thread (worker.h) and answers from its config space.
 * Saving and loading all this: virtio-pci-state.c. */
#include "virtio/virtio-pci.h"
#include "domain.h"
#include "log.h"
#include "save/state.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

uint64_t vpci_offered_features(struct virtio_pci *vp)
{
	struct virtio_dev *vdev = vp->vdev;

	return vdev->ops->features(vdev) | (1ULL << VIRTIO_F_VERSION_1) |
	       (1ULL << VIRTIO_F_INDIRECT_DESC) | (1ULL << VIRTIO_F_EVENT_IDX);
}

/* ---- interrupts ---------------------------------------------------------- */

uint16_t vpci_msix_ctrl(struct virtio_pci *vp)
{
	uint16_t v;

	memcpy(&v, vp->pci.cfg + vp->msix_cap + 2, 2);
	return v;
}

static void vpci_signal_msi(struct virtio_pci *vp, unsigned vec)
{
	struct kvm_msi msi = {
		.address_lo = vp->msix[vec].addr_lo, .address_hi = vp->msix[vec].addr_hi,
		.data = vp->msix[vec].data,
	};

	if (ioctl(vp->vdev->dom->vm_fd, KVM_SIGNAL_MSI, &msi) < 0)
		log_debug("%s: KVM_SIGNAL_MSI: %s", vp->vdev->ops->name, strerror(errno));
}

/* Lock held. Deliver vector vec, or latch it in the PBA while masked. */
static void vpci_msix_notify(struct virtio_pci *vp, uint16_t vec)
{
	if (vec >= VPCI_MAX_VECTORS)
		return;
	if ((vpci_msix_ctrl(vp) & MSIX_CTRL_MASKALL) || (vp->msix[vec].ctrl & MSIX_ENTRY_MASKED)) {
		vp->msix_pending |= 1ULL << vec;
		return;
	}
	vpci_signal_msi(vp, vec);
}

/* Lock held. Deliver anything that became unmasked while pending. */
static void vpci_msix_flush_pending(struct virtio_pci *vp)
{
	unsigned v;

	if (!(vpci_msix_ctrl(vp) & MSIX_CTRL_ENABLE) || (vpci_msix_ctrl(vp) & MSIX_CTRL_MASKALL))
		return;
	for (v = 0; v < VPCI_MAX_VECTORS; v++)
		if ((vp->msix_pending & (1ULL << v)) && !(vp->msix[v].ctrl & MSIX_ENTRY_MASKED)) {
			vp->msix_pending &= ~(1ULL << v);
			vpci_signal_msi(vp, v);
		}
}

void vpci_set_intx(struct virtio_pci *vp)
{
	int level = vp->isr != 0 &&
		    !(vp->pci.cfg[PCI_COMMAND + 1] & (PCI_COMMAND_INTX_DISABLE >> 8));

	if (level != vp->intx_level) {
		vp->intx_level = level;
		kvm_irq_line(vp->vdev->dom, vp->pci.gsi, level);
	}
}

/* Lock held. */
static void vpci_interrupt(struct virtio_pci *vp, uint16_t vec, uint8_t isr_bit)
{
	if (vpci_msix_ctrl(vp) & MSIX_CTRL_ENABLE) {
		if (vec != VIRTIO_MSI_NO_VECTOR)
			vpci_msix_notify(vp, vec);
		return;
	}
	vp->isr |= isr_bit;
	vpci_set_intx(vp);
}

void virtio_queue_interrupt(struct virtio_dev *vdev, unsigned q)
{
	struct virtio_pci *vp = vdev->transport;

	pthread_mutex_lock(&vp->lock);
	if (virtq_need_interrupt(&vdev->vq[q]))
		vpci_interrupt(vp, vp->queue_msix[q], ISR_QUEUE);
	pthread_mutex_unlock(&vp->lock);
}

static void vpci_config_interrupt_locked(struct virtio_pci *vp)
{
	vp->vdev->config_generation++;
	if (vp->vdev->status & VIRTIO_STATUS_DRIVER_OK)
		vpci_interrupt(vp, vp->config_msix, ISR_CONFIG);
}

void virtio_config_set(struct virtio_dev *vdev, unsigned off, const void *src, unsigned len)
{
	pthread_mutex_lock(&vdev->transport->lock);
	if (off <= vdev->config_size && len <= vdev->config_size - off)
		memcpy((uint8_t *)vdev->config + off, src, len);
	vpci_config_interrupt_locked(vdev->transport);
	pthread_mutex_unlock(&vdev->transport->lock);
}

void virtio_config_get(struct virtio_dev *vdev, unsigned off, void *dst, unsigned len)
{
	pthread_mutex_lock(&vdev->transport->lock);
	if (off <= vdev->config_size && len <= vdev->config_size - off)
		memcpy(dst, (const uint8_t *)vdev->config + off, len);
	pthread_mutex_unlock(&vdev->transport->lock);
}

void virtio_needs_reset(struct virtio_dev *vdev, const char *fmt, ...)
{
	struct virtio_pci *vp = vdev->transport;
	char why[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&vp->lock);
	if (!vp->needs_reset_logged) {
		struct timespec ts;
		uint64_t now;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
		if (!vp->needs_reset_log_ns || now - vp->needs_reset_log_ns >= 1000000000ULL) {
			if (vp->needs_reset_quiet)
				log_warn("%s 00:%02x.0: %s; device needs reset (and %u more times in the last %.0f s)",
					 vdev->ops->name, vp->pci.slot, why, vp->needs_reset_quiet,
					 (now - vp->needs_reset_log_ns) / 1e9);
			else
				log_warn("%s 00:%02x.0: %s; device needs reset", vdev->ops->name, vp->pci.slot, why);
			vp->needs_reset_log_ns = now;
			vp->needs_reset_quiet = 0;
		} else {
			vp->needs_reset_quiet++;
		}
	}
	vp->needs_reset_logged = true;
	vdev->status |= VIRTIO_STATUS_NEEDS_RESET;
	vpci_config_interrupt_locked(vp);
	pthread_mutex_unlock(&vp->lock);
}

/* ---- queue notifications through ioeventfd --------------------------------- */

static void vpci_ioeventfds(struct virtio_pci *vp, uint64_t gpa, bool assign)
{
	unsigned q;

	for (q = 0; q < vp->vdev->ops->num_queues; q++) {
		struct kvm_ioeventfd ev = {
			.addr = gpa + VPCI_NOTIFY_OFF + q * VPCI_NOTIFY_MULT,
			.len = 2,                         /* drivers write the 16-bit queue index */
			.fd = vp->vdev->kick_fd[q],
			.flags = assign ? 0 : KVM_IOEVENTFD_FLAG_DEASSIGN,
		};

		if (ioctl(vp->vdev->dom->vm_fd, KVM_IOEVENTFD, &ev) < 0)
			log_debug("%s: KVM_IOEVENTFD %s: %s", vp->vdev->ops->name,
				  assign ? "assign" : "deassign", strerror(errno));
	}
}

static void vpci_bar_moved(struct pci_dev *pd, unsigned bar, uint64_t gpa)
{
	struct virtio_pci *vp = pd->priv;

	if (bar != 0)
		return;
	if (vp->notify_gpa)
		vpci_ioeventfds(vp, vp->notify_gpa, false);
	vp->notify_gpa = gpa;
	if (gpa)
		vpci_ioeventfds(vp, gpa, true);
}

static void vpci_kick(struct virtio_pci *vp, unsigned q)
{
	uint64_t one = 1;

	if (q < vp->vdev->ops->num_queues && write(vp->vdev->kick_fd[q], &one, 8) < 0)
		log_debug("kick: %s", strerror(errno));
}

/* ---- the common configuration structure (4.1.4.3) --------------------------- */

static uint64_t vpci_common_read(struct virtio_pci *vp, unsigned off, unsigned size)
{
	struct virtio_dev *vdev = vp->vdev;
	uint16_t sel = vp->queue_select;
	struct virtq *q = sel < vdev->ops->num_queues ? &vdev->vq[sel] : NULL;
	uint64_t features = vpci_offered_features(vp);

	switch (off) {
	case 0x00: return vp->device_feature_select;
	case 0x04: return vp->device_feature_select < 2 ? (uint32_t)(features >> (32 * vp->device_feature_select)) : 0;
	case 0x08: return vp->driver_feature_select;
	case 0x0c: return vp->driver_feature_select < 2 ? (uint32_t)(vdev->driver_features >> (32 * vp->driver_feature_select)) : 0;
	case 0x10: return vp->config_msix;
	case 0x12: return vdev->ops->num_queues;
	case 0x14: return vdev->status;
	case 0x15: return vdev->config_generation;
	case 0x16: return vp->queue_select;
	case 0x18: return q ? q->size : 0;
	case 0x1a: return q ? vp->queue_msix[sel] : VIRTIO_MSI_NO_VECTOR;
	case 0x1c: return q ? q->ready : 0;
	case 0x1e: return q ? sel : 0;                  /* queue_notify_off */
	case 0x20: return q ? (size == 8 ? q->desc_gpa : (uint32_t)q->desc_gpa) : 0;
	case 0x24: return q ? q->desc_gpa >> 32 : 0;
	case 0x28: return q ? (size == 8 ? q->avail_gpa : (uint32_t)q->avail_gpa) : 0;
	case 0x2c: return q ? q->avail_gpa >> 32 : 0;
	case 0x30: return q ? (size == 8 ? q->used_gpa : (uint32_t)q->used_gpa) : 0;
	case 0x34: return q ? q->used_gpa >> 32 : 0;
	}
	return 0;
}

static void set_lo(uint64_t *v, uint64_t val, unsigned size)
{
	*v = size == 8 ? val : (*v & ~0xffffffffULL) | (uint32_t)val;
}

static void set_hi(uint64_t *v, uint64_t val)
{
	*v = (*v & 0xffffffffULL) | ((uint64_t)(uint32_t)val << 32);
}

enum vpci_action { VPCI_NONE, VPCI_START, VPCI_RESET };

/* Lock held. Returns what to do after unlocking: starting and resetting
 * a device may wait for its threads, which take the lock themselves. */
static enum vpci_action vpci_set_status(struct virtio_pci *vp, uint8_t status)
{
	struct virtio_dev *vdev = vp->vdev;
	uint8_t old = vdev->status;

	if (status == 0)
		return VPCI_RESET;
	if ((status & VIRTIO_STATUS_FEATURES_OK) && !(old & VIRTIO_STATUS_FEATURES_OK)) {
		uint64_t offered = vpci_offered_features(vp);

		/* Refuse a feature set we did not offer, or legacy operation. */
		if ((vdev->driver_features & ~offered) ||
		    !(vdev->driver_features & (1ULL << VIRTIO_F_VERSION_1)))
			status &= ~VIRTIO_STATUS_FEATURES_OK;
	}
	/* A driver may clear no status bit but by a reset (3.1.1): one that
	 * tries keeps them, or clearing DRIVER_OK and setting it again would
	 * start a second I/O thread beside the first, never joined. */
	vdev->status = status | old;
	if ((status & VIRTIO_STATUS_DRIVER_OK) && !(old & VIRTIO_STATUS_DRIVER_OK))
		return VPCI_START;
	return VPCI_NONE;
}

static enum vpci_action vpci_common_write(struct virtio_pci *vp, unsigned off, unsigned size, uint64_t val)
{
	struct virtio_dev *vdev = vp->vdev;
	uint16_t sel = vp->queue_select;
	struct virtq *q = sel < vdev->ops->num_queues ? &vdev->vq[sel] : NULL;
	/* Queue layout may change only while the queue is off (4.1.4.3.2). */
	bool q_writable = q && !q->ready && !(vdev->status & VIRTIO_STATUS_DRIVER_OK);

	switch (off) {
	case 0x00: vp->device_feature_select = val; break;
	case 0x08: vp->driver_feature_select = val; break;
	case 0x0c:
		if (vdev->status & VIRTIO_STATUS_FEATURES_OK)
			break;
		if (vp->driver_feature_select == 0)
			vdev->driver_features = (vdev->driver_features & ~0xffffffffULL) | (uint32_t)val;
		else if (vp->driver_feature_select == 1)
			vdev->driver_features = (vdev->driver_features & 0xffffffffULL) | ((uint64_t)(uint32_t)val << 32);
		break;
	case 0x10: vp->config_msix = val < VPCI_MAX_VECTORS ? val : VIRTIO_MSI_NO_VECTOR; break;
	case 0x14: return vpci_set_status(vp, val);
	case 0x16: vp->queue_select = val; break;
	case 0x18:
		/* A size that is not a power of two is caught at enable. */
		if (q_writable)
			q->size = val <= vdev->ops->queue_max_size ? val : 0;
		break;
	case 0x1a:
		if (q)
			vp->queue_msix[sel] = val < VPCI_MAX_VECTORS ? val : VIRTIO_MSI_NO_VECTOR;
		break;
	case 0x1c:
		if (q_writable && val == 1) {
			q->event_idx = virtio_has_feature(vdev, VIRTIO_F_EVENT_IDX);
			if (virtq_enable(q, &vdev->dom->mem)) {
				pthread_mutex_unlock(&vp->lock);
				virtio_needs_reset(vdev, "queue %u placed outside guest RAM or misaligned "
						   "(size %u, desc %#llx)", sel, q->size,
						   (unsigned long long)q->desc_gpa);
				pthread_mutex_lock(&vp->lock);
			}
		}
		break;
	case 0x20: if (q_writable) set_lo(&q->desc_gpa, val, size); break;
	case 0x24: if (q_writable) set_hi(&q->desc_gpa, val); break;
	case 0x28: if (q_writable) set_lo(&q->avail_gpa, val, size); break;
	case 0x2c: if (q_writable) set_hi(&q->avail_gpa, val); break;
	case 0x30: if (q_writable) set_lo(&q->used_gpa, val, size); break;
	case 0x34: if (q_writable) set_hi(&q->used_gpa, val); break;
	}
	return VPCI_NONE;
}

void vpci_reset_locked(struct virtio_pci *vp)
{
	struct virtio_dev *vdev = vp->vdev;
	unsigned q;

	for (q = 0; q < VIRTIO_MAX_QUEUES; q++) {
		uint16_t max = vdev->ops->queue_max_size;

		virtq_reset(&vdev->vq[q]);
		vdev->vq[q].size = max;
		vp->queue_msix[q] = VIRTIO_MSI_NO_VECTOR;
	}
	vdev->status = 0;
	vdev->driver_features = 0;
	vp->config_msix = VIRTIO_MSI_NO_VECTOR;
	vp->device_feature_select = vp->driver_feature_select = 0;
	vp->queue_select = 0;
	vp->isr = 0;
	vp->needs_reset_logged = false;
	vpci_set_intx(vp);
}

void vpci_start(struct virtio_pci *vp)
{
	struct virtio_dev *vdev = vp->vdev;
	int rc = vdev->ops->start ? vdev->ops->start(vdev) : 0;

	if (!rc)
		rc = virtio_worker_start(&vdev->worker);
	pthread_mutex_lock(&vp->lock);
	if (rc)
		vdev->status |= VIRTIO_STATUS_FAILED;
	else
		vp->started = true;
	pthread_mutex_unlock(&vp->lock);
}

static void vpci_run_action(struct virtio_pci *vp, enum vpci_action action)
{
	struct virtio_dev *vdev = vp->vdev;

	if (action == VPCI_RESET) {
		virtio_worker_stop(&vdev->worker);     /* waits until the device is quiet */
		pthread_mutex_lock(&vp->lock);
		if (vdev->ops->reset)
			vdev->ops->reset(vdev);
		vpci_reset_locked(vp);
		vp->started = false;
		vp->quiesced = false;
		pthread_mutex_unlock(&vp->lock);
	} else if (action == VPCI_START) {
		vpci_start(vp);
	}
}

/* ---- BAR accesses ------------------------------------------------------------ */

static uint64_t vpci_bar_read(struct pci_dev *pd, unsigned bar, uint64_t off, unsigned size)
{
	struct virtio_pci *vp = pd->priv;
	struct virtio_dev *vdev = vp->vdev;
	uint64_t val = 0;

	pthread_mutex_lock(&vp->lock);
	if (bar == 1) {
		if (off + size <= VPCI_MSIX_TABLE + sizeof(vp->msix) && size <= 8)
			memcpy(&val, (uint8_t *)vp->msix + off, size);
		else if (off >= VPCI_MSIX_PBA && off + size <= VPCI_MSIX_PBA + 8)
			val = vp->msix_pending >> (8 * (off - VPCI_MSIX_PBA));
	} else if (off < VPCI_COMMON_LEN) {
		val = vpci_common_read(vp, off, size);
	} else if (off == VPCI_ISR_OFF) {
		val = vp->isr;          /* reading acknowledges (4.1.4.5) */
		vp->isr = 0;
		vpci_set_intx(vp);
	} else if (off >= VPCI_DEVICE_OFF && off + size <= VPCI_DEVICE_OFF + vdev->config_size &&
		   size <= 8) {
		memcpy(&val, (const uint8_t *)vdev->config + (off - VPCI_DEVICE_OFF), size);
	}
	pthread_mutex_unlock(&vp->lock);
	if (size < 8)
		val &= (1ULL << (8 * size)) - 1;
	return val;
}

static void vpci_bar_write(struct pci_dev *pd, unsigned bar, uint64_t off, unsigned size, uint64_t val)
{
	struct virtio_pci *vp = pd->priv;
	struct virtio_dev *vdev = vp->vdev;
	uint64_t writable = VPCI_DEVICE_OFF + (uint64_t)vdev->ops->config_writable_off;
	enum vpci_action action = VPCI_NONE;

	if (bar == 0 && off >= VPCI_NOTIFY_OFF && off < VPCI_NOTIFY_OFF + VIRTIO_MAX_QUEUES * VPCI_NOTIFY_MULT) {
		/* Reached only when no ioeventfd matched (another access size). */
		vpci_kick(vp, (off - VPCI_NOTIFY_OFF) / VPCI_NOTIFY_MULT);
		return;
	}
	pthread_mutex_lock(&vp->lock);
	if (bar == 1) {
		if (off + size <= VPCI_MSIX_TABLE + sizeof(vp->msix) && size <= 8 && !(off & (size - 1))) {
			memcpy((uint8_t *)vp->msix + off, &val, size);
			vpci_msix_flush_pending(vp);
		}
	} else if (off < VPCI_COMMON_LEN) {
		action = vpci_common_write(vp, off, size, val);
	} else if (off >= writable && off + size <= writable + vdev->ops->config_writable_len && size <= 8) {
		/* Only the driver's part of config space (the rest it reads). */
		memcpy((uint8_t *)vdev->config + (off - VPCI_DEVICE_OFF), &val, size);
		if (vdev->ops->config_written)
			vdev->ops->config_written(vdev);
	}
	pthread_mutex_unlock(&vp->lock);
	vpci_run_action(vp, action);
}

/* ---- config-space capabilities ------------------------------------------------ */

static void vpci_cfg_write(struct pci_dev *pd, unsigned off, unsigned size, uint32_t val)
{
	struct virtio_pci *vp = pd->priv;
	unsigned ctrl = vp->msix_cap + 2, pcc = vp->pci_cfg_cap;

	if (off <= ctrl + 1 && off + size > ctrl) {
		/* Only Enable and Function Mask are writable in Message Control. */
		uint16_t cur, mask = MSIX_CTRL_ENABLE | MSIX_CTRL_MASKALL;
		uint32_t shifted = off <= ctrl ? val >> (8 * (ctrl - off)) : val << (8 * (off - ctrl));

		memcpy(&cur, pd->cfg + ctrl, 2);
		if (off == ctrl + 1 && size == 1)
			cur = (cur & ~mask) | ((val << 8) & mask);
		else
			cur = (cur & ~mask) | (shifted & mask);
		pthread_mutex_lock(&vp->lock);
		memcpy(pd->cfg + ctrl, &cur, 2);
		vpci_msix_flush_pending(vp);
		pthread_mutex_unlock(&vp->lock);
		return;
	}
	/* VIRTIO_PCI_CAP_PCI_CFG: bar, offset and length select a window in a
	 * BAR; writing pci_cfg_data writes through it (4.1.4.9). */
	if (off >= pcc + 4 && off + size <= pcc + 16 && off != pcc + 5 && off != pcc + 6 && off != pcc + 7) {
		memcpy(pd->cfg + off, &val, size);
		return;
	}
	if (off == pcc + 16 && size == 4) {
		struct virtio_pci_cap c;

		memcpy(&c, pd->cfg + pcc, sizeof(c));
		if (c.bar < 2 && (c.length == 1 || c.length == 2 || c.length == 4))
			vpci_bar_write(pd, c.bar, c.offset, c.length, val);
	}
}

static void vpci_cfg_read(struct pci_dev *pd, unsigned off, unsigned size)
{
	struct virtio_pci *vp = pd->priv;
	unsigned pcc = vp->pci_cfg_cap;

	if (off == pcc + 16 && size == 4) {
		struct virtio_pci_cap c;
		uint32_t v = 0;

		memcpy(&c, pd->cfg + pcc, sizeof(c));
		if (c.bar < 2 && (c.length == 1 || c.length == 2 || c.length == 4))
			v = vpci_bar_read(pd, c.bar, c.offset, c.length);
		memcpy(pd->cfg + pcc + 16, &v, 4);
	}
}

static const struct pci_dev_ops vpci_ops = {
	.bar_read = vpci_bar_read,
	.bar_write = vpci_bar_write,
	.cfg_write = vpci_cfg_write,
	.cfg_read = vpci_cfg_read,
	.bar_moved = vpci_bar_moved,
};

static void vpci_add_virtio_cap(struct pci_dev *pd, uint8_t type, uint32_t off, uint32_t len)
{
	struct virtio_pci_cap c = {
		.cap_vndr = PCI_CAP_ID_VNDR, .cap_len = sizeof(c), .cfg_type = type,
		.bar = 0, .offset = off, .length = len,
	};

	pci_dev_add_cap(pd, &c, sizeof(c));
}

int virtio_pci_create(struct domain *dom, struct virtio_dev *vdev)
{
	struct virtio_pci *vp = calloc(1, sizeof(*vp));
	const struct virtio_dev_ops *ops = vdev->ops;
	unsigned q, nvec = ops->num_queues + 1;
	int rc;

	if (!vp)
		return -ENOMEM;
	if (ops->num_queues > VIRTIO_MAX_QUEUES || vdev->config_size > VPCI_DEVICE_MAX ||
	    ops->config_writable_off + ops->config_writable_len > vdev->config_size) {
		free(vp);
		return -EINVAL;
	}
	vp->vdev = vdev;
	vdev->transport = vp;
	vdev->dom = dom;
	pthread_mutex_init(&vp->lock, NULL);
	if ((rc = virtio_worker_init(&vdev->worker, vdev)))
		return rc;
	for (q = 0; q < VIRTIO_MAX_QUEUES; q++)
		vdev->kick_fd[q] = -1;
	for (q = 0; q < ops->num_queues; q++) {
		vdev->kick_fd[q] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (vdev->kick_fd[q] < 0)
			return -errno;
	}

	pci_dev_init(&vp->pci, 0x1af4, 0x1040 + ops->device_id, ops->pci_class, 1,
		     0x1af4, 0x40 + ops->device_id);
	vp->pci.ops = &vpci_ops;
	vp->pci.priv = vp;
	vp->pci.name = ops->name;
	pci_dev_add_bar(&vp->pci, 0, VPCI_BAR0_SIZE);
	pci_dev_add_bar(&vp->pci, 1, VPCI_BAR1_SIZE);
	{
		uint8_t msix[12] = { PCI_CAP_ID_MSIX, 0 };
		uint16_t ctrl = nvec - 1;
		uint32_t table = VPCI_MSIX_TABLE | 1, pba = VPCI_MSIX_PBA | 1;   /* BIR 1 */

		memcpy(msix + 2, &ctrl, 2);
		memcpy(msix + 4, &table, 4);
		memcpy(msix + 8, &pba, 4);
		vp->msix_cap = pci_dev_add_cap(&vp->pci, msix, sizeof(msix));
	}
	vpci_add_virtio_cap(&vp->pci, VIRTIO_PCI_CAP_COMMON_CFG, VPCI_COMMON_OFF, VPCI_COMMON_LEN);
	{
		struct { struct virtio_pci_cap cap; uint32_t mult; } notify = {
			.cap = { .cap_vndr = PCI_CAP_ID_VNDR, .cap_len = sizeof(notify),
				 .cfg_type = VIRTIO_PCI_CAP_NOTIFY_CFG, .bar = 0,
				 .offset = VPCI_NOTIFY_OFF,
				 .length = ops->num_queues * VPCI_NOTIFY_MULT },
			.mult = VPCI_NOTIFY_MULT,
		};
		pci_dev_add_cap(&vp->pci, &notify, sizeof(notify));
	}
	vpci_add_virtio_cap(&vp->pci, VIRTIO_PCI_CAP_ISR_CFG, VPCI_ISR_OFF, 1);
	if (vdev->config_size)
		vpci_add_virtio_cap(&vp->pci, VIRTIO_PCI_CAP_DEVICE_CFG, VPCI_DEVICE_OFF, vdev->config_size);
	{
		struct { struct virtio_pci_cap cap; uint32_t data; } pcicfg = {
			.cap = { .cap_vndr = PCI_CAP_ID_VNDR, .cap_len = sizeof(pcicfg),
				 .cfg_type = VIRTIO_PCI_CAP_PCI_CFG },
		};
		vp->pci_cfg_cap = pci_dev_add_cap(&vp->pci, &pcicfg, sizeof(pcicfg));
	}
	for (q = 0; q < VPCI_MAX_VECTORS; q++)
		vp->msix[q].ctrl = MSIX_ENTRY_MASKED;
	vpci_reset_locked(vp);
	rc = vdev->slot ? pci_register_slot(&vp->pci, vdev->slot) : pci_register(&vp->pci);
	if (rc)
		return rc;
	vdev->slot = vp->pci.slot;
	if ((rc = vpci_state_register(vp)))
		return rc;
	log_debug("%s: virtio-pci at 00:%02x.0", ops->name, vp->pci.slot);
	return 0;
}

struct pci_dev *virtio_pci_dev(struct virtio_dev *vdev)
{
	return &vdev->transport->pci;
}

void virtio_pci_destroy(struct virtio_dev *vdev)
{
	struct virtio_pci *vp = vdev->transport;
	unsigned q;

	/* Off the bus first (the guest's eject did it already): no vCPU
	 * reaches the registers, the ioeventfds are gone.  Then no thread. */
	pci_unregister(&vp->pci);
	virtio_worker_stop(&vdev->worker);
	state_unregister_obj(vp);
	for (q = 0; q < VIRTIO_MAX_QUEUES; q++)
		if (vdev->kick_fd[q] >= 0) {
			close(vdev->kick_fd[q]);
			vdev->kick_fd[q] = -1;
		}
	if (vdev->worker.stop_fd >= 0)
		close(vdev->worker.stop_fd);
	pthread_mutex_destroy(&vp->lock);
	free(vp);
	vdev->transport = NULL;
	if (vdev->ops->destroy)
		vdev->ops->destroy(vdev);
}
