/* A minimal DNS stub resolver (RFC 1035): `resolve NAME` asks the server
 * the DHCP lease named (option 6) for NAME's A record, by UDP, and prints
 * the first address of the answer, or why there is none.  Enough for a
 * test to see that a name resolves from inside a guest. */
#include "io.h"
#include "minios.h"
#include "net.h"

#define DNS_PORT     53
#define DNS_WAIT_MS  2000
#define DNS_TRIES    2
#define DNS_NAME_MAX 253
#define T_A          1
#define C_IN         1

static uint32_t server;

static struct {
	uint16_t id;
	volatile int done;             /* 1: an answer for id came */
	int rcode;
	uint32_t addr;                 /* 0: no A record in it */
} q;

void dns_set_server(uint32_t s) { server = s; }

/* Past a name in the message at off (labels, or a pointer ending it):
 * the offset after it, or 0 if it runs off the end. */
static unsigned skip_name(const uint8_t *m, unsigned len, unsigned off)
{
	while (off < len) {
		if ((m[off] & 0xc0) == 0xc0)
			return off + 2 <= len ? off + 2 : 0;
		if (m[off] == 0)
			return off + 1;
		off += 1 + m[off];
	}
	return 0;
}

void dns_input(uint32_t src, const uint8_t *m, unsigned len)
{
	unsigned off, an, i;

	if (len < 12 || src != server || be16(m) != q.id || !(m[2] & 0x80) || q.done)
		return;
	q.rcode = m[3] & 15;
	q.addr = 0;
	an = be16(m + 6);
	if (be16(m + 4) != 1 || !(off = skip_name(m, len, 12)) || off + 4 > len)
		goto done;
	off += 4;                          /* the question's type and class */
	for (i = 0; i < an; i++) {
		unsigned rdlen;

		if (!(off = skip_name(m, len, off)) || off + 10 > len)
			break;
		rdlen = be16(m + off + 8);
		if (off + 10 + rdlen > len)
			break;
		if (be16(m + off) == T_A && be16(m + off + 2) == C_IN && rdlen == 4) {
			q.addr = be32(m + off + 10);
			break;
		}
		off += 10 + rdlen;
	}
done:
	q.done = 1;
}

static int answered(void *arg) { return q.done; }

static void cmd_resolve(int argc, char **argv)
{
	uint8_t msg[12 + DNS_NAME_MAX + 2 + 4];
	const char *name = argc > 1 ? argv[1] : "", *p;
	unsigned o = 12, try;

	if (!*name || strlen(name) > DNS_NAME_MAX) {
		printf("usage: resolve NAME\n");
		return;
	}
	if (!server) {
		printf("resolve: no DNS server (the DHCP lease named none)\n");
		return;
	}
	memset(msg, 0, sizeof(msg));
	/* The name as labels: "g1.lodge" is 2 g 1 5 l o d g e 0. */
	for (p = name; *p;) {
		unsigned n = 0;

		while (p[n] && p[n] != '.')
			n++;
		if (n == 0 || n > 63) {
			printf("resolve: '%s' is not a name\n", name);
			return;
		}
		msg[o++] = (uint8_t)n;
		memcpy(msg + o, p, n);
		o += n;
		p += n + (p[n] == '.');
	}
	msg[o++] = 0;
	put_be16(msg + o, T_A);
	put_be16(msg + o + 2, C_IN);
	o += 4;
	for (try = 0; try < DNS_TRIES; try++) {
		q.id = (uint16_t)(time_ns() >> 10) ^ (uint16_t)try;
		q.done = 0;
		put_be16(msg, q.id);
		put_be16(msg + 2, 0x0100);         /* a standard query, recursion desired */
		put_be16(msg + 4, 1);
		if (net_udp_send(server, DNS_CLIENT_PORT, DNS_PORT, msg, o)) {
			print_ip("resolve: no route to the DNS server ", server);
			printf("\n");
			return;
		}
		if (net_wait_ms(DNS_WAIT_MS, answered, NULL))
			break;
	}
	if (!q.done)
		printf("resolve: %s: no answer\n", name);
	else if (q.addr) {
		printf("resolve: %s", name);
		print_ip(" is ", q.addr);
		printf("\n");
	} else
		printf("resolve: %s: not found (rcode %d)\n", name, q.rcode);
}

static const struct command dns_commands[] = {
	{ "resolve", "NAME", "look NAME's IPv4 address up in DNS (the lease's server)", cmd_resolve },
};

void dns_init(void)
{
	shell_register(dns_commands, 1);
}
