/* A network's nftables rules (src/lib/net/netfilter.c): the transaction's text
 * per mode word for word, and the names, bridges and subnets that must
 * never reach it.
 *
 * With arguments it is the driver of tests/integ/netfilter.sh, which has
 * no `lodge network-create` to call (that is network.c's; this tests the
 * rules alone):
 *   test-lib-netfilter add NAME BRIDGE A.B.C.D/P nat|routed|isolated
 *   test-lib-netfilter del NAME
 *   test-lib-netfilter present NAME      (prints 1 or 0)
 *   test-lib-netfilter forward-on        (prints 1 if it turned it on, else 0)
 * each printing libnftables' reason and exiting 1 on failure. */
#include "netfilter-rules.h"
#include "schema.h"
#include "unit.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mode_words[] = { [LODGE_NET_NAT] = "nat", [LODGE_NET_ROUTED] = "routed",
					  [LODGE_NET_ISOLATED] = "isolated" };

static int driver(int argc, char **argv)
{
	struct netfilter_net n = { 0 };
	struct lodge_err err = { .msg = "" };
	char cidr[32], *slash;
	unsigned m;
	int rc = -1;

	if (argc == 6 && !strcmp(argv[1], "add")) {
		n.name = argv[2];
		n.bridge = argv[3];
		snprintf(cidr, sizeof(cidr), "%s", argv[4]);
		if (!(slash = strchr(cidr, '/')) || (*slash = 0, inet_pton(AF_INET, cidr, &n.subnet) != 1)) {
			fprintf(stderr, "bad subnet %s\n", argv[4]);
			return 2;
		}
		n.prefix = (unsigned)atoi(slash + 1);
		for (m = 0; m < sizeof(mode_words) / sizeof(mode_words[0]); m++)
			if (!strcmp(argv[5], mode_words[m]))
				n.mode = (enum lodge_net_mode)m;
		rc = netfilter_net_add(&n, &err);
	} else if (argc == 3 && !strcmp(argv[1], "del")) {
		rc = netfilter_net_del(argv[2], &err);
	} else if (argc == 3 && !strcmp(argv[1], "present")) {
		if ((rc = netfilter_net_present(argv[2], &err)) >= 0)
			printf("%d\n", rc);
	} else if (argc == 2 && !strcmp(argv[1], "forward-on")) {
		if ((rc = netfilter_ip_forward_on(&err)) >= 0)
			printf("%d\n", rc);
	} else {
		fprintf(stderr, "usage: see tests/unit/test-lib-netfilter.c\n");
		return 2;
	}
	if (rc < 0) {
		fprintf(stderr, "%s (%s)\n", err.msg, strerror(-rc));
		return 1;
	}
	return 0;
}

static struct netfilter_net net(const char *name, const char *bridge, const char *addr, unsigned prefix,
				enum lodge_net_mode mode)
{
	struct netfilter_net n = { .name = name, .bridge = bridge, .prefix = prefix, .mode = mode };

	inet_pton(AF_INET, addr, &n.subnet);
	return n;
}

/* The add transaction's text for n, or "" with err's words. */
static char *add_text(struct netfilter_net n, struct lodge_err *err, int *rc)
{
	char *text;

	*rc = netfilter_add_text(&n, &text, err);
	return text ? text : strdup("");
}

static const char nat_text[] =
	"add table inet lodge\n"
	"add chain inet lodge web_input { type filter hook input priority filter; policy accept; }\n"
	"flush chain inet lodge web_input\n"
	"add rule inet lodge web_input iifname \"lnbr-web\" udp dport 67 accept\n"
	"add rule inet lodge web_input iifname \"lnbr-web\" udp dport 53 accept\n"
	"add rule inet lodge web_input iifname \"lnbr-web\" tcp dport 53 accept\n"
	"add chain inet lodge web_forward { type filter hook forward priority filter; policy accept; }\n"
	"flush chain inet lodge web_forward\n"
	"add rule inet lodge web_forward iifname \"lnbr-web\" ip saddr 10.77.0.0/24 accept\n"
	"add rule inet lodge web_forward iifname \"lnbr-web\" oifname \"lnbr-web\" accept\n"
	"add rule inet lodge web_forward oifname \"lnbr-web\" ip daddr 10.77.0.0/24 ct state established,related accept\n"
	"add rule inet lodge web_forward iifname \"lnbr-web\" counter drop\n"
	"add rule inet lodge web_forward oifname \"lnbr-web\" counter drop\n"
	"add chain inet lodge web_postrouting { type nat hook postrouting priority srcnat; policy accept; }\n"
	"flush chain inet lodge web_postrouting\n"
	"add rule inet lodge web_postrouting ip saddr 10.77.0.0/24 ip daddr 224.0.0.0/24 return\n"
	"add rule inet lodge web_postrouting ip saddr 10.77.0.0/24 ip daddr 255.255.255.255 return\n"
	"add rule inet lodge web_postrouting ip saddr 10.77.0.0/24 ip daddr != 10.77.0.0/24 oifname != \"lnbr-web\" "
	"meta l4proto tcp masquerade to :1024-65535\n"
	"add rule inet lodge web_postrouting ip saddr 10.77.0.0/24 ip daddr != 10.77.0.0/24 oifname != \"lnbr-web\" "
	"meta l4proto udp masquerade to :1024-65535\n"
	"add rule inet lodge web_postrouting ip saddr 10.77.0.0/24 ip daddr != 10.77.0.0/24 oifname != \"lnbr-web\" "
	"masquerade\n";

static const char routed_text[] =
	"add table inet lodge\n"
	"add chain inet lodge lab-2_input { type filter hook input priority filter; policy accept; }\n"
	"flush chain inet lodge lab-2_input\n"
	"add rule inet lodge lab-2_input iifname \"br.lab\" udp dport 67 accept\n"
	"add rule inet lodge lab-2_input iifname \"br.lab\" udp dport 53 accept\n"
	"add rule inet lodge lab-2_input iifname \"br.lab\" tcp dport 53 accept\n"
	"add chain inet lodge lab-2_forward { type filter hook forward priority filter; policy accept; }\n"
	"flush chain inet lodge lab-2_forward\n"
	"add rule inet lodge lab-2_forward iifname \"br.lab\" ip saddr 192.168.128.0/17 accept\n"
	"add rule inet lodge lab-2_forward iifname \"br.lab\" oifname \"br.lab\" accept\n"
	"add rule inet lodge lab-2_forward oifname \"br.lab\" ip daddr 192.168.128.0/17 accept\n"
	"add rule inet lodge lab-2_forward iifname \"br.lab\" counter drop\n"
	"add rule inet lodge lab-2_forward oifname \"br.lab\" counter drop\n"
	"add chain inet lodge lab-2_postrouting { type nat hook postrouting priority srcnat; policy accept; }\n"
	"flush chain inet lodge lab-2_postrouting\n"
	"delete chain inet lodge lab-2_postrouting\n";

static const char isolated_text[] =
	"add table inet lodge\n"
	"add chain inet lodge Q_input { type filter hook input priority filter; policy accept; }\n"
	"flush chain inet lodge Q_input\n"
	"add rule inet lodge Q_input iifname \"q0\" udp dport 67 accept\n"
	"add rule inet lodge Q_input iifname \"q0\" udp dport 53 accept\n"
	"add rule inet lodge Q_input iifname \"q0\" tcp dport 53 accept\n"
	"add chain inet lodge Q_forward { type filter hook forward priority filter; policy accept; }\n"
	"flush chain inet lodge Q_forward\n"
	"add rule inet lodge Q_forward iifname \"q0\" oifname \"q0\" accept\n"
	"add rule inet lodge Q_forward iifname \"q0\" counter drop\n"
	"add rule inet lodge Q_forward oifname \"q0\" counter drop\n"
	"add chain inet lodge Q_postrouting { type nat hook postrouting priority srcnat; policy accept; }\n"
	"flush chain inet lodge Q_postrouting\n"
	"delete chain inet lodge Q_postrouting\n";

static void check_text(const char *what, struct netfilter_net n, const char *want)
{
	struct lodge_err err = { .msg = "" };
	char *text;
	int rc;

	text = add_text(n, &err, &rc);
	CHECK(what, rc == 0 && !strcmp(text, want));
	if (rc || strcmp(text, want))
		printf("# got (rc %d, %s):\n%s", rc, err.msg, text);
	free(text);
}

/* n is refused with -EINVAL, no text, and a reason containing why. */
static void check_refused(const char *what, struct netfilter_net n, const char *why)
{
	struct lodge_err err = { .msg = "" };
	char *text;
	int rc;

	text = add_text(n, &err, &rc);
	CHECK(what, rc == -EINVAL && !text[0] && strstr(err.msg, why) && !strchr(err.msg, '\n'));
	if (rc != -EINVAL || !strstr(err.msg, why))
		printf("# rc %d: %s\n", rc, err.msg);
	free(text);
}

static void check_del(void)
{
	struct lodge_err err = { .msg = "" };
	const char *both[] = { "web_input", "web_forward", "web_postrouting", "web_b_input", "web_b_forward", "webx_input" };
	const char *alone[] = { "web_input", "web_forward", "web_postrouting" };
	char *text;
	int rc;

	rc = netfilter_del_text("web", both, 6, &text, &err);
	CHECK("delete with other networks left: only its own chains go (not web_b's, not webx's)",
	      rc == 0 && text &&
		      !strcmp(text, "delete chain inet lodge web_input\ndelete chain inet lodge web_forward\n"
				    "delete chain inet lodge web_postrouting\n"));
	free(text);
	rc = netfilter_del_text("web", alone, 3, &text, &err);
	CHECK("delete of the last network: the table goes", rc == 0 && text &&
	      !strcmp(text, "delete table inet lodge\n"));
	free(text);
	rc = netfilter_del_text("lab", both, 6, &text, &err);
	CHECK("delete of a network with no chains: nothing to do", rc == 0 && !text);
	rc = netfilter_del_text("web_b", both, 6, &text, &err);
	CHECK("a network name with _ deletes its own two chains",
	      rc == 0 && text && !strcmp(text, "delete chain inet lodge web_b_input\ndelete chain inet lodge web_b_forward\n"));
	free(text);
	rc = netfilter_del_text("x; flush ruleset", alone, 3, &text, &err);
	CHECK("delete refuses a name that is nft syntax", rc == -EINVAL && !text && strstr(err.msg, "network name"));
}

int main(int argc, char **argv)
{
	struct netfilter_net n;

	if (argc > 1)
		return driver(argc, argv);

	check_text("NAT: libvirt's rules in order, masquerade out of any other interface",
		   net("web", "lnbr-web", "10.77.0.0", 24, LODGE_NET_NAT), nat_text);
	check_text("routed: the same forward without masquerade, new traffic in accepted, no postrouting chain",
		   net("lab-2", "br.lab", "192.168.128.0", 17, LODGE_NET_ROUTED), routed_text);
	check_text("isolated: DHCP and DNS to the host, nothing forwarded in or out",
		   net("Q", "q0", "172.16.0.0", 12, LODGE_NET_ISOLATED), isolated_text);

	check_refused("a name with nft syntax is refused",
		      net("a;flush ruleset", "br0", "10.0.0.0", 8, LODGE_NET_NAT), "network name");
	check_refused("a name with a brace is refused", net("a{", "br0", "10.0.0.0", 8, LODGE_NET_NAT), "network name");
	check_refused("a name with a space is refused", net("a b", "br0", "10.0.0.0", 8, LODGE_NET_NAT), "network name");
	check_refused("a name starting with a digit is refused (nft reads it as a number)",
		      net("1net", "br0", "10.0.0.0", 8, LODGE_NET_NAT), "network name");
	{
		struct netfilter_net e = net("a\033]0;owned\007", "br0", "10.0.0.0", 8, LODGE_NET_NAT);
		struct lodge_err err;
		char *t;

		CHECK("a refused name's control bytes are not in the message",
		      netfilter_add_text(&e, &t, &err) == -EINVAL && !t && !strchr(err.msg, '\033') &&
			      strstr(err.msg, "'a?]0;owned?'"));
	}
	check_refused("an empty name is refused", net("", "br0", "10.0.0.0", 8, LODGE_NET_NAT), "network name");
	check_refused("a name of 32 characters is refused",
		      net("abcdefghijabcdefghijabcdefghijab", "br0", "10.0.0.0", 8, LODGE_NET_NAT), "network name");
	n = net("abcdefghijabcdefghijabcdefghija", "br0", "10.0.0.0", 8, LODGE_NET_NAT);
	{
		struct lodge_err err;
		char *t;

		CHECK("a name of 31 characters is written", netfilter_add_text(&n, &t, &err) == 0 && t);
		free(t);
	}
	check_refused("a bridge with a quote is refused",
		      net("web", "br\" accept #", "10.0.0.0", 8, LODGE_NET_NAT), "bridge name");
	check_refused("a bridge with nft's wildcard is refused", net("web", "br*", "10.0.0.0", 8, LODGE_NET_NAT),
		      "bridge name");
	check_refused("a bridge of 16 characters is refused",
		      net("web", "abcdefghijklmnop", "10.0.0.0", 8, LODGE_NET_NAT), "bridge name");
	check_refused("a bridge named .. is refused", net("web", "..", "10.0.0.0", 8, LODGE_NET_NAT), "bridge name");
	check_refused("a subnet with host bits is refused", net("web", "br0", "10.77.0.1", 24, LODGE_NET_NAT),
		      "host bits");
	check_refused("a /31 is refused", net("web", "br0", "10.77.0.0", 31, LODGE_NET_NAT), "prefix");
	check_refused("a /0 is refused", net("web", "br0", "0.0.0.0", 0, LODGE_NET_NAT), "prefix");
	check_refused("an unknown mode is refused", net("web", "br0", "10.77.0.0", 24, (enum lodge_net_mode)7),
		      "mode");
	check_del();

	CHECK("the name rule: letters, digits, _ and -", network_name_valid("a-b_C9"));
	CHECK("the name rule: no dot", !network_name_valid("a.b"));
	CHECK("the bridge rule: a dot is an interface's", ifname_valid("br.lab"));
	UNIT_EXIT();
}
