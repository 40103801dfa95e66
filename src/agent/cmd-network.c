/* lodge network-create / network-delete / network-start / network-stop,
 * and network-list without a domain: networks behind the host (NAT,
 * routed, isolated) with DHCP and DNS.  (network-list DOMAIN is xl's: a
 * domain's vifs, cmd-devices.c.) */
#include "agent.h"
#include "output.h"
#include "network-list.h"

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

int cmd_network_list_networks(struct cli *c)
{
	static struct lodge_network nets[NETWORKS_MAX];
	struct lodge_err err;
	struct out o;
	int n, i, rc;

	if ((n = lodge_network_list(&c->lg, nets, NETWORKS_MAX, &err)) < 0)
		return cli_fail(&err);
	if ((rc = out_begin(&o, c, network_list_cols, network_list_ncols)))
		return rc;
	for (i = 0; i < n && i < NETWORKS_MAX; i++)
		out_row(&o, &nets[i]);
	out_end(&o);
	return 0;
}
