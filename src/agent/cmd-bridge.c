/* lodge bridge-create / bridge-delete / bridge-list. */
#include "agent.h"
#include "log.h"
#include "netlink.h"

#include <stdio.h>

int cmd_bridge_create(int argc, char **argv)
{
	char err[256];

	if (argc != 2)
		return EXIT_USAGE;
	if (nl_bridge_create(argv[1], err, sizeof(err))) {
		log_err("%s", err);
		return 1;
	}
	return 0;
}

int cmd_bridge_delete(int argc, char **argv)
{
	char err[256];

	if (argc != 2)
		return EXIT_USAGE;
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
