/* The control socket's CPU commands (protocol in src/common/proto.h):
 *   vcpu-list             per vCPU: thread, last host CPU, state, time, wait, affinity
 *   vcpu-pin VCPU|all CPUS  set the affinity of one vCPU thread or all
 *   sched WEIGHT CAP      Xen credit weight and cap, through the cgroup
 * Each checks everything before it changes anything, and answers with one
 * "error" sentence a user can act on. */
#include "cpulist.h"
#include "ctl/ctl.h"
#include "domain.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIST_MAX (DOMAIN_VCPUS_MAX * 24 + 1)

/* Append to one space-separated per-vCPU value. */
static void append(char *list, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(char *list, const char *fmt, ...)
{
	size_t len = strlen(list);
	va_list ap;

	if (len && len + 1 < LIST_MAX)
		list[len++] = ' ';
	va_start(ap, fmt);
	vsnprintf(list + len, LIST_MAX - len, fmt, ap);
	va_end(ap);
}

void ctl_vcpu_list(struct domain *dom, struct ctl_client *cl)
{
	static char tid[LIST_MAX], cpu[LIST_MAX], state[LIST_MAX], ns[LIST_MAX], wait[LIST_MAX],
		    aff[LIST_MAX], online[LIST_MAX];
	struct vcpu_sched_stats s;
	char set[256];
	unsigned i;

	tid[0] = cpu[0] = state[0] = ns[0] = wait[0] = aff[0] = online[0] = '\0';
	for (i = 0; i < dom->nvcpus; i++) {
		sched_vcpu_stats(&dom->vcpus[i], &s);
		cpulist_format(&s.affinity, set, sizeof(set));
		append(tid, "%d", (int)s.tid);
		append(cpu, "%d", s.cpu);
		append(state, "%c", s.state);
		append(ns, "%llu", (unsigned long long)vcpu_cpu_ns(&dom->vcpus[i]));
		append(wait, "%llu", (unsigned long long)s.wait_ns);
		append(aff, "%s", set[0] ? set : "-");
		append(online, "%d", (int)((atomic_load(&dom->online) >> i) & 1));
	}
	client_send(cl, "ok\nvcpus %u\npaused %d\nvcpu_tid %s\nvcpu_cpu %s\nvcpu_state %s\nvcpu_ns %s\n"
		    "vcpu_wait_ns %s\nvcpu_affinity %s\nvcpu_online %s\n\n", dom->nvcpus, dom->paused ? 1 : 0, tid, cpu,
		    state, ns, wait, aff, online);
}

/* A whole decimal number in [min, max], or -1 after an error reply. */
static long parse_bounded(struct ctl_client *cl, const char *what, const char *text, long min, long max,
			  const char *hint)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end) {
		client_send(cl, "error %s '%s' is not a whole number\n", what, text);
		return -1;
	}
	if (v < min || v > max) {
		client_send(cl, "error %s %ld is out of range (%ld to %ld%s)\n", what, v, min, max, hint);
		return -1;
	}
	return v;
}

int ctl_vcpu_pin(struct domain *dom, struct ctl_client *cl, int argc, char **argv)
{
	static cpu_set_t before[DOMAIN_VCPUS_MAX];
	cpu_set_t host, set;
	char why[512];
	unsigned first, last, i;
	int rc;

	if (argc != 2) {
		client_send(cl, "error usage: vcpu-pin VCPU|all CPUS\n");
		return -1;
	}
	if (strcmp(argv[0], "all") == 0) {
		first = 0;
		last = dom->nvcpus - 1;
	} else {
		long v = parse_bounded(cl, "vCPU", argv[0], 0, (long)dom->nvcpus - 1, "");

		if (v < 0)
			return -1;
		first = last = (unsigned)v;
	}
	if ((rc = cpulist_host(&host))) {
		client_send(cl, "error cannot read this host's CPUs: %s\n", strerror(-rc));
		return -1;
	}
	if (cpulist_parse(argv[1], &host, &set, why, sizeof(why))) {
		client_send(cl, "error %s\n", why);
		return -1;
	}
	for (i = first; i <= last; i++)
		if (pthread_getaffinity_np(dom->vcpus[i].thread, sizeof(before[i]), &before[i]))
			CPU_ZERO(&before[i]);
	for (i = first; i <= last; i++)
		if ((rc = sched_vcpu_pin(&dom->vcpus[i], &set)))
			break;
	if (i <= last) {
		/* One refused (a cpuset cgroup may forbid those CPUs): put back
		 * the ones already moved, so nothing changed. */
		while (i-- > first)
			if (CPU_COUNT(&before[i]))
				sched_vcpu_pin(&dom->vcpus[i], &before[i]);
		client_send(cl, "error cannot pin to CPUs %s: %s\n", argv[1], strerror(-rc));
		return -1;
	}
	client_send(cl, "ok\n");
	return 0;
}

int ctl_sched(struct domain *dom, struct ctl_client *cl, int argc, char **argv)
{
	char hint[48];
	long weight, cap;
	int rc;

	if (argc != 2) {
		client_send(cl, "error usage: sched WEIGHT CAP\n");
		return -1;
	}
	if (!dom->has_cgroup) {
		client_send(cl, "error domain %s has no cgroup (lodge-hyp runs without --cgroup)\n", dom->name);
		return -1;
	}
	snprintf(hint, sizeof(hint), " percent of one CPU, 0: no cap");
	if ((weight = parse_bounded(cl, "weight", argv[0], DOMAIN_CPU_WEIGHT_MIN, DOMAIN_CPU_WEIGHT_MAX, "")) < 0 ||
	    (cap = parse_bounded(cl, "cap", argv[1], 0, SCHED_CAP_MAX(dom), hint)) < 0)
		return -1;
	if ((rc = sched_set(dom, (unsigned)weight, (unsigned)cap))) {
		client_send(cl, "error cannot write %s: %s\n", dom->cgroup.dir, strerror(-rc));
		return -1;
	}
	client_send(cl, "ok\n");
	return 0;
}
