/* A minimal DHCP client (RFC 2131): DISCOVER, OFFER, REQUEST, ACK, from
 * 0.0.0.0 to the broadcast address, with the broadcast flag set so the
 * server answers by broadcast too (Mini-OS has no address to be sent to
 * yet).  No renewal: a lease lasts as long as the guest does. */
#include "io.h"
#include "minios.h"
#include "net.h"

#define DHCP_SERVER_PORT 67
#define DHCP_CLIENT_PORT 68
#define DHCP_COOKIE      0x63825363u
#define DHCP_MSG_LEN     300          /* BOOTP's minimum, options included */
#define DHCP_TRIES       3
#define DHCP_WAIT_MS     2000

enum { DHCPDISCOVER = 1, DHCPOFFER = 2, DHCPREQUEST = 3, DHCPACK = 5, DHCPNAK = 6 };
enum { OPT_PAD = 0, OPT_MASK = 1, OPT_ROUTER = 3, OPT_DNS = 6, OPT_REQ_IP = 50, OPT_TYPE = 53, OPT_SERVER = 54,
       OPT_PARAMS = 55, OPT_END = 255 };

/* What the last reply for our transaction said. */
static struct {
	uint32_t xid;
	int waiting_for;               /* DHCPOFFER, or DHCPACK (a NAK answers it too) */
	volatile int type;             /* what came; 0: nothing yet */
	uint32_t yiaddr, server, mask, router, dns;
} reply;

void dhcp_input(const uint8_t *m, unsigned len)
{
	const uint8_t *mac = net_mac();
	unsigned i = 240;
	int type = 0;
	uint32_t server = 0, mask = 0, router = 0, dns = 0;

	if (len < 240 || m[0] != 2 || be32(m + 4) != reply.xid || memcmp(m + 28, mac, 6) ||
	    be32(m + 236) != DHCP_COOKIE)
		return;
	while (i < len && m[i] != OPT_END) {
		if (m[i] == OPT_PAD) {
			i++;
			continue;
		}
		if (i + 1 >= len || i + 2 + m[i + 1] > len)
			return;
		if (m[i] == OPT_TYPE && m[i + 1] == 1)
			type = m[i + 2];
		else if (m[i] == OPT_SERVER && m[i + 1] == 4)
			server = be32(m + i + 2);
		else if (m[i] == OPT_MASK && m[i + 1] == 4)
			mask = be32(m + i + 2);
		else if (m[i] == OPT_ROUTER && m[i + 1] >= 4)
			router = be32(m + i + 2);      /* the first of the list */
		else if (m[i] == OPT_DNS && m[i + 1] >= 4)
			dns = be32(m + i + 2);
		i += 2 + m[i + 1];
	}
	/* The first OFFER while we wait for one; an ACK or NAK only from the
	 * server we asked. */
	if (reply.type || (reply.waiting_for == DHCPOFFER ? type != DHCPOFFER :
			   (type != DHCPACK && type != DHCPNAK) || server != reply.server))
		return;
	reply.yiaddr = be32(m + 16);
	reply.server = server;
	reply.mask = mask ? mask : 0xffffff00u;
	reply.router = router;
	reply.dns = dns;
	reply.type = type;
}

static int send_msg(int type)
{
	uint8_t m[DHCP_MSG_LEN];
	unsigned o = 240;

	memset(m, 0, sizeof(m));
	m[0] = 1;                          /* BOOTREQUEST */
	m[1] = 1;                          /* Ethernet */
	m[2] = 6;
	put_be32(m + 4, reply.xid);
	put_be16(m + 10, 0x8000);          /* broadcast flag */
	memcpy(m + 28, net_mac(), 6);
	put_be32(m + 236, DHCP_COOKIE);
	m[o++] = OPT_TYPE; m[o++] = 1; m[o++] = type;
	if (type == DHCPREQUEST) {
		m[o++] = OPT_REQ_IP; m[o++] = 4; put_be32(m + o, reply.yiaddr); o += 4;
		m[o++] = OPT_SERVER; m[o++] = 4; put_be32(m + o, reply.server); o += 4;
	}
	m[o++] = OPT_PARAMS; m[o++] = 3; m[o++] = OPT_MASK; m[o++] = OPT_ROUTER; m[o++] = OPT_DNS;
	m[o++] = OPT_END;
	return net_udp_broadcast(0, DHCP_CLIENT_PORT, DHCP_SERVER_PORT, m, sizeof(m));
}

static int got_reply(void *arg) { return reply.type != 0; }

static unsigned prefix_len(uint32_t mask)
{
	unsigned n = 0;

	while (mask & 0x80000000u) {
		n++;
		mask <<= 1;
	}
	return n;
}

int dhcp_run(void)
{
	unsigned try;

	if (!net_is_up()) {
		printf("dhcp: no interface\n");
		return -1;
	}
	for (try = 0; try < DHCP_TRIES; try++) {
		reply.xid = (uint32_t)(time_ns() ^ (time_ns() >> 32)) + try;
		reply.type = 0;
		reply.server = 0;
		reply.waiting_for = DHCPOFFER;
		if (send_msg(DHCPDISCOVER) || !net_wait_ms(DHCP_WAIT_MS, got_reply, NULL))
			continue;
		reply.waiting_for = DHCPACK;
		reply.type = 0;
		if (send_msg(DHCPREQUEST) || !net_wait_ms(DHCP_WAIT_MS, got_reply, NULL))
			continue;
		if (reply.type == DHCPNAK) {
			print_ip("dhcp: NAK from ", reply.server);
			printf("\n");
			continue;
		}
		net_set_addr(reply.yiaddr, reply.mask);
		net_set_gateway(reply.router);
		dns_set_server(reply.dns);
		print_ip("dhcp: lease ", reply.yiaddr);
		printf("/%u", prefix_len(reply.mask));
		print_ip(" from ", reply.server);
		printf("\n");
		if (reply.router) {
			print_ip("dhcp: router ", reply.router);
			printf("\n");
		}
		return 0;
	}
	printf("dhcp: no lease after %u tries\n", DHCP_TRIES);
	return -1;
}

static void cmd_dhcp(int argc, char **argv) { dhcp_run(); }

static const struct command dhcp_commands[] = {
	{ "dhcp", "", "take an address from a DHCP server", cmd_dhcp },
};

void dhcp_init(void)
{
	shell_register(dhcp_commands, 1);
}
