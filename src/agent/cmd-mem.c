/* lodge mem-set DOMAIN MiB: the memory a running domain should have, as
 * xl mem-set.  lodge-hyp checks the range (floor to maxmem) and moves the
 * balloon target; the guest's driver follows it in its own time. */
#include "agent.h"
#include "log.h"

#include <errno.h>
#include <stdlib.h>

int cmd_mem_set(struct cli *c)
{
	const char *arg = c->argv[1];
	struct lodge_err err;
	unsigned long mib;
	char *end;

	/* Checked here as well, so the message names the command line. */
	errno = 0;
	mib = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || arg[0] == ' ' || arg[0] == '+' || mib > 0xffffffffUL) {
		log_err("mem-set: '%s' is not a whole number of MiB", arg);
		return 1;
	}
	return lodge_mem_set(&c->lg, c->argv[0], mib, &err) ? cli_fail(&err) : 0;
}
