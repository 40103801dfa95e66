/* lodge network-create / network-delete / network-start / network-stop,
 * and network-list without a domain: networks behind the host (NAT,
 * routed, isolated) with DHCP and DNS.  (network-list DOMAIN is xl's: a
 * domain's vifs, cmd-devices.c.) */
#include "agent.h"
#include "output.h"

#include <stdio.h>
#include <string.h>

#define NETWORKS_MAX 64

int cmd_network_create(struct cli *c)
{
	struct lodge_network_opts o = {
		.name = c->argv[0], .subnet = c->text['s'], .mode = LODGE_NET_NAT, .dhcp_range = c->text['R'],
		.domain = c->text['d'], .bridge = c->text['b'], .autostart = c->set['a'], .dns_forward = c->set['f'],
	};
	struct lodge_err err;

	if (c->set['n'] + c->set['r'] + c->set['i'] > 1)
		return cli_usage_error(c->cmd, "--nat, --routed and --isolated: one at most");
	if (!c->set['s'])
		return cli_usage_error(c->cmd, "--subnet is needed (e.g. --subnet 10.77.0.0/24)");
	o.mode = c->set['r'] ? LODGE_NET_ROUTED : c->set['i'] ? LODGE_NET_ISOLATED : LODGE_NET_NAT;
	return lodge_network_create(&c->lg, &o, &err) ? cli_fail(&err) : 0;
}

int cmd_network_delete(struct cli *c)
{
	struct lodge_err err;

	return lodge_network_delete(&c->lg, c->argv[0], &err) ? cli_fail(&err) : 0;
}

int cmd_network_start(struct cli *c)
{
	struct lodge_err err;

	return lodge_network_start(&c->lg, c->argv[0], &err) ? cli_fail(&err) : 0;
}

int cmd_network_stop(struct cli *c)
{
	struct lodge_err err;

	return lodge_network_stop(&c->lg, c->argv[0], &err) ? cli_fail(&err) : 0;
}

/* dnsmasq in a word: running, dead (started, not stopped, gone), stopped. */
static const char *dnsmasq_word(const struct lodge_network *n)
{
	return n->dnsmasq_pid > 0 ? "running" : n->dnsmasq_died ? "dead" : "stopped";
}

static void get_mode(const void *row, struct out_val *v)
{
	const struct lodge_network *n = row;

	if ((int)n->mode < 0)
		out_str(v, "?");    /* its file does not read: lodge network-start says why */
	else
		out_str(v, lodge_net_mode_name(n->mode));
}

OUT_GETTER(get_name, struct lodge_network, out_str(v, r->name))
OUT_GETTER(get_bridge, struct lodge_network, out_str(v, r->bridge[0] ? r->bridge : "-"))
OUT_GETTER(get_subnet, struct lodge_network, r->subnet[0] ? out_str(v, r->subnet) : out_null(v))
OUT_GETTER(get_gateway, struct lodge_network, r->gateway[0] ? out_str(v, r->gateway) : out_null(v))
OUT_GETTER(get_range_start, struct lodge_network, r->range_start[0] ? out_str(v, r->range_start) : out_null(v))
OUT_GETTER(get_range_end, struct lodge_network, r->range_end[0] ? out_str(v, r->range_end) : out_null(v))
OUT_GETTER(get_domain, struct lodge_network, r->domain[0] ? out_str(v, r->domain) : out_null(v))
OUT_GETTER(get_dnsmasq, struct lodge_network, out_str(v, dnsmasq_word(r)))
OUT_GETTER(get_pid, struct lodge_network, r->dnsmasq_pid > 0 ? out_int(v, r->dnsmasq_pid) : out_null(v))
OUT_GETTER(get_leases, struct lodge_network, out_uint(v, r->leases))
OUT_GETTER(get_ports, struct lodge_network, out_int(v, r->ports))
OUT_GETTER(get_rules, struct lodge_network, r->rules < 0 ? out_null(v) : out_str(v, r->rules ? "yes" : "no"))
OUT_GETTER(get_bridge_up, struct lodge_network, out_str(v, r->bridge_up ? "up" : "down"))
OUT_GETTER(get_autostart, struct lodge_network, out_str(v, r->autostart ? "yes" : "no"))

static const struct out_col network_cols[] = {
	{ "Network", "network", -12, 0, 0, get_name, NULL },
	{ "Mode", "mode", -8, 0, 0, get_mode, NULL },
	{ "Bridge", "bridge", -15, 0, 0, get_bridge, NULL },
	{ "State", "bridge_state", -5, 0, 0, get_bridge_up, NULL },
	{ "Subnet", "subnet", -18, 0, 0, get_subnet, NULL },
	{ "dnsmasq", "dnsmasq", -8, 0, 0, get_dnsmasq, NULL },
	{ "Leases", "leases", 6, 0, 0, get_leases, NULL },
	{ "Vifs", "vifs", 4, 0, 0, get_ports, NULL },
	{ "Rules", "rules", -5, 0, OUT_GAP2, get_rules, NULL },
	{ "", "dnsmasq_pid", 0, 0, OUT_DATA_ONLY, get_pid, NULL },
	{ "", "gateway", 0, 0, OUT_DATA_ONLY, get_gateway, NULL },
	{ "", "dhcp_start", 0, 0, OUT_DATA_ONLY, get_range_start, NULL },
	{ "", "dhcp_end", 0, 0, OUT_DATA_ONLY, get_range_end, NULL },
	{ "", "domain", 0, 0, OUT_DATA_ONLY, get_domain, NULL },
	{ "", "autostart", 0, 0, OUT_DATA_ONLY, get_autostart, NULL },
};

int cmd_network_list_networks(struct cli *c)
{
	static struct lodge_network nets[NETWORKS_MAX];
	struct lodge_err err;
	struct out o;
	int n, i, rc;

	if ((n = lodge_network_list(&c->lg, nets, NETWORKS_MAX, &err)) < 0)
		return cli_fail(&err);
	if ((rc = out_begin(&o, c, network_cols, OUT_NCOLS(network_cols))))
		return rc;
	for (i = 0; i < n && i < NETWORKS_MAX; i++)
		out_row(&o, &nets[i]);
	out_end(&o);
	return 0;
}
