/* lodge mem-set DOMAIN SIZE (and mem-max, its ceiling): the memory a running domain should have, as
 * xl mem-set.  lodge-hyp checks the range (floor to maxmem) and moves the
 * balloon target; the guest's driver follows it in its own time. */
#include "agent.h"
#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* SIZE, checked here as well, so the message names the command line. */
static int size_arg(const struct cli *c, unsigned long *mib)
{
	if (cli_parse_mib(c->argv[1], mib)) {
		log_err("%s: '%s' is not a whole number of MiB (a number with an optional unit: "
			"b, k, m, g, t; no unit: MiB)", c->cmd->name, c->argv[1]);
		return EXIT_USAGE;
	}
	return 0;
}

int cmd_mem_set(struct cli *c)
{
	struct lodge_err err;
	unsigned long mib;
	int rc;

	if ((rc = size_arg(c, &mib)))
		return rc;
	return lodge_mem_set(&c->lg, c->argv[0], mib, &err) ? cli_fail(&err) : 0;
}

/* xl mem-max: the ceiling, not the target (mem-set moves that). */
int cmd_mem_max(struct cli *c)
{
	struct lodge_err err;
	unsigned long mib;
	int rc;

	if ((rc = size_arg(c, &mib)))
		return rc;
	return lodge_mem_max(&c->lg, c->argv[0], mib, &err) ? cli_fail(&err) : 0;
}
