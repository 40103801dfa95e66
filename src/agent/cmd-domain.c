/* Domain lifecycle commands: create, list, pause, unpause, shutdown,
 * reboot, destroy, uptime, config. */
#include "agent.h"
#include "client.h"
#include "console.h"
#include "domains.h"
#include "log.h"
#include "netview.h"
#include "runtime.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A name or a file: NAME means DOMAINS_DIR/NAME.cfg, as xl create does. */
static int load_config(const char *arg, const struct host_config *hc, struct domain_config *dc)
{
	char path[CFG_PATH_MAX + 80], err[1024];
	struct stat st;

	if (strchr(arg, '/') || stat(arg, &st) == 0)
		snprintf(path, sizeof(path), "%s", arg);
	else
		snprintf(path, sizeof(path), "%s/%s.cfg", hc->domains_dir, arg);
	if (domain_config_load(path, hc, true, dc, err, sizeof(err))) {
		log_err("%s", err);
		return -EINVAL;
	}
	return 0;
}

int cmd_create(int argc, char **argv)
{
	static struct domain_config dc;
	struct host_config hc;
	int c, console = 0, paused = 0;

	optind = 1;
	while ((c = getopt(argc, argv, "cp")) != -1) {
		if (c == 'c') console = 1;
		else if (c == 'p') paused = 1;
		else return EXIT_USAGE;
	}
	if (optind != argc - 1)
		return EXIT_USAGE;
	/* The config's checks are lodge check's, the host's memory included. */
	if (agent_host_config(&hc) || load_config(argv[optind], &hc, &dc))
		return 1;
	if (domain_start(&dc, &hc, paused, -1))
		return 1;
	if (console)
		return console_attach(hc.runtime_dir, dc.name, 0);
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

struct list_opts {
	int long_fmt, tsv;
	const struct host_config *hc;
	struct addr_claims *claims;
	unsigned unasked;            /* domains shown with state '?' */
};

/* Mem is what the domain should have now (its balloon target), as xl
 * list shows after mem-set; -l adds maxmem, the balloon, the guest's own
 * free memory ("-" until its driver reports it), a save or migration
 * under way ("save", "migr:R" in pre-copy round R, "migr:stop" once the
 * vCPUs are parked for the last copy; "-" if none runs), and what KSM
 * merged (left out of RSS) and what transparent huge pages back (tsv:
 * in KiB), both before the addresses, which stay last. */
static void print_domain(const struct dom_status *st, void *arg)
{
	const struct list_opts *o = arg;
	char gfree[24] = "-", addrs[DOM_MAX_ADDRS * 48], job[24] = "-";

	if (dom_saving(st) && st->save_kind == DOM_SAVE_SNAPSHOT)
		snprintf(job, sizeof(job), "save");
	else if (dom_saving(st) && st->save_phase == DOM_SAVE_PRECOPY)
		snprintf(job, sizeof(job), "migr:%u", st->save_round);
	else if (dom_saving(st))
		snprintf(job, sizeof(job), "migr:stop");
	if (st->guest_stats)
		snprintf(gfree, sizeof(gfree), "%lu", st->guest_free_kib / 1024);
	netview_join_addrs(st, addrs, sizeof(addrs));
	if (o->claims)
		netview_claims_add(o->claims, o->hc->runtime_dir, o->hc, st);
	if (o->tsv)
		printf("%s\t%u\t%lu\t%u\t%s\t%.1f\t%lu\t%lu\t%d\t%lu\t%lu\t%s\t%lu\t%lu\t%s\n", st->name,
		       st->id, st->target_mib, st->vcpus, st->state, st->cpu_ns / 1e9, st->uptime_s, st->rss_kib,
		       st->pid, st->maxmem_mib, st->balloon_mib, gfree, st->ksm_shared_kib, st->thp_kib, addrs);
	else if (o->long_fmt)
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
static void print_unasked(const char *name, const char *why, void *arg)
{
	struct list_opts *o = arg;

	o->unasked++;
	log_err("domain %s: cannot ask its status: %s", name, why);
	if (o->tsv)
		printf("%s\t-\t-\t-\t?\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n", name);
	else if (o->long_fmt)
		printf("%-24s %5s %9s %5s %-6s %10s %9s %9s %7s %9s %9s %9s %-9s %8s %8s  %s\n", name, "-", "-", "-",
		       "?", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-");
	else
		printf("%-24s %5s %9s %5s %-6s %10s\n", name, "-", "-", "-", "?", "-");
}

/* Domain-0: the host itself, first, as xl list shows it. */
static void host_status(struct dom_status *st)
{
	FILE *f = fopen("/proc/stat", "r");
	unsigned long long user = 0, nice = 0, sys = 0;
	long tck = sysconf(_SC_CLK_TCK);

	memset(st, 0, sizeof(*st));
	snprintf(st->name, sizeof(st->name), "Domain-0");
	snprintf(st->state, sizeof(st->state), "running");
	st->vcpus = sysconf(_SC_NPROCESSORS_ONLN);
	st->memory_mib = (unsigned long)((uint64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGE_SIZE) >> 20);
	st->target_mib = st->maxmem_mib = st->memory_mib;
	if (f && fscanf(f, "cpu %llu %llu %llu", &user, &nice, &sys) == 3)
		st->cpu_ns = (user + nice + sys) * (1000000000ULL / (tck > 0 ? tck : 100));
	if (f)
		fclose(f);
	f = fopen("/proc/uptime", "r");
	if (f) {
		double up;

		if (fscanf(f, "%lf", &up) == 1)
			st->uptime_s = up;
		fclose(f);
	}
	st->pid = 1;
}

int cmd_list(int argc, char **argv)
{
	struct host_config hc;
	struct list_opts o = { 0 };
	struct status_poller *p;
	struct dom_status dom0;
	int c;

	optind = 1;
	while ((c = getopt(argc, argv, "lo:")) != -1) {
		if (c == 'l') o.long_fmt = 1;
		else if (c == 'o' && strcmp(optarg, "tsv") == 0) o.tsv = 1;
		else return EXIT_USAGE;
	}
	if (optind != argc || agent_host_config(&hc))
		return optind != argc ? EXIT_USAGE : 1;
	if (!o.tsv && o.long_fmt)
		printf("%-24s %5s %9s %5s %-6s %10s %9s %9s %7s %9s %9s %9s %-9s %8s %8s  %s\n", "Name", "ID",
		       "Mem(MiB)", "VCPUs", "State", "Time(s)", "Uptime(s)", "RSS(MiB)", "PID", "Max(MiB)",
		       "Bal(MiB)", "Free(MiB)", "Save", "KSM(MiB)", "THP(MiB)", "Addresses");
	else if (!o.tsv)
		printf("%-24s %5s %9s %5s %-6s %10s\n", "Name", "ID", "Mem(MiB)", "VCPUs", "State", "Time(s)");
	host_status(&dom0);
	print_domain(&dom0, &o);
	if (o.long_fmt) {
		static struct addr_claims claims;

		o.hc = &hc;
		o.claims = &claims;
	}
	if (!(p = status_poller_new())) {
		log_err("%s", strerror(ENOMEM));
		return 1;
	}
	status_poller_on_unasked(p, print_unasked);
	status_poller_scan(p, hc.runtime_dir, print_domain, &o);
	status_poller_free(p);
	/* Two domains on one bridge claiming an address: after the table, on stderr. */
	if (o.claims)
		netview_claims_warn(o.claims);
	return o.unasked ? 1 : 0;
}

/* pause, unpause, reboot, destroy: one request each. */
static int simple_request(int argc, char **argv, const char *cmd)
{
	struct host_config hc;
	struct reply r;
	int rc;

	if (argc != 2)
		return EXIT_USAGE;
	if (agent_host_config(&hc))
		return 1;
	rc = client_call(hc.runtime_dir, argv[1], cmd, 0, &r);
	if (rc == -ENOENT || rc == -ECONNREFUSED) {
		log_err("no domain named %s is running", argv[1]);
		return 1;
	}
	if (rc) {
		log_err("domain %s: %s", argv[1], strerror(-rc));
		return 1;
	}
	if (r.error[0]) {
		log_err("%s", r.error);
		return 1;
	}
	return 0;
}

int cmd_pause(int argc, char **argv) { return simple_request(argc, argv, "pause"); }
int cmd_unpause(int argc, char **argv) { return simple_request(argc, argv, "unpause"); }
int cmd_reboot(int argc, char **argv) { return simple_request(argc, argv, "reboot"); }

/* Wait (bounded) until the domain's lodge-hyp is gone. */
static int wait_gone(const char *rundir, const char *name, int seconds)
{
	struct dom_status st;
	int i;

	for (i = 0; i < seconds * 20; i++) {
		if (domain_status(rundir, name, &st) == -ENOENT)
			return 0;
		usleep(50000);
	}
	return -ETIMEDOUT;
}

int cmd_destroy(int argc, char **argv)
{
	struct host_config hc;
	int rc = simple_request(argc, argv, "destroy");

	if (rc || agent_host_config(&hc))
		return rc ? rc : 1;
	/* destroy is done when the process and its runtime directory are. */
	if (wait_gone(hc.runtime_dir, argv[1], 10)) {
		log_err("domain %s did not go away within 10 s", argv[1]);
		return 1;
	}
	return 0;
}

int cmd_shutdown(int argc, char **argv)
{
	struct host_config hc;
	int c, wait = 0, secs = 60;
	char *args[2];

	optind = 1;
	while ((c = getopt(argc, argv, "wt:")) != -1) {
		if (c == 'w') wait = 1;
		else if (c == 't') secs = atoi(optarg);
		else return EXIT_USAGE;
	}
	if (optind != argc - 1)
		return EXIT_USAGE;
	args[0] = argv[0];
	args[1] = argv[optind];
	if ((c = simple_request(2, args, "shutdown")))
		return c;
	if (!wait)
		return 0;
	if (agent_host_config(&hc))
		return 1;
	if (wait_gone(hc.runtime_dir, args[1], secs)) {
		log_err("domain %s did not shut down within %d s (lodge destroy ends it)", args[1], secs);
		return 1;
	}
	return 0;
}

static void print_uptime(const struct dom_status *st, void *arg)
{
	unsigned long s = st->uptime_s;

	(void)arg;
	printf("%-24s %5u %lu days, %02lu:%02lu:%02lu\n", st->name, st->id, s / 86400,
	       s / 3600 % 24, s / 60 % 60, s % 60);
}

int cmd_uptime(int argc, char **argv)
{
	struct host_config hc;
	struct dom_status dom0;

	if (argc != 1 || agent_host_config(&hc))
		return argc != 1 ? EXIT_USAGE : 1;
	printf("%-24s %5s %s\n", "Name", "ID", "Uptime");
	host_status(&dom0);
	print_uptime(&dom0, NULL);
	domains_scan(hc.runtime_dir, print_uptime, NULL);
	return 0;
}

/* The resolved config a running domain was started with, or the file's. */
int cmd_config(int argc, char **argv)
{
	static struct domain_config dc;
	struct host_config hc;
	char path[CFG_PATH_MAX + 80], err[1024];
	FILE *f;
	int c;

	if (argc != 2 || agent_host_config(&hc))
		return argc != 2 ? EXIT_USAGE : 1;
	runtime_path(path, sizeof(path), hc.runtime_dir, argv[1], RT_CONFIG);
	if (access(path, R_OK) != 0) {
		if (load_config(argv[1], &hc, &dc))
			return 1;
		snprintf(path, sizeof(path), "/dev/stdout");
		if (domain_config_save(path, &dc, err, sizeof(err))) {
			log_err("%s", err);
			return 1;
		}
		return 0;
	}
	f = fopen(path, "r");
	while (f && (c = fgetc(f)) != EOF)
		putchar(c);
	if (f)
		fclose(f);
	return 0;
}
