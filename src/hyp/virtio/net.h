#ifndef LODGE_VIRTIO_NET_H
#define LODGE_VIRTIO_NET_H

#include <stdint.h>

struct domain;
struct tap;

/* A virtio-net device on an opened tap, served by its own I/O thread. */
int virtio_net_create(struct domain *dom, struct tap *tap);

#endif
