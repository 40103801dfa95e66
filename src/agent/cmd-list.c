/* lodge list [-l] [-o FORMAT] [DOMAIN...]: the running domains, Domain-0
 * (the host) first, as xl list shows them.
 *
 * Mem is what the domain should have now (its balloon target), as xl
 * list shows after mem-set; -l adds maxmem, the balloon, the guest's own
 * free memory ("-" until its driver reports it), a save or migration
 * under way ("save", "migr:R" in pre-copy round R, "migr:stop" once the
 * vCPUs are parked for the last copy; "-" if none runs), and what KSM
 * merged (left out of RSS) and what transparent huge pages back (tsv
 * and JSON: in KiB), both before the addresses, which stay last.
 * --all adds the domains defined in domains_dir that are not running
 * (state off), as virsh list --all, and each one's autostart. */
#include "agent.h"
#include "domain-list.h"
#include "log.h"
#include "output.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The defined domains, for --all (l->n 0 without). */
static struct lodge_defined_list defined;

static const struct lodge_defined *defined_named(const char *name)
{
	unsigned i;

	for (i = 0; i < defined.n; i++)
		if (strcmp(defined.dom[i].name, name) == 0)
			return &defined.dom[i];
	return NULL;
}

static void print_domain(struct out *o, const struct lodge_status *st)
{
	struct list_row r;

	domain_list_row(&r, st);
	r.def = defined_named(st->name);
	out_row(o, &r);
}

/* The defined domains that are not running, after the running ones. */
static void print_off(struct out *o, const struct lodge_list *l)
{
	struct list_row r;
	unsigned i, j;

	for (i = 0; i < defined.n; i++) {
		bool listed = defined.dom[i].running;

		for (j = 0; j < l->n && !listed; j++)
			listed = strcmp(l->dom[j].name, defined.dom[i].name) == 0;
		for (j = 0; j < l->nunasked && !listed; j++)
			listed = strcmp(l->unasked[j].name, defined.dom[i].name) == 0;
		if (listed)
			continue;
		/* Listed all the same: its name is taken, and delete may want it. */
		if (!defined.dom[i].loads)
			log_warn("%s", defined.dom[i].why);
		domain_list_row_defined(&r, &defined.dom[i]);
		out_row(o, &r);
	}
}

static void print_unasked(struct out *o, const struct lodge_unasked *u)
{
	struct list_row r;

	domain_list_row_unasked(&r, u);
	log_err("domain %s: cannot ask its status: %s", u->name, u->why);
	out_row(o, &r);
}

/* Domain-0, as xl names it: the host. */
static bool is_domain0(const char *arg)
{
	return domain_name_is_host(arg) || strcmp(arg, "0") == 0;
}

static void print_host(struct out *o)
{
	struct lodge_status dom0;

	lodge_host_status(&dom0);
	print_domain(o, &dom0);
}

/* lodge list DOMAIN...: those, in the order given; each that is not
 * running (with --all: nor defined) is an error, the rest are listed. */
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
		else if (defined_named(c->argv[i])) {
			struct list_row r;

			domain_list_row_defined(&r, defined_named(c->argv[i]));
			out_row(o, &r);
		} else
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
	if (c->set['a'] && lodge_defined_list(&c->lg, &defined, &err))
		return cli_fail(&err);
	if ((rc = c->set['a'] ? out_begin(&o, c, domain_list_all_cols, domain_list_all_ncols) :
	     out_begin(&o, c, domain_list_cols, domain_list_ncols)))
		return rc;
	if (c->argc) {
		rc = list_some(c, &o);
		lodge_defined_list_free(&defined);
		return rc;
	}
	print_host(&o);
	if (lodge_list(&c->lg, &l, &err)) {
		out_end(&o);
		lodge_defined_list_free(&defined);
		return cli_fail(&err);
	}
	for (i = 0; i < l.n; i++)
		print_domain(&o, &l.dom[i]);
	fflush(stdout);
	for (i = 0; i < l.nunasked; i++)
		print_unasked(&o, &l.unasked[i]);
	print_off(&o, &l);
	out_end(&o);
	/* A domain kept after its crash (on_crash = "preserve"): why, after
	 * the table (a KVM internal error names the instruction). */
	for (i = 0; i < l.n; i++)
		if (l.dom[i].state == DOMAIN_STATE_CRASHED && l.dom[i].end_reason[0] && strcmp(l.dom[i].end_reason, "-"))
			log_warn("%s crashed: %s", l.dom[i].name, l.dom[i].end_reason);
	/* Two domains on one bridge claiming an address: after the table, on stderr. */
	if (c->set['l']) {
		n = lodge_conflicts(&c->lg, &l, conflicts, sizeof(conflicts) / sizeof(conflicts[0]));
		for (i = 0; i < n; i++)
			log_warn("address %s on bridge %s is claimed by %s and %s", conflicts[i].addr,
				 conflicts[i].bridge, conflicts[i].first, conflicts[i].others);
	}
	n = l.nunasked;
	lodge_list_free(&l);
	lodge_defined_list_free(&defined);
	return n ? EXIT_FAILED : EXIT_OK;
}
