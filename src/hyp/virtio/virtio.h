/* A virtio device as the transport sees it: a small table of operations
 * (features, its I/O thread, start, reset, saved state), its config space
 * and its queues.  One transport,
 * modern virtio-pci (pci.c), serves every device; blk, net and balloon
 * plug in beside each other without touching it. */
#ifndef LODGE_VIRTIO_H
#define LODGE_VIRTIO_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue.h"
#include "worker.h"

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
	/* The part of config space the driver may write (the rest it only
	 * reads): config_written is called once the transport has copied a
	 * write into it, with the transport's lock held.  Optional. */
	uint16_t config_writable_off, config_writable_len;
	void (*config_written)(struct virtio_dev *vdev);

	/* The device's I/O thread (worker.h), named thread_name: it serves
	 * the queues until virtio_worker_stopping(), waiting on the queues'
	 * kick_fd and the worker's stop_fd, and returns once nothing it took
	 * from the rings is in flight.  The transport runs it from DRIVER_OK
	 * until a reset, and stops it across a save (quiesce, resume). */
	const char *thread_name;
	void (*serve)(struct virtio_dev *vdev);
	/* Wake a serve that waits on something else than stop_fd, once stop
	 * is asked (stop_fd is written anyway).  Optional. */
	void (*wake)(struct virtio_dev *vdev);
	/* DRIVER_OK, before the thread starts: ready the backend for the
	 * features negotiated.  Nonzero: the device fails.  Optional. */
	int (*start)(struct virtio_dev *vdev);
	/* A reset, the thread stopped and the transport's lock held: forget
	 * what the driver told the device.  Optional. */
	void (*reset)(struct virtio_dev *vdev);

	/* Save and restore (save/state.h).  The transport saves everything
	 * generic -- status, features, MSI-X, each queue's placement and ring
	 * position -- under "NAME.N" ("NAME" if state_single: one per domain),
	 * with the thread stopped, and calls these for the rest; optional.
	 * save/load: the device's own state (config space values and the
	 * like), loaded with the transport's part already in place but before
	 * start; load validates what it reads (the stream is untrusted) and
	 * says in why what it refused. */
	int (*save)(struct virtio_dev *vdev, struct state_buf *b);
	int (*load)(struct virtio_dev *vdev, struct state_in *in, char *why, size_t whylen);
	bool state_single;
	/* A hot-unplugged device's own end, once its thread is stopped and
	 * it is off the bus: free what create made.  Optional. */
	void (*destroy)(struct virtio_dev *vdev);
};

struct virtio_dev {
	const struct virtio_dev_ops *ops;
	void *priv;
	struct domain *dom;
	/* The device's config space: the transport answers the driver's reads
	 * from here, under its lock; the device changes it by
	 * virtio_config_set (or before the guest runs). */
	void *config;
	unsigned config_size;
	uint64_t driver_features;
	uint8_t status;
	uint8_t config_generation;
	struct virtq vq[VIRTIO_MAX_QUEUES];
	/* Readable when the driver kicked queue i (an ioeventfd when KVM
	 * offers them, else written by the vCPU thread). */
	int kick_fd[VIRTIO_MAX_QUEUES];
	struct virtio_worker worker;
	struct virtio_pci *transport;
	/* The PCI slot to put it in (a hot-plug, a restore), 0: the first free. */
	unsigned slot;
};

/* Create the device on the virtio-pci transport and put it on the bus. */
int virtio_pci_create(struct domain *dom, struct virtio_dev *vdev);

/* A device hot-unplugged (dev/hotplug.h): its thread stopped, off the bus,
 * its state entry gone, its descriptors closed; then the device's own
 * destroy frees it.  vdev is gone afterwards. */
void virtio_pci_destroy(struct virtio_dev *vdev);
/* Its function on the bus (slot in ->slot once created). */
struct pci_dev *virtio_pci_dev(struct virtio_dev *vdev);

/* Interrupt the driver for queue q, if it wants one (event idx, flags). */
void virtio_queue_interrupt(struct virtio_dev *vdev, unsigned q);
/* Change len bytes of the device's config space at off, bump the
 * generation and interrupt the driver. */
void virtio_config_set(struct virtio_dev *vdev, unsigned off, const void *src, unsigned len);
/* Read len bytes of it at off, as the driver would. */
void virtio_config_get(struct virtio_dev *vdev, unsigned off, void *dst, unsigned len);
/* The driver broke the protocol: log once, set NEEDS_RESET, tell it. */
void virtio_needs_reset(struct virtio_dev *vdev, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline bool virtio_has_feature(const struct virtio_dev *vdev, unsigned bit)
{
	return vdev->driver_features & (1ULL << bit);
}

#endif
