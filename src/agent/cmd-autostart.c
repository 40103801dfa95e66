/* lodge autostart, and the host's shutdown and boot as Xen's
 * xendomains: lodge host-stop saves (or shuts down) every running domain,
 * lodge host-start restores them and starts the autostart ones.  The
 * systemd unit share/systemd/lodge-domains.service runs host-start at boot
 * and host-stop at shutdown.  One line per domain, as each is done:
 * stdout for what went as asked, stderr for what did not. */
#include "agent.h"
#include "log.h"

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

static void host_line(const struct lodge_host_report *r, void *arg)
{
	double s = r->ms / 1000.0;

	switch (r->outcome) {
	case LODGE_HOST_SAVED:
		printf("saved domain %s to %s (%.1f MiB, %.1f s)\n", r->name, r->file, r->file_bytes / 1048576.0, s);
		break;
	case LODGE_HOST_RESTORED:
		printf("restored domain %s from %s (%.1f s)\n", r->name, r->file, s);
		break;
	case LODGE_HOST_STARTED:
		printf("started %s\n", r->name);
		break;
	case LODGE_HOST_SHUT_DOWN:
		if (r->failed)
			log_err("shut down domain %s (%.1f s): %s", r->name, s, r->err ? r->err->msg : "");
		else
			printf("shut down domain %s (%.1f s)\n", r->name, s);
		break;
	case LODGE_HOST_DESTROYED:
		log_err("destroyed domain %s: %s", r->name, r->err ? r->err->msg : "");
		break;
	case LODGE_HOST_FAILED:
		if (r->err)
			cli_fail(r->err);
		break;
	}
	/* Each line as it happens: the journal shows how far a stuck stop got. */
	fflush(stdout);
	fflush(stderr);
}

int cmd_host_stop(struct cli *c)
{
	return lodge_host_stop(&c->lg, host_line, NULL) ? EXIT_FAILED : EXIT_OK;
}

int cmd_host_start(struct cli *c)
{
	return lodge_host_start(&c->lg, host_line, NULL) ? EXIT_FAILED : EXIT_OK;
}
