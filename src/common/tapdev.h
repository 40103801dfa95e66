/* A vif's tap device on the host: created (or attached to, if it exists)
 * with virtio-net headers, and put on its bridge.  lodge-hyp opens its
 * boot-time vifs so (backend/tap.c); liblodge the vif it hot-plugs into a
 * running domain, passing the descriptor to a lodge-hyp whose sandbox may
 * open nothing. */
#ifndef LODGE_TAPDEV_H
#define LODGE_TAPDEV_H

#include <stddef.h>

/* A tap made here is not persistent: it goes with its last descriptor,
 * however the process holding it ends.  The descriptor (non-blocking,
 * close-on-exec), or -errno with one line in err. */
int tapdev_open(const char *name, const char *bridge, char *err, size_t errlen);

#endif
