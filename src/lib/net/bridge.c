/* Bridges for the domains' vifs (src/common/netlink.c does the work). */
#include "internal.h"
#include "netlink.h"

#include <errno.h>
#include <string.h>

int lodge_bridge_create(const char *bridge, const char *nic, bool force, struct lodge_err *err)
{
	char why[LODGE_ERR_MAX];
	int rc = nic ? nl_bridge_adopt_nic(bridge, nic, force, why, sizeof(why))
		     : nl_bridge_create(bridge, why, sizeof(why));

	return rc ? lodge_fail(err, rc < 0 ? rc : -EIO, "%s", why) : 0;
}

int lodge_bridge_delete(const char *bridge, char nic[IFNAMSIZ], struct lodge_err *err)
{
	char why[LODGE_ERR_MAX];
	int rc;

	nic[0] = '\0';
	/* A host NIC it adopted goes back first, with its addresses. */
	if ((rc = nl_bridge_release_nic(bridge, nic, IFNAMSIZ, why, sizeof(why))) ||
	    (rc = nl_bridge_delete(bridge, why, sizeof(why))))
		return lodge_fail(err, rc < 0 ? rc : -EIO, "%s", why);
	return 0;
}

struct bridge_visit {
	void (*fn)(const char *name, int ports, bool up, void *arg);
	void *arg;
};

static void visit(const char *name, int ports, int up, void *arg)
{
	struct bridge_visit *v = arg;

	v->fn(name, ports, up != 0, v->arg);
}

int lodge_bridge_list(void (*fn)(const char *name, int ports, bool up, void *arg), void *arg, struct lodge_err *err)
{
	struct bridge_visit v = { fn, arg };
	char why[LODGE_ERR_MAX];
	int rc = nl_bridge_list(visit, &v, why, sizeof(why));

	return rc ? lodge_fail(err, rc < 0 ? rc : -EIO, "%s", why) : 0;
}
