/* The network list's columns (network-list.h), moved here from the lodge
 * command's network-list so the web interface gives the same JSON. */
#include "network-list.h"

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

const struct out_col network_list_cols[] = {
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

const size_t network_list_ncols = OUT_NCOLS(network_list_cols);
