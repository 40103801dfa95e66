/* A network's model (src/lib/net/network.c): the subnet and range a user types,
 * the name rule, and NAME.cfg read through its key table with FILE:LINE:
 * KEY messages.  Nothing here needs root: the files go under a --root of
 * the test's own and nothing is started. */
#include "config-form.h"
#include "network.h"
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char root[] = "/tmp/lodge-test-network.XXXXXX";
static struct lodge lg;

static void test_cidr(void)
{
	static const char *const bad[] = { "10.77.0/24", "10.77.0.0", "10.77.0.0/", "10.77.0.0/24x", "10.77.0.0/024",
					   " 10.77.0.0/24", "10.77.0.0/-1", "10.077.0.0/24", "ten/24", "" };
	char why[256], name[128];
	uint32_t net;
	unsigned prefix, i;

	CHECK("10.77.0.0/24 is a subnet", net_parse_cidr("10.77.0.0/24", &net, &prefix, why, sizeof(why)) == 0 &&
						  net == 0x0a4d0000u && prefix == 24);
	CHECK("192.168.4.0/30 is the smallest", net_parse_cidr("192.168.4.0/30", &net, &prefix, why, sizeof(why)) == 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(name, sizeof(name), "'%s' is not a subnet", bad[i]);
		CHECK(name, net_parse_cidr(bad[i], &net, &prefix, why, sizeof(why)) == -EINVAL &&
			    strstr(why, "not a subnet"));
	}
	CHECK("/31 is out of range", net_parse_cidr("10.0.0.0/31", &net, &prefix, why, sizeof(why)) == -ERANGE &&
				     strstr(why, "/8 to /30"));
	CHECK("/7 is out of range", net_parse_cidr("10.0.0.0/7", &net, &prefix, why, sizeof(why)) == -ERANGE);
	CHECK("host bits set: the message names the network",
	      net_parse_cidr("10.77.0.9/24", &net, &prefix, why, sizeof(why)) == -EINVAL &&
	      strstr(why, "the network is 10.77.0.0/24"));
}

static void test_range(void)
{
	uint32_t net = 0x0a4d0000u, lo, hi;    /* 10.77.0.0/24 */
	char why[256];

	CHECK("a range inside the subnet", net_parse_range("10.77.0.50-10.77.0.99", net, 24, &lo, &hi, why,
							   sizeof(why)) == 0 && lo == net + 50 && hi == net + 99);
	CHECK("one address is a range", net_parse_range("10.77.0.2-10.77.0.2", net, 24, &lo, &hi, why, sizeof(why)) == 0);
	CHECK("the gateway is not in a range",
	      net_parse_range("10.77.0.1-10.77.0.9", net, 24, &lo, &hi, why, sizeof(why)) == -ERANGE &&
	      strstr(why, "(10.77.0.2-10.77.0.254)"));
	CHECK("the broadcast address is not in a range",
	      net_parse_range("10.77.0.2-10.77.0.255", net, 24, &lo, &hi, why, sizeof(why)) == -ERANGE);
	CHECK("a range of another subnet",
	      net_parse_range("10.77.1.2-10.77.1.9", net, 24, &lo, &hi, why, sizeof(why)) == -ERANGE);
	CHECK("a range that ends before it starts",
	      net_parse_range("10.77.0.9-10.77.0.2", net, 24, &lo, &hi, why, sizeof(why)) == -EINVAL &&
	      strstr(why, "ends before"));
	CHECK("a range without a dash", net_parse_range("10.77.0.9", net, 24, &lo, &hi, why, sizeof(why)) == -EINVAL);
	CHECK("a range of words", net_parse_range("a-b", net, 24, &lo, &hi, why, sizeof(why)) == -EINVAL);
}

static void test_names(void)
{
	CHECK("nat0 is a network name", lodge_network_name_ok("nat0"));
	CHECK("a name starts with a letter", !lodge_network_name_ok("0nat") && !lodge_network_name_ok("-x"));
	CHECK("nft syntax is no name", !lodge_network_name_ok("x;flush") && !lodge_network_name_ok("a b") &&
					       !lodge_network_name_ok("a\"b") && !lodge_network_name_ok("a.b"));
	CHECK("31 characters, not 32", lodge_network_name_ok("abcdefghijabcdefghijabcdefghija") &&
					   !lodge_network_name_ok("abcdefghijabcdefghijabcdefghijab"));
	CHECK("web-1 is one DNS label", net_dns_label_ok("web-1") && !net_dns_label_ok("web_1") &&
					     !net_dns_label_ok("a.b") && !net_dns_label_ok("-a"));
}

/* Write networks/NAME.cfg with text; lodge_network_get's rc, err in *msg. */
static int file_get(const char *name, const char *text, struct lodge_network *n, struct lodge_err *err)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/etc/lodge/networks/%s.cfg", root, name);
	if (!(f = fopen(path, "w")))
		return -errno;
	fputs(text, f);
	fclose(f);
	err->msg[0] = '\0';
	return lodge_network_get(&lg, name, n, err);
}

static void expect(const char *label, const char *name, const char *text, const char *want)
{
	struct lodge_network n;
	struct lodge_err err;
	char full[LODGE_ERR_MAX + 512];
	int rc = file_get(name, text, &n, &err);

	if (rc && strstr(err.msg, want)) {
		CHECK(label, 1);
	} else {
		snprintf(full, sizeof(full), "%s (got %d: '%s', want '%s')", label, rc, err.msg, want);
		CHECK(full, 0);
	}
}

static void test_files(void)
{
	struct lodge_network n;
	struct lodge_err err;
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/etc/lodge/networks", root);
	mkdir(dir, 0755);
	CHECK("a file with a subnet alone reads",
	      file_get("nat0", "subnet = \"10.77.0.0/24\"\n", &n, &err) == 0 && n.mode == LODGE_NET_NAT &&
	      !strcmp(n.gateway, "10.77.0.1") && !strcmp(n.range_start, "10.77.0.2") &&
	      !strcmp(n.range_end, "10.77.0.254") && !strcmp(n.bridge, "lnet-nat0") && !n.domain[0] && !n.autostart);
	CHECK("every key reads",
	      file_get("rt", "subnet = \"10.78.0.0/16\"\nmode = \"routed\"\ndhcp_range = \"10.78.1.1-10.78.1.9\"\n"
			     "domain = \"lab.example\"\nbridge = \"br-rt\"\nautostart = true\ndns_forward = 1\n",
		       &n, &err) == 0 &&
	      n.mode == LODGE_NET_ROUTED && !strcmp(n.range_start, "10.78.1.1") && !strcmp(n.domain, "lab.example") &&
	      !strcmp(n.bridge, "br-rt") && n.autostart && n.dns_forward && n.prefix == 16);
	expect("no subnet: FILE:LINE: KEY", "a1", "mode = \"nat\"\n", "a1.cfg:1: subnet:");
	expect("a bad mode names its line", "a2", "subnet = \"10.77.0.0/24\"\nmode = \"bridged\"\n",
	       "a2.cfg:2: mode: 'bridged' is not nat, routed or isolated");
	expect("a range outside the subnet names its line", "a3",
	       "subnet = \"10.77.0.0/24\"\n\ndhcp_range = \"10.76.0.2-10.76.0.9\"\n",
	       "a3.cfg:3: dhcp_range: DHCP range 10.76.0.2-10.76.0.9 is not within");
	expect("a malformed subnet", "a4", "subnet = \"10.77.0.0/33\"\n", "a4.cfg:1: subnet:");
	expect("a bridge with a quote", "a5", "subnet = \"10.77.0.0/24\"\nbridge = \"a'b\"\n",
	       "a5.cfg:2: bridge: 'a'b' is not an interface name");
	expect("a domain with a space", "a6", "subnet = \"10.77.0.0/24\"\ndomain = \"a b\"\n",
	       "a6.cfg:2: domain: 'a b' is not a DNS domain");
	expect("an unknown key", "a7", "subnet = \"10.77.0.0/24\"\nforward = 1\n", "a7.cfg:2: forward: unknown key");
	expect("a key set twice", "a8", "subnet = \"10.77.0.0/24\"\nsubnet = \"10.78.0.0/24\"\n", "a8.cfg:2: subnet:");
	expect("a name too long for its bridge, and no bridge given", "abcdefghijk", "subnet = \"10.77.0.0/24\"\n",
	       "too long for its bridge lnet-abcdefghijk");
	CHECK("... but with a bridge given it reads",
	      file_get("abcdefghijk", "subnet = \"10.77.0.0/24\"\nbridge = \"br7\"\n", &n, &err) == 0);
	CHECK("no file: no network named",
	      lodge_network_get(&lg, "none", &n, &err) == -ENOENT && strstr(err.msg, "no network named none"));
	CHECK("a bad name is refused before any path", lodge_network_get(&lg, "../x", &n, &err) == -EINVAL);
}

/* The create form's bridge field takes net:NETWORK for a vif on it. */
static void test_form(void)
{
	static struct domain_config dc;
	struct domain_form form = { .make_bridge = false };
	char why[512];
	int field;

	snprintf(form.value[FORM_BRIDGE], FORM_VALUE_MAX, FORM_NETWORK_PREFIX "nat0");
	CHECK("the form takes net:NETWORK for a network that exists",
	      domain_form_check(&form, FORM_BRIDGE, &lg.hc, why, sizeof(why)) == 0);
	snprintf(form.value[FORM_NAME], FORM_VALUE_MAX, "web");
	snprintf(form.value[FORM_KERNEL], FORM_VALUE_MAX, "/dev/null");
	CHECK("... its config a vif on it",
	      domain_form_to_config(&form, &lg.hc, true, &dc, NULL, &field, why, sizeof(why)) == 0 && dc.nvifs == 1 &&
	      !strcmp(dc.vifs[0].network, "nat0") && !dc.vifs[0].bridge[0]);
	snprintf(form.value[FORM_BRIDGE], FORM_VALUE_MAX, FORM_NETWORK_PREFIX "nonet");
	CHECK("net: of no network is refused with its name",
	      domain_form_check(&form, FORM_BRIDGE, &lg.hc, why, sizeof(why)) != 0 && strstr(why, "no network named nonet"));
}

int main(void)
{
	struct lodge_err err;
	char cmd[600];

	if (!mkdtemp(root)) {
		printf("FAIL: mkdtemp\n");
		return 1;
	}
	CHECK("lodge_open under a root of the test's", lodge_open(&lg, root, &err) == 0);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/etc/lodge", root);
	if (system(cmd) != 0)
		printf("FAIL: %s\n", cmd);
	test_cidr();
	test_range();
	test_names();
	test_files();
	test_form();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		printf("FAIL: cannot remove %s\n", root);
	UNIT_EXIT();
}
