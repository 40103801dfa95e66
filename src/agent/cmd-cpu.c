/* CPU commands, after xl: vcpu-pin, vcpu-list, sched (credit weight and
 * cap).  lodge-hyp does the work and checks the values (src/hyp/ctl-cpu.c);
 * here the request is sent and its one-line answer printed. */
#include "agent.h"
#include "cgroup.h"
#include "client.h"
#include "domains.h"
#include "log.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One request to a named domain; prints the error and returns 1, or 0. */
static int request(const struct host_config *hc, const char *name, const char *cmd, int with_keys,
		   struct reply *r)
{
	int rc = client_call(hc->runtime_dir, name, cmd, with_keys, r);

	if (rc == -ENOENT || rc == -ECONNREFUSED || rc == -ENOTDIR) {
		log_err("no domain named %s is running", name);
		return 1;
	}
	if (rc) {
		log_err("domain %s: %s", name, strerror(-rc));
		return 1;
	}
	if (r->error[0]) {
		log_err("domain %s: %s", name, r->error);
		return 1;
	}
	return 0;
}

int cmd_vcpu_pin(int argc, char **argv)
{
	struct host_config hc;
	char cmd[256];
	struct reply r;

	if (argc != 4)
		return EXIT_USAGE;
	/* Spaces would split the request into other arguments. */
	if (strpbrk(argv[2], " \t\n") || strpbrk(argv[3], " \t\n") ||
	    (size_t)snprintf(cmd, sizeof(cmd), "vcpu-pin %s %s", argv[2], argv[3]) >= sizeof(cmd)) {
		log_err("'%s %s' is not a vCPU and a CPU list like 0 0-1", argv[2], argv[3]);
		return 1;
	}
	if (agent_host_config(&hc))
		return 1;
	return request(&hc, argv[1], cmd, 0, &r);
}

struct vcpu_list_opts {
	const struct host_config *hc;
	int tsv;
	int failed;
};

/* xl's per-vCPU state: r running (or runnable), b blocked, p paused. */
static const char *vcpu_state(char proc_state, int paused)
{
	if (paused)
		return "--p";
	if (proc_state == 'R')
		return "r--";
	if (proc_state == '-')
		return "---";
	return "-b-";
}

/* The i-th space-separated word of text into out. */
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

static void print_vcpus(const struct dom_status *st, void *arg)
{
	struct vcpu_list_opts *o = arg;
	uint64_t ns[DOMAIN_VCPUS_MAX] = { 0 }, wait[DOMAIN_VCPUS_MAX] = { 0 };
	char cpu[16], state[8], aff[512];
	const char *v;
	struct reply r;
	unsigned i, n;
	int paused;

	if (request(o->hc, st->name, "vcpu-list", 1, &r)) {
		o->failed = 1;
		return;
	}
	n = (v = reply_get(&r, "vcpus")) ? strtoul(v, NULL, 10) : 0;
	paused = (v = reply_get(&r, "paused")) && strcmp(v, "1") == 0;
	if ((v = reply_get(&r, "vcpu_ns")))
		domain_parse_list(v, ns, DOMAIN_VCPUS_MAX);
	if ((v = reply_get(&r, "vcpu_wait_ns")))
		domain_parse_list(v, wait, DOMAIN_VCPUS_MAX);
	for (i = 0; i < n && i < DOMAIN_VCPUS_MAX; i++) {
		word(reply_get(&r, "vcpu_cpu"), i, cpu, sizeof(cpu));
		word(reply_get(&r, "vcpu_state"), i, state, sizeof(state));
		word(reply_get(&r, "vcpu_affinity"), i, aff, sizeof(aff));
		if (strcmp(cpu, "-1") == 0)
			snprintf(cpu, sizeof(cpu), "-");
		if (o->tsv)
			printf("%s\t%u\t%u\t%s\t%s\t%.3f\t%.3f\t%s\n", st->name, st->id, i, cpu,
			       vcpu_state(state[0], paused), ns[i] / 1e9, wait[i] / 1e9, aff);
		else
			printf("%-24s %5u %5u %5s %-5s %10.1f %9.1f  %s\n", st->name, st->id, i, cpu,
			       vcpu_state(state[0], paused), ns[i] / 1e9, wait[i] / 1e9, aff);
	}
}

int cmd_vcpu_list(int argc, char **argv)
{
	struct host_config hc;
	struct vcpu_list_opts o = { &hc, 0, 0 };
	struct dom_status st;
	int c, rc;

	optind = 1;
	while ((c = getopt(argc, argv, "o:")) != -1) {
		if (c == 'o' && strcmp(optarg, "tsv") == 0) o.tsv = 1;
		else return EXIT_USAGE;
	}
	if (argc - optind > 1)
		return EXIT_USAGE;
	if (agent_host_config(&hc))
		return 1;
	if (optind < argc) {
		rc = domain_status(hc.runtime_dir, argv[optind], &st);
		if (rc == -ENOENT) {
			log_err("no domain named %s is running", argv[optind]);
			return 1;
		}
		if (rc) {
			log_err("domain %s: %s", argv[optind], strerror(-rc));
			return 1;
		}
	}
	if (!o.tsv)
		printf("%-24s %5s %5s %5s %-5s %10s %9s  %s\n", "Name", "ID", "VCPU", "CPU", "State", "Time(s)",
		       "Wait(s)", "Affinity");
	if (optind < argc)
		print_vcpus(&st, &o);
	else
		domains_scan(hc.runtime_dir, print_vcpus, &o);
	return o.failed;
}

/* A whole number for an option, in [min, max]; prints why not. */
static int option_number(const char *opt, const char *text, long min, long max, const char *hint, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(text, &end, 10);
	if (errno || end == text || *end) {
		log_err("%s '%s' is not a whole number", opt, text);
		return -EINVAL;
	}
	if (*out < min || *out > max) {
		log_err("%s %ld is out of range (%ld to %ld%s)", opt, *out, min, max, hint);
		return -ERANGE;
	}
	return 0;
}

/* Weight and cap; "-" for a domain that runs without a CPU cgroup. */
static void print_sched(const struct dom_status *st, void *arg)
{
	if (strcmp(st->cgroup, "-") == 0)
		printf("%-24s %5u %6s %4s\n", st->name, st->id, "-", "-");
	else
		printf("%-24s %5u %6u %4u\n", st->name, st->id, st->cpu_weight, st->cpu_cap);
}

int cmd_sched(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "weight", required_argument, NULL, 'w' },
		{ "cap", required_argument, NULL, 'c' },
		{ 0 },
	};
	struct host_config hc;
	struct dom_status st;
	long weight = -1, cap = -1;
	char cmd[64];
	struct reply r;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":w:c:", longopts, NULL)) != -1) {
		/* The whole range here; lodge-hyp knows the cap's bound (100 per vCPU). */
		if (c == 'w') {
			if (option_number("--weight", optarg, CGROUP_WEIGHT_MIN, CGROUP_WEIGHT_MAX, "", &weight))
				return 1;
		} else if (c == 'c') {
			if (option_number("--cap", optarg, 0, 6400, " percent of one CPU, 0: no cap", &cap))
				return 1;
		} else {
			return EXIT_USAGE;
		}
	}
	if (optind == argc && weight < 0 && cap < 0) {
		/* No domain: every one, as xl sched-credit lists them. */
		if (agent_host_config(&hc))
			return 1;
		printf("%-24s %5s %6s %4s\n", "Name", "ID", "Weight", "Cap");
		domains_scan(hc.runtime_dir, print_sched, NULL);
		return 0;
	}
	if (optind != argc - 1)
		return EXIT_USAGE;
	if (agent_host_config(&hc))
		return 1;
	rc = domain_status(hc.runtime_dir, argv[optind], &st);
	if (rc == -ENOENT) {
		log_err("no domain named %s is running", argv[optind]);
		return 1;
	}
	if (rc) {
		log_err("domain %s: %s", argv[optind], strerror(-rc));
		return 1;
	}
	if (weight < 0 && cap < 0) {
		printf("%-24s %5s %6s %4s\n", "Name", "ID", "Weight", "Cap");
		print_sched(&st, NULL);
		return 0;
	}
	if (strcmp(st.cgroup, "-") == 0) {
		log_err("domain %s runs without a CPU cgroup (there was no CPU controller it could use "
			"when it started): no weight or cap", st.name);
		return 1;
	}
	/* One request with both values, so a refusal changes neither. */
	snprintf(cmd, sizeof(cmd), "sched %ld %ld", weight >= 0 ? weight : (long)st.cpu_weight,
		 cap >= 0 ? cap : (long)st.cpu_cap);
	return request(&hc, st.name, cmd, 0, &r);
}
