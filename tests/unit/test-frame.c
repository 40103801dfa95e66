/* The network watcher's frame parser (src/hyp/netwatch/frame.c) on frames
 * built here byte by byte: the guest's own ARP, a DHCP ACK for its MAC,
 * IPv6 neighbour solicitation and advertisement (and DAD from ::) claim
 * an address; the same frames from a forged source MAC, in the wrong
 * direction, for another client or cut short claim nothing.  Each frame
 * is parsed from a heap copy of exactly the captured length, so a read
 * past it is a bug a sanitizer build reports. */
#include "netwatch/frame.h"
#include "unit.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static const uint8_t GUEST[6] = { 0x02, 0x4c, 0x00, 0x00, 0x20, 0x01 };
static const uint8_t OTHER[6] = { 0x02, 0x4c, 0x00, 0x00, 0x20, 0x03 };
static const uint8_t SERVER[6] = { 0x02, 0x4c, 0x00, 0x00, 0x20, 0xfe };
static const uint8_t BCAST[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

struct frame {
	uint8_t b[400];
	size_t len;
};

static void put8(struct frame *f, uint8_t v) { f->b[f->len++] = v; }
static void put16(struct frame *f, uint16_t v) { put8(f, v >> 8); put8(f, v & 0xff); }
static void putn(struct frame *f, const void *p, size_t n) { memcpy(f->b + f->len, p, n); f->len += n; }
static void zeros(struct frame *f, size_t n) { memset(f->b + f->len, 0, n); f->len += n; }

static void v4(const char *s, uint8_t out[4]) { inet_pton(AF_INET, s, out); }
static void v6(const char *s, uint8_t out[16]) { inet_pton(AF_INET6, s, out); }

static void eth(struct frame *f, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
	f->len = 0;
	putn(f, dst, 6);
	putn(f, src, 6);
	put16(f, type);
}

/* An ARP frame: Ethernet source esrc, ARP sender sha/spa. */
static void arp(struct frame *f, const uint8_t *esrc, uint16_t op, const uint8_t *sha, const char *spa,
		const char *tpa)
{
	uint8_t a[4];

	eth(f, BCAST, esrc, 0x0806);
	put16(f, 1); put16(f, 0x0800); put8(f, 6); put8(f, 4); put16(f, op);
	putn(f, sha, 6); v4(spa, a); putn(f, a, 4);
	zeros(f, 6); v4(tpa, a); putn(f, a, 4);
}

/* An IPv4 header (no options) of protocol proto with payload_len to follow. */
static void ipv4(struct frame *f, const char *src, const char *dst, uint8_t proto, uint16_t payload_len)
{
	uint8_t a[4];

	put8(f, 0x45); put8(f, 0); put16(f, 20 + payload_len); put16(f, 1); put16(f, 0);
	put8(f, 64); put8(f, proto); put16(f, 0);
	v4(src, a); putn(f, a, 4);
	v4(dst, a); putn(f, a, 4);
}

/* A DHCP reply from the server to chaddr, message type msgtype, yiaddr. */
static void dhcp(struct frame *f, const uint8_t *chaddr, const char *yiaddr, uint8_t msgtype)
{
	uint8_t a[4];

	eth(f, chaddr, SERVER, 0x0800);
	ipv4(f, "10.79.0.254", yiaddr, 17, 8 + 240 + 4);
	put16(f, 67); put16(f, 68); put16(f, 8 + 240 + 4); put16(f, 0);
	put8(f, 2); put8(f, 1); put8(f, 6); put8(f, 0);      /* op BOOTREPLY, Ethernet */
	put16(f, 0x1234); put16(f, 0x5678);                  /* xid */
	zeros(f, 4);                                         /* secs, flags */
	zeros(f, 4);                                         /* ciaddr */
	v4(yiaddr, a); putn(f, a, 4);
	v4("10.79.0.254", a); putn(f, a, 4);                 /* siaddr */
	zeros(f, 4);                                         /* giaddr */
	putn(f, chaddr, 6); zeros(f, 10);
	zeros(f, 64 + 128);                                  /* sname, file */
	put8(f, 0x63); put8(f, 0x82); put8(f, 0x53); put8(f, 0x63);
	put8(f, 0);                                          /* a pad first */
	put8(f, 53); put8(f, 1); put8(f, msgtype);
	put8(f, 255);
}

/* ICMPv6 neighbour discovery (type 135 NS or 136 NA) for target. */
static void nd(struct frame *f, const uint8_t *esrc, uint8_t type, const char *src, const char *dst,
	       const char *target, uint8_t hop_limit)
{
	uint8_t a[16];

	eth(f, BCAST, esrc, 0x86dd);
	put8(f, 0x60); zeros(f, 3); put16(f, 24); put8(f, 58); put8(f, hop_limit);
	v6(src, a); putn(f, a, 16);
	v6(dst, a); putn(f, a, 16);
	put8(f, type); put8(f, 0); put16(f, 0);
	put8(f, type == 136 ? 0x60 : 0); zeros(f, 3);       /* NA: solicited, override */
	v6(target, a); putn(f, a, 16);
}

/* Parse the first caplen bytes of f from a heap buffer of exactly that size. */
static struct nw_frame parse(const struct frame *f, size_t caplen, bool from_guest)
{
	struct nw_frame out;
	uint8_t *copy = malloc(caplen ? caplen : 1);

	memcpy(copy, f->b, caplen);
	nw_frame_parse(copy, caplen, from_guest, GUEST, &out);
	free(copy);
	return out;
}

/* The whole frame claims addr (as text), learned how. */
static bool claims(const struct frame *f, bool from_guest, const char *addr, enum nw_how how)
{
	struct nw_frame out = parse(f, f->len, from_guest);
	char buf[64];

	if (!out.claim_valid)
		return false;
	nw_addr_format(&out.claim, buf, sizeof(buf));
	return out.how == how && strcmp(buf, addr) == 0;
}

static bool claims_nothing(const struct frame *f, bool from_guest)
{
	return !parse(f, f->len, from_guest).claim_valid;
}

/* Every capture shorter than need bytes claims nothing. */
static bool short_claims_nothing(const struct frame *f, size_t need, bool from_guest)
{
	size_t n;

	for (n = 0; n < need; n++)
		if (parse(f, n, from_guest).claim_valid)
			return false;
	return true;
}

static bool peer_is(const struct frame *f, bool from_guest, const char *addr)
{
	struct nw_frame out = parse(f, f->len, from_guest);
	char buf[64];

	nw_addr_format(&out.peer, buf, sizeof(buf));
	return out.peer_valid && strcmp(buf, addr) == 0;
}

int main(void)
{
	struct frame f;
	struct nw_addr none = { 0 };
	char buf[64];
	size_t full;

	/* ARP. */
	arp(&f, GUEST, 2, GUEST, "10.79.0.2", "10.79.0.1");
	CHECK("the guest's own ARP reply claims its sender address", claims(&f, true, "10.79.0.2", NW_ARP));
	CHECK("the same ARP on its way to the guest claims nothing", claims_nothing(&f, false));
	CHECK("an ARP cut anywhere short of its 28 bytes claims nothing", short_claims_nothing(&f, f.len, true));
	arp(&f, GUEST, 1, GUEST, "10.79.0.50", "10.79.0.50");
	CHECK("a gratuitous ARP request from the guest claims its address", claims(&f, true, "10.79.0.50", NW_ARP));
	arp(&f, GUEST, 1, GUEST, "0.0.0.0", "10.79.0.2");
	CHECK("an ARP probe (sender 0.0.0.0) claims nothing", claims_nothing(&f, true));
	arp(&f, GUEST, 1, GUEST, "224.0.0.1", "10.79.0.2");
	CHECK("an ARP from a multicast sender address claims nothing", claims_nothing(&f, true));
	arp(&f, GUEST, 1, GUEST, "127.0.0.1", "10.79.0.2");
	CHECK("an ARP from a loopback sender address claims nothing", claims_nothing(&f, true));
	arp(&f, OTHER, 1, OTHER, "10.79.0.99", "10.79.0.99");
	CHECK("an ARP from a forged source MAC claims nothing", claims_nothing(&f, true));
	arp(&f, GUEST, 1, OTHER, "10.79.0.99", "10.79.0.99");
	CHECK("an ARP whose sender hardware address is another's claims nothing", claims_nothing(&f, true));
	arp(&f, OTHER, 1, GUEST, "10.79.0.99", "10.79.0.99");
	CHECK("an ARP naming the guest as sender from another Ethernet source claims nothing",
	      claims_nothing(&f, true));
	arp(&f, GUEST, 2, GUEST, "10.79.0.2", "10.79.0.1");
	f.b[18] = 8;                                         /* hlen 8: not Ethernet/IPv4 */
	CHECK("an ARP with another hardware length claims nothing", claims_nothing(&f, true));
	/* The same reply with an 802.1Q tag. */
	{
		struct frame t;

		arp(&f, GUEST, 2, GUEST, "10.79.0.2", "10.79.0.1");
		memcpy(t.b, f.b, 12);
		t.b[12] = 0x81; t.b[13] = 0x00; t.b[14] = 0x00; t.b[15] = 0x05;
		memcpy(t.b + 16, f.b + 12, f.len - 12);
		t.len = f.len + 4;
		CHECK("a VLAN-tagged ARP from the guest claims its address", claims(&t, true, "10.79.0.2", NW_ARP));
		CHECK("a VLAN-tagged ARP cut short claims nothing", short_claims_nothing(&t, t.len, true));
	}

	/* DHCP. */
	dhcp(&f, GUEST, "10.79.0.100", 5);
	CHECK("a DHCP ACK toward the guest for its MAC claims yiaddr", claims(&f, false, "10.79.0.100", NW_DHCP));
	CHECK("a DHCP ACK the guest sent (as a server) claims nothing", claims_nothing(&f, true));
	full = f.len - 1;                                    /* the end option is not needed */
	CHECK("the ACK without its end option still counts", parse(&f, full, false).claim_valid);
	CHECK("a DHCP ACK cut before its message type claims nothing", short_claims_nothing(&f, full, false));
	CHECK("a DHCP ACK's peer is the server", peer_is(&f, false, "10.79.0.254"));
	dhcp(&f, GUEST, "10.79.0.100", 2);
	CHECK("a DHCP OFFER claims nothing", claims_nothing(&f, false));
	dhcp(&f, OTHER, "10.79.0.101", 5);
	CHECK("a DHCP ACK for another client's MAC claims nothing", claims_nothing(&f, false));
	dhcp(&f, GUEST, "0.0.0.0", 5);
	CHECK("a DHCP ACK with yiaddr 0.0.0.0 claims nothing", claims_nothing(&f, false));
	dhcp(&f, GUEST, "10.79.0.100", 5);
	f.b[14 + 20 + 1] = 69;                               /* UDP source port 69, not 67 */
	CHECK("a BOOTP-shaped reply not from port 67 claims nothing", claims_nothing(&f, false));
	dhcp(&f, GUEST, "10.79.0.100", 5);
	f.b[14 + 6] = 0x20;                                  /* more fragments, */
	f.b[14 + 7] = 0x01;                                  /* at offset 8: a later fragment */
	CHECK("a later IPv4 fragment that looks like an ACK claims nothing", claims_nothing(&f, false));
	dhcp(&f, GUEST, "10.79.0.100", 5);
	f.b[14 + 28 + 242] = 200;                            /* the pad, then option 53 of length 200 */
	CHECK("a DHCP option running past the capture claims nothing", claims_nothing(&f, false));

	/* IPv6 neighbour discovery. */
	nd(&f, GUEST, 135, "fe80::4c:ff:fe00:2001", "ff02::1:ff00:1", "fe80::1", 255);
	CHECK("a neighbour solicitation from the guest claims its source",
	      claims(&f, true, "fe80::4c:ff:fe00:2001", NW_ND));
	CHECK("a neighbour solicitation cut short claims nothing", short_claims_nothing(&f, f.len, true));
	CHECK("a neighbour solicitation toward the guest claims nothing", claims_nothing(&f, false));
	nd(&f, GUEST, 135, "::", "ff02::1:ff00:2001", "fe80::4c:ff:fe00:2001", 255);
	CHECK("duplicate address detection (source ::) claims nothing yet", claims_nothing(&f, true));
	nd(&f, GUEST, 136, "fe80::4c:ff:fe00:2001", "ff02::1", "2001:db8::2", 255);
	CHECK("a neighbour advertisement from the guest claims its target", claims(&f, true, "2001:db8::2", NW_ND));
	CHECK("a neighbour advertisement cut short claims nothing", short_claims_nothing(&f, f.len, true));
	nd(&f, GUEST, 136, "fe80::4c:ff:fe00:2001", "ff02::1", "ff02::1", 255);
	CHECK("an advertisement for a multicast target claims nothing", claims_nothing(&f, true));
	nd(&f, OTHER, 136, "fe80::4c:ff:fe00:2003", "ff02::1", "2001:db8::2", 255);
	CHECK("a neighbour advertisement from a forged source MAC claims nothing", claims_nothing(&f, true));
	nd(&f, GUEST, 136, "fe80::4c:ff:fe00:2001", "ff02::1", "2001:db8::2", 64);
	CHECK("neighbour discovery with a hop limit below 255 (routed) claims nothing", claims_nothing(&f, true));
	nd(&f, GUEST, 128, "fe80::4c:ff:fe00:2001", "fe80::1", "2001:db8::2", 255);
	CHECK("an ICMPv6 echo claims nothing", claims_nothing(&f, true));
	CHECK("an IPv6 packet from the guest has its destination as peer", peer_is(&f, true, "fe80::1"));
	CHECK("an IPv6 packet toward the guest has its source as peer",
	      peer_is(&f, false, "fe80::4c:ff:fe00:2001"));

	/* Plain IPv4: a peer, no claim. */
	eth(&f, OTHER, GUEST, 0x0800);
	ipv4(&f, "10.79.0.2", "10.79.0.1", 1, 8);
	zeros(&f, 8);
	CHECK("an IPv4 packet from the guest claims nothing", claims_nothing(&f, true));
	CHECK("an IPv4 packet from the guest has its destination as peer", peer_is(&f, true, "10.79.0.1"));
	CHECK("an IPv4 packet toward the guest has its source as peer", peer_is(&f, false, "10.79.0.2"));
	CHECK("an IPv4 header cut short gives no peer", !parse(&f, 14 + 19, true).peer_valid);

	/* Nothing at all. */
	CHECK("an empty capture claims nothing", !parse(&f, 0, true).claim_valid && !parse(&f, 0, true).peer_valid);
	CHECK("a lone Ethernet header claims nothing", !parse(&f, 14, true).claim_valid);
	nw_addr_format(&none, buf, sizeof(buf));
	CHECK("no address formats as -", strcmp(buf, "-") == 0);
	UNIT_EXIT();
}
