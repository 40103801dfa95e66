/* Debian installs from the create form.  lodge_install returns only when
 * done (minutes for a first install), so each runs as a job (lodge/job.h),
 * its progress hook the job's progress; the main loop reads the job's
 * pipe without waiting, beside the keys and the replies.  Leaving the form or
 * any view does not stop an install.  A cancel is the command line's
 * Ctrl-C: SIGTERM to the child, whose hook then says stop, and
 * lodge_install undoes what it made.  The dashboard ending (quit, a
 * signal, or killed: PR_SET_PDEATHSIG) cancels its installs the same way. */
#include "tui.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the child (lodge_job_*) -------------------------------------------------------------------- */

/* What a done install made: the job's result. */
struct install_made {
	int32_t template_built;
	uint64_t disk_bytes;
	int64_t total_ms, template_ms;
	char dist[LODGE_DIST_MAX];
	char disk[CFG_PATH_MAX];
};
_Static_assert(sizeof(struct install_made) <= LODGE_JOB_RESULT_MAX, "what an install made fits a job's result");

struct install_work {
	const struct lodge *lg;
	struct lodge_install_opts o;
};

static bool child_hook(const struct lodge_job_progress *p, void *arg)
{
	return lodge_job_progress(p->phase, p->pct, p->note);
}

static int install_work(void *arg, struct lodge_job_end *end)
{
	static struct lodge_install_result res;
	struct install_work *w = arg;
	struct install_made made = { 0 };
	struct lodge_err err;
	int rc;

	prctl(PR_SET_NAME, "lodge-install");
	w->o.progress = child_hook;
	w->o.arg = NULL;
	rc = lodge_install(w->lg, &w->o, &res, &err);
	/* A cancel reaches the job's whole group: a tool it ran (cloud-init,
	 * mmdebstrap) may be what failed, and lodge_install undid it all. */
	if (rc && lodge_job_stopping())
		rc = -ECANCELED;
	if (rc == -ECANCELED)
		snprintf(end->error, sizeof(end->error), "install %s: cancelled: no disk or config left", w->o.name);
	else if (rc)
		snprintf(end->error, sizeof(end->error), "install %s: %.*s", w->o.name, (int)sizeof(end->error) - 80, err.msg);
	if (rc)
		return rc;
	snprintf(made.dist, sizeof(made.dist), "%s", res.tmpl.dist);
	snprintf(made.disk, sizeof(made.disk), "%s", res.disk);
	made.disk_bytes = res.disk_bytes;
	made.total_ms = res.total_ms;
	made.template_ms = res.template_ms;
	made.template_built = res.template_built;
	memcpy(end->result, &made, sizeof(made));
	end->result_len = sizeof(made);
	return 0;
}

/* ---- the dashboard's side ----------------------------------------------------------------------- */

static struct tui_install *find_install(struct tui *t, const char *name)
{
	unsigned i;

	for (i = 0; i < TUI_MAX_INSTALLS; i++)
		if (t->installs[i].used && strcmp(t->installs[i].name, name) == 0)
			return &t->installs[i];
	return NULL;
}

/* The install's row in the table (sampling keeps it while d->install is set). */
static struct dom_sample *row_of(struct tui *t, const struct tui_install *in)
{
	unsigned i;

	for (i = 0; i < t->ndoms; i++)
		if (t->doms[i].install == in)
			return &t->doms[i];
	return NULL;
}

static void install_free(struct tui *t, struct tui_install *in)
{
	struct dom_sample *d = row_of(t, in);

	lodge_job_release(&in->job);
	if (d) {
		/* Its row goes with it (an install row has no detail). */
		unsigned i = (unsigned)(d - t->doms);

		memmove(&t->doms[i], &t->doms[i + 1], (t->ndoms - i - 1) * sizeof(t->doms[0]));
		t->ndoms--;
		sample_sort(t);
	}
	memset(in, 0, sizeof(*in));
	in->job.fd = -1;
}

void install_forget(struct tui *t, struct dom_sample *d)
{
	struct tui_install *in = d->install;

	if (!in || in->state != INSTALL_DONE)
		return;
	d->install = NULL;
	memset(in, 0, sizeof(*in));
	in->job.fd = -1;
}

int install_start(struct tui *t, const struct lodge_install_opts *o, struct lodge_err *err)
{
	static struct lodge_install_result res;
	struct lodge_install_opts dry = *o;
	struct tui_install *in = NULL;
	static struct install_work work;
	struct dom_sample *d;
	char why[256];
	unsigned i;
	int rc;

	for (i = 0; i < TUI_MAX_INSTALLS && !in; i++)
		if (!t->installs[i].used)
			in = &t->installs[i];
	if (!in) {
		snprintf(err->msg, sizeof(err->msg), "install %s: %d installs are under way already; wait for one",
			 o->name, TUI_MAX_INSTALLS);
		return -EBUSY;
	}
	if (find_install(t, o->name)) {
		snprintf(err->msg, sizeof(err->msg), "install %s: the dashboard is installing it already", o->name);
		return -EEXIST;
	}
	if (t->ndoms == TUI_MAX_DOMAINS) {
		snprintf(err->msg, sizeof(err->msg), "install %s: the table is full (%d rows)", o->name,
			 TUI_MAX_DOMAINS);
		return -ENOSPC;
	}
	/* Every check lodge_install makes, here, nothing written: a refusal
	 * shows in the form, whole, before any child runs. */
	dry.dry_run = true;
	dry.progress = NULL;
	if (lodge_install(t->lg, &dry, &res, err))
		return -EINVAL;
	work.lg = t->lg;
	work.o = *o;
	memset(in, 0, sizeof(*in));
	if ((rc = lodge_job_start(&in->job, install_work, &work, LODGE_JOB_DETACH, why, sizeof(why)))) {
		snprintf(err->msg, sizeof(err->msg), "install %s: %s", o->name, why);
		in->job.fd = -1;
		return rc;
	}
	in->used = true;
	in->state = INSTALL_RUNNING;
	snprintf(in->name, sizeof(in->name), "%s", o->name);
	snprintf(in->dist, sizeof(in->dist), "%s", o->dist ? o->dist : LODGE_DIST_DEFAULT);
	snprintf(in->disk, sizeof(in->disk), "%s", res.disk);
	in->memory_mib = o->memory_mib ? o->memory_mib : LODGE_INSTALL_MEMORY_DEFAULT;
	in->vcpus = o->vcpus ? o->vcpus : 1;
	in->phase = LODGE_PHASE_CHECK;
	in->started_ns = tui_now_ns();
	/* Its row, at once. */
	d = &t->doms[t->ndoms++];
	memset(d, 0, sizeof(*d));
	snprintf(d->st.name, sizeof(d->st.name), "%s", o->name);
	d->st.state = DOMAIN_STATE_INSTALLING;
	d->st.target_mib = in->memory_mib;
	d->st.vcpus = in->vcpus;
	d->install = in;
	sample_sort(t);
	return 0;
}

unsigned installs_running(const struct tui *t)
{
	unsigned i, n = 0;

	for (i = 0; i < TUI_MAX_INSTALLS; i++)
		n += t->installs[i].used && t->installs[i].state != INSTALL_DONE;
	return n;
}

unsigned installs_pollfds(struct tui *t, struct pollfd *fds, unsigned max)
{
	unsigned i, n = 0;

	for (i = 0; i < TUI_MAX_INSTALLS && n < max; i++)
		if (t->installs[i].used && lodge_job_fd(&t->installs[i].job) >= 0)
			fds[n++] = (struct pollfd){ lodge_job_fd(&t->installs[i].job), POLLIN, 0 };
	return n;
}

static void fmt_duration(char *buf, size_t len, long long ms)
{
	if (ms < 60000)
		snprintf(buf, len, "%.1f s", ms / 1000.0);
	else
		snprintf(buf, len, "%lldm%02llds", ms / 60000, ms / 1000 % 60);
}

/* The job's end: the row becomes a stopped domain, or goes with the
 * error shown whole. */
static void on_end(struct tui *t, struct tui_install *in, const struct lodge_job_end *e)
{
	struct dom_sample *d = row_of(t, in);
	char took[32], tmpl[96] = "";
	struct install_made m;

	if (e->rc || e->result_len != sizeof(m)) {
		if (in->job.ended)
			tui_status(t, true, "%s", e->error);
		else
			tui_status(t, true, "install %s: %s", in->name, e->error);
		install_free(t, in);
		return;
	}
	memcpy(&m, e->result, sizeof(m));
	m.dist[sizeof(m.dist) - 1] = m.disk[sizeof(m.disk) - 1] = '\0';
	in->state = INSTALL_DONE;
	in->phase = LODGE_PHASE_DONE;
	in->pct = 100;
	snprintf(in->disk, sizeof(in->disk), "%s", m.disk);
	fmt_duration(took, sizeof(took), m.total_ms);
	if (m.template_built) {
		char built[32];

		fmt_duration(built, sizeof(built), m.template_ms);
		snprintf(tmpl, sizeof(tmpl), " (its template built first, in %s)", built);
	}
	snprintf(in->result, sizeof(in->result), "Debian %.*s on %s (%.1f GiB) in %s%s", LODGE_DIST_MAX,
		 m.dist, in->disk, m.disk_bytes / 1073741824.0, took, tmpl);
	tui_status(t, false, "installed %s: %s; S starts it", in->name, in->result);
	if (d)
		d->st.state = DOMAIN_STATE_SHUTDOWN;
}

/* What has come from one install's job; its end once the job is over
 * (an end that never came: it died, killed or crashed). */
static bool collect_one(struct tui *t, struct tui_install *in)
{
	int got = lodge_job_collect(&in->job);

	if (got & LODGE_JOB_PROGRESS) {
		if (in->job.phase >= 0 && in->job.phase < LODGE_NPHASES)
			in->phase = in->job.phase;
		in->pct = in->job.pct < 0 ? 0 : in->job.pct;
		if (in->job.text[0] && strcmp(in->job.text, in->note)) {
			snprintf(in->note, sizeof(in->note), "%s", in->job.text);
			tui_status(t, false, "install %s: %s", in->name, in->note);
		}
	}
	if (got & LODGE_JOB_OVER)
		on_end(t, in, &in->job.end);
	return got != 0;
}

bool installs_collect(struct tui *t)
{
	bool changed = false;
	unsigned i;

	for (i = 0; i < TUI_MAX_INSTALLS; i++)
		if (t->installs[i].used && lodge_job_fd(&t->installs[i].job) >= 0 && collect_one(t, &t->installs[i]))
			changed = true;
	return changed;
}

void installs_stop_all(struct tui *t)
{
	unsigned i;

	for (i = 0; i < TUI_MAX_INSTALLS; i++)
		if (t->installs[i].used && t->installs[i].state != INSTALL_DONE)
			lodge_job_cancel(&t->installs[i].job);
	/* Each undoes what it made before the dashboard is gone. */
	for (i = 0; i < TUI_MAX_INSTALLS; i++)
		if (t->installs[i].used)
			lodge_job_release(&t->installs[i].job);
}

const char *install_state_words(const struct tui_install *in, char *buf, size_t len)
{
	if (in->state == INSTALL_CANCELLING)
		snprintf(buf, len, "cancelling: undoing what it made");
	else if (in->state == INSTALL_DONE)
		snprintf(buf, len, "installed, not started");
	else
		snprintf(buf, len, "installing %d%%", in->pct);
	return buf;
}

/* S on an installed row: start it, as lodge create NAME would. */
static void start_installed(struct tui *t, struct tui_install *in)
{
	static struct domain_config dc;
	struct lodge_err err;

	if (lodge_config_find(t->lg, in->name, &dc, &err) || lodge_create(t->lg, &dc, 0, &err)) {
		const char *why = strrchr(err.msg, '\n') ? strrchr(err.msg, '\n') + 1 : err.msg;

		tui_status(t, true, "domain %s did not start: %s", in->name, why);
		return;
	}
	tui_status(t, false, "started %s", in->name);
	t->resample = true;
}

bool install_key(struct tui *t, struct dom_sample *d, int k)
{
	struct tui_install *in = d ? d->install : NULL;
	char q[160];

	if (!in)
		return false;
	if (in->state == INSTALL_DONE) {
		if (k == 'S')
			start_installed(t, in);
		else
			tui_status(t, true, "%s is installed but not running: S starts it", in->name);
		return true;
	}
	if (k != TUI_KEY_DESTROY) {
		tui_status(t, true, "%s is being installed: %c cancels the install", in->name, TUI_KEY_DESTROY);
		return true;
	}
	if (in->state == INSTALL_CANCELLING) {
		tui_status(t, false, "install %s: cancelling already", in->name);
		return true;
	}
	snprintf(q, sizeof(q), "Cancel the install of %s (nothing of it is left)?", in->name);
	if (!tui_confirm(t, q)) {
		if (!tui_interrupted())
			tui_status(t, false, "the install of %s goes on", in->name);
		return true;
	}
	/* The install may have ended meanwhile: its end record says so. */
	if (in->used && in->state == INSTALL_RUNNING && !in->job.reaped) {
		lodge_job_cancel(&in->job);
		in->state = INSTALL_CANCELLING;
		tui_status(t, false, "install %s: cancelling...", in->name);
	}
	return true;
}

int install_detail(struct tui *t, const struct tui_install *in, int y)
{
	char line[CFG_PATH_MAX + 512], words[64];
	unsigned long s = (unsigned long)((tui_now_ns() - in->started_ns) / 1000000000ULL);
	int bottom = LINES - bars_rows(t);

	snprintf(line, sizeof(line), "%s: Debian %s, %u MiB, %u vCPUs: %s", in->name, in->dist, in->memory_mib,
		 in->vcpus, install_state_words(in, words, sizeof(words)));
	y = put_wrapped(y, 0, 9, bottom, line);
	if (in->state == INSTALL_DONE) {
		snprintf(line, sizeof(line), "made     %s", in->result);
		y = put_wrapped(y, 0, 9, bottom, line);
		return put_wrapped(y, 0, 9, bottom, "keys     S starts it (lodge create), as a stopped domain");
	}
	snprintf(line, sizeof(line), "phase    %s (%lu s since the install began)", lodge_phase_words(in->phase), s);
	y = put_wrapped(y, 0, 9, bottom, line);
	snprintf(line, sizeof(line), "disk     %s", in->disk);
	y = put_wrapped(y, 0, 9, bottom, line);
	if (in->note[0]) {
		snprintf(line, sizeof(line), "note     %s", in->note);
		y = put_wrapped(y, 0, 9, bottom, line);
	}
	return put_wrapped(y, 0, 9, bottom, "keys     D cancels it (what it made is removed)");
}
