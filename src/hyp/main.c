/* lodge-hyp: one process per domain.  Standalone mode: the guest's serial
 * console is this terminal; the exit status says how the domain ended.
 * The parts: the command line (options.c), the runtime directory
 * (rundir.c), the supervisor and detaching (supervise.c), each boot of the
 * domain (run.c) and its building (build.c). */
#include "build.h"
#include "closefds.h"
#include "domain.h"
#include "events.h"
#include "log.h"
#include "options.h"
#include "rundir.h"
#include "sandbox.h"
#include "supervise.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

/* Descriptors the caller left open (a shell's redirections, an agent's
 * pipes) are none of the domain's business: neither the supervisor nor
 * the sandboxed child may hold them.  Only stdio, --incoming's stream,
 * --id-lock's lock and the disks given as fd=N stay.  Done once the
 * options are read (they name those) and before anything of our own is
 * opened. */
static void close_inherited(const struct options *o)
{
	int keep[2 + DOMAIN_DISKS_MAX];
	unsigned n = 0, i;

	keep[n++] = o->incoming_fd >= 0 && o->incoming_fd <= INT_MAX ? (int)o->incoming_fd : -1;
	keep[n++] = o->id_lock_fd >= 0 && o->id_lock_fd <= INT_MAX ? (int)o->id_lock_fd : -1;
	for (i = 0; i < o->ndisks; i++)
		keep[n++] = o->disks[i].given_fd;
	close_fds_but(keep, n);
}

int main(int argc, char **argv)
{
	static struct options o;        /* its parsed disks: 100 KiB, off the stack */
	struct sandbox sb;
	char dir[4096] = "";
	int listen_fd = -1, ready_fd = -1;

	log_init(argv[0]);
	if (options_parse(argc, argv, &o))
		return DOMAIN_ERROR;
	close_inherited(&o);
	if (o.probe)
		return domain_probe();
	/* Who asked for the domain: the process that ran this one (a face of
	 * the library), as the kernel says; gone once detached. */
	event_who(o.creator, sizeof(o.creator), getuid(), getppid(), o.via);
	if (sandbox_init(&sb, o.user, o.no_sandbox))
		return DOMAIN_ERROR;
	if (o.detach && detach_early(&ready_fd, o.name)) {
		log_err("cannot detach: %s", strerror(errno));
		return DOMAIN_ERROR;
	}
	if (o.runtime_dir && (listen_fd = rundir_create(o.runtime_dir, o.name, &o.access, dir, sizeof(dir))) < 0) {
		detach_tell(ready_fd, READY_FAILED, NULL);     /* it said why */
		return DOMAIN_ERROR;
	}
	return supervise(&o, &sb, dir, listen_fd, ready_fd);
}
