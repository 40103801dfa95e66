#include "netwatch/frame.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define ETH_HLEN      14
#define ETH_P_ARP     0x0806
#define ETH_P_IP      0x0800
#define ETH_P_IPV6    0x86dd
#define ETH_P_VLAN    0x8100
#define IPPROTO_UDP_  17
#define IPPROTO_ICMP6 58
#define DHCP_SERVER   67
#define DHCP_CLIENT   68
#define DHCP_ACK      5
#define DHCP_COOKIE   0x63825363u
#define ND_NS         135
#define ND_NA         136

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }

static void set_v4(struct nw_addr *a, const uint8_t *p)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	memcpy(a->bytes, p, 4);
}

static void set_v6(struct nw_addr *a, const uint8_t *p)
{
	a->family = AF_INET6;
	memcpy(a->bytes, p, 16);
}

/* A unicast address a host may own: not 0.0.0.0, 255.255.255.255,
 * multicast (224/4) or loopback (127/8). */
static bool v4_ownable(const uint8_t *p)
{
	uint32_t v = be32(p);

	return v != 0 && v != 0xffffffffu && (v >> 28) != 0xe && (v >> 24) != 127;
}

/* Not ::, not multicast (ff00::/8), not ::1. */
static bool v6_ownable(const uint8_t *p)
{
	static const uint8_t zero[16], loop[16] = { [15] = 1 };

	return memcmp(p, zero, 16) && memcmp(p, loop, 16) && p[0] != 0xff;
}

static void claim(struct nw_frame *out, enum nw_how how)
{
	out->claim_valid = true;
	out->how = how;
}

static void parse_arp(const uint8_t *arp, size_t len, bool from_guest, const uint8_t *eth_src,
		      const uint8_t *mac, struct nw_frame *out)
{
	/* Ethernet/IPv4 ARP: htype 1, ptype 0x0800, hlen 6, plen 4. */
	if (!from_guest || len < 28 || be16(arp) != 1 || be16(arp + 2) != ETH_P_IP || arp[4] != 6 ||
	    arp[5] != 4 || memcmp(eth_src, mac, 6) || memcmp(arp + 8, mac, 6) || !v4_ownable(arp + 14))
		return;
	set_v4(&out->claim, arp + 14);
	claim(out, NW_ARP);
}

/* A DHCP ACK (option 53 = 5) for chaddr mac, within what was captured. */
static void parse_dhcp(const uint8_t *bootp, size_t len, const uint8_t *mac, struct nw_frame *out)
{
	size_t i = 240;

	if (len < 240 || bootp[0] != 2 || bootp[1] != 1 || bootp[2] != 6 || memcmp(bootp + 28, mac, 6) ||
	    be32(bootp + 236) != DHCP_COOKIE || !v4_ownable(bootp + 16))
		return;
	while (i < len && bootp[i] != 255) {
		if (bootp[i] == 0) {               /* pad */
			i++;
			continue;
		}
		if (i + 1 >= len || i + 2 + bootp[i + 1] > len)
			return;
		if (bootp[i] == 53 && bootp[i + 1] == 1) {
			if (bootp[i + 2] == DHCP_ACK) {
				set_v4(&out->claim, bootp + 16);
				claim(out, NW_DHCP);
			}
			return;
		}
		i += 2 + bootp[i + 1];
	}
}

static void parse_ipv4(const uint8_t *ip, size_t len, bool from_guest, const uint8_t *mac,
		       struct nw_frame *out)
{
	size_t ihl;

	if (len < 20 || (ip[0] >> 4) != 4 || (ihl = (ip[0] & 15) * 4u) < 20)
		return;
	set_v4(&out->peer, from_guest ? ip + 16 : ip + 12);
	out->peer_valid = true;
	/* DHCP: UDP 67 to 68, not a later fragment. */
	if (!from_guest && ip[9] == IPPROTO_UDP_ && (be16(ip + 6) & 0x1fff) == 0 && len >= ihl + 8 &&
	    be16(ip + ihl) == DHCP_SERVER && be16(ip + ihl + 2) == DHCP_CLIENT)
		parse_dhcp(ip + ihl + 8, len - ihl - 8, mac, out);
}

static void parse_ipv6(const uint8_t *ip, size_t len, bool from_guest, const uint8_t *eth_src,
		       const uint8_t *mac, struct nw_frame *out)
{
	const uint8_t *icmp = ip + 40;

	if (len < 40 || (ip[0] >> 4) != 6)
		return;
	set_v6(&out->peer, from_guest ? ip + 24 : ip + 8);
	out->peer_valid = true;
	/* Neighbour discovery: ICMPv6 right after the fixed header (RFC 4861
	 * section 7.1.1: hop limit 255, so it came from the link itself). */
	if (!from_guest || memcmp(eth_src, mac, 6) || ip[6] != IPPROTO_ICMP6 || ip[7] != 255 || len < 40 + 24)
		return;
	if (icmp[0] == ND_NS && v6_ownable(ip + 8)) {
		set_v6(&out->claim, ip + 8);          /* its source; :: is DAD, no claim yet */
		claim(out, NW_ND);
	} else if (icmp[0] == ND_NA && v6_ownable(icmp + 8)) {
		set_v6(&out->claim, icmp + 8);        /* the target it answers for */
		claim(out, NW_ND);
	}
}

void nw_frame_parse(const uint8_t *f, size_t caplen, bool from_guest, const uint8_t guest_mac[6],
		    struct nw_frame *out)
{
	size_t off = ETH_HLEN;
	uint16_t type;

	memset(out, 0, sizeof(*out));
	if (caplen < ETH_HLEN)
		return;
	type = be16(f + 12);
	if (type == ETH_P_VLAN && caplen >= ETH_HLEN + 4) {
		type = be16(f + 16);
		off += 4;
	}
	if (type == ETH_P_ARP)
		parse_arp(f + off, caplen - off, from_guest, f + 6, guest_mac, out);
	else if (type == ETH_P_IP)
		parse_ipv4(f + off, caplen - off, from_guest, guest_mac, out);
	else if (type == ETH_P_IPV6)
		parse_ipv6(f + off, caplen - off, from_guest, f + 6, guest_mac, out);
}

void nw_addr_format(const struct nw_addr *a, char *buf, size_t len)
{
	if (!a->family || !inet_ntop(a->family, a->bytes, buf, len))
		snprintf(buf, len, "-");
}
