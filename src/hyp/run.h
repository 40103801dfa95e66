/* One boot of a domain, in the process the supervisor forked for it
 * (run.c). */
#ifndef LODGE_RUN_H
#define LODGE_RUN_H

#include "options.h"
#include "sandbox.h"

/* The exit status by which a domain process asks its supervisor to boot
 * the domain again (on_reboot/on_crash = restart); internal, never the
 * status of lodge-hyp itself. */
#define EXIT_RESTART 100

/* Build the domain, start its vCPUs parked, confine the process, then let
 * the guest run and serve the control socket until the domain is over.
 * dir: the runtime directory ("" standalone); listen_fd: its control
 * socket (-1 standalone); ready_fd: the waiting caller's pipe (-1 none).
 * Returns the process's exit status: how the domain ended, or
 * EXIT_RESTART. */
int run_domain(struct options *o, struct sandbox *sb, const char *dir, int listen_fd, int ready_fd);

#endif
