/* The I/O thread of a virtio device (worker.h). */
#include "virtio/worker.h"
#include "virtio/virtio.h"
#include "log.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

int virtio_worker_init(struct virtio_worker *w, struct virtio_dev *vdev)
{
	w->vdev = vdev;
	w->running = false;
	atomic_init(&w->stop, false);
	w->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return w->stop_fd < 0 ? -errno : 0;
}

static void *worker_thread(void *arg)
{
	struct virtio_worker *w = arg;

	pthread_setname_np(pthread_self(), w->vdev->ops->thread_name);
	w->vdev->ops->serve(w->vdev);
	return NULL;
}

int virtio_worker_start(struct virtio_worker *w)
{
	int rc;

	if (w->running || !w->vdev->ops->serve)
		return 0;
	atomic_store(&w->stop, false);
	if ((rc = pthread_create(&w->thread, NULL, worker_thread, w)))
		return -rc;
	w->running = true;
	return 0;
}

void virtio_worker_stop(struct virtio_worker *w)
{
	uint64_t one = 1, v;

	if (!w->running)
		return;
	atomic_store(&w->stop, true);
	if (write(w->stop_fd, &one, sizeof(one)) < 0)
		log_debug("%s: cannot wake the I/O thread: %s", w->vdev->ops->name, strerror(errno));
	if (w->vdev->ops->wake)
		w->vdev->ops->wake(w->vdev);
	pthread_join(w->thread, NULL);
	/* What the thread did not read itself, so the next start waits. */
	if (read(w->stop_fd, &v, sizeof(v)) < 0) {
		/* read already */
	}
	w->running = false;
}
