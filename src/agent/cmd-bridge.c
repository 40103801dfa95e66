/* lodge bridge-create / bridge-delete / bridge-list. */
#include "agent.h"
#include "log.h"
#include "netlink.h"

#include <stdio.h>
#include <string.h>

/* bridge-create BRIDGE [--nic NIC [--force]]: with a NIC, the host's
 * interface joins the bridge and its addresses and routes move onto it. */
int cmd_bridge_create(int argc, char **argv)
{
	const char *bridge = NULL, *nic = NULL;
	char err[512];
	int i, force = 0, rc;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--nic") == 0 && i + 1 < argc)
			nic = argv[++i];
		else if (strcmp(argv[i], "--force") == 0)
			force = 1;
		else if (!bridge && argv[i][0] != '-')
			bridge = argv[i];
		else
			return EXIT_USAGE;
	}
	if (!bridge || (force && !nic))
		return EXIT_USAGE;
	rc = nic ? nl_bridge_adopt_nic(bridge, nic, force, err, sizeof(err))
		 : nl_bridge_create(bridge, err, sizeof(err));
	if (rc) {
		log_err("%s", err);
		return 1;
	}
	return 0;
}

int cmd_bridge_delete(int argc, char **argv)
{
	char err[256];

	char nic[16];

	if (argc != 2)
		return EXIT_USAGE;
	/* A host NIC it adopted goes back first, with its addresses. */
	if (nl_bridge_release_nic(argv[1], nic, sizeof(nic), err, sizeof(err))) {
		log_err("%s", err);
		return 1;
	}
	if (nic[0])
		printf("%s left %s with its addresses and routes\n", nic, argv[1]);
	if (nl_bridge_delete(argv[1], err, sizeof(err))) {
		log_err("%s", err);
		return 1;
	}
	return 0;
}

static void print_bridge(const char *name, int ports, int up, void *arg)
{
	(void)arg;
	printf("%-15s %5d  %s\n", name, ports, up ? "up" : "down");
}

int cmd_bridge_list(int argc, char **argv)
{
	char err[256];

	if (argc != 1)
		return EXIT_USAGE;
	printf("%-15s %5s  %s\n", "Bridge", "Ports", "State");
	if (nl_bridge_list(print_bridge, NULL, err, sizeof(err))) {
		log_err("%s", err);
		return 1;
	}
	return 0;
}
