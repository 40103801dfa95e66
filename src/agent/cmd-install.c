/* lodge install, template-list, template-update, template-delete: Debian
 * guests cloned from templates (the library does the work: src/lib/install/
 * template.c, clone.c, install.c).  Progress goes to stderr: on a
 * terminal a line redrawn, the phase and a bar; otherwise a plain line
 * per phase.  Ctrl-C (or SIGTERM, SIGHUP) cancels: the library then
 * undoes what it made. */
#include "agent.h"
#include "log.h"
#include "output.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BAR_WIDTH 30

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static void catch_stops(void)
{
	struct sigaction sa = { .sa_handler = on_stop };   /* no SA_RESTART: waits return */

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

struct show {
	const char *what;              /* "install web", "template bookworm" */
	bool tty, drawn;
	enum lodge_phase shown;
	int pct;
};

static void erase(struct show *s)
{
	if (s->drawn)
		fputs("\r\033[K", stderr);
	s->drawn = false;
}

static bool show_progress(const struct lodge_job_progress *p, void *arg)
{
	struct show *s = arg;
	char bar[BAR_WIDTH + 1];
	int fill, i;

	if (p->note) {
		erase(s);
		fprintf(stderr, "lodge: %s: %s\n", s->what, p->note);
	}
	if (!s->tty) {
		if (p->phase != s->shown && p->phase != LODGE_PHASE_DONE) {
			fprintf(stderr, "lodge: %s: %s\n", s->what, lodge_phase_words(p->phase));
			s->shown = p->phase;
		}
	} else if (p->phase != s->shown || p->pct != s->pct || !s->drawn) {
		fill = p->pct * BAR_WIDTH / 100;
		for (i = 0; i < BAR_WIDTH; i++)
			bar[i] = i < fill ? '=' : i == fill ? '>' : ' ';
		bar[BAR_WIDTH] = '\0';
		fprintf(stderr, "\r\033[K%-40.40s [%s] %3d%%", lodge_phase_words(p->phase), bar, p->pct);
		s->drawn = true;
		s->shown = p->phase;
		s->pct = p->pct;
	}
	fflush(stderr);
	return !stop_signal;
}

static const char *duration(long ms, char *buf, size_t len)
{
	if (ms < 60000)
		snprintf(buf, len, "%.1f s", ms / 1000.0);
	else
		snprintf(buf, len, "%ldm%02lds", ms / 60000, ms / 1000 % 60);
	return buf;
}

static int job_failed(struct show *s, const struct lodge_err *err)
{
	erase(s);
	return cli_fail(err);
}

/* ---- lodge install ---------------------------------------------------------------------- */

int cmd_install(struct cli *c)
{
	static struct lodge_install_result res;
	char what[DOMAIN_NAME_MAX + 16], t1[32], t2[32];
	struct show s = { .what = what, .tty = isatty(STDERR_FILENO), .shown = LODGE_PHASE_CHECK, .pct = -1 };
	struct lodge_install_opts o = {
		.name = c->argv[0], .dist = c->text['d'], .disk = c->text['D'], .bridge = c->text['b'], .network = c->text['N'],
		.memory_mib = c->set['m'] ? (unsigned)c->num['m'] : 0, .vcpus = c->set['c'] ? (unsigned)c->num['c'] : 0,
		.packages = c->text['P'], .ssh_key_file = c->text['k'], .password_file = c->text['p'],
		.user_data_file = c->text['u'], .dry_run = c->set['n'], .progress = show_progress, .arg = &s,
	};
	struct lodge_err err;
	unsigned long mib;

	snprintf(what, sizeof(what), "install %s", c->argv[0]);
	if (c->set['s']) {
		if (cli_parse_mib(c->text['s'], &mib) || !mib)
			return cli_usage_error(c->cmd, "--size: '%s' is not a size (a number with an optional unit: "
					       "b, k, m, g, t; no unit: MiB)", c->text['s']);
		o.size = (uint64_t)mib << 20;
	}
	catch_stops();
	if (lodge_install(&c->lg, &o, &res, &err)) {
		if (err.msg[0] && !strcmp(err.msg, "cancelled"))
			snprintf(err.msg, sizeof(err.msg), "install %s: cancelled (%s): no disk or config left",
				 c->argv[0], stop_signal ? strsignal(stop_signal) : "stopped");
		return job_failed(&s, &err);
	}
	erase(&s);
	if (o.dry_run) {
		printf("would install %s: Debian %s on %s (%s, %.1f GiB)%s\n", c->argv[0],
		       o.dist ? o.dist : LODGE_DIST_DEFAULT, res.disk, res.is_partition ? "partition" : "new file",
		       res.disk_bytes / 1073741824.0, res.template_built ? ", its template built first" : "");
		if (res.net.created)
			printf("would create network %s first (NAT, %s, autostart)\n", LODGE_NETWORK_DEFAULT, res.net.subnet);
		printf("would write %s:\n%s", res.config, res.config_text);
		if (res.template_built) {
			static char command[16384];

			if (lodge_template_command(&c->lg, o.dist ? o.dist : LODGE_DIST_DEFAULT, command,
						   sizeof(command), &err) == 0)
				printf("would build the template first with:\n%s", command);
		}
		return 0;
	}
	printf("installed %s: Debian %s on %s (%.1f GiB, UUID %s) in %s\n", c->argv[0], res.tmpl.dist, res.disk,
	       res.disk_bytes / 1073741824.0, res.uuid, duration(res.total_ms, t1, sizeof(t1)));
	if (res.template_built)
		printf("  (its template %s was built first, in %s)\n", res.tmpl.name, duration(res.template_ms, t2, sizeof(t2)));
	if (res.net.created)
		printf("  (network %s was created first: NAT, %s, autostart)\n", LODGE_NETWORK_DEFAULT, res.net.subnet);
	printf("  config %s; start it with: lodge create %s\n", res.config, c->argv[0]);
	return 0;
}

/* ---- templates ----------------------------------------------------------------------------- */

OUT_GETTER(get_name, struct lodge_template, out_str(v, r->name))
OUT_GETTER(get_dist, struct lodge_template, out_str(v, r->dist))
OUT_GETTER(get_arch, struct lodge_template, out_str(v, r->arch))
OUT_GETTER(get_size_mib, struct lodge_template, out_uint(v, (r->bytes + (1u << 20) - 1) >> 20))
OUT_GETTER(get_size, struct lodge_template, out_uint(v, r->bytes))
OUT_GETTER(get_used_mib, struct lodge_template, out_uint(v, (r->used_bytes + (1u << 20) - 1) >> 20))
OUT_GETTER(get_used, struct lodge_template, out_uint(v, r->used_bytes))
OUT_GETTER(get_kernel, struct lodge_template, r->kernel[0] ? out_str(v, r->kernel) : out_null(v))
OUT_GETTER(get_built_unix, struct lodge_template, r->built ? out_int(v, r->built) : out_null(v))
OUT_GETTER(get_build_s, struct lodge_template, out_int(v, r->build_s))
OUT_GETTER(get_path, struct lodge_template, out_str(v, r->path))

static void get_built(const void *row, struct out_val *v)
{
	static char when[32];
	const struct lodge_template *t = row;
	time_t at = (time_t)t->built;
	struct tm tm;

	if (!t->built || !localtime_r(&at, &tm)) {
		out_null(v);
		return;
	}
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	out_str(v, when);
}

static const struct out_col template_cols[] = {
	{ "Template", "template", -16, 0, 0, get_name, NULL },
	{ "Dist", "dist", -10, 0, OUT_DATA_ONLY, get_dist, NULL },
	{ "Arch", "arch", -6, 0, OUT_DATA_ONLY, get_arch, NULL },
	{ "Size(M)", "size_mib", 8, 0, OUT_TEXT_ONLY, get_size_mib, NULL },
	{ "Used(M)", "used_mib", 8, 0, OUT_TEXT_ONLY, get_used_mib, NULL },
	{ "", "size_bytes", 0, 0, OUT_DATA_ONLY, get_size, NULL },
	{ "", "used_bytes", 0, 0, OUT_DATA_ONLY, get_used, NULL },
	{ "Kernel", "kernel", -24, 0, OUT_GAP2, get_kernel, NULL },
	{ "Built", "built", -16, 0, OUT_TEXT_ONLY, get_built, NULL },
	{ "", "built_unix", 0, 0, OUT_DATA_ONLY, get_built_unix, NULL },
	{ "", "build_seconds", 0, 0, OUT_DATA_ONLY, get_build_s, NULL },
	{ "Image", "path", -1, 0, OUT_LONG | OUT_GAP2, get_path, NULL },
};

#define TEMPLATES_MAX 64

int cmd_template_list(struct cli *c)
{
	static struct lodge_template t[TEMPLATES_MAX];
	struct lodge_err err;
	struct out o;
	int n, i, rc;

	if ((n = lodge_template_list(&c->lg, t, TEMPLATES_MAX, &err)) < 0)
		return cli_fail(&err);
	if ((rc = out_begin(&o, c, template_cols, OUT_NCOLS(template_cols))))
		return rc;
	for (i = 0; i < n && i < TEMPLATES_MAX; i++)
		out_row(&o, &t[i]);
	out_end(&o);
	return 0;
}

int cmd_template_update(struct cli *c)
{
	char what[LODGE_DIST_MAX + 16], t1[32];
	struct show s = { .what = what, .tty = isatty(STDERR_FILENO), .shown = LODGE_PHASE_CHECK, .pct = -1 };
	static char command[16384];
	struct lodge_template t;
	struct lodge_err err;

	snprintf(what, sizeof(what), "template %s", c->argv[0]);
	if (c->set['n']) {
		if (lodge_template_command(&c->lg, c->argv[0], command, sizeof(command), &err))
			return cli_fail(&err);
		fputs(command, stdout);
		return 0;
	}
	catch_stops();
	if (lodge_template_update(&c->lg, c->argv[0], show_progress, &s, &t, &err)) {
		if (!strcmp(err.msg, "cancelled"))
			snprintf(err.msg, sizeof(err.msg), "template %s: cancelled (%s): the template is as it was",
				 c->argv[0], stop_signal ? strsignal(stop_signal) : "stopped");
		return job_failed(&s, &err);
	}
	erase(&s);
	printf("built the %s template %s (%llu MiB, kernel %s) in %s\n", t.dist, t.path,
	       (unsigned long long)(t.bytes >> 20), t.kernel, duration(t.build_s * 1000, t1, sizeof(t1)));
	return 0;
}

int cmd_template_delete(struct cli *c)
{
	struct lodge_err err;

	if (lodge_template_delete(&c->lg, c->argv[0], &err))
		return cli_fail(&err);
	printf("deleted the %s template\n", c->argv[0]);
	return 0;
}
