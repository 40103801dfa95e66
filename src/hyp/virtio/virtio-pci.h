/* The modern virtio-pci transport's own state (virtio 1.2 section 4.1),
 * shared by its two halves: virtio-pci.c, the registers the driver sees,
 * and virtio-pci-state.c, saving and loading them. */
#ifndef LODGE_VIRTIO_PCI_H
#define LODGE_VIRTIO_PCI_H

#include "virtio/virtio.h"
#include "dev/pci.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* BAR 0 layout. */
#define VPCI_COMMON_OFF   0x0000
#define VPCI_COMMON_LEN   0x0040
#define VPCI_ISR_OFF      0x1000
#define VPCI_DEVICE_OFF   0x2000
#define VPCI_DEVICE_MAX   0x1000
#define VPCI_NOTIFY_OFF   0x3000
#define VPCI_NOTIFY_MULT  4
#define VPCI_BAR0_SIZE    0x4000
/* BAR 1: the MSI-X table and pending-bit array. */
#define VPCI_MSIX_TABLE   0x000
#define VPCI_MSIX_PBA     0x800
#define VPCI_BAR1_SIZE    0x1000
#define VPCI_MAX_VECTORS  (VIRTIO_MAX_QUEUES + 1)

#define VIRTIO_PCI_CAP_COMMON_CFG 1
#define VIRTIO_PCI_CAP_NOTIFY_CFG 2
#define VIRTIO_PCI_CAP_ISR_CFG    3
#define VIRTIO_PCI_CAP_DEVICE_CFG 4
#define VIRTIO_PCI_CAP_PCI_CFG    5

#define MSIX_CTRL_ENABLE   0x8000
#define MSIX_CTRL_MASKALL  0x4000
#define MSIX_ENTRY_MASKED  0x1

#define ISR_QUEUE  0x1
#define ISR_CONFIG 0x2

struct virtio_pci_cap {
	uint8_t cap_vndr, cap_next, cap_len, cfg_type, bar, id, padding[2];
	uint32_t offset, length;
};

struct msix_entry { uint32_t addr_lo, addr_hi, data, ctrl; };

struct virtio_pci {
	struct pci_dev pci;
	struct virtio_dev *vdev;
	pthread_mutex_t lock;
	uint32_t device_feature_select, driver_feature_select;
	uint16_t queue_select;
	uint16_t config_msix;
	uint16_t queue_msix[VIRTIO_MAX_QUEUES];
	uint8_t isr;
	int intx_level;
	unsigned msix_cap, pci_cfg_cap;
	struct msix_entry msix[VPCI_MAX_VECTORS];
	uint64_t msix_pending;
	uint64_t notify_gpa;          /* where the ioeventfds are registered; 0: none */
	bool started;                  /* started at DRIVER_OK, no reset since */
	bool quiesced;                 /* its thread stopped for a save, not resumed yet */
	bool needs_reset_logged;       /* since the last reset */
	/* A guest that breaks and resets its device in a loop must not fill
	 * the host's log: at most one line a second, with a count of the rest. */
	uint64_t needs_reset_log_ns;
	unsigned needs_reset_quiet;
};

/* The offered features: the device's and the transport's own. */
uint64_t vpci_offered_features(struct virtio_pci *vp);
/* The MSI-X capability's Message Control word. */
uint16_t vpci_msix_ctrl(struct virtio_pci *vp);
/* Lock held: the INTx line as the ISR and the command register say. */
void vpci_set_intx(struct virtio_pci *vp);
/* Lock held: the registers and queues as after a reset (the device's
 * own reset and its thread are the caller's). */
void vpci_reset_locked(struct virtio_pci *vp);
/* DRIVER_OK: start the device and its thread; status FAILED if it cannot. */
void vpci_start(struct virtio_pci *vp);

/* virtio-pci-state.c: the device's state entry, "NAME.N" or "NAME". */
int vpci_state_register(struct virtio_pci *vp);

#endif
