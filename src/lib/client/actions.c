/* Lifecycle requests, memory and CPUs: one request each to a domain's
 * lodge-hyp, which checks the values and does the work (src/hyp/ctl*.c). */
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#define DESTROY_WAIT_S 10

/* Each verb is the protocol command of its name (proto.h's table). */
static const enum proto_command verb_commands[LODGE_NVERBS] = {
	[LODGE_PAUSE] = PROTO_PAUSE, [LODGE_UNPAUSE] = PROTO_UNPAUSE, [LODGE_SHUTDOWN] = PROTO_SHUTDOWN,
	[LODGE_REBOOT] = PROTO_REBOOT, [LODGE_DESTROY] = PROTO_DESTROY,
};

const char *lodge_verb_name(enum lodge_verb v)
{
	return v < LODGE_NVERBS ? proto_command_rule(verb_commands[v])->name : "?";
}

static int verb(const struct lodge *lg, const char *domain, enum lodge_verb v, char *name, struct lodge_err *err)
{
	struct reply r;

	return lodge_ask(lg, domain, lodge_verb_name(v), false, &r, name, err);
}

int lodge_pause(const struct lodge *lg, const char *domain, struct lodge_err *err)
{
	return verb(lg, domain, LODGE_PAUSE, NULL, err);
}

int lodge_unpause(const struct lodge *lg, const char *domain, struct lodge_err *err)
{
	return verb(lg, domain, LODGE_UNPAUSE, NULL, err);
}

int lodge_reboot(const struct lodge *lg, const char *domain, struct lodge_err *err)
{
	return verb(lg, domain, LODGE_REBOOT, NULL, err);
}

int lodge_reboot_wait(const struct lodge *lg, const char *domain, int wait_s, struct lodge_err *err)
{
	char name[DOMAIN_NAME_MAX];
	struct lodge_status before, st;
	long until;
	int rc;

	if ((rc = lodge_resolve(lg, domain, name, err)))
		return rc;
	if (wait_s > 0 && (rc = lodge_status_of(lg, name, &before)))
		return lodge_fail(err, rc, "domain %s is not running", name);
	if ((rc = verb(lg, name, LODGE_REBOOT, NULL, err)) || wait_s <= 0)
		return rc;
	/* A restart is a new lodge-hyp (src/hyp/supervise.c): rebooted once
	 * another pid answers, or gone if on_reboot does not restart. */
	until = lodge_now_ms() + wait_s * 1000L;
	for (;;) {
		rc = lodge_status_of(lg, name, &st);
		if (rc == -ENOENT)
			return lodge_fail(err, -ESRCH, "domain %s ended instead of restarting (its on_reboot)", name);
		if (rc == 0 && st.pid > 0 && st.pid != before.pid)
			return 0;
		if (lodge_now_ms() > until)
			return lodge_fail(err, -ETIMEDOUT, "domain %s did not come back within %d s", name, wait_s);
		usleep(20000);
	}
}

/* The parent of process pid, as /proc says: 0 if it cannot say. */
static int parent_of(int pid)
{
	char path[64], line[128];
	int ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "PPid: %d", &ppid) == 1)
			break;
	fclose(f);
	return ppid;
}

/* The domain's processes, to wait for their end: pidfds of its lodge-hyp
 * (the pid its status gives) and of that one's parent, the supervisor,
 * which removes the runtime directory and the cgroup and exits last.
 * Unset ones are -1 (a pid gone already, a kernel without pidfds: then
 * only the runtime directory is waited for). */
static void domain_pidfds(const struct lodge *lg, const char *name, int fds[2])
{
	struct lodge_status st;
	int ppid;

	fds[0] = fds[1] = -1;
	if (lodge_status_of(lg, name, &st) || st.pid <= 0)
		return;
	ppid = parent_of(st.pid);
	if ((fds[0] = pidfd_open(st.pid, 0)) < 0 || ppid <= 1)
		return;
	/* The parent read before the pidfd: still the same process if the
	 * child still has it (a gone supervisor takes its child with it,
	 * PR_SET_PDEATHSIG, or leaves it another parent). */
	if ((fds[1] = pidfd_open(ppid, 0)) >= 0 && parent_of(st.pid) != ppid) {
		close(fds[1]);
		fds[1] = -1;
	}
}

static void pidfds_close(int fds[2])
{
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* Wait (bounded) until the domain's processes (pidfds from domain_pidfds,
 * closed here) have exited and its lodge-hyp no longer answers. */
static int wait_ended(const struct lodge *lg, const char *name, int fds[2], int seconds)
{
	long until = lodge_now_ms() + seconds * 1000L;
	struct lodge_status st;
	int i, rc = 0;

	for (i = 0; i < 2; i++) {
		struct pollfd p = { fds[i], POLLIN, 0 };
		long left;

		if (fds[i] < 0)
			continue;
		while ((left = until - lodge_now_ms()) > 0 && poll(&p, 1, (int)left) < 0 && errno == EINTR)
			;
		if (!(p.revents & POLLIN))
			rc = -ETIMEDOUT;
	}
	pidfds_close(fds);
	while (!rc && lodge_status_of(lg, name, &st) != -ENOENT) {
		if (lodge_now_ms() > until)
			return -ETIMEDOUT;
		usleep(10000);
	}
	return rc;
}

int lodge_shutdown(const struct lodge *lg, const char *domain, int wait_s, struct lodge_err *err)
{
	char name[DOMAIN_NAME_MAX];
	int fds[2] = { -1, -1 }, rc;

	if ((rc = lodge_resolve(lg, domain, name, err)))
		return rc;
	if (wait_s > 0)
		domain_pidfds(lg, name, fds);
	if ((rc = verb(lg, domain, LODGE_SHUTDOWN, NULL, err)) || wait_s <= 0) {
		pidfds_close(fds);
		return rc;
	}
	if (wait_ended(lg, name, fds, wait_s))
		return lodge_fail(err, -ETIMEDOUT, "domain %s did not shut down within %d s (lodge destroy ends it)",
				  name, wait_s);
	return 0;
}

int lodge_shutdown_all(const struct lodge *lg, int wait_s, lodge_shutdown_fn *fn, void *arg)
{
	struct lodge_list l;
	struct lodge_err err;
	int (*fds)[2], failed = 0;
	bool *asked;
	unsigned i;

	if (lodge_list(lg, &l, &err)) {
		fn(NULL, &err, arg);
		return 1;
	}
	fds = calloc(l.n ? l.n : 1, sizeof(*fds));
	asked = calloc(l.n ? l.n : 1, sizeof(*asked));
	if (!fds || !asked) {
		free(fds);
		free(asked);
		lodge_list_free(&l);
		lodge_fail(&err, -ENOMEM, "out of memory");
		fn(NULL, &err, arg);
		return 1;
	}
	/* Every button first, then the waits: they power off side by side
	 * (xl shutdown -a -w), not one after another. */
	for (i = 0; i < l.n; i++) {
		const char *name = l.dom[i].name;

		fds[i][0] = fds[i][1] = -1;
		if (wait_s > 0)
			domain_pidfds(lg, name, fds[i]);
		if (verb(lg, name, LODGE_SHUTDOWN, NULL, &err)) {
			pidfds_close(fds[i]);
			failed++;
			fn(name, &err, arg);
			continue;
		}
		asked[i] = true;
	}
	for (i = 0; i < l.n; i++) {
		if (!asked[i])
			continue;
		if (wait_s > 0 && wait_ended(lg, l.dom[i].name, fds[i], wait_s)) {
			lodge_fail(&err, -ETIMEDOUT, "domain %s did not shut down within %d s (lodge destroy ends it)",
				   l.dom[i].name, wait_s);
			failed++;
			fn(l.dom[i].name, &err, arg);
			continue;
		}
		fn(l.dom[i].name, NULL, arg);
	}
	free(fds);
	free(asked);
	lodge_list_free(&l);
	return failed;
}

int lodge_destroy(const struct lodge *lg, const char *domain, struct lodge_err *err)
{
	char name[DOMAIN_NAME_MAX];
	int fds[2] = { -1, -1 }, rc;

	if ((rc = lodge_resolve(lg, domain, name, err)))
		return rc;
	domain_pidfds(lg, name, fds);
	if ((rc = verb(lg, domain, LODGE_DESTROY, NULL, err))) {
		pidfds_close(fds);
		return rc;
	}
	/* destroy is done when its processes and its runtime directory are
	 * (xl destroy returns with the domain gone). */
	if (wait_ended(lg, name, fds, DESTROY_WAIT_S))
		return lodge_fail(err, -ETIMEDOUT, "domain %s did not go away within %d s", name, DESTROY_WAIT_S);
	return 0;
}

int lodge_call_start(const struct lodge *lg, const char *domain, enum lodge_verb v, struct lodge_call *c,
		     struct lodge_err *err)
{
	char name[DOMAIN_NAME_MAX];
	int rc;

	c->fd = -1;
	c->n = 0;
	c->buf[0] = '\0';
	if ((rc = lodge_resolve(lg, domain, name, err)))
		return rc;
	rc = client_start(lg->hc.runtime_dir, name, lodge_verb_name(v));
	if (rc == -ENOENT || rc == -ECONNREFUSED || rc == -ENOTDIR)
		return lodge_fail(err, -ENOENT, "the domain is not running");
	if (rc == -EAGAIN)
		return lodge_fail(err, rc, "the domain is not taking connections (too busy)");
	if (rc < 0)
		return lodge_fail(err, rc, "%s", strerror(-rc));
	c->fd = rc;
	return 0;
}

int lodge_call_collect(struct lodge_call *c, int *result, struct lodge_err *err)
{
	struct reply r;
	int rc = client_collect(c->fd, c->buf, sizeof(c->buf), &c->n, &r);

	if (rc == 0)
		return 0;
	if (rc < 0)
		*result = lodge_fail(err, rc, "%s", rc == -ENOENT || rc == -ECONNREFUSED ?
				     "the domain is not running" : strerror(-rc));
	else if (r.error[0])
		*result = lodge_fail(err, -EPROTO, "%s", r.error);
	else
		*result = 0;
	lodge_call_close(c);
	return 1;
}

void lodge_call_close(struct lodge_call *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* One request with its argument; a refusal says which domain and verb. */
static int ask_named(const struct lodge *lg, const char *domain, const char *verb_word, const char *req,
		     struct lodge_err *err)
{
	char name[DOMAIN_NAME_MAX], why[sizeof(err->msg)];
	struct reply r;
	int rc;

	if ((rc = lodge_ask(lg, domain, req, false, &r, name, err)) == -EPROTO) {
		snprintf(why, sizeof(why), "%s", r.error);
		return lodge_fail(err, rc, "%s %s: %s", verb_word, name, why);
	}
	return rc;
}

int lodge_mem_set(const struct lodge *lg, const char *domain, unsigned long mib, struct lodge_err *err)
{
	char req[64];

	if (mib > 0xffffffffUL)
		return lodge_fail(err, -ERANGE, "mem-set: %lu MiB is out of range", mib);
	snprintf(req, sizeof(req), "%s %lu", proto_command_rule(PROTO_MEM_SET)->name, mib);
	return ask_named(lg, domain, proto_command_rule(PROTO_MEM_SET)->name, req, err);
}

int lodge_mem_max(const struct lodge *lg, const char *domain, unsigned long mib, struct lodge_err *err)
{
	char req[64];

	if (mib > 0xffffffffUL)
		return lodge_fail(err, -ERANGE, "mem-max: %lu MiB is out of range", mib);
	snprintf(req, sizeof(req), "%s %lu", proto_command_rule(PROTO_MEM_MAX)->name, mib);
	return ask_named(lg, domain, proto_command_rule(PROTO_MEM_MAX)->name, req, err);
}

int lodge_sysrq(const struct lodge *lg, const char *domain, char key, struct lodge_err *err)
{
	char req[16];

	if (key <= ' ' || key > '~')
		return lodge_fail(err, -EINVAL, "sysrq: the key is one printable character (h: the guest's help)");
	snprintf(req, sizeof(req), "%s %c", proto_command_rule(PROTO_SYSRQ)->name, key);
	return ask_named(lg, domain, proto_command_rule(PROTO_SYSRQ)->name, req, err);
}

int lodge_nmi(const struct lodge *lg, const char *domain, struct lodge_err *err)
{
	return ask_named(lg, domain, "trigger", proto_command_rule(PROTO_NMI)->name, err);
}

int lodge_vcpu_set(const struct lodge *lg, const char *domain, unsigned long n, struct lodge_err *err)
{
	char req[64];

	/* lodge-hyp checks the range: it knows the domain's maxvcpus. */
	if (n > 0xffffffffUL)
		return lodge_fail(err, -ERANGE, "vcpu-set: %lu vCPUs is out of range", n);
	snprintf(req, sizeof(req), "%s %lu", proto_command_rule(PROTO_VCPU_SET)->name, n);
	return ask_named(lg, domain, proto_command_rule(PROTO_VCPU_SET)->name, req, err);
}

int lodge_watchdog(const struct lodge *lg, const char *domain, uint64_t deadline_ms, struct lodge_err *err)
{
	char req[64], name[DOMAIN_NAME_MAX], why[sizeof(err->msg)];
	struct reply r;
	int rc;

	snprintf(req, sizeof(req), "%s %llu", proto_command_rule(PROTO_WATCHDOG)->name, (unsigned long long)deadline_ms);
	if ((rc = lodge_ask(lg, domain, req, false, &r, name, err)) == -EPROTO) {
		snprintf(why, sizeof(why), "%s", r.error);
		return lodge_fail(err, rc, "watchdog %s: %s", name, why);
	}
	return rc;
}

/* A CPU request's refusal names the domain. */
static int cpu_request(const struct lodge *lg, const char *domain, const char *cmd, bool keys, struct reply *r,
		       char *name, struct lodge_err *err)
{
	char resolved[DOMAIN_NAME_MAX];
	int rc = lodge_ask(lg, domain, cmd, keys, r, resolved, err);

	if (name)
		memcpy(name, resolved, sizeof(resolved));
	if (rc == -EPROTO)
		return lodge_fail(err, rc, "domain %s: %s", resolved, r->error);
	return rc;
}

int lodge_vcpu_pin(const struct lodge *lg, const char *domain, const char *vcpu, const char *cpus,
		   struct lodge_err *err)
{
	char cmd[256];
	struct reply r;

	/* Spaces would split the request into other arguments. */
	if (strpbrk(vcpu, " \t\n") || strpbrk(cpus, " \t\n") ||
	    (size_t)snprintf(cmd, sizeof(cmd), "vcpu-pin %s %s", vcpu, cpus) >= sizeof(cmd))
		return lodge_fail(err, -EINVAL, "'%s %s' is not a vCPU and a CPU list like 0 0-1", vcpu, cpus);
	return cpu_request(lg, domain, cmd, false, &r, NULL, err);
}

int lodge_sched_set(const struct lodge *lg, const char *domain, long weight, long cap, struct lodge_err *err)
{
	struct lodge_status st;
	char cmd[64];
	struct reply r;
	int rc;

	if ((rc = lodge_status(lg, domain, &st, err)))
		return rc;
	if (strcmp(st.cgroup, "-") == 0)
		return lodge_fail(err, -EOPNOTSUPP, "domain %s runs without a CPU cgroup (there was no CPU controller "
				  "it could use when it started): no weight or cap", st.name);
	/* One request with both values, so a refusal changes neither. */
	snprintf(cmd, sizeof(cmd), "sched %ld %ld", weight >= 0 ? weight : (long)st.cpu_weight,
		 cap >= 0 ? cap : (long)st.cpu_cap);
	return cpu_request(lg, st.name, cmd, false, &r, NULL, err);
}

/* The i-th space-separated word of text into out ("-" if none). */
static void word(const char *text, unsigned i, char *out, size_t len)
{
	size_t n;

	for (; text && *text; i--) {
		while (*text == ' ')
			text++;
		n = strcspn(text, " ");
		if (i == 0) {
			snprintf(out, len, "%.*s", (int)n, text);
			return;
		}
		text += n;
	}
	snprintf(out, len, "-");
}

int lodge_vcpu_list(const struct lodge *lg, const char *domain, struct lodge_vcpus *out, struct lodge_err *err)
{
	uint64_t ns[DOMAIN_VCPUS_MAX] = { 0 }, wait[DOMAIN_VCPUS_MAX] = { 0 };
	struct lodge_status st;
	const char *v;
	struct reply r;
	unsigned i;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = lodge_status(lg, domain, &st, err)) ||
	    (rc = cpu_request(lg, st.name, "vcpu-list", true, &r, NULL, err)))
		return rc;
	snprintf(out->name, sizeof(out->name), "%s", st.name);
	out->id = st.id;
	out->n = (v = reply_get(&r, "vcpus")) ? strtoul(v, NULL, 10) : 0;
	if (out->n > DOMAIN_VCPUS_MAX)
		out->n = DOMAIN_VCPUS_MAX;
	out->paused = (v = reply_get(&r, "paused")) && strcmp(v, "1") == 0;
	if ((v = reply_get(&r, "vcpu_ns")))
		lodge_parse_list(v, ns, DOMAIN_VCPUS_MAX);
	if ((v = reply_get(&r, "vcpu_wait_ns")))
		lodge_parse_list(v, wait, DOMAIN_VCPUS_MAX);
	for (i = 0; i < out->n; i++) {
		struct lodge_vcpu *c = &out->v[i];
		char cpu[16], state[8], online[4];

		word(reply_get(&r, "vcpu_cpu"), i, cpu, sizeof(cpu));
		word(reply_get(&r, "vcpu_state"), i, state, sizeof(state));
		word(reply_get(&r, "vcpu_affinity"), i, c->affinity, sizeof(c->affinity));
		c->cpu = strcmp(cpu, "-") == 0 ? -1 : atoi(cpu);
		c->state = state[0];
		c->ns = ns[i];
		c->wait_ns = wait[i];
		word(reply_get(&r, "vcpu_online"), i, online, sizeof(online));
		c->offline = strcmp(online, "0") == 0;    /* absent: an older lodge-hyp, all online */
	}
	return 0;
}
