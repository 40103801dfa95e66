/* Supervision (supervise.c): detaching from the caller of a start, the
 * supervisor that runs each boot of a domain in a sandboxed child, and
 * the clean-up once the domain is over. */
#ifndef LODGE_SUPERVISE_H
#define LODGE_SUPERVISE_H

#include "options.h"
#include "sandbox.h"

/* What the caller of a --detach start hears on the ready pipe: one byte,
 * or nothing at all (end of file: every process of the start died
 * without a word, SIGKILL most likely). */
enum {
	READY_RUNNING = 'r',    /* the domain runs */
	READY_FAILED = 'f',     /* it did not start; it said why on the caller's terminal */
	READY_SAYS = 's',       /* it did not start; the rest, to end of file, says why */
};

/* --detach: the caller waits until the domain runs (or failed, and says
 * why) and then returns; the domain lives on in its own session, taking
 * no terminal with it.  Must happen before KVM_CREATE_VM, which binds the
 * VM to this address space.  In the process that goes on: 0 and the
 * write end of the ready pipe in *ready_fd; -errno. */
int detach_early(int *ready_fd, const char *name);
/* Tell a caller still waiting how the start went (it may have gone: a
 * pipe without a reader, ignored).  ready_fd -1: nobody waits. */
void detach_tell(int ready_fd, char what, const char *why);

/* Where a detached domain's messages go once it runs: its runtime
 * directory's lodge-hyp.log (opened before the sandbox, used after). */
struct detached_io {
	int null_fd, log_fd;
};
void detached_io_open(struct detached_io *io, const char *dir);
void detached_io_switch(struct detached_io *io);
/* The domain runs: tell the waiting caller, and from now on log to the
 * runtime directory instead of the caller's terminal. */
void detach_ready(int ready_fd, struct detached_io *io);

/* Run the domain until it is over, each boot in a child process
 * (run.h), restarting it as its on_reboot and on_crash say; then remove
 * its cgroup and runtime directory dir ("" standalone) and close
 * listen_fd.  Returns lodge-hyp's exit status. */
int supervise(struct options *o, struct sandbox *sb, const char *dir, int listen_fd, int ready_fd);

#endif
