#ifndef LODGE_VIRTIO_NET_H
#define LODGE_VIRTIO_NET_H

#include <stdint.h>

struct domain;
struct tap;

/* Counters for one vif, updated by its I/O thread, read by anyone. */
struct net_stats {
	uint64_t rx_packets, rx_bytes, rx_dropped;
	uint64_t tx_packets, tx_bytes, tx_errors;
};

/* A virtio-net device on an opened tap, served by its own I/O thread. */
int virtio_net_create(struct domain *dom, struct tap *tap);

#endif
