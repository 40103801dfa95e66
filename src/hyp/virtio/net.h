#ifndef LODGE_VIRTIO_NET_H
#define LODGE_VIRTIO_NET_H

#include <stdint.h>

struct domain;
struct tap;

/* A virtio-net device on an opened tap, served by its own I/O thread. */
int virtio_net_create(struct domain *dom, struct tap *tap);
/* The same, in tap->slot (0: the first free); *out the device, for
 * virtio_pci_destroy once hot-unplugged. */
struct virtio_dev;
int virtio_net_create_at(struct domain *dom, struct tap *tap, struct virtio_dev **out);

#endif
