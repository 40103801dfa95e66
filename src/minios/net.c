/* virtio-net driver and just enough IPv4 to be a real peer: an address
 * from the command line (ip=A.B.C.D/N, or ip=dhcp for dhcp.c's lease),
 * ARP (answering, asking and announcing), ICMP echo (answering and
 * sending), UDP to the DHCP client, and net-send, which pushes numbered
 * frames as fast as the queue takes them. */
#include "io.h"
#include "minios.h"
#include "net.h"
#include "pci.h"
#include "virtio.h"

#define VIRTIO_ID_NET   1
#define NET_F_MAC       5
#define HDR_LEN         12            /* virtio_net_hdr_v1 */
#define BUF_SIZE        2048
#define RXQ_MAX         128
#define TXQ_MAX         128
#define ETH_ARP         0x0806
#define ETH_IP          0x0800
#define ETH_LODGE_TEST  0x88b5        /* IEEE local experimental ethertype */
#define IP_UDP          17
#define DHCP_CLIENT     68
#define ARP_CACHE       16

struct netdev {
	struct vdev v;
	struct vq rx, tx;
	uint8_t mac[6];
	uint32_t ip, mask;             /* host byte order */
	uint32_t gw;                   /* the router DHCP named; 0: none (off-subnet is unreachable) */
	uint8_t *rxbuf, *txbuf;        /* one BUF_SIZE slot per descriptor */
	uint64_t rx_frames, tx_frames, rx_dropped;
	int up;
};

/* Up to four interfaces, eth0 to eth3 in PCI order; nd is the one being
 * served (polled, or chosen for a destination). */
#define MAX_NETS 4
static struct netdev nets[MAX_NETS], *nd = &nets[0];
static unsigned nnets;
static int rx_stopped;                 /* net-rx stop: take nothing, repost nothing */

static struct { uint32_t ip; uint8_t mac[6]; } arp_cache[ARP_CACHE];
static unsigned arp_next;
static volatile unsigned echo_replies;
static volatile uint64_t test_frames_seen;


static uint16_t csum(const uint8_t *p, unsigned len)
{
	uint32_t s = 0;

	for (; len > 1; p += 2, len -= 2)
		s += be16(p);
	if (len)
		s += p[0] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s;
}

static void rx_post(uint16_t slot_hint)
{
	struct vbuf b;
	int head;

	(void)slot_hint;
	head = nd->rx.free_head;
	b = (struct vbuf){ (uint64_t)(nd->rxbuf + (uint64_t)head * BUF_SIZE), BUF_SIZE, 1 };
	vq_add(&nd->rx, &b, 1);
}

/* A free transmit slot's frame area (after the header), or NULL. */
static uint8_t *tx_frame(int *head)
{
	while (vq_get(&nd->tx, NULL) >= 0)
		;
	if (!nd->tx.nfree)
		return NULL;
	*head = nd->tx.free_head;
	/* Slots are reused: clear the virtio header and the protocol headers,
	 * so no field of an earlier frame (a fragment offset!) survives. */
	memset(nd->txbuf + (uint64_t)*head * BUF_SIZE, 0, HDR_LEN + 64);
	return nd->txbuf + (uint64_t)*head * BUF_SIZE + HDR_LEN;
}

static void tx_send(int head, unsigned len, int kick)
{
	struct vbuf b = { (uint64_t)(nd->txbuf + (uint64_t)head * BUF_SIZE), HDR_LEN + len, 0 };

	if (len < 60)
		len = 60;                  /* Ethernet minimum, the rest already zero */
	b.len = HDR_LEN + len;
	vq_add(&nd->tx, &b, 1);
	nd->tx_frames++;
	if (kick)
		vq_kick(&nd->tx);
}

static void eth_header(uint8_t *f, const uint8_t *dst, uint16_t type)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, nd->mac, 6);
	put_be16(f + 12, type);
}

static void arp_learn(uint32_t ip, const uint8_t *mac)
{
	unsigned i;

	for (i = 0; i < ARP_CACHE; i++)
		if (arp_cache[i].ip == ip) {
			memcpy(arp_cache[i].mac, mac, 6);
			return;
		}
	arp_cache[arp_next % ARP_CACHE].ip = ip;
	memcpy(arp_cache[arp_next++ % ARP_CACHE].mac, mac, 6);
}

static const uint8_t *arp_lookup(uint32_t ip)
{
	unsigned i;

	for (i = 0; i < ARP_CACHE; i++)
		if (arp_cache[i].ip == ip && ip)
			return arp_cache[i].mac;
	return NULL;
}

static void arp_send(uint16_t op, const uint8_t *dst_mac, uint32_t dst_ip)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	int head;
	uint8_t *f = tx_frame(&head);

	if (!f)
		return;
	eth_header(f, op == 1 ? bcast : dst_mac, ETH_ARP);
	put_be16(f + 14, 1);               /* Ethernet */
	put_be16(f + 16, ETH_IP);
	f[18] = 6;
	f[19] = 4;
	put_be16(f + 20, op);
	memcpy(f + 22, nd->mac, 6);
	put_be32(f + 28, nd->ip);
	memcpy(f + 32, op == 1 ? (const uint8_t *)"\0\0\0\0\0\0" : dst_mac, 6);
	put_be32(f + 38, dst_ip);
	tx_send(head, 42, 1);
}

/* A gratuitous ARP request for ip from mac (any address, any MAC: the
 * host's watcher must not believe a guest that claims what is not its). */
static void arp_announce(uint32_t ip, const uint8_t *mac)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	int head;
	uint8_t *f = tx_frame(&head);

	if (!f)
		return;
	memcpy(f, bcast, 6);
	memcpy(f + 6, mac, 6);
	put_be16(f + 12, ETH_ARP);
	put_be16(f + 14, 1);
	put_be16(f + 16, ETH_IP);
	f[18] = 6;
	f[19] = 4;
	put_be16(f + 20, 1);
	memcpy(f + 22, mac, 6);
	put_be32(f + 28, ip);
	put_be32(f + 38, ip);              /* sender = target: an announcement (RFC 5227) */
	tx_send(head, 42, 1);
}

static void ip_header(uint8_t *ip, uint8_t proto, uint32_t src, uint32_t dst, unsigned payload_len)
{
	ip[0] = 0x45;
	put_be16(ip + 2, 20 + payload_len);
	ip[8] = 64;
	ip[9] = proto;
	put_be32(ip + 12, src);
	put_be32(ip + 16, dst);
	put_be16(ip + 10, csum(ip, 20));
}

int net_udp_broadcast(uint32_t src_ip, uint16_t sport, uint16_t dport, const uint8_t *payload, unsigned len)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	int head;
	uint8_t *f = tx_frame(&head), *udp;

	if (!f || len > 1400)
		return -1;
	eth_header(f, bcast, ETH_IP);
	ip_header(f + 14, IP_UDP, src_ip, 0xffffffffu, 8 + len);
	udp = f + 34;
	put_be16(udp, sport);
	put_be16(udp + 2, dport);
	put_be16(udp + 4, 8 + len);        /* checksum 0: none, as IPv4 allows */
	memcpy(udp + 8, payload, len);
	tx_send(head, 34 + 8 + len, 1);
	return 0;
}

static int arp_known(void *arg);
static void net_route(uint32_t dst);

/* The MAC for dst: its own on the subnet, the router's off it (asked by
 * ARP, three tries a second apart); NULL if none answers. */
static const uint8_t *next_hop_mac(uint32_t dst)
{
	uint32_t hop;
	unsigned i;

	net_route(dst);
	hop = nd->ip && ((nd->ip ^ dst) & nd->mask) && nd->gw ? nd->gw : dst;
	for (i = 0; i < 3 && !arp_lookup(hop); i++) {
		arp_send(1, NULL, hop);
		net_wait_ms(1000, arp_known, &hop);
	}
	return arp_lookup(hop);
}

int net_udp_send(uint32_t dst, uint16_t sport, uint16_t dport, const uint8_t *payload, unsigned len)
{
	const uint8_t *mac = next_hop_mac(dst);
	int head;
	uint8_t *f, *udp;

	if (!mac || len > 1400 || !(f = tx_frame(&head)))
		return -1;
	eth_header(f, mac, ETH_IP);
	ip_header(f + 14, IP_UDP, nd->ip, dst, 8 + len);
	udp = f + 34;
	put_be16(udp, sport);
	put_be16(udp + 2, dport);
	put_be16(udp + 4, 8 + len);        /* checksum 0: none, as IPv4 allows */
	memcpy(udp + 8, payload, len);
	tx_send(head, 34 + 8 + len, 1);
	return 0;
}

static void icmp_echo(const uint8_t *dst_mac, uint32_t dst_ip, uint8_t type, uint16_t id,
		      uint16_t seq, const uint8_t *payload, unsigned plen)
{
	int head;
	uint8_t *f = tx_frame(&head), *ip, *icmp;

	if (!f || plen > 1400)
		return;
	eth_header(f, dst_mac, ETH_IP);
	ip = f + 14;
	ip_header(ip, 1, nd->ip, dst_ip, 8 + plen);   /* ICMP */
	icmp = ip + 20;
	icmp[0] = type;
	put_be16(icmp + 4, id);
	put_be16(icmp + 6, seq);
	memcpy(icmp + 8, payload, plen);
	put_be16(icmp + 2, csum(icmp, 8 + plen));
	tx_send(head, 14 + 20 + 8 + plen, 1);
}

static void handle_frame(const uint8_t *f, unsigned len)
{
	uint16_t type;

	if (len < 14)
		return;
	type = be16(f + 12);
	if (type == ETH_ARP && len >= 42 && be16(f + 20) >= 1) {
		uint32_t sender = be32(f + 28), target = be32(f + 38);

		if (sender)
			arp_learn(sender, f + 22);
		if (be16(f + 20) == 1 && target == nd->ip)
			arp_send(2, f + 22, sender);
	} else if (type == ETH_IP && len >= 34) {
		const uint8_t *ip = f + 14, *icmp;
		unsigned ihl = (ip[0] & 15) * 4, tot = be16(ip + 2);

		/* UDP to the DHCP client: broadcast, or to the address offered. */
		if (ip[9] == IP_UDP && ihl >= 20 && tot <= len - 14 && tot >= ihl + 8 &&
		    be16(ip + ihl + 2) == DHCP_CLIENT) {
			dhcp_input(ip + ihl + 8, tot - ihl - 8);
			return;
		}
		if (ip[9] == IP_UDP && ihl >= 20 && tot <= len - 14 && tot >= ihl + 8 && be32(ip + 16) == nd->ip &&
		    be16(ip + ihl + 2) == DNS_CLIENT_PORT) {
			dns_input(be32(ip + 12), ip + ihl + 8, tot - ihl - 8);
			return;
		}
		if (be32(ip + 16) != nd->ip || ip[9] != 1 || tot > len - 14 || tot < ihl + 8)
			return;
		arp_learn(be32(ip + 12), f + 6);
		icmp = ip + ihl;
		if (icmp[0] == 8)
			icmp_echo(f + 6, be32(ip + 12), 0, be16(icmp + 4), be16(icmp + 6), icmp + 8, tot - ihl - 8);
		else if (icmp[0] == 0)
			echo_replies++;
	} else if (type == ETH_LODGE_TEST) {
		test_frames_seen++;
	}
}

/* Take what arrived on nd, answer what needs answering, repost the buffers. */
static void net_poll_one(void)
{
	uint32_t len;
	int head, got = 0;

	if (!nd->up || rx_stopped)
		return;
	while ((head = vq_get(&nd->rx, &len)) >= 0) {
		if (len > HDR_LEN) {
			nd->rx_frames++;
			handle_frame(nd->rxbuf + (uint64_t)head * BUF_SIZE + HDR_LEN, len - HDR_LEN);
		}
		rx_post(head);
		got++;
	}
	if (got)
		vq_kick(&nd->rx);
}

void net_poll(void)
{
	struct netdev *keep = nd;
	unsigned i;

	for (i = 0; i < nnets; i++) {
		nd = &nets[i];
		net_poll_one();
	}
	nd = keep;
}

/* Serve dst from the interface on its subnet (eth0 if none is). */
static void net_route(uint32_t dst)
{
	unsigned i;

	nd = &nets[0];
	for (i = 0; i < nnets; i++)
		if (nets[i].ip && ((nets[i].ip ^ dst) & nets[i].mask) == 0) {
			nd = &nets[i];
			return;
		}
}

static uint32_t parse_ip(const char *s, const char **end)
{
	uint32_t ip = 0;
	int i;

	for (i = 0; i < 4; i++) {
		ip = ip << 8 | (strtou64(s, &s) & 0xff);
		if (i < 3 && *s++ != '.')
			return 0;
	}
	if (end)
		*end = s;
	return ip;
}

void print_ip(const char *prefix, uint32_t ip)
{
	printf("%s%u.%u.%u.%u", prefix, ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

static void cmd_net(int argc, char **argv)
{
	unsigned i;

	if (!nnets) {
		printf("net: no interface\n");
		return;
	}
	for (i = 0; i < nnets; i++) {
		const struct netdev *n = &nets[i];

		printf("net: eth%u mac %02x:%02x:%02x:%02x:%02x:%02x", i, n->mac[0], n->mac[1], n->mac[2],
		       n->mac[3], n->mac[4], n->mac[5]);
		print_ip(" ip ", n->ip);
		printf(" rx %lu tx %lu\n", n->rx_frames, n->tx_frames);
	}
}

/* net-rx stop|start: stop taking frames and reposting receive buffers (the
 * host then has none to fill and must drop), or start again. */
static void cmd_net_rx(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "stop") && strcmp(argv[1], "start"))) {
		printf("usage: net-rx stop|start\n");
		return;
	}
	rx_stopped = strcmp(argv[1], "stop") == 0;
	if (!rx_stopped)
		net_poll();
	printf("net-rx: %s, %lu frames received on eth0\n", rx_stopped ? "stopped" : "started",
	       nets[0].rx_frames);
}

/* Wait up to ms milliseconds for cond() to hold, polling the device. */
int net_wait_ms(uint64_t ms, int (*cond)(void *), void *arg)
{
	uint64_t end = time_ns() + ms * 1000000;

	while (time_ns() < end) {
		net_poll();
		if (cond(arg))
			return 1;
		cpu_relax();
	}
	return 0;
}

static int arp_known(void *arg) { return arp_lookup(*(uint32_t *)arg) != NULL; }
static int replies_at_least(void *arg) { return echo_replies >= *(unsigned *)arg; }

static void cmd_ping(int argc, char **argv)
{
	uint32_t dst = argc > 1 ? parse_ip(argv[1], NULL) : 0;
	unsigned count = argc > 2 ? strtou64(argv[2], NULL) : 3, i, start = echo_replies, want;
	uint8_t payload[56];
	const uint8_t *mac;

	if (!nnets || !dst) {
		printf("usage: ping A.B.C.D [COUNT]\n");
		return;
	}
	mac = next_hop_mac(dst);      /* off the subnet: the router's */
	if (!mac) {
		printf("ping: no ARP reply\n");
		printf("ping: 0/%u replies\n", count);
		return;
	}
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = i;
	for (i = 0; i < count; i++) {
		want = echo_replies + 1;
		icmp_echo(mac, dst, 8, 0x4c4f, i, payload, sizeof(payload));
		net_wait_ms(2000, replies_at_least, &want);
	}
	printf("ping: %u/%u replies\n", echo_replies - start, count);
}

/* Wait (10 s at most) until the host has taken every frame queued since
 * t0: the microseconds since t0, at least 1 (a sender's rate). */
static uint64_t tx_drain_us(uint64_t t0)
{
	uint64_t us;

	while (nd->tx.nfree < nd->tx.size && time_ns() - t0 < 10000000000ULL) {
		while (vq_get(&nd->tx, NULL) >= 0)
			;
		cpu_relax();
	}
	us = (time_ns() - t0) / 1000;
	return us ? us : 1;
}

/* net-send COUNT SIZE: broadcast COUNT frames of SIZE bytes, numbered from
 * 0 in the first four payload bytes, as fast as the queue takes them. */
static void cmd_net_send(int argc, char **argv)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint64_t count = argc > 1 ? strtou64(argv[1], NULL) : 1000, size, i, t0, us;

	size = argc > 2 ? strtou64(argv[2], NULL) : 1000;
	nd = &nets[0];
	if (!nd->up)
		return;
	if (size < 60) size = 60;
	if (size > 1514) size = 1514;
	t0 = time_ns();
	for (i = 0; i < count; i++) {
		int head;
		uint8_t *f;

		while (!(f = tx_frame(&head))) {
			vq_kick(&nd->tx);
			cpu_relax();
		}
		eth_header(f, bcast, ETH_LODGE_TEST);
		put_be32(f + 14, i);
		/* Kick once per batch: the host drains many frames per notify. */
		tx_send(head, size, (i % 32) == 31 || i + 1 == count);
	}
	us = tx_drain_us(t0);
	printf("net-send: %lu frames of %lu bytes in %lu us: %lu frames/s\n", count, size, us,
	       count * 1000000 / us);
}

/* udp-send A.B.C.D PORT COUNT SIZE: COUNT numbered UDP datagrams of SIZE
 * payload bytes to A.B.C.D (through the router off the subnet), as fast
 * as the queue takes them: the NAT benchmark's sender. */
static void cmd_udp_send(int argc, char **argv)
{
	uint32_t dst = argc > 1 ? parse_ip(argv[1], NULL) : 0;
	uint64_t port = argc > 2 ? strtou64(argv[2], NULL) : 0, count = argc > 3 ? strtou64(argv[3], NULL) : 1000;
	uint64_t size = argc > 4 ? strtou64(argv[4], NULL) : 64, i, t0, us;
	const uint8_t *mac;
	uint8_t to[6];

	if (!nnets || !dst || !port || port > 65535) {
		printf("usage: udp-send A.B.C.D PORT [COUNT] [SIZE]\n");
		return;
	}
	if (size < 4) size = 4;
	if (size > 1472) size = 1472;
	if (!(mac = next_hop_mac(dst))) {
		printf("udp-send: no ARP reply\n");
		return;
	}
	memcpy(to, mac, 6);
	t0 = time_ns();
	for (i = 0; i < count; i++) {
		int head;
		uint8_t *f, *udp;

		while (!(f = tx_frame(&head))) {
			vq_kick(&nd->tx);
			cpu_relax();
		}
		eth_header(f, to, ETH_IP);
		ip_header(f + 14, IP_UDP, nd->ip, dst, 8 + (unsigned)size);
		udp = f + 34;
		put_be16(udp, 40000);
		put_be16(udp + 2, (uint16_t)port);
		put_be16(udp + 4, 8 + (uint16_t)size);
		put_be32(udp + 8, (uint32_t)i);
		tx_send(head, 42 + (unsigned)size, (i % 32) == 31 || i + 1 == count);
	}
	us = tx_drain_us(t0);
	printf("udp-send: %lu datagrams of %lu bytes in %lu us: %lu datagrams/s\n", count, size, us,
	       count * 1000000 / us);
}

/* net-recv SECONDS: count test frames arriving (for the receive benchmark). */
static void cmd_net_recv(int argc, char **argv)
{
	uint64_t secs = argc > 1 ? strtou64(argv[1], NULL) : 5, start = test_frames_seen;
	uint64_t end = time_ns() + secs * 1000000000ULL;

	while (time_ns() < end)
		net_poll();
	printf("net-recv: %lu frames in %lu s: %lu frames/s\n", test_frames_seen - start, secs,
	       (test_frames_seen - start) / (secs ? secs : 1));
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 32;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "aa:bb:cc:dd:ee:ff" into mac; -1 if malformed. */
static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned i;

	for (i = 0; i < 6; i++, s += 3) {
		int hi = hex_digit(s[0]), lo = hi < 0 ? -1 : hex_digit(s[1]);

		if (lo < 0 || s[2] != (i < 5 ? ':' : '\0'))
			return -1;
		mac[i] = hi << 4 | lo;
	}
	return 0;
}

/* arp-announce A.B.C.D [MAC]: claim an address, from our MAC or another. */
static void cmd_arp_announce(int argc, char **argv)
{
	uint32_t ip = argc > 1 ? parse_ip(argv[1], NULL) : 0;
	uint8_t mac[6];

	nd = &nets[0];
	memcpy(mac, nd->mac, 6);
	if (!nd->up || !ip || (argc > 2 && parse_mac(argv[2], mac))) {
		printf("usage: arp-announce A.B.C.D [MAC]\n");
		return;
	}
	arp_announce(ip, mac);
	print_ip("arp-announce: ", ip);
	printf(" from %02x:%02x:%02x:%02x:%02x:%02x\n", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
}

int net_is_up(void) { return nets[0].up; }
const uint8_t *net_mac(void) { return nets[0].mac; }

/* DHCP configures eth0. */
void net_set_addr(uint32_t ip, uint32_t mask)
{
	nets[0].ip = ip;
	nets[0].mask = mask;
}

void net_set_gateway(uint32_t gw)
{
	nets[0].gw = gw;
}

/* route A.B.C.D: eth0's router by hand (DHCP sets it; a network that
 * gives none, an isolated one, leaves it unset). */
static void cmd_route(int argc, char **argv)
{
	uint32_t gw = argc > 1 ? parse_ip(argv[1], NULL) : 0;

	if (!gw) {
		printf("usage: route A.B.C.D\n");
		return;
	}
	nets[0].gw = gw;
	print_ip("route: via ", gw);
	printf("\n");
}

static const struct command net_commands[] = {
	{ "net", "", "the interface, its address and counters", cmd_net },
	{ "ping", "A.B.C.D [COUNT]", "ICMP echo", cmd_ping },
	{ "route", "A.B.C.D", "send what is off eth0's subnet to this router", cmd_route },
	{ "net-send", "COUNT SIZE", "send numbered test frames", cmd_net_send },
	{ "udp-send", "A.B.C.D PORT COUNT SIZE", "send numbered UDP datagrams as fast as the queue takes them",
	  cmd_udp_send },
	{ "net-recv", "SECONDS", "count test frames received", cmd_net_recv },
	{ "net-rx", "stop|start", "stop or start taking frames and reposting receive buffers", cmd_net_rx },
	{ "arp-announce", "A.B.C.D [MAC]", "send a gratuitous ARP claiming an address", cmd_arp_announce },
};

/* ip=A.B.C.D/N (or dhcp) for eth0, ip1= to ip3= for eth1 to eth3 (a
 * hot-plugged one too: the address of the name it gets). */
static int net_start(unsigned idx)
{
	struct netdev *n = &nets[idx];
	char buf[32], key[4] = { 'i', 'p', (char)('0' + idx), 0 };
	const char *s;
	unsigned i;

	if (virtio_init(&n->v, 1ULL << NET_F_MAC) ||
	    virtio_vq_setup(&n->v, 0, &n->rx, RXQ_MAX) || virtio_vq_setup(&n->v, 1, &n->tx, TXQ_MAX))
		return -1;
	nd = n;
	for (i = 0; i < 6; i++)
		n->mac[i] = mmio_read8(n->v.device + i);
	n->rxbuf = kalloc((uint64_t)n->rx.size * BUF_SIZE, 4096);
	n->txbuf = kalloc((uint64_t)n->tx.size * BUF_SIZE, 4096);
	virtio_driver_ok(&n->v);
	n->up = 1;
	for (i = 0; i < n->rx.size; i++)
		rx_post(i);
	vq_kick(&n->rx);
	if (idx == 0)
		key[2] = '\0';
	if (cmdline_get(key, buf, sizeof(buf)) && strcmp(buf, "dhcp") != 0) {
		n->ip = parse_ip(buf, &s);
		n->mask = *s == '/' ? ~0u << (32 - strtou64(s + 1, NULL)) : 0xffffff00u;
	}
	return 0;
}

static int net_init_one(unsigned idx)
{
	if (virtio_find(VIRTIO_ID_NET, idx, &nets[idx].v))
		return -1;
	return net_start(idx);
}

int net_hotplug_add(unsigned slot)
{
	struct netdev *keep = nd;
	unsigned i;

	for (i = 0; i < nnets && nets[i].up; i++)
		;
	if (i == MAX_NETS || virtio_probe(slot, VIRTIO_ID_NET, &nets[i].v)) {
		nd = keep;
		return -1;
	}
	if (net_start(i)) {
		nd = keep;
		return -1;
	}
	if (i == nnets)
		nnets++;
	nd = &nets[i];
	printf("net: eth%u added (slot %u):", i, slot);
	print_ip(" ip ", nets[i].ip);
	printf("\n");
	nd = keep;
	return 0;
}

int net_hotplug_remove(unsigned slot, int ejected)
{
	unsigned i;

	for (i = 0; i < nnets; i++) {
		struct netdev *n = &nets[i];

		if (!n->up || n->v.pci != slot)
			continue;
		if (ejected)
			mmio_write8(n->v.common + 0x14, 0);     /* reset: it lets go of our rings */
		n->up = 0;
		n->ip = 0;
		printf("net: eth%u %s (slot %u)\n", i, ejected ? "removed" : "gone, removed without an eject", slot);
		if (nd == n)
			nd = &nets[0];
		return 0;
	}
	return -1;
}

void net_hotplug_check(uint32_t plugged)
{
	unsigned i;

	for (i = 0; i < nnets; i++)
		if (nets[i].up && ((plugged >> nets[i].v.pci) & 1 ||
				   (pci_read32(nets[i].v.pci, 0) & 0xffff) == 0xffff))
			net_hotplug_remove(nets[i].v.pci, 0);
}

void net_init(void)
{
	char buf[32];

	shell_register(net_commands, sizeof(net_commands) / sizeof(net_commands[0]));
	dhcp_init();
	dns_init();
	while (nnets < MAX_NETS && net_init_one(nnets) == 0)
		nnets++;
	nd = &nets[0];
	if (!nnets)
		return;
	cmd_net(0, NULL);
	if (cmdline_get("ip", buf, sizeof(buf)) && strcmp(buf, "dhcp") == 0)
		dhcp_run();
}
