/* The control protocol's commands (src/common/proto.h), one table: who
 * may send each, in which of the domain's states it is answered, and what
 * answers it.  ctl_request refuses the rest with one "error" line. */
#include "ctl/ctl-loop.h"
#include "console.h"
#include "dev/cpu-hotplug.h"
#include "dev/devices.h"
#include "domain.h"
#include "events.h"
#include "log.h"
#include "save/core.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CTL_REPLAY_BYTES (16 * 1024)   /* console history shown on attach */

/* Who sent the request, for the event log: the kernel's uid and pid of
 * the peer, and the face it says it is. */
static const char *ctl_who(const struct ctl_client *cl)
{
	static char who[EVLOG_WHO_MAX];

	return event_who_peer(who, sizeof(who), cl->fd, cl->face);
}

static void ctl_attach_console(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	bool force = argc > 0 && strcmp(argv[0], "force") == 0;
	uint64_t head = console_head();
	unsigned i;

	for (i = 0; i < CTL_MAX_CLIENTS; i++) {
		struct ctl_client *other = &c->clients[i];

		if (other != cl && other->fd >= 0 && other->mode == CL_CONSOLE) {
			if (!force) {
				client_send(cl, "error the console is in use by another client "
					    "(lodge console --force takes it over)\n");
				return;
			}
			/* Tell the one being replaced why its console ended. */
			send(other->fd, "\r\n[lodge: console taken over by another client]\r\n", 50,
			     MSG_DONTWAIT | MSG_NOSIGNAL);
			ctl_client_close(other);
		}
	}
	client_send(cl, "ok\n");
	if (cl->fd < 0)
		return;
	cl->mode = CL_CONSOLE;
	cl->con_pos = head > CTL_REPLAY_BYTES ? head - CTL_REPLAY_BYTES : 0;
}

/* The last bytes of console output, then close: `lodge console --log`.
 * Sent as the socket takes them, never waiting on it: a client that
 * does not read must not stop the loop everyone else needs. */
static void ctl_console_log(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	uint64_t head = console_head(), want = argc > 0 ? strtoull(argv[0], NULL, 10) : CONSOLE_HISTORY;

	client_send(cl, "ok\n");
	if (cl->fd < 0)
		return;
	cl->mode = CL_DUMP;
	cl->con_pos = head > want ? head - want : 0;
	cl->dump_end = head;
	ctl_client_output(cl);
}

/* save / migrate: the stream goes to the descriptor the agent sent with
 * the request (a pipe to the save file, a socket to the receiver); the
 * reply waits for the job's end (ctl_save_event). */
static void ctl_save_start(struct ctl *c, struct ctl_client *cl, enum save_mode mode)
{
	int rc;

	if (cl->passed_fd < 0) {
		client_send(cl, "error %s needs a descriptor sent with the request\n",
			    mode == SAVE_LIVE ? "migrate" : "save");
		return;
	}
	if ((rc = save_job_start(c->dom, cl->passed_fd, mode, &c->job))) {
		client_send(cl, "error cannot start the %s: %s\n", mode == SAVE_LIVE ? "migration" : "save",
			    strerror(-rc));
		return;
	}
	cl->passed_fd = -1;             /* the job's now */
	snprintf(c->job_who, sizeof(c->job_who), "%s", ctl_who(cl));
	c->job_mode = mode;
	c->job_client = cl;
	c->has_last = false;
	log_info("%s of domain %s started", mode == SAVE_LIVE ? "live migration" : "save", c->dom->name);
}

/* After a snapshot is written: the agent says whether the domain goes
 * (the file is safe) or runs on (--keep, or the file could not be kept). */
static void ctl_save_end(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	const char *what = argc > 0 ? argv[0] : "";

	if (!c->snapshot_held || cl != c->job_client) {
		client_send(cl, "error no save of this connection is waiting\n");
		return;
	}
	if (strcmp(what, "destroy") == 0) {
		c->snapshot_held = false;
		domain_end(c->dom, DOMAIN_STOPPED, "saved and destroyed");
		c->destroyed = true;
		event_send(EV_DESTROYED, ctl_who(cl), "after its save");
		c->end_told = true;
	} else if (strcmp(what, "resume") == 0) {
		c->snapshot_held = false;
		save_snapshot_release(c->dom, true);
	} else {
		client_send(cl, "error save-end takes destroy or resume\n");
		return;
	}
	c->job_client = NULL;
	client_send(cl, "ok\n");
}

/* The job made progress or ended: tell its client, and act on the end. */
void ctl_save_event(struct ctl *c)
{
	struct ctl_client *cl = c->job_client && c->job_client->fd >= 0 ? c->job_client : NULL;
	struct save_progress p;
	char why[256];
	int rc;
	bool ended = save_job_read(c->job, &p, &rc, why, sizeof(why));

	c->last = p;
	c->has_last = true;
	if (!ended) {
		if (cl && c->job_mode == SAVE_LIVE && p.phase == SAVE_PRECOPY)
			client_send(cl, "progress round %u dirty %llu pages %llu rate_kib %llu\n", p.round,
				    (unsigned long long)p.dirty, (unsigned long long)p.pages,
				    (unsigned long long)p.rate_kib);
		return;
	}
	save_job_free(c->job);
	c->job = NULL;
	if (rc) {
		log_err("%s of domain %s failed: %s", c->job_mode == SAVE_LIVE ? "migration" : "save",
			c->dom->name, why);
		if (cl)
			client_send(cl, "error %s\n", why);
		c->job_client = NULL;
		return;
	}
	if (c->job_mode == SAVE_LIVE) {
		log_info("domain %s migrated: downtime %llu us, %u rounds, %llu pages", c->dom->name,
			 (unsigned long long)p.downtime_us, p.round, (unsigned long long)p.pages);
		if (cl)
			client_send(cl, "ok downtime_us %llu total_us %llu rounds %u pages %llu bytes %llu\n",
				    (unsigned long long)p.downtime_us, (unsigned long long)p.total_us, p.round,
				    (unsigned long long)p.pages, (unsigned long long)p.bytes);
		c->job_client = NULL;
		domain_end(c->dom, DOMAIN_STOPPED, "migrated away");
		c->destroyed = true;
		event_send(EV_MIGRATED_OUT, c->job_who, "downtime %llu us, %u rounds, %llu pages",
			   (unsigned long long)p.downtime_us, p.round, (unsigned long long)p.pages);
		c->end_told = true;
		return;
	}
	event_send(EV_SAVED, c->job_who, "%llu pages, %llu bytes", (unsigned long long)p.pages,
		   (unsigned long long)p.bytes);
	/* A written snapshot holds the domain paused until the agent says
	 * what becomes of it -- or until it goes away without saying. */
	if (!cl) {
		save_snapshot_release(c->dom, true);
		c->job_client = NULL;
		return;
	}
	c->snapshot_held = true;
	client_send(cl, "ok pages %llu bytes %llu time_us %llu\n", (unsigned long long)p.pages,
		    (unsigned long long)p.bytes, (unsigned long long)p.total_us);
}

/* dump-core: the guest's RAM and registers as an ELF core (save/core.h)
 * into the file the client opened with its own rights and sent with the
 * request.  Written here, the vCPUs parked meanwhile: one consistent
 * picture, after which a running guest runs on. */
static void ctl_dump_core(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	bool was_paused = c->dom->paused;
	char why[256];
	int rc;

	if (cl->passed_fd < 0) {
		client_send(cl, "error dump-core needs a descriptor sent with the request\n");
		return;
	}
	if (!was_paused)
		vcpu_pause_all(c->dom);
	rc = core_write(c->dom, cl->passed_fd, why, sizeof(why));
	if (!was_paused)
		vcpu_unpause_all(c->dom);
	close(cl->passed_fd);
	cl->passed_fd = -1;
	if (rc) {
		log_warn("core dump of domain %s failed: %s", c->dom->name, why);
		client_send(cl, "error %s\n", why);
		return;
	}
	log_info("domain %s's core dumped", c->dom->name);
	client_send(cl, "ok\n");
}

static void ctl_save(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	ctl_save_start(c, cl, SAVE_SNAPSHOT);
}

static void ctl_migrate(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	ctl_save_start(c, cl, SAVE_LIVE);
}

static void ctl_destroy(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	domain_end(c->dom, DOMAIN_STOPPED, "destroyed from the host");
	c->destroyed = true;
	event_send(EV_DESTROYED, ctl_who(cl), NULL);
	c->end_told = true;
	client_send(cl, "ok\n");
}

static void ctl_reboot(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	domain_end(c->dom, DOMAIN_REBOOT, "rebooted from the host");
	event_send(EV_REBOOTED, ctl_who(cl), "from the host");
	c->end_told = true;
	client_send(cl, "ok\n");
}

static void ctl_pause(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	vcpu_pause_all(c->dom);
	event_send(EV_PAUSED, ctl_who(cl), NULL);
	client_send(cl, "ok\n");
}

/* watchdog MS: the pool agent moves the deadline by which this domain
 * ends unless fed again (README.md in src/pool, "Fencing"). */
static void ctl_watchdog(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	unsigned long long ms;
	char *end;

	if (argc != 1 || argv[0][0] < '0' || argv[0][0] > '9') {
		client_send(cl, "error watchdog takes a CLOCK_MONOTONIC time in ms\n");
		return;
	}
	errno = 0;
	ms = strtoull(argv[0], &end, 10);
	if (errno || *end || ms == 0) {
		client_send(cl, "error watchdog takes a CLOCK_MONOTONIC time in ms\n");
		return;
	}
	c->watchdog_ms = ms;
	client_send(cl, "ok\n");
}

static void ctl_unpause(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	vcpu_unpause_all(c->dom);
	event_send(EV_UNPAUSED, ctl_who(cl), NULL);
	client_send(cl, "ok\n");
}

static void ctl_shutdown(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	if (c->dom->paused)
		vcpu_unpause_all(c->dom);   /* a paused guest cannot hear the button */
	acpi_pm_power_button();
	event_send(EV_SHUTDOWN_ASKED, ctl_who(cl), "the ACPI power button");
	client_send(cl, "ok\n");
}

static void ctl_mem_set(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	char why[256];

	if (domain_mem_set(c->dom, argc > 0 ? argv[0] : NULL, why, sizeof(why))) {
		client_send(cl, "error %s\n", why);
		return;
	}
	event_send(EV_MEM_SET, ctl_who(cl), "target %s MiB", argv[0]);
	client_send(cl, "ok\n");
}

static void ctl_mem_max(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	char why[256];

	if (domain_mem_max(c->dom, argc > 0 ? argv[0] : NULL, why, sizeof(why))) {
		client_send(cl, "error %s\n", why);
		return;
	}
	event_send(EV_MEM_MAX, ctl_who(cl), "%s MiB", argv[0]);
	client_send(cl, "ok\n");
}

/* sysrq KEY: a BREAK on the serial line, then KEY, as Linux's 8250
 * driver reads a sysrq; one printable character. */
static void ctl_sysrq(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	if (argc != 1 || strlen(argv[0]) != 1 || argv[0][0] <= ' ' || argv[0][0] > '~') {
		client_send(cl, "error sysrq takes one printable character (h: the guest's list of keys)\n");
		return;
	}
	if (uart_send_break(c->com1, (uint8_t)argv[0][0])) {
		client_send(cl, "error the guest's serial input is full (it reads none): try again later\n");
		return;
	}
	event_send(EV_SYSRQ, ctl_who(cl), "key %s", argv[0]);
	client_send(cl, "ok\n");
}

/* nmi: xl trigger DOMAIN nmi, on the first vCPU (as a front panel's NMI
 * button reaches the boot CPU). */
static void ctl_nmi(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	int rc = vcpu_nmi(c->dom, 0);

	if (rc) {
		client_send(cl, "error cannot send an NMI: %s\n", strerror(-rc));
		return;
	}
	event_send(EV_NMI, ctl_who(cl), NULL);
	client_send(cl, "ok\n");
}

/* vcpu-set N: xl vcpu-set, within maxvcpus (dev/cpuhp.c). */
static void ctl_vcpu_set(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	char why[256], *end;
	unsigned long n;
	int rc;

	errno = 0;
	n = strtoul(argv[0], &end, 10);
	if (errno || end == argv[0] || *end || argv[0][0] == '-') {
		client_send(cl, "error vcpu-set: '%s' is not a number of vCPUs\n", argv[0]);
		return;
	}
	if ((rc = cpuhp_set(c->dom, n, why, sizeof(why)))) {
		client_send(cl, "error %s\n", why);
		return;
	}
	event_send(EV_VCPU_SET, ctl_who(cl), "%lu vCPUs", n);
	client_send(cl, "ok\n");
}

/* rename NAME: lodge rename has moved the runtime directory, and the
 * cgroup beside it (proto.h); this process, sandboxed, takes the name for
 * its messages and status alone.  The event log's line is written by the
 * supervisor, under the name the directory has, not this one's word. */
static void ctl_rename(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	struct domain *dom = c->dom;
	char *cg = dom->cgroup.dir;
	size_t old = strlen(dom->name), len = strlen(cg), at = len > old ? len - old : 0;

	if (!domain_name_valid(argv[0])) {
		client_send(cl, "error '%s' is not a domain name (%s)\n", argv[0], domain_name_rule());
		return;
	}
	/* its cgroup's path, for status, if the caller moved it too */
	if (argc > 1 && strcmp(argv[1], "cgroup") == 0 && dom->has_cgroup && at && cg[at - 1] == '/' && strcmp(cg + at, dom->name) == 0 &&
	    at + strlen(argv[0]) < sizeof(dom->cgroup.dir))
		memcpy(cg + at, argv[0], strlen(argv[0]) + 1);
	event_send(EV_RENAMED, ctl_who(cl), NULL);
	snprintf(dom->name, sizeof(dom->name), "%s", argv[0]);
	client_send(cl, "ok\n");
}

/* ctl-cpu.c's, which need only the domain. */
static void ctl_vcpus(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	ctl_vcpu_list(c->dom, cl);
}

static void ctl_pin(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	char who[EVLOG_WHO_MAX];

	/* Asked before the reply: a client that has its answer may be gone. */
	snprintf(who, sizeof(who), "%s", ctl_who(cl));
	if (ctl_vcpu_pin(c->dom, cl, argc, argv) == 0)
		event_send(EV_VCPU_PIN, who, "vcpu %s cpus %s", argv[0], argv[1]);
}

static void ctl_weights(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	char who[EVLOG_WHO_MAX];

	snprintf(who, sizeof(who), "%s", ctl_who(cl));
	if (ctl_sched(c->dom, cl, argc, argv) == 0)
		event_send(EV_SCHED, who, "weight %s cap %s", argv[0], argv[1]);
}

/* What runs each command of the protocol's table (proto.c). */
typedef void ctl_run_fn(struct ctl *c, struct ctl_client *cl, int argc, char **argv);
static ctl_run_fn *const runs[PROTO_NCOMMANDS] = {
	[PROTO_STATUS] = ctl_status,           [PROTO_PEERS] = ctl_peers,
	[PROTO_VCPU_LIST] = ctl_vcpus,         [PROTO_DESTROY] = ctl_destroy,
	[PROTO_CONSOLE] = ctl_attach_console,  [PROTO_CONSOLE_LOG] = ctl_console_log,
	[PROTO_SAVE_END] = ctl_save_end,       [PROTO_SAVE] = ctl_save,
	[PROTO_DUMP_CORE] = ctl_dump_core,     [PROTO_MIGRATE] = ctl_migrate,
	[PROTO_PAUSE] = ctl_pause,             [PROTO_UNPAUSE] = ctl_unpause,
	[PROTO_WATCHDOG] = ctl_watchdog,       [PROTO_SHUTDOWN] = ctl_shutdown,
	[PROTO_REBOOT] = ctl_reboot,           [PROTO_MEM_SET] = ctl_mem_set,
	[PROTO_MEM_MAX] = ctl_mem_max,         [PROTO_SYSRQ] = ctl_sysrq,
	[PROTO_NMI] = ctl_nmi,                 [PROTO_VCPU_SET] = ctl_vcpu_set,
	[PROTO_VCPU_PIN] = ctl_pin,            [PROTO_SCHED] = ctl_weights,
	[PROTO_DISK_ATTACH] = ctl_disk_attach, [PROTO_VIF_ATTACH] = ctl_vif_attach,
	[PROTO_DETACH] = ctl_detach,           [PROTO_RENAME] = ctl_rename,
};

const struct ctl_command *ctl_command_find(const char *name)
{
	static struct ctl_command found;
	int id = proto_command_find(name);

	if (id < 0 || !runs[id])
		return NULL;
	found = (struct ctl_command){ proto_command_rule((enum proto_command)id), runs[id] };
	return &found;
}

/* The domain's state as the table's columns see it: an end outweighs a
 * save (whose job stops with it). */
static enum proto_when ctl_when_now(const struct ctl *c)
{
	if (atomic_load(&c->dom->end) != DOMAIN_RUNNING)
		return PROTO_WHEN_ENDED;
	if (c->job || c->snapshot_held)
		return PROTO_WHEN_SAVING;
	return PROTO_WHEN_RUNNING;
}

void ctl_request(struct ctl *c, struct ctl_client *cl, char *line)
{
	char *argv[CTL_MAX_ARGS] = { 0 }, err[PROTO_LINE_MAX + 128];
	int argc = ctl_parse_request(line, argv, err, sizeof(err));
	const struct ctl_command *cmd;
	enum proto_when now;

	if (argc < 0) {
		client_send(cl, "%s", err);
		return;
	}
	snprintf(cl->face, sizeof(cl->face), "%s", strchr(argv[0], ':') ? strchr(argv[0], ':') + 1 : "");
	if (!(cmd = ctl_command_find(argv[1]))) {
		client_send(cl, "error unknown command '%s'\n", argv[1]);
		return;
	}
	if (cl->level < (cmd->rule->reads_only ? CTL_STATS : CTL_CONTROL)) {
		client_send(cl, "error permission denied: '%s' needs root or the control group "
			    "(the stats group may only read)\n", argv[1]);
		return;
	}
	now = ctl_when_now(c);
	if (argc - 2 < cmd->rule->min_args || argc - 2 > cmd->rule->max_args) {
		client_send(cl, "error usage: %s%s%s\n", cmd->rule->name, cmd->rule->usage[0] ? " " : "",
			    cmd->rule->usage);
		return;
	}
	if (!(cmd->rule->when & now)) {
		if (now == PROTO_WHEN_ENDED)
			client_send(cl, "error domain %s is not running (%s)\n", c->dom->name,
				    c->dom->end_reason);
		else
			client_send(cl, "error domain %s is being %s\n", c->dom->name,
				    c->job_mode == SAVE_LIVE ? "migrated" : "saved");
		return;
	}
	cmd->run(c, cl, argc - 2, argv + 2);
}
