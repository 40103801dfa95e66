/* CPU commands, after xl: vcpu-pin, vcpu-set, vcpu-list, sched (credit weight and
 * cap).  lodge-hyp does the work and checks the values (src/hyp/ctl/ctl-cpu.c);
 * here the request is made and its answer printed. */
#include "agent.h"
#include "log.h"
#include "output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_vcpu_pin(struct cli *c)
{
	struct lodge_err err;

	return lodge_vcpu_pin(&c->lg, c->argv[0], c->argv[1], c->argv[2], &err) ? cli_fail(&err) : 0;
}

/* xl vcpu-set DOMAIN N: lodge-hyp knows the domain's maxvcpus and says
 * so in its refusal. */
int cmd_vcpu_set(struct cli *c)
{
	struct lodge_err err;
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(c->argv[1], &end, 10);
	if (errno || end == c->argv[1] || *end || c->argv[1][0] == '-' || c->argv[1][0] == '+') {
		log_err("vcpu-set: '%s' is not a number of vCPUs", c->argv[1]);
		return EXIT_USAGE;
	}
	return lodge_vcpu_set(&c->lg, c->argv[0], n, &err) ? cli_fail(&err) : 0;
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

/* A vCPU of a domain. */
struct vcpu_row {
	const struct lodge_vcpus *v;
	unsigned i;
};

#define VCPU(fn, call) OUT_GETTER(fn, struct vcpu_row, const struct lodge_vcpu *p = &r->v->v[r->i]; (void)p; call)
VCPU(get_name, out_str(v, r->v->name))
VCPU(get_id, out_uint(v, r->v->id))
VCPU(get_vcpu, out_uint(v, r->i))
VCPU(get_cpu, if (p->cpu >= 0) out_int(v, p->cpu); else out_null(v))
VCPU(get_state, out_str(v, p->offline ? "off" : vcpu_state(p->state, r->v->paused)))
VCPU(get_time, out_real(v, p->ns / 1e9))
VCPU(get_wait, out_real(v, p->wait_ns / 1e9))
VCPU(get_affinity, out_str(v, p->affinity))

static const struct out_col vcpu_cols[] = {
	{ "Name", "name", -24, 0, 0, get_name, NULL },
	{ "ID", "id", 5, 0, 0, get_id, NULL },
	{ "VCPU", "vcpu", 5, 0, 0, get_vcpu, NULL },
	{ "CPU", "cpu", 5, 0, 0, get_cpu, NULL },
	{ "State", "state", -5, 0, 0, get_state, NULL },
	{ "Time(s)", "time_s", 10, 1, 0, get_time, NULL },
	{ "Wait(s)", "wait_s", 9, 1, 0, get_wait, NULL },
	{ "Affinity", "affinity", -1, 0, OUT_GAP2, get_affinity, NULL },
};

/* One domain's vCPUs: 0, or the exit status of its failure. */
static int print_vcpus(const struct cli *c, struct out *o, const char *domain)
{
	static struct lodge_vcpus v;
	struct lodge_err err;
	unsigned i;

	if (lodge_vcpu_list(&c->lg, domain, &v, &err))
		return cli_fail(&err);
	for (i = 0; i < v.n; i++)
		out_row(o, &(struct vcpu_row){ &v, i });
	return 0;
}

int cmd_vcpu_list(struct cli *c)
{
	struct lodge_status st;
	struct lodge_list l;
	struct lodge_err err;
	struct out o;
	unsigned i;
	int rc = 0;

	/* A domain named that is not running: its error, before any header. */
	if (c->argc && lodge_status(&c->lg, c->argv[0], &st, &err))
		return cli_fail(&err);
	if ((rc = out_begin(&o, c, vcpu_cols, OUT_NCOLS(vcpu_cols))))
		return rc;
	if (c->argc) {
		rc = print_vcpus(c, &o, st.name);
		out_end(&o);
		return rc;
	}
	if (lodge_list(&c->lg, &l, &err)) {
		out_end(&o);
		return cli_fail(&err);
	}
	for (i = 0; i < l.n; i++)
		if (print_vcpus(c, &o, l.dom[i].name))
			rc = EXIT_FAILED;
	out_end(&o);
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
