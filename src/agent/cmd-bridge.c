/* lodge bridge-create / bridge-delete / bridge-list. */
#include "agent.h"

#include <stdio.h>

/* bridge-create BRIDGE [--nic NIC [--force]]: with a NIC, the host's
 * interface joins the bridge and its addresses and routes move onto it. */
int cmd_bridge_create(struct cli *c)
{
	struct lodge_err err;

	if (c->set['f'] && !c->set['n'])
		return cli_usage_error(c->cmd, "--force goes with --nic");
	return lodge_bridge_create(c->argv[0], c->text['n'], c->set['f'], &err) ? cli_fail(&err) : 0;
}

int cmd_bridge_delete(struct cli *c)
{
	struct lodge_err err;
	char nic[IFNAMSIZ];
	int rc = lodge_bridge_delete(c->argv[0], nic, &err);

	if (nic[0])
		printf("%s left %s with its addresses and routes\n", nic, c->argv[0]);
	return rc ? cli_fail(&err) : 0;
}

static void print_bridge(const char *name, int ports, bool up, void *arg)
{
	printf("%-15s %5d  %s\n", name, ports, up ? "up" : "down");
}

int cmd_bridge_list(struct cli *c)
{
	struct lodge_err err;

	printf("%-15s %5s  %s\n", "Bridge", "Ports", "State");
	return lodge_bridge_list(print_bridge, NULL, &err) ? cli_fail(&err) : 0;
}
