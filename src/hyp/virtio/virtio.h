/* A virtio device as the transport sees it: a small table of operations
 * (features, config space, start, reset) and its queues.  One transport,
 * modern virtio-pci (pci.c), serves every device; blk, net and balloon
 * plug in beside each other without touching it. */
#ifndef LODGE_VIRTIO_H
#define LODGE_VIRTIO_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue.h"

#define VIRTIO_F_INDIRECT_DESC   28
#define VIRTIO_F_EVENT_IDX       29
#define VIRTIO_F_VERSION_1       32

#define VIRTIO_STATUS_ACKNOWLEDGE 1
#define VIRTIO_STATUS_DRIVER      2
#define VIRTIO_STATUS_DRIVER_OK   4
#define VIRTIO_STATUS_FEATURES_OK 8
#define VIRTIO_STATUS_NEEDS_RESET 64
#define VIRTIO_STATUS_FAILED      128

#define VIRTIO_ID_NET     1
#define VIRTIO_ID_BLOCK   2
#define VIRTIO_ID_BALLOON 5

#define VIRTIO_MAX_QUEUES 8
#define VIRTIO_MSI_NO_VECTOR 0xffff

struct domain;
struct virtio_dev;
struct state_buf;
struct state_in;

struct virtio_dev_ops {
	const char *name;
	uint16_t device_id;          /* VIRTIO_ID_* */
	uint32_t pci_class;
	uint16_t num_queues;
	uint16_t queue_max_size;
	/* Device-specific feature bits offered (VERSION_1 etc. are added). */
	uint64_t (*features)(struct virtio_dev *vdev);
	/* Device config space (read-mostly); size in config_size. */
	void (*config_read)(struct virtio_dev *vdev, unsigned off, void *buf, unsigned len);
	void (*config_write)(struct virtio_dev *vdev, unsigned off, const void *buf, unsigned len);
	/* DRIVER_OK: start serving the queues. Nonzero: the device fails. */
	int (*start)(struct virtio_dev *vdev);
	/* Stop serving, finish or drop in-flight work, forget queue state.
	 * Returns only when no thread touches guest memory for the device. */
	void (*reset)(struct virtio_dev *vdev);

	/* Save and restore (save/state.h).  The transport saves everything
	 * generic -- status, features, MSI-X, each queue's placement and ring
	 * position -- under "NAME.N" ("NAME" if state_single: one per domain)
	 * and calls these for the rest; all optional.
	 * quiesce: stop taking requests and return once none is in flight and
	 * no thread of the device touches guest memory; resume: carry on.
	 * Both are called only while the vCPUs are parked, quiesce on a
	 * started device only, resume only after quiesce.
	 * save/load: the device's own state (config space values and the
	 * like), loaded with the transport's part already in place but before
	 * start; load validates what it reads (the stream is untrusted) and
	 * says in why what it refused. */
	void (*quiesce)(struct virtio_dev *vdev);
	void (*resume)(struct virtio_dev *vdev);
	int (*save)(struct virtio_dev *vdev, struct state_buf *b);
	int (*load)(struct virtio_dev *vdev, struct state_in *in, char *why, size_t whylen);
	bool state_single;
};

struct virtio_dev {
	const struct virtio_dev_ops *ops;
	void *priv;
	struct domain *dom;
	unsigned config_size;
	uint64_t driver_features;
	uint8_t status;
	uint8_t config_generation;
	struct virtq vq[VIRTIO_MAX_QUEUES];
	/* Readable when the driver kicked queue i (an ioeventfd when KVM
	 * offers them, else written by the vCPU thread). */
	int kick_fd[VIRTIO_MAX_QUEUES];
	struct virtio_pci *transport;
};

/* Create the device on the virtio-pci transport and put it on the bus. */
int virtio_pci_create(struct domain *dom, struct virtio_dev *vdev);

/* Interrupt the driver for queue q, if it wants one (event idx, flags). */
void virtio_queue_interrupt(struct virtio_dev *vdev, unsigned q);
/* Device config changed: bump the generation and interrupt the driver. */
void virtio_config_changed(struct virtio_dev *vdev);
/* The driver broke the protocol: log once, set NEEDS_RESET, tell it. */
void virtio_needs_reset(struct virtio_dev *vdev, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline bool virtio_has_feature(const struct virtio_dev *vdev, unsigned bit)
{
	return vdev->driver_features & (1ULL << bit);
}

#endif
