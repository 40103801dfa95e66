/* lodge-hyp's event loop: the control socket (src/common/proto.h), the
 * attached console client, the terminal in standalone mode, signals and
 * the domain's end. */
#ifndef LODGE_CTL_H
#define LODGE_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct ctl;
struct ctl_client;
struct domain;
struct uart;

/* Who besides root may connect (ctl-access.c): group ids, -1 for none;
 * and how long a client may sit without a request before it is closed. */
struct ctl_access {
	long control_gid;          /* every command */
	long stats_gid;            /* the commands that only read */
	unsigned idle_timeout_s;   /* 0: CTL_IDLE_TIMEOUT_S */
	/* lodge-hyp --watchdog: each boot ends this long after it began
	 * unless the pool agent feeds it (proto.h "watchdog"); 0: none. */
	unsigned watchdog_s;
};
#define CTL_WATCHDOG_MIN_S 1
#define CTL_WATCHDOG_MAX_S 3600
/* lodge-hyp --control-idle-timeout: the default and the range. */
#define CTL_IDLE_TIMEOUT_S     60
#define CTL_IDLE_TIMEOUT_MIN_S 1
#define CTL_IDLE_TIMEOUT_MAX_S 86400
enum ctl_level { CTL_DENIED, CTL_STATS, CTL_CONTROL };
/* The peer's rights and uid, from the kernel's credentials; WHO describes it. */
enum ctl_level ctl_peer_level(int fd, const struct ctl_access *a, uid_t *uid, char *who, size_t len);

/* The control protocol's table (src/common/proto.c) says who may send each
 * command, with how many arguments, and in which of the domain's states it
 * is answered; ctl-commands.c adds what runs it.  Any other request gets
 * one "error" line saying why not. */
struct ctl_command {
	const struct proto_command_rule *rule;
	/* argc, argv: the words after the command, as many as the rule allows. */
	void (*run)(struct ctl *c, struct ctl_client *cl, int argc, char **argv);
};
/* The command named NAME, or NULL. */
const struct ctl_command *ctl_command_find(const char *name);

/* Open the /proc files the status reply reads, before the sandbox hides
 * /proc: statm (0 or -errno), and where the kernel has them
 * ksm_merging_pages and smaps_rollup (a status without them reads 0). */
int ctl_keep_open(void);
/* Run until the domain has ended and, if its end is to be preserved, until
 * it is destroyed. in_fd: the terminal (standalone) or -1; listen_fd: the
 * control socket (rundir.h), -1 in standalone mode; access: who may use
 * it, and how long a client may sit idle (idle_timeout_s 0:
 * CTL_IDLE_TIMEOUT_S).  Returns true if it was destroyed from the host. */
bool ctl_run(struct domain *dom, struct uart *com1, int in_fd, int listen_fd, int sig_fd,
	     const struct ctl_access *access);

/* Split one request line (its newline already cut) into at most
 * CTL_MAX_ARGS words in place: returns argc >= 2 with argv[0] the
 * protocol prefix and version lodge-hyp speaks and argv[1] the command,
 * or -1 with the whole error reply line in err.  Used by ctl_run for
 * every line a client sends. */
#define CTL_MAX_ARGS 6
int ctl_parse_request(char *line, char *argv[CTL_MAX_ARGS], char *err, size_t errlen);

/* Send one whole reply line (or lines) to a client (ctl.c). */
void client_send(struct ctl_client *cl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ctl-cpu.c: the CPU commands; argc/argv are the command's arguments.
 * vcpu-pin and sched: 0 once done, -1 refused (the reply says why). */
void ctl_vcpu_list(struct domain *dom, struct ctl_client *cl);
int ctl_vcpu_pin(struct domain *dom, struct ctl_client *cl, int argc, char **argv);
int ctl_sched(struct domain *dom, struct ctl_client *cl, int argc, char **argv);

#endif
