/* lodge mem-set NAME MiB: the memory a running domain should have, as
 * xl mem-set.  lodge-hyp checks the range (floor to maxmem) and moves the
 * balloon target; the guest's driver follows it in its own time. */
#include "agent.h"
#include "client.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_mem_set(int argc, char **argv)
{
	struct host_config hc;
	struct reply r;
	char req[64], *end;
	unsigned long mib;
	int rc;

	if (argc != 3)
		return EXIT_USAGE;
	/* Checked here as well, so the message names the command line. */
	errno = 0;
	mib = strtoul(argv[2], &end, 10);
	if (errno || end == argv[2] || *end || argv[2][0] == '-' || mib > 0xffffffffUL) {
		log_err("mem-set: '%s' is not a whole number of MiB", argv[2]);
		return 1;
	}
	if (agent_host_config(&hc))
		return 1;
	snprintf(req, sizeof(req), "mem-set %lu", mib);
	rc = client_call(hc.runtime_dir, argv[1], req, 0, &r);
	if (rc == -ENOENT || rc == -ECONNREFUSED) {
		log_err("no domain named %s is running", argv[1]);
		return 1;
	}
	if (rc) {
		log_err("domain %s: %s", argv[1], strerror(-rc));
		return 1;
	}
	if (r.error[0]) {
		log_err("mem-set %s: %s", argv[1], r.error);
		return 1;
	}
	return 0;
}
