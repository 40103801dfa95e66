/* lodge list [-l] [-o FORMAT] [DOMAIN...]: the running domains, Domain-0
 * (the host) first, as xl list shows them.
 *
 * Mem is what the domain should have now (its balloon target), as xl
 * list shows after mem-set; -l adds maxmem, the balloon, the guest's own
 * free memory ("-" until its driver reports it), a save or migration
 * under way ("save", "migr:R" in pre-copy round R, "migr:stop" once the
 * vCPUs are parked for the last copy; "-" if none runs), and what KSM
 * merged (left out of RSS) and what transparent huge pages back (tsv
 * and JSON: in KiB), both before the addresses, which stay last. */
#include "agent.h"
#include "log.h"
#include "output.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* A row: a domain's status, or (st NULL) one whose lodge-hyp runs but
 * would not say how it is (too many clients, no permission, no answer):
 * listed all the same, state '?', so that a busy domain is never taken
 * for one that is gone. */
struct list_row {
	const struct lodge_status *st;
	const char *name;
	char gfree[24], job[24], addrs[LODGE_MAX_ADDRS * 48];
};

/* xl's six-letter state: r b p s c d. */
static const char *state_letters(const char *state)
{
	if (strcmp(state, "running") == 0) return "r-----";
	if (strcmp(state, "paused") == 0) return "--p---";
	if (strcmp(state, "shutdown") == 0) return "---s--";
	if (strcmp(state, "crashed") == 0) return "----c-";
	return "------";
}

#define KNOWN(fn, call) OUT_GETTER(fn, struct list_row, if (r->st) { const struct lodge_status *st = r->st; (void)st; call; } else out_null(v))
OUT_GETTER(get_name, struct list_row, out_str(v, r->name))
KNOWN(get_id, out_uint(v, st->id))
KNOWN(get_mem, out_uint(v, st->target_mib))
KNOWN(get_vcpus, out_uint(v, st->vcpus))
OUT_GETTER(get_letters, struct list_row, out_str(v, r->st ? state_letters(r->st->state) : "?"))
OUT_GETTER(get_state, struct list_row, out_str(v, r->st ? r->st->state : "?"))
KNOWN(get_cpu, out_real(v, st->cpu_ns / 1e9))
KNOWN(get_uptime, out_uint(v, st->uptime_s))
KNOWN(get_rss_mib, out_uint(v, st->rss_kib / 1024))
KNOWN(get_rss_kib, out_uint(v, st->rss_kib))
KNOWN(get_pid, out_int(v, st->pid))
KNOWN(get_maxmem, out_uint(v, st->maxmem_mib))
KNOWN(get_balloon, out_uint(v, st->balloon_mib))
KNOWN(get_gfree, if (st->guest_stats) out_uint(v, st->guest_free_kib / 1024); else out_null(v))
OUT_GETTER(get_job, struct list_row, out_str(v, r->job))
KNOWN(get_ksm_mib, out_uint(v, st->ksm_shared_kib / 1024))
KNOWN(get_ksm_kib, out_uint(v, st->ksm_shared_kib))
KNOWN(get_thp_mib, out_uint(v, st->thp_kib / 1024))
KNOWN(get_thp_kib, out_uint(v, st->thp_kib))
KNOWN(get_addrs, out_list(v, r->addrs))

/* tsv's order is what scripts count on: new columns go before addresses
 * only in text. */
static const struct out_col list_cols[] = {
	{ "Name", "name", -24, 0, 0, get_name, NULL },
	{ "ID", "id", 5, 0, 0, get_id, NULL },
	{ "Mem(MiB)", "memory_mib", 9, 0, 0, get_mem, NULL },
	{ "VCPUs", "vcpus", 5, 0, 0, get_vcpus, NULL },
	{ "State", "state", -6, 0, OUT_TEXT_ONLY, get_letters, NULL },
	{ "State", "state", 0, 0, OUT_DATA_ONLY, get_state, NULL },
	{ "Time(s)", "cpu_s", 10, 1, 0, get_cpu, NULL },
	{ "Uptime(s)", "uptime_s", 9, 0, OUT_LONG, get_uptime, NULL },
	{ "RSS(MiB)", "rss_mib", 9, 0, OUT_LONG | OUT_TEXT_ONLY, get_rss_mib, NULL },
	{ "RSS", "rss_kib", 0, 0, OUT_DATA_ONLY, get_rss_kib, NULL },
	{ "PID", "pid", 7, 0, OUT_LONG, get_pid, NULL },
	{ "Max(MiB)", "maxmem_mib", 9, 0, OUT_LONG, get_maxmem, NULL },
	{ "Bal(MiB)", "balloon_mib", 9, 0, OUT_LONG, get_balloon, NULL },
	{ "Free(MiB)", "guest_free_mib", 9, 0, OUT_LONG, get_gfree, NULL },
	{ "Save", "save", -9, 0, OUT_LONG | OUT_TEXT_ONLY, get_job, NULL },
	{ "KSM(MiB)", "ksm_mib", 8, 0, OUT_LONG | OUT_TEXT_ONLY, get_ksm_mib, NULL },
	{ "KSM", "ksm_shared_kib", 0, 0, OUT_DATA_ONLY, get_ksm_kib, NULL },
	{ "THP(MiB)", "thp_mib", 8, 0, OUT_LONG | OUT_TEXT_ONLY, get_thp_mib, NULL },
	{ "THP", "thp_kib", 0, 0, OUT_DATA_ONLY, get_thp_kib, NULL },
	{ "Addresses", "addresses", -1, 0, OUT_LONG | OUT_GAP2, get_addrs, NULL },
};

static void print_domain(struct out *o, const struct lodge_status *st)
{
	struct list_row r = { .st = st, .name = st->name, .gfree = "-", .job = "-" };

	if (lodge_saving(st) && st->save_kind == LODGE_SAVE_SNAPSHOT)
		snprintf(r.job, sizeof(r.job), "save");
	else if (lodge_saving(st) && st->save_phase == LODGE_SAVE_PRECOPY)
		snprintf(r.job, sizeof(r.job), "migr:%u", st->save_round);
	else if (lodge_saving(st))
		snprintf(r.job, sizeof(r.job), "migr:stop");
	lodge_addrs_join(st, r.addrs, sizeof(r.addrs));
	out_row(o, &r);
}

static void print_unasked(struct out *o, const struct lodge_unasked *u)
{
	struct list_row r = { .st = NULL, .name = u->name, .job = "-", .addrs = "-" };

	log_err("domain %s: cannot ask its status: %s", u->name, u->why);
	out_row(o, &r);
}

/* Domain-0, as xl names it: the host. */
static bool is_domain0(const char *arg)
{
	return strcasecmp(arg, "Domain-0") == 0 || strcmp(arg, "0") == 0;
}

static void print_host(struct out *o)
{
	struct lodge_status dom0;

	lodge_host_status(&dom0);
	print_domain(o, &dom0);
}

/* lodge list DOMAIN...: those, in the order given; each that is not
 * running is an error, the rest are listed. */
static int list_some(struct cli *c, struct out *o)
{
	struct lodge_status st;
	struct lodge_err err;
	int i, rc = 0;

	for (i = 0; i < c->argc; i++) {
		/* A domain named 0 that runs is that domain; else 0 is the host. */
		if (lodge_status(&c->lg, c->argv[i], &st, &err) == 0)
			print_domain(o, &st);
		else if (is_domain0(c->argv[i]))
			print_host(o);
		else
			rc = cli_fail(&err);
		fflush(stdout);
	}
	out_end(o);
	return rc;
}

int cmd_list(struct cli *c)
{
	static struct lodge_conflict conflicts[64];
	struct lodge_list l;
	struct lodge_err err;
	struct out o;
	unsigned i, n;
	int rc;

	if (c->set['P']) {
		if (c->argc || c->set['l'])
			return cli_usage_error(c->cmd, "--pool lists the whole pool: no DOMAIN, no --long");
		return cmd_pool_domains(c);
	}
	if ((rc = out_begin(&o, c, list_cols, OUT_NCOLS(list_cols))))
		return rc;
	if (c->argc)
		return list_some(c, &o);
	print_host(&o);
	if (lodge_list(&c->lg, &l, &err)) {
		out_end(&o);
		return cli_fail(&err);
	}
	for (i = 0; i < l.n; i++)
		print_domain(&o, &l.dom[i]);
	fflush(stdout);
	for (i = 0; i < l.nunasked; i++)
		print_unasked(&o, &l.unasked[i]);
	out_end(&o);
	/* Two domains on one bridge claiming an address: after the table, on stderr. */
	if (c->set['l']) {
		n = lodge_conflicts(&c->lg, &l, conflicts, sizeof(conflicts) / sizeof(conflicts[0]));
		for (i = 0; i < n; i++)
			log_warn("address %s on bridge %s is claimed by %s and %s", conflicts[i].addr,
				 conflicts[i].bridge, conflicts[i].first, conflicts[i].others);
	}
	n = l.nunasked;
	lodge_list_free(&l);
	return n ? EXIT_FAILED : EXIT_OK;
}
