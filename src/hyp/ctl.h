/* lodge-hyp's event loop: the control socket (src/common/proto.h), the
 * attached console client, the terminal in standalone mode, signals and
 * the domain's end. */
#ifndef LODGE_CTL_H
#define LODGE_CTL_H

#include <stdbool.h>

struct ctl_client;
struct domain;
struct uart;

/* Create RUNDIR/NAME/ (mode 0700) and listen on its control socket.
 * A directory left by a dead lodge-hyp is cleaned; a live one is an error.
 * Returns the listening fd or -errno with a message logged. */
int ctl_listen(const char *dir);
/* Run until the domain has ended and, if its end is to be preserved, until
 * it is destroyed. in_fd: the terminal (standalone) or -1; listen_fd: -1
 * in standalone mode. Returns true if it was destroyed from the host. */
bool ctl_run(struct domain *dom, struct uart *com1, int in_fd, int listen_fd, int sig_fd);

/* Send one whole reply line (or lines) to a client (ctl.c). */
void client_send(struct ctl_client *cl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ctl-cpu.c: the CPU commands; argc/argv are the command's arguments. */
void ctl_vcpu_list(struct domain *dom, struct ctl_client *cl);
void ctl_vcpu_pin(struct domain *dom, struct ctl_client *cl, int argc, char **argv);
void ctl_sched(struct domain *dom, struct ctl_client *cl, int argc, char **argv);

#endif
