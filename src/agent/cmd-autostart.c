/* lodge autostart: start every domain in DOMAINS_DIR marked autostart
 * that is not running yet (the systemd unit in share/ runs it at boot). */
#include "agent.h"

#include <stdio.h>

static void started(const char *name, const struct lodge_err *err, void *arg)
{
	if (err)
		cli_fail(err);
	else
		printf("started %s\n", name);
	fflush(stdout);
}

int cmd_autostart(struct cli *c)
{
	return lodge_autostart(&c->lg, started, NULL) ? EXIT_FAILED : EXIT_OK;
}
