/* The control loop's state, shared by its parts: the loop and its clients
 * (ctl.c), the commands (ctl-commands.c) and the status reply
 * (ctl-status.c).  tests/fuzz/fuzz-ctl-clients.c drives the same loop
 * through ctl_init / ctl_add_client / ctl_step / ctl_finish, with clients
 * on socketpairs and a clock of its own. */
#ifndef LODGE_CTL_LOOP_H
#define LODGE_CTL_LOOP_H

#include "ctl/ctl.h"
#include "proto.h"
#include "save/save.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Who gets a connection.  Root always: when every slot is taken, the
 * longest idle client that is not root makes room (or, with only root's
 * left, root's own longest idle one that no console or save holds).
 * Everyone else shares CTL_MAX_UNPRIVILEGED slots, at most
 * CTL_MAX_PER_USER for any one uid, so that a member of the stats group
 * can fill neither root's slots nor every other user's. */
#define CTL_MAX_CLIENTS      64
#define CTL_MAX_UNPRIVILEGED 16
#define CTL_MAX_PER_USER     8
/* A request line must be whole within this of its first byte (or within
 * the idle timeout, if that is shorter): a client dribbling a line holds
 * nothing for long. */
#define CTL_LINE_TIMEOUT_S   5
#define CTL_ACCEPT_BURST     16     /* connections taken per wake-up */
#define CTL_PASSED_FDS_MAX   8      /* descriptors one request may carry */

enum ctl_client_mode {
	CL_REQUESTS,               /* request lines, one reply each */
	CL_CONSOLE,                /* attached: the raw console both ways */
	CL_DUMP,                   /* console-log: console history up to dump_end, then closed */
};

/* A connected client's buffers, allocated when it connects and freed when
 * it goes: 5 KiB for each of CTL_MAX_CLIENTS slots held for the domain's
 * life would be a third of a MiB of every domain's memory, idle or not. */
struct ctl_client_io {
	char in[PROTO_LINE_MAX];
	uint8_t out[4096];         /* console bytes the socket would not take yet */
};

struct ctl_client {
	struct ctl *ctl;
	int fd;                    /* -1: a free slot */
	enum ctl_level level;
	uid_t uid;
	enum ctl_client_mode mode;
	struct ctl_client_io *io;  /* NULL in a free slot */
	size_t in_len;
	uint64_t active_ms;        /* its last byte in, or the last reply out */
	uint64_t line_ms;          /* when the unfinished line in io->in began */
	uint64_t con_pos;          /* next console byte to send */
	uint64_t dump_end;         /* CL_DUMP: the console's head when it asked */
	size_t out_len, out_off;
	int passed_fd;             /* a descriptor sent with the request (save, migrate), or -1 */
	/* The ones sent before it with the same request (disk-attach sends a
	 * disk and its other names: extra_fds then passed_fd, in order). */
	int extra_fds[CTL_PASSED_FDS_MAX - 1];
	unsigned nextra;
	char face[17];             /* the face its request says it is ("lodge/1:dashboard"), or "" */
};

struct ctl {
	struct domain *dom;
	struct uart *com1;
	int in_fd, listen_fd, sig_fd;
	struct ctl_access access;      /* who may connect to listen_fd */
	bool destroyed;
	uint64_t idle_ms, line_ms;     /* the timeouts */
	uint64_t (*clock_ms)(void);    /* CLOCK_MONOTONIC; the fuzz harness's own */
	uint64_t now_ms;               /* read once per wake-up */
	struct ctl_client clients[CTL_MAX_CLIENTS];
	uint8_t pending[256];          /* console input the UART has not taken yet */
	size_t pending_len, pending_off;
	/* A save or migration (save/save.h): its thread, the client waiting
	 * for its end, and a snapshot's hold on the paused domain. */
	struct save_job *job;
	enum save_mode job_mode;
	struct ctl_client *job_client;
	bool snapshot_held;
	struct save_progress last;     /* for status */
	bool has_last;
	bool told_preserved;           /* the log says why a preserved domain stopped */
	bool end_told;                 /* the event log has the domain's end (events.h) */
	char job_who[80];              /* WHO of the save or migration's client, for its event */
	/* The pool agent's watchdog (proto.h "watchdog"): the guest ends at
	 * this CLOCK_MONOTONIC ms unless fed a later one; 0: not armed. */
	uint64_t watchdog_ms;
	/* A detach waiting for the guest's eject (ctl-hotplug.c): its client,
	 * slot and deadline; one at a time. */
	struct ctl_client *detach_client;
	unsigned detach_slot;
	uint64_t detach_deadline_ms;
	char detach_who[80];            /* its WHO, for the event log: the client may go first */
};

/* ctl.c: the loop, for ctl_run and the fuzz harness (access as ctl_run's). */
void ctl_init(struct ctl *c, struct domain *dom, struct uart *com1, int in_fd, int listen_fd, int sig_fd,
	      const struct ctl_access *access);
/* Take a connected client whose peer has LEVEL's rights: 0, or -EUSERS
 * with one "error too many clients ..." line sent and fd closed. */
int ctl_add_client(struct ctl *c, int fd, enum ctl_level level, uid_t uid);
/* Wait at most max_wait_ms (-1: until something happens or a client's
 * time is up) and handle what happened.  False once the loop is done. */
bool ctl_step(struct ctl *c, int max_wait_ms);
/* Close every client; true if the domain was destroyed from the host. */
bool ctl_finish(struct ctl *c);
void ctl_client_close(struct ctl_client *cl);
/* Whether the client is doing something that takes its time (an attached
 * console, a console-log dump, a save or migration it waits for): no
 * timeout applies to it, and root's eviction passes it by. */
bool ctl_client_busy(const struct ctl *c, const struct ctl_client *cl);
/* Send what is due to a console or console-log client. */
void ctl_client_output(struct ctl_client *cl);

/* ctl-commands.c: one request line from a client (its newline cut). */
void ctl_request(struct ctl *c, struct ctl_client *cl, char *line);
/* The save or migration job made progress or ended. */
void ctl_save_event(struct ctl *c);

/* ctl-hotplug.c: disk-attach and detach; the guest ejected a slot
 * (pcihp_event_fd readable); a detach's deadline (UINT64_MAX: none) and
 * its expiry. */
void ctl_disk_attach(struct ctl *c, struct ctl_client *cl, int argc, char **argv);
void ctl_vif_attach(struct ctl *c, struct ctl_client *cl, int argc, char **argv);
void ctl_detach(struct ctl *c, struct ctl_client *cl, int argc, char **argv);
void ctl_hotplug_event(struct ctl *c);
uint64_t ctl_hotplug_deadline(const struct ctl *c);
void ctl_hotplug_expire(struct ctl *c);

/* ctl-status.c */
void ctl_status(struct ctl *c, struct ctl_client *cl, int argc, char **argv);
void ctl_peers(struct ctl *c, struct ctl_client *cl, int argc, char **argv);

#endif
