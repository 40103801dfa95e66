/* virtio-net (virtio 1.2 section 5.1) on a tap.  The tap carries the same
 * 12-byte virtio_net_hdr the guest uses, so frames pass in both directions
 * without copying headers, and checksum/TSO offloads the guest negotiates
 * are switched on in the tap (TUNSETOFFLOAD): bulk TCP stays in 64 KiB
 * segments end to end.  One I/O thread per device serves both queues.
 * With no receive buffers posted the thread stops reading the tap, whose
 * own bounded queue then drops: lodge-hyp never buffers for the guest. */
#include "net.h"
#include "backend/tap.h"
#include "domain.h"
#include "log.h"
#include "save/state.h"
#include "virtio.h"

#include <errno.h>
#include <linux/if_tun.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

#define VIRTIO_NET_F_CSUM        0
#define VIRTIO_NET_F_GUEST_CSUM  1
#define VIRTIO_NET_F_MTU         3
#define VIRTIO_NET_F_MAC         5
#define VIRTIO_NET_F_GUEST_TSO4  7
#define VIRTIO_NET_F_GUEST_TSO6  8
#define VIRTIO_NET_F_GUEST_ECN   9
#define VIRTIO_NET_F_GUEST_UFO   10
#define VIRTIO_NET_F_HOST_TSO4   11
#define VIRTIO_NET_F_HOST_TSO6   12
#define VIRTIO_NET_F_HOST_ECN    13
#define VIRTIO_NET_F_HOST_UFO    14
#define VIRTIO_NET_F_MRG_RXBUF   15
#define VIRTIO_NET_F_STATUS      16
#define VIRTIO_NET_S_LINK_UP     1

#define NET_QUEUE_SIZE   256
#define NET_RX           0
#define NET_TX           1
#define NET_HDR_LEN      12
#define NET_MTU          1500
#define NET_MAX_FRAME    (NET_HDR_LEN + 14 + NET_MTU + 4)   /* header, Ethernet, VLAN tag */
#define NET_MAX_GSO      (NET_HDR_LEN + 65550)
#define NET_RX_IOV       256
#define NET_RX_CHAINS    64

struct virtio_net_config {
	uint8_t mac[6];
	uint16_t status;
	uint16_t max_virtqueue_pairs;
	uint16_t mtu;
} __attribute__((packed));

struct virtio_net {
	struct virtio_dev vdev;
	struct tap *tap;
	struct virtio_net_config config;
	bool broken;
	struct io_counters io;
	struct virtq_req req;
	struct iovec rx_iov[NET_RX_IOV];
	uint16_t rx_heads[NET_RX_CHAINS];
	uint32_t rx_lens[NET_RX_CHAINS];
};

static void net_broken(struct virtio_net *n, const char *what)
{
	if (!n->broken)
		virtio_needs_reset(&n->vdev, "malformed %s chain", what);
	n->broken = true;
}

/* Guest to tap: each chain is a virtio_net_hdr and a frame, readable only.
 * The driver's notifications are off while the ring is worked through
 * (virtq_pop_quiet) and while the tap is full (its POLLOUT brings us
 * back).  Returns false when the tap
 * cannot take more now. */
static bool net_tx(struct virtio_net *n)
{
	struct virtq *q = &n->vdev.vq[NET_TX];
	int sent = 0;

	virtq_set_notify(q, false);
	while (!n->broken) {
		int rc = virtq_pop_quiet(q, &n->req);
		ssize_t w;

		if (rc == 0)
			break;
		if (rc < 0 || n->req.n_in || n->req.out_len < NET_HDR_LEN) {
			net_broken(n, "transmit");
			break;
		}
		w = writev(n->tap->fd, n->req.iov, n->req.n_out);
		if (w < 0 && errno == EAGAIN) {
			virtq_unpop(q, 1);
			return false;
		}
		if (w < 0) {
			io_count(&n->io.errors, 1);
		} else {
			io_count(&n->io.out_ops, 1);
			io_count(&n->io.out_bytes, n->req.out_len - NET_HDR_LEN);
		}
		virtq_push(q, n->req.head, 0);
		if (++sent == 64) {        /* let receive and interrupts interleave */
			virtio_queue_interrupt(&n->vdev, NET_TX);
			sent = 0;
		}
	}
	virtio_queue_interrupt(&n->vdev, NET_TX);
	return true;
}

/* Tap to guest: gather enough receive chains for the largest frame the
 * offloads allow, read one frame into them, give back the chains it did
 * not need.  Returns 1 if a frame was delivered, 0 if the tap is empty,
 * -ENOBUFS if the guest posted too few buffers. */
static int net_rx_one(struct virtio_net *n)
{
	struct virtq *q = &n->vdev.vq[NET_RX];
	bool mrg = virtio_has_feature(&n->vdev, VIRTIO_NET_F_MRG_RXBUF);
	bool gso = virtio_has_feature(&n->vdev, VIRTIO_NET_F_GUEST_TSO4) ||
		   virtio_has_feature(&n->vdev, VIRTIO_NET_F_GUEST_TSO6) ||
		   virtio_has_feature(&n->vdev, VIRTIO_NET_F_GUEST_UFO);
	uint64_t want = gso ? NET_MAX_GSO : NET_MAX_FRAME, have = 0, left;
	unsigned chains = 0, niov = 0, used, i;
	ssize_t got;

	while (have < want && chains < NET_RX_CHAINS) {
		int rc = virtq_pop(q, &n->req);

		if (rc == 0)
			break;
		if (rc < 0 || n->req.n_out || n->req.in_len < NET_HDR_LEN ||
		    niov + n->req.n_in > NET_RX_IOV) {
			if (rc > 0)
				chains++;
			virtq_unpop(q, chains);
			net_broken(n, "receive");
			return 0;
		}
		memcpy(n->rx_iov + niov, n->req.iov, n->req.n_in * sizeof(struct iovec));
		niov += n->req.n_in;
		n->rx_heads[chains] = n->req.head;
		n->rx_lens[chains] = n->req.in_len;
		have += n->req.in_len;
		chains++;
		if (!mrg)
			break;    /* without MRG_RXBUF a frame must fit one chain */
	}
	if (chains == 0)
		return -ENOBUFS;
	got = readv(n->tap->fd, n->rx_iov, niov);
	if (got <= 0) {
		virtq_unpop(q, chains);
		return 0;
	}
	/* How many chains the frame filled; the rest go back. */
	for (used = 0, left = got; used < chains && left; used++)
		left -= left < n->rx_lens[used] ? left : n->rx_lens[used];
	if (mrg) {
		uint16_t nbuf = used;

		/* num_buffers, the last field of the header, in the first buffer. */
		memcpy((uint8_t *)n->rx_iov[0].iov_base + 10, &nbuf, 2);
	}
	for (i = 0, left = got; i < used; i++) {
		uint32_t len = left < n->rx_lens[i] ? left : n->rx_lens[i];

		virtq_push(q, n->rx_heads[i], len);
		left -= len;
	}
	virtq_unpop(q, chains - used);
	io_count(&n->io.in_ops, 1);
	io_count(&n->io.in_bytes, got - NET_HDR_LEN);
	return 1;
}

/* Receive while the guest has buffers: 0, or -ENOBUFS once it has none
 * left (its notification asked for, the ring looked at once more).  A
 * driver posting receive buffers need not say so while some are left. */
static int net_rx(struct virtio_net *n)
{
	struct virtq *q = &n->vdev.vq[NET_RX];
	int delivered = 0, rc;

	virtq_set_notify(q, false);
	while ((rc = net_rx_one(n)) > 0)
		if (++delivered % 64 == 0)
			virtio_queue_interrupt(&n->vdev, NET_RX);
	if (rc == -ENOBUFS) {
		virtq_set_notify(q, true);
		while ((rc = net_rx_one(n)) > 0)
			delivered++;
		if (rc != -ENOBUFS)
			virtq_set_notify(q, false);
	}
	if (delivered)
		virtio_queue_interrupt(&n->vdev, NET_RX);
	return rc == -ENOBUFS ? -ENOBUFS : 0;
}

/* What the thread waits on, by epoll: registered once, so a wake-up does
 * not set up and tear down four waits as poll() does, which at a few
 * thousand frames a second is a wake-up a frame. */
enum { NET_EV_STOP, NET_EV_KICK_RX, NET_EV_KICK_TX, NET_EV_TAP };

static int net_watch(int ep, int op, int fd, uint32_t events, uint32_t what)
{
	struct epoll_event ev = { .events = events, .data.u32 = what };

	return epoll_ctl(ep, op, fd, &ev);
}

/* The I/O thread (worker.h).  It sends and receives whole chains between
 * looks at stop (a receive it cannot fill gives its chains back), so once
 * it returns none is in flight and nothing of ours touches guest memory. */
static void net_serve(struct virtio_dev *vdev)
{
	struct virtio_net *n = vdev->priv;
	bool rx_starved = false, tx_blocked;
	uint32_t tap_events = EPOLLIN;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	uint64_t v;

	if (ep < 0 || net_watch(ep, EPOLL_CTL_ADD, vdev->worker.stop_fd, EPOLLIN, NET_EV_STOP) ||
	    net_watch(ep, EPOLL_CTL_ADD, n->vdev.kick_fd[NET_RX], EPOLLIN, NET_EV_KICK_RX) ||
	    net_watch(ep, EPOLL_CTL_ADD, n->vdev.kick_fd[NET_TX], EPOLLIN, NET_EV_KICK_TX) ||
	    net_watch(ep, EPOLL_CTL_ADD, n->tap->fd, tap_events, NET_EV_TAP)) {
		log_err("%s: cannot wait on its queues and tap: %s", n->tap->name, strerror(errno));
		if (ep >= 0)
			close(ep);
		return;
	}
	/* Frames posted while the thread was stopped (a save, a migration's
	 * last round) with notifications off would otherwise wait for a
	 * kick that does not come. */
	tx_blocked = !net_tx(n);
	while (!virtio_worker_stopping(&vdev->worker)) {
		uint32_t want = (rx_starved ? 0 : EPOLLIN) | (tx_blocked ? EPOLLOUT : 0);
		struct epoll_event evs[4];
		bool kick_rx = false, kick_tx = false, tap_in = false, tap_out = false;
		int i, nev;

		if (want != tap_events && net_watch(ep, EPOLL_CTL_MOD, n->tap->fd, want, NET_EV_TAP) == 0)
			tap_events = want;
		nev = epoll_wait(ep, evs, 4, -1);
		if (nev < 0 && errno != EINTR)
			break;
		for (i = 0; i < nev; i++) {
			switch (evs[i].data.u32) {
			case NET_EV_KICK_RX: kick_rx = true; break;
			case NET_EV_KICK_TX: kick_tx = true; break;
			case NET_EV_TAP:
				tap_in = evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP);
				tap_out = evs[i].events & EPOLLOUT;
				break;
			}
		}
		if (kick_rx) {
			if (read(n->vdev.kick_fd[NET_RX], &v, sizeof(v)) < 0)
				v = 0;
			rx_starved = false;
		}
		if (kick_tx || (tx_blocked && tap_out)) {
			if (kick_tx && read(n->vdev.kick_fd[NET_TX], &v, sizeof(v)) < 0)
				v = 0;
			tx_blocked = !net_tx(n);
		}
		/* The tap is read when it has frames, and once when the guest
		 * posts buffers after running out (frames may be waiting). */
		if (!rx_starved && !n->broken && (tap_in || kick_rx))
			rx_starved = net_rx(n) == -ENOBUFS;
	}
	close(ep);
}

static uint64_t net_features(struct virtio_dev *vdev)
{
	return (1ULL << VIRTIO_NET_F_CSUM) | (1ULL << VIRTIO_NET_F_GUEST_CSUM) |
	       (1ULL << VIRTIO_NET_F_MTU) | (1ULL << VIRTIO_NET_F_MAC) |
	       (1ULL << VIRTIO_NET_F_GUEST_TSO4) | (1ULL << VIRTIO_NET_F_GUEST_TSO6) |
	       (1ULL << VIRTIO_NET_F_GUEST_ECN) |
	       (1ULL << VIRTIO_NET_F_HOST_TSO4) | (1ULL << VIRTIO_NET_F_HOST_TSO6) |
	       (1ULL << VIRTIO_NET_F_HOST_ECN) |
	       (1ULL << VIRTIO_NET_F_MRG_RXBUF) | (1ULL << VIRTIO_NET_F_STATUS);
}

static int net_start(struct virtio_dev *vdev)
{
	struct virtio_net *n = vdev->priv;
	unsigned tun = 0;

	/* Offloads the guest can take on receive: the tap may hand it frames
	 * with partial checksums or as large segments. */
	if (virtio_has_feature(vdev, VIRTIO_NET_F_GUEST_CSUM)) {
		tun |= TUN_F_CSUM;
		if (virtio_has_feature(vdev, VIRTIO_NET_F_GUEST_TSO4))
			tun |= TUN_F_TSO4;
		if (virtio_has_feature(vdev, VIRTIO_NET_F_GUEST_TSO6))
			tun |= TUN_F_TSO6;
		if (virtio_has_feature(vdev, VIRTIO_NET_F_GUEST_ECN))
			tun |= TUN_F_TSO_ECN;
	}
	if (tap_set_offload(n->tap, tun))
		log_warn("tap %s: cannot set offloads %#x", n->tap->name, tun);
	n->broken = false;
	return 0;
}

/* ---- save and restore ---------------------------------------------------------
 * The tap's offloads are set again by start from the loaded features; what
 * the device keeps of its own is the config space the guest reads. */
static int net_save(struct virtio_dev *vdev, struct state_buf *b)
{
	struct virtio_net *n = vdev->priv;

	state_put(b, n->config.mac, 6);
	state_put_u16(b, n->config.status);
	state_put_u16(b, n->config.mtu);
	return 0;
}

static int net_load(struct virtio_dev *vdev, struct state_in *in, char *why, size_t whylen)
{
	struct virtio_net *n = vdev->priv;
	uint8_t mac[6];
	uint16_t status, mtu;
	unsigned q;

	state_get(in, mac, 6);
	status = state_get_u16(in);
	mtu = state_get_u16(in);
	if (in->bad)
		return -EBADMSG;
	/* The MAC is the host's to choose (the vif's watcher knows it by it):
	 * a guest that knew another one is not this vif. */
	if (memcmp(mac, n->config.mac, 6) || mtu != n->config.mtu) {
		snprintf(why, whylen, "virtio-net %s: saved with MAC %02x:%02x:%02x:%02x:%02x:%02x "
			 "MTU %u, this vif has another", n->tap->name, mac[0], mac[1], mac[2], mac[3],
			 mac[4], mac[5], mtu);
		return -EINVAL;
	}
	if (status & ~VIRTIO_NET_S_LINK_UP) {
		snprintf(why, whylen, "virtio-net: link status %#x has unknown bits", status);
		return -EINVAL;
	}
	for (q = 0; q < 2; q++)
		if (vdev->vq[q].last_avail != vdev->vq[q].used_idx) {
			snprintf(why, whylen, "virtio-net: queue %u saved with chains in flight", q);
			return -EINVAL;
		}
	n->config.status = status;
	return 0;
}

static void net_destroy(struct virtio_dev *vdev)
{
	struct virtio_net *n = vdev->priv;

	domain_remove_io(vdev->dom, &n->io);
	free(n);
}

static const struct virtio_dev_ops net_ops = {
	.name = "virtio-net",
	.device_id = VIRTIO_ID_NET,
	.pci_class = 0x020000,
	.num_queues = 2,
	.queue_max_size = NET_QUEUE_SIZE,
	.features = net_features,
	.thread_name = "net-io",
	.serve = net_serve,
	.start = net_start,
	.save = net_save,
	.load = net_load,
	.destroy = net_destroy,
};

int virtio_net_create(struct domain *dom, struct tap *tap)
{
	return virtio_net_create_at(dom, tap, NULL);
}

int virtio_net_create_at(struct domain *dom, struct tap *tap, struct virtio_dev **out)
{
	struct virtio_net *n = calloc(1, sizeof(*n));
	int rc;

	if (!n)
		return -ENOMEM;
	n->tap = tap;
	n->vdev.slot = tap->slot;
	n->vdev.ops = &net_ops;
	n->vdev.priv = n;
	n->vdev.config = &n->config;
	n->vdev.config_size = sizeof(n->config);
	memcpy(n->config.mac, tap->mac, 6);
	n->config.status = VIRTIO_NET_S_LINK_UP;
	n->config.max_virtqueue_pairs = 1;
	n->config.mtu = NET_MTU;
	rc = virtio_pci_create(dom, &n->vdev);
	if (rc) {
		free(n);
		return rc;
	}
	domain_add_io(dom, IO_VIF, &n->io, n->vdev.slot);
	if (out)
		*out = &n->vdev;
	return 0;
}
