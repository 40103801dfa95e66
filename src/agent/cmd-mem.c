/* lodge mem-set DOMAIN SIZE: the memory a running domain should have, as
 * xl mem-set.  lodge-hyp checks the range (floor to maxmem) and moves the
 * balloon target; the guest's driver follows it in its own time. */
#include "agent.h"
#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* SIZE as xl writes it: digits and an optional unit, b k m g t (either
 * case; xl's too), as a whole number of MiB.  A bare number is MiB, as
 * lodge mem-set has always taken it (xl's bare number is KiB: a script
 * written for xl says its unit, 2048m).  0 or -EINVAL. */
static int parse_mib(const char *arg, unsigned long *mib)
{
	static const char units[] = "bkmgt";
	unsigned long long n, bytes;
	const char *u;
	char *end;
	int shift;

	if (!arg[0] || arg[0] < '0' || arg[0] > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(arg, &end, 10);
	if (errno)
		return -EINVAL;
	if (!*end)
		shift = 20;
	else if (!end[1] && (u = strchr(units, end[0] | 0x20)))
		shift = 10 * (int)(u - units);
	else
		return -EINVAL;
	if (n > (~0ULL >> shift))
		return -EINVAL;
	bytes = n << shift;
	if (bytes % (1ULL << 20) || bytes >> 20 > 0xffffffffULL)
		return -EINVAL;
	*mib = (unsigned long)(bytes >> 20);
	return 0;
}

int cmd_mem_set(struct cli *c)
{
	const char *arg = c->argv[1];
	struct lodge_err err;
	unsigned long mib;

	/* Checked here as well, so the message names the command line. */
	if (parse_mib(arg, &mib)) {
		log_err("mem-set: '%s' is not a whole number of MiB (a number with an optional unit: "
			"b, k, m, g, t; no unit: MiB)", arg);
		return EXIT_USAGE;
	}
	return lodge_mem_set(&c->lg, c->argv[0], mib, &err) ? cli_fail(&err) : 0;
}
