/* CPU commands, after xl: vcpu-pin, vcpu-list, sched (credit weight and
 * cap).  lodge-hyp does the work and checks the values (src/hyp/ctl/ctl-cpu.c);
 * here the request is made and its answer printed. */
#include "agent.h"

#include <stdio.h>
#include <string.h>

int cmd_vcpu_pin(struct cli *c)
{
	struct lodge_err err;

	return lodge_vcpu_pin(&c->lg, c->argv[0], c->argv[1], c->argv[2], &err) ? cli_fail(&err) : 0;
}

/* xl's per-vCPU state: r running (or runnable), b blocked, p paused. */
static const char *vcpu_state(char proc_state, bool paused)
{
	if (paused)
		return "--p";
	if (proc_state == 'R')
		return "r--";
	if (proc_state == '-')
		return "---";
	return "-b-";
}

/* One domain's vCPUs: 0, or the exit status of its failure. */
static int print_vcpus(const struct cli *c, const char *domain)
{
	static struct lodge_vcpus v;
	struct lodge_err err;
	unsigned i;

	if (lodge_vcpu_list(&c->lg, domain, &v, &err))
		return cli_fail(&err);
	for (i = 0; i < v.n; i++) {
		const struct lodge_vcpu *p = &v.v[i];
		char cpu[16] = "-";

		if (p->cpu >= 0)
			snprintf(cpu, sizeof(cpu), "%d", p->cpu);
		if (c->set['o'])
			printf("%s\t%u\t%u\t%s\t%s\t%.3f\t%.3f\t%s\n", v.name, v.id, i, cpu,
			       vcpu_state(p->state, v.paused), p->ns / 1e9, p->wait_ns / 1e9, p->affinity);
		else
			printf("%-24s %5u %5u %5s %-5s %10.1f %9.1f  %s\n", v.name, v.id, i, cpu,
			       vcpu_state(p->state, v.paused), p->ns / 1e9, p->wait_ns / 1e9, p->affinity);
	}
	return 0;
}

int cmd_vcpu_list(struct cli *c)
{
	struct lodge_status st;
	struct lodge_list l;
	struct lodge_err err;
	unsigned i;
	int rc = 0;

	/* A domain named that is not running: its error, before any header. */
	if (c->argc && lodge_status(&c->lg, c->argv[0], &st, &err))
		return cli_fail(&err);
	if (!c->set['o'])
		printf("%-24s %5s %5s %5s %-5s %10s %9s  %s\n", "Name", "ID", "VCPU", "CPU", "State", "Time(s)",
		       "Wait(s)", "Affinity");
	if (c->argc)
		return print_vcpus(c, st.name);
	if (lodge_list(&c->lg, &l, &err))
		return cli_fail(&err);
	for (i = 0; i < l.n; i++)
		if (print_vcpus(c, l.dom[i].name))
			rc = EXIT_FAILED;
	lodge_list_free(&l);
	return rc;
}

/* Weight and cap; "-" for a domain that runs without a CPU cgroup. */
static void print_sched(const struct lodge_status *st)
{
	if (strcmp(st->cgroup, "-") == 0)
		printf("%-24s %5u %6s %4s\n", st->name, st->id, "-", "-");
	else
		printf("%-24s %5u %6u %4u\n", st->name, st->id, st->cpu_weight, st->cpu_cap);
}

int cmd_sched(struct cli *c)
{
	bool setting = c->set['w'] || c->set['c'];
	struct lodge_status st;
	struct lodge_list l;
	struct lodge_err err;
	unsigned i;

	if (setting && !c->argc)
		return cli_usage_error(c->cmd, "--weight and --cap need a DOMAIN");
	if (setting)
		return lodge_sched_set(&c->lg, c->argv[0], c->set['w'] ? c->num['w'] : -1,
				       c->set['c'] ? c->num['c'] : -1, &err) ? cli_fail(&err) : 0;
	if (c->argc && lodge_status(&c->lg, c->argv[0], &st, &err))
		return cli_fail(&err);
	printf("%-24s %5s %6s %4s\n", "Name", "ID", "Weight", "Cap");
	if (c->argc) {
		print_sched(&st);
		return 0;
	}
	/* No domain: every one, as xl sched-credit lists them. */
	if (lodge_list(&c->lg, &l, &err))
		return cli_fail(&err);
	for (i = 0; i < l.n; i++)
		print_sched(&l.dom[i]);
	lodge_list_free(&l);
	return 0;
}
