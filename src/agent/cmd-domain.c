/* Domain lifecycle commands: create, list, pause, unpause, shutdown,
 * reboot, destroy, uptime, config. */
#include "agent.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int cmd_create(struct cli *c)
{
	static struct domain_config dc;
	struct lodge_err err;

	if (lodge_config_find(&c->lg, c->argv[0], &dc, &err))
		return cli_fail(&err);
	/* The config's checks are lodge check's, the host's memory included. */
	if (lodge_create(&c->lg, &dc, c->set['p'] ? LODGE_CREATE_PAUSED : 0, &err))
		return cli_fail(&err);
	if (c->set['c'])
		return console_tty(&c->lg, dc.name, false);
	return 0;
}

/* xl's six-letter state: r b p s c d. */
static const char *state_letters(const char *state)
{
	if (strcmp(state, "running") == 0) return "r-----";
	if (strcmp(state, "paused") == 0) return "--p---";
	if (strcmp(state, "shutdown") == 0) return "---s--";
	if (strcmp(state, "crashed") == 0) return "----c-";
	return "------";
}

/* Mem is what the domain should have now (its balloon target), as xl
 * list shows after mem-set; -l adds maxmem, the balloon, the guest's own
 * free memory ("-" until its driver reports it), a save or migration
 * under way ("save", "migr:R" in pre-copy round R, "migr:stop" once the
 * vCPUs are parked for the last copy; "-" if none runs), and what KSM
 * merged (left out of RSS) and what transparent huge pages back (tsv:
 * in KiB), both before the addresses, which stay last. */
static void print_domain(const struct cli *c, const struct lodge_status *st)
{
	char gfree[24] = "-", addrs[LODGE_MAX_ADDRS * 48], job[24] = "-";

	if (lodge_saving(st) && st->save_kind == LODGE_SAVE_SNAPSHOT)
		snprintf(job, sizeof(job), "save");
	else if (lodge_saving(st) && st->save_phase == LODGE_SAVE_PRECOPY)
		snprintf(job, sizeof(job), "migr:%u", st->save_round);
	else if (lodge_saving(st))
		snprintf(job, sizeof(job), "migr:stop");
	if (st->guest_stats)
		snprintf(gfree, sizeof(gfree), "%lu", st->guest_free_kib / 1024);
	lodge_addrs_join(st, addrs, sizeof(addrs));
	if (c->set['o'])
		printf("%s\t%u\t%lu\t%u\t%s\t%.1f\t%lu\t%lu\t%d\t%lu\t%lu\t%s\t%lu\t%lu\t%s\n", st->name,
		       st->id, st->target_mib, st->vcpus, st->state, st->cpu_ns / 1e9, st->uptime_s, st->rss_kib,
		       st->pid, st->maxmem_mib, st->balloon_mib, gfree, st->ksm_shared_kib, st->thp_kib, addrs);
	else if (c->set['l'])
		printf("%-24s %5u %9lu %5u %s %10.1f %9lu %9lu %7d %9lu %9lu %9s %-9s %8lu %8lu  %s\n", st->name,
		       st->id, st->target_mib, st->vcpus, state_letters(st->state), st->cpu_ns / 1e9, st->uptime_s,
		       st->rss_kib / 1024, st->pid, st->maxmem_mib, st->balloon_mib, gfree, job,
		       st->ksm_shared_kib / 1024, st->thp_kib / 1024, addrs);
	else
		printf("%-24s %5u %9lu %5u %s %10.1f\n", st->name, st->id, st->target_mib, st->vcpus,
		       state_letters(st->state), st->cpu_ns / 1e9);
}

/* A domain whose lodge-hyp runs but would not say how it is (too many
 * clients, no permission, no answer): listed all the same, state '?',
 * with the reason on stderr, so that a busy domain is never taken for
 * one that is gone. */
static void print_unasked(const struct cli *c, const struct lodge_unasked *u)
{
	log_err("domain %s: cannot ask its status: %s", u->name, u->why);
	if (c->set['o'])
		printf("%s\t-\t-\t-\t?\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n", u->name);
	else if (c->set['l'])
		printf("%-24s %5s %9s %5s %-6s %10s %9s %9s %7s %9s %9s %9s %-9s %8s %8s  %s\n", u->name, "-", "-",
		       "-", "?", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-");
	else
		printf("%-24s %5s %9s %5s %-6s %10s\n", u->name, "-", "-", "-", "?", "-");
}

/* Domain-0, as xl names it: the host. */
static bool is_domain0(const char *arg)
{
	return strcasecmp(arg, "Domain-0") == 0 || strcmp(arg, "0") == 0;
}

static void print_host(const struct cli *c)
{
	struct lodge_status dom0;

	lodge_host_status(&dom0);
	print_domain(c, &dom0);
}

/* lodge list DOMAIN...: those, in the order given; each that is not
 * running is an error, the rest are listed. */
static int list_some(struct cli *c)
{
	struct lodge_status st;
	struct lodge_err err;
	int i, rc = 0;

	for (i = 0; i < c->argc; i++) {
		/* A domain named 0 that runs is that domain; else 0 is the host. */
		if (lodge_status(&c->lg, c->argv[i], &st, &err) == 0)
			print_domain(c, &st);
		else if (is_domain0(c->argv[i]))
			print_host(c);
		else
			rc = cli_fail(&err);
		fflush(stdout);
	}
	return rc;
}

int cmd_list(struct cli *c)
{
	static struct lodge_conflict conflicts[64];
	struct lodge_list l;
	struct lodge_err err;
	unsigned i, n;

	if (!c->set['o'] && c->set['l'])
		printf("%-24s %5s %9s %5s %-6s %10s %9s %9s %7s %9s %9s %9s %-9s %8s %8s  %s\n", "Name", "ID",
		       "Mem(MiB)", "VCPUs", "State", "Time(s)", "Uptime(s)", "RSS(MiB)", "PID", "Max(MiB)",
		       "Bal(MiB)", "Free(MiB)", "Save", "KSM(MiB)", "THP(MiB)", "Addresses");
	else if (!c->set['o'])
		printf("%-24s %5s %9s %5s %-6s %10s\n", "Name", "ID", "Mem(MiB)", "VCPUs", "State", "Time(s)");
	if (c->argc)
		return list_some(c);
	print_host(c);
	if (lodge_list(&c->lg, &l, &err))
		return cli_fail(&err);
	for (i = 0; i < l.n; i++)
		print_domain(c, &l.dom[i]);
	fflush(stdout);
	for (i = 0; i < l.nunasked; i++)
		print_unasked(c, &l.unasked[i]);
	/* Two domains on one bridge claiming an address: after the table, on stderr. */
	if (c->set['l']) {
		fflush(stdout);
		n = lodge_conflicts(&c->lg, &l, conflicts, sizeof(conflicts) / sizeof(conflicts[0]));
		for (i = 0; i < n; i++)
			log_warn("address %s on bridge %s is claimed by %s and %s", conflicts[i].addr,
				 conflicts[i].bridge, conflicts[i].first, conflicts[i].others);
	}
	n = l.nunasked;
	lodge_list_free(&l);
	return n ? EXIT_FAILED : EXIT_OK;
}

int cmd_pause(struct cli *c)
{
	struct lodge_err err;

	return lodge_pause(&c->lg, c->argv[0], &err) ? cli_fail(&err) : 0;
}

int cmd_unpause(struct cli *c)
{
	struct lodge_err err;

	return lodge_unpause(&c->lg, c->argv[0], &err) ? cli_fail(&err) : 0;
}

int cmd_reboot(struct cli *c)
{
	struct lodge_err err;

	return lodge_reboot(&c->lg, c->argv[0], &err) ? cli_fail(&err) : 0;
}

int cmd_destroy(struct cli *c)
{
	struct lodge_err err;

	return lodge_destroy(&c->lg, c->argv[0], &err) ? cli_fail(&err) : 0;
}

int cmd_shutdown(struct cli *c)
{
	struct lodge_err err;
	int wait = c->set['w'] ? (c->set['t'] ? (int)c->num['t'] : 60) : 0;

	return lodge_shutdown(&c->lg, c->argv[0], wait, &err) ? cli_fail(&err) : 0;
}

static void print_uptime(const struct lodge_status *st)
{
	unsigned long s = st->uptime_s;

	printf("%-24s %5u %lu days, %02lu:%02lu:%02lu\n", st->name, st->id, s / 86400,
	       s / 3600 % 24, s / 60 % 60, s % 60);
}

int cmd_uptime(struct cli *c)
{
	struct lodge_status dom0;
	struct lodge_list l;
	struct lodge_err err;
	unsigned i;

	printf("%-24s %5s %s\n", "Name", "ID", "Uptime");
	lodge_host_status(&dom0);
	print_uptime(&dom0);
	if (lodge_list(&c->lg, &l, &err))
		return cli_fail(&err);
	for (i = 0; i < l.n; i++)
		print_uptime(&l.dom[i]);
	lodge_list_free(&l);
	return 0;
}

/* The resolved config a running domain was started with, or the file's. */
int cmd_config(struct cli *c)
{
	static struct domain_config dc;
	struct lodge_err err;
	char *text, msg[1024];
	int rc = lodge_running_config_text(&c->lg, c->argv[0], &text, &err);

	if (rc == 0) {
		fputs(text, stdout);
		free(text);
		return 0;
	}
	if (rc != -ENOENT && rc != -EINVAL)
		return cli_fail(&err);
	if (lodge_config_find(&c->lg, c->argv[0], &dc, &err))
		return cli_fail(&err);
	if (domain_config_save("/dev/stdout", &dc, msg, sizeof(msg))) {
		log_err("%s", msg);
		return 1;
	}
	return 0;
}
