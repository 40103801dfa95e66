#include "lodge.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

static void fmt_mac(const uint8_t *m, char *out)
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static const struct { uint8_t proto, type; const char *name; } icmp_names[] = {
	{ 1, 0, "echo reply" }, { 1, 3, "unreachable" }, { 1, 8, "echo request" }, { 1, 11, "time exceeded" },
	{ 58, 128, "echo request" }, { 58, 129, "echo reply" }, { 58, 133, "router solicitation" },
	{ 58, 134, "router advertisement" }, { 58, 135, "neighbour solicitation" },
	{ 58, 136, "neighbour advertisement" },
};

static const char *icmp_name(unsigned proto, unsigned type)
{
	size_t i;

	for (i = 0; i < sizeof(icmp_names) / sizeof(icmp_names[0]); i++)
		if (icmp_names[i].proto == proto && icmp_names[i].type == type)
			return icmp_names[i].name;
	return NULL;
}

/* The transport: "ICMP echo request", "UDP 68 > 67", "TCP 22 > 40000 [S.]". */
static void transport(unsigned proto, const uint8_t *p, size_t n, char *out, size_t len)
{
	static const char tcp_flags[] = "FSRPAUEC";
	char flags[9] = "";
	unsigned i, k = 0;

	switch (proto) {
	case 1:
	case 58: {
		const char *name = n ? icmp_name(proto, p[0]) : NULL;

		if (!n) break;
		if (name)
			snprintf(out, len, "%s %s", proto == 1 ? "ICMP" : "ICMP6", name);
		else
			snprintf(out, len, "%s type %u", proto == 1 ? "ICMP" : "ICMP6", p[0]);
		return;
	}
	case 6:
		if (n < 14) break;
		for (i = 0; i < 8; i++)
			if (p[13] & (1u << i))
				flags[k++] = tcp_flags[i];
		flags[k] = '\0';
		snprintf(out, len, "TCP %u > %u [%s]", be16(p), be16(p + 2), flags);
		return;
	case 17:
		if (n < 4) break;
		snprintf(out, len, "UDP %u > %u%s", be16(p), be16(p + 2),
			 (be16(p) == 67 || be16(p) == 68) && (be16(p + 2) == 67 || be16(p + 2) == 68) ? " (DHCP)" : "");
		return;
	}
	snprintf(out, len, "protocol %u", proto);
}

void lodge_frame_line(const uint8_t *f, size_t caplen, size_t len, char *buf, size_t buflen)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], what[64], smac[18], dmac[18];
	uint16_t type;

	if (caplen < 14) {
		snprintf(buf, buflen, "runt frame, %zu bytes", len);
		return;
	}
	fmt_mac(f + 6, smac);
	fmt_mac(f, dmac);
	type = be16(f + 12);
	if (type == 0x0806 && caplen >= 42) {
		inet_ntop(AF_INET, f + 28, src, sizeof(src));
		inet_ntop(AF_INET, f + 38, dst, sizeof(dst));
		if (be16(f + 20) == 1)
			snprintf(buf, buflen, "%s > %s ARP who-has %s tell %s, %zu bytes", smac, dmac, dst, src, len);
		else
			snprintf(buf, buflen, "%s > %s ARP reply %s is-at %s, %zu bytes", smac, dmac, src, smac, len);
	} else if (type == 0x0800 && caplen >= 34 && (f[14] & 15) >= 5) {
		size_t ihl = (f[14] & 15) * 4u;

		inet_ntop(AF_INET, f + 26, src, sizeof(src));
		inet_ntop(AF_INET, f + 30, dst, sizeof(dst));
		transport(f[23], f + 14 + ihl, caplen > 14 + ihl ? caplen - 14 - ihl : 0, what, sizeof(what));
		snprintf(buf, buflen, "%s > %s %s, %zu bytes", src, dst, what, len);
	} else if (type == 0x86dd && caplen >= 54) {
		inet_ntop(AF_INET6, f + 22, src, sizeof(src));
		inet_ntop(AF_INET6, f + 38, dst, sizeof(dst));
		transport(f[20], f + 54, caplen - 54, what, sizeof(what));
		snprintf(buf, buflen, "%s > %s %s, %zu bytes", src, dst, what, len);
	} else {
		snprintf(buf, buflen, "%s > %s ethertype 0x%04x, %zu bytes", smac, dmac, type, len);
	}
}
