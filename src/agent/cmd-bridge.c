/* lodge bridge-create / bridge-delete / bridge-list. */
#include "agent.h"
#include "output.h"

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

struct bridge_row {
	const char *name;
	int ports;
	bool up;
};

OUT_GETTER(get_bridge, struct bridge_row, out_str(v, r->name))
OUT_GETTER(get_ports, struct bridge_row, out_int(v, r->ports))
OUT_GETTER(get_state, struct bridge_row, out_str(v, r->up ? "up" : "down"))

static const struct out_col bridge_cols[] = {
	{ "Bridge", "bridge", -15, 0, 0, get_bridge, NULL },
	{ "Ports", "ports", 5, 0, 0, get_ports, NULL },
	{ "State", "state", -1, 0, OUT_GAP2, get_state, NULL },
};

static void print_bridge(const char *name, int ports, bool up, void *arg)
{
	out_row(arg, &(struct bridge_row){ name, ports, up });
}

int cmd_bridge_list(struct cli *c)
{
	struct lodge_err err;
	struct out o;
	int rc;

	if ((rc = out_begin(&o, c, bridge_cols, OUT_NCOLS(bridge_cols))))
		return rc;
	rc = lodge_bridge_list(print_bridge, &o, &err);
	out_end(&o);
	return rc ? cli_fail(&err) : 0;
}
