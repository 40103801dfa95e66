/* The I/O thread of a virtio device (worker.c): one lifecycle for every
 * device.  The transport starts it at DRIVER_OK, stops it at a reset or
 * a quiesce (save, migration) and starts it again at resume; the device
 * supplies only what the thread does (virtio_dev_ops.serve). */
#ifndef LODGE_VIRTIO_WORKER_H
#define LODGE_VIRTIO_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct virtio_dev;

struct virtio_worker {
	struct virtio_dev *vdev;
	pthread_t thread;
	bool running;              /* a thread was started and not yet joined */
	atomic_bool stop;          /* asked to stop */
	int stop_fd;               /* readable once asked to stop: wait on it beside the kicks */
};

/* The worker of vdev, not running: 0 or -errno (no eventfd). */
int virtio_worker_init(struct virtio_worker *w, struct virtio_dev *vdev);
/* Run vdev->ops->serve on a thread of its own, unless one runs: 0, or
 * -errno and nothing runs. */
int virtio_worker_start(struct virtio_worker *w);
/* Ask the thread to stop and join it.  serve returns only once nothing it
 * took is in flight, so afterwards no thread of the device touches guest
 * memory. */
void virtio_worker_stop(struct virtio_worker *w);

/* For serve: whether to finish what is in flight and return. */
static inline bool virtio_worker_stopping(const struct virtio_worker *w)
{
	return atomic_load(&w->stop);
}

#endif
