/* lodge mem-set DOMAIN SIZE: the memory a running domain should have, as
 * xl mem-set.  lodge-hyp checks the range (floor to maxmem) and moves the
 * balloon target; the guest's driver follows it in its own time. */
#include "agent.h"
#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cmd_mem_set(struct cli *c)
{
	const char *arg = c->argv[1];
	struct lodge_err err;
	unsigned long mib;

	/* Checked here as well, so the message names the command line. */
	if (cli_parse_mib(arg, &mib)) {
		log_err("mem-set: '%s' is not a whole number of MiB (a number with an optional unit: "
			"b, k, m, g, t; no unit: MiB)", arg);
		return EXIT_USAGE;
	}
	return lodge_mem_set(&c->lg, c->argv[0], mib, &err) ? cli_fail(&err) : 0;
}
