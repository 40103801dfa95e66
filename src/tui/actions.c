/* Actions on the selected domain and the prompts they need.  Requests
 * go out without waiting and their replies are collected by the main loop,
 * so a slow domain never freezes the screen. */
#include "tui.h"

#include <curses.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pool.h"

int tui_modal_begin(void)
{
	int was = wgetdelay(stdscr);

	timeout(-1);
	return was;
}

void tui_modal_end(int was)
{
	timeout(was);
}

/* y/n in the status line. */
bool tui_confirm(struct tui *t, const char *question)
{
	int c, was;

	move(LINES - 2, 0);
	attron(A_BOLD);
	printw("%s (y/n) ", question);
	attroff(A_BOLD);
	clrtoeol();
	refresh();
	was = tui_modal_begin();
	c = getch();
	tui_modal_end(was);
	t->status[0] = '\0';
	return c == 'y' || c == 'Y';
}

static const char *verb_ing(const char *cmd)
{
	static const char *const v[][2] = {
		{ "pause", "pausing" }, { "unpause", "unpausing" }, { "shutdown", "shutting down" },
		{ "reboot", "rebooting" }, { "destroy", "destroying" },
	};
	unsigned i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (strcmp(v[i][0], cmd) == 0)
			return v[i][1];
	return cmd;
}

void actions_init(struct tui *t)
{
	t->console = LODGE_QUERY_CLOSED;
}

struct pending_action *action_slot(struct tui *t, const char *name, const char *cmd)
{
	struct pending_action *p = NULL;
	unsigned i;

	for (i = 0; i < TUI_MAX_PENDING; i++) {
		if (t->pending[i].used && strcmp(t->pending[i].name, name) == 0) {
			tui_status(t, true, "%s: still waiting for %s to answer %s", cmd, name, t->pending[i].cmd);
			return NULL;
		}
		if (!t->pending[i].used && !p)
			p = &t->pending[i];
	}
	if (!p)
		tui_status(t, true, "%s %s: %d actions are still waiting for an answer", cmd, name, TUI_MAX_PENDING);
	return p;
}

/* Fill a slot taken by action_slot. */
static void slot_fill(struct pending_action *p, const char *name, const char *cmd, unsigned wait_ms)
{
	p->used = true;
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->cmd, sizeof(p->cmd), "%s", cmd);
	p->wait_ms = wait_ms;
	p->deadline_ns = tui_now_ns() + (uint64_t)wait_ms * 1000000;
}

bool action_job(struct tui *t, const char *name, const char *cmd, lodge_job_work *work, void *arg,
		unsigned wait_ms)
{
	struct pending_action *p = action_slot(t, name, cmd);
	char why[LODGE_ERR_MAX];

	if (!p)
		return false;
	/* Detached: the terminal and the sockets are the dashboard's. */
	if (lodge_job_start(&p->job, work, arg, LODGE_JOB_DETACH, why, sizeof(why))) {
		tui_status(t, true, "%s %s: %s", cmd, name, why);
		return false;
	}
	p->is_job = true;
	slot_fill(p, name, cmd, wait_ms);
	return true;
}

/* The most a pool's stop may take in its job: etcd's deadline, then a
 * local shutdown or destroy when the pool does not answer. */
#define POOL_STOP_WAIT_MS 20000

struct pool_stop {
	const struct lodge *lg;
	enum lodge_verb verb;
	char name[DOMAIN_NAME_MAX];
};

/* The job: a pool host's shutdown or destroy, the pool's stop first as
 * the command line's (pool_stop_domain: desired stopped in etcd, its
 * owner's agent stops it, wherever it runs), else the local verb. */
static int pool_stop_work(void *arg, struct lodge_job_end *end)
{
	const struct pool_stop *ps = arg;
	struct lodge_err err = { .msg = "" };
	char why[ETCD_WHY_MAX] = "";
	int rc;

	rc = pool_stop_domain(ps->lg, ps->name, ps->verb == LODGE_DESTROY ? POOL_STOP_DESTROY : POOL_STOP_SHUTDOWN, 0,
			      why, sizeof(why));
	if (rc == -ENOENT || rc == POOL_STOP_HERE) {
		rc = ps->verb == LODGE_DESTROY ? lodge_destroy(ps->lg, ps->name, &err)
					       : lodge_shutdown(ps->lg, ps->name, 0, &err);
		snprintf(why, sizeof(why), "%.*s", (int)sizeof(why) - 1, err.msg);
	}
	if (rc)
		snprintf(end->error, sizeof(end->error), "%s", why);
	return rc;
}

/* Send the request (or start the pool's stop) and return: the answer is
 * collected by the main loop (actions_collect), which keeps drawing. */
void action_request(struct tui *t, enum lodge_verb v)
{
	struct dom_sample *d = tui_selected(t);
	struct pending_action *p;
	const char *cmd = lodge_verb_name(v);
	struct lodge_err err;

	if (!d) {
		tui_status(t, true, "Domain-0 is the host: select a domain");
		return;
	}
	if (install_key(t, d, 0))
		return;            /* not a running domain yet: says which key acts */
	if (t->lg->hc.pool_etcd[0] && (v == LODGE_SHUTDOWN || v == LODGE_DESTROY)) {
		/* a pool's domain is stopped through the pool, as lodge does */
		struct pool_stop ps = { t->lg, v, "" };

		snprintf(ps.name, sizeof(ps.name), "%s", d->st.name);
		if (!action_job(t, d->st.name, cmd, pool_stop_work, &ps, POOL_STOP_WAIT_MS))
			return;
	} else {
		if (!(p = action_slot(t, d->st.name, cmd)))
			return;
		if (lodge_call_start(t->lg, d->st.name, v, &p->call, &err)) {
			tui_status(t, true, "%s %s: %s", cmd, d->st.name, err.msg);
			return;
		}
		p->is_job = false;
		slot_fill(p, d->st.name, cmd, TUI_ACTION_WAIT_MS);
	}
	tui_status(t, false, "%s %s...", verb_ing(cmd), d->st.name);
}

unsigned actions_pollfds(struct tui *t, struct pollfd *fds, unsigned max)
{
	unsigned i, n = 0;

	for (i = 0; i < TUI_MAX_PENDING && n < max; i++)
		if (t->pending[i].used)
			fds[n++] = (struct pollfd){ t->pending[i].is_job ? lodge_job_fd(&t->pending[i].job)
						    : t->pending[i].call.fd, POLLIN, 0 };
	if (t->console.fd >= 0 && n < max)
		fds[n++] = (struct pollfd){ t->console.fd, POLLIN, 0 };
	return n;
}

static int ms_until(uint64_t deadline_ns, uint64_t now_ns)
{
	return deadline_ns > now_ns ? (int)((deadline_ns - now_ns) / 1000000) + 1 : 0;
}

int actions_wait_ms(struct tui *t, uint64_t now_ns)
{
	int best = INT_MAX;
	unsigned i;

	for (i = 0; i < TUI_MAX_PENDING; i++)
		if (t->pending[i].used && ms_until(t->pending[i].deadline_ns, now_ns) < best)
			best = ms_until(t->pending[i].deadline_ns, now_ns);
	if (t->console.fd >= 0 && ms_until(t->console_deadline_ns, now_ns) < best)
		best = ms_until(t->console_deadline_ns, now_ns);
	return best;
}

static bool console_collect(struct tui *t, uint64_t now_ns);

/* The slot's answer, if it came (its result in *result, why in err);
 * past its deadline a job is killed and reaped.  true: the slot is over. */
static bool slot_collect(struct pending_action *p, uint64_t now_ns, bool *answered, int *result, struct lodge_err *err)
{
	char *nl;

	/* Read first: an answer that came just before the deadline counts. */
	*answered = true;
	if (p->is_job && (lodge_job_collect(&p->job) & LODGE_JOB_OVER)) {
		*result = p->job.end.rc;
		snprintf(err->msg, sizeof(err->msg), "%s", p->job.end.error);
		while ((nl = strchr(err->msg, '\n')))
			*nl = ' ';
		return true;
	}
	if (!p->is_job && lodge_call_collect(&p->call, result, err))
		return true;
	if (now_ns < p->deadline_ns)
		return false;
	*answered = false;
	if (p->is_job)
		lodge_job_kill(&p->job);   /* reaped: no child is left behind */
	else
		lodge_call_close(&p->call);
	return true;
}

bool actions_collect(struct tui *t, uint64_t now_ns)
{
	bool changed = false, answered;
	unsigned i, k;

	for (i = 0; i < TUI_MAX_PENDING; i++) {
		struct pending_action *p = &t->pending[i];
		struct lodge_err err;
		int result;

		if (!p->used || !slot_collect(p, now_ns, &answered, &result, &err))
			continue;
		if (!answered)
			/* The request may be in its socket: a domain that recovers may still act on it. */
			tui_status(t, true, "%s did not answer %s in %u s (it may still act on it later)", p->name,
				   p->cmd, p->wait_ms / 1000);
		else if (result)
			tui_status(t, true, "%s %s: %s", p->cmd, p->name, err.msg);
		else
			tui_status(t, false, "%s %s: done", p->cmd, p->name);
		if (p->is_job)
			/* A hot-plug's or a stop's: the domain's devices are read again. */
			for (k = 0; k < t->ndoms; k++)
				if (t->doms[k].detail && strcmp(t->doms[k].st.name, p->name) == 0)
					t->doms[k].detail->config.got_ns = 0;
		p->used = false;
		t->resample = true;
		changed = true;
	}
	/* Last: the console takes the terminal until Ctrl-]. */
	return console_collect(t, now_ns) || changed;
}

void actions_close(struct tui *t)
{
	unsigned i, n;

	/* A job is let end (a hot-plug half done would leave the runtime
	 * config behind its domain), up to its deadline; then killed. */
	for (i = n = 0; i < TUI_MAX_PENDING; i++)
		n += t->pending[i].used && t->pending[i].is_job;
	if (n) {
		erase();
		mvprintw(0, 0, "waiting for %u actions to end (a hot-plug or a stop under way)...", n);
		refresh();
	}
	for (i = 0; i < TUI_MAX_PENDING; i++) {
		struct pending_action *p = &t->pending[i];
		uint64_t now;

		while (p->used && p->is_job && lodge_job_fd(&p->job) >= 0 && (now = tui_now_ns()) < p->deadline_ns) {
			struct pollfd fd = { lodge_job_fd(&p->job), POLLIN, 0 };

			if (poll(&fd, 1, ms_until(p->deadline_ns, now)) < 0 && errno != EINTR)
				break;
			lodge_job_collect(&p->job);
		}
		if (p->used && p->is_job)
			lodge_job_kill(&p->job);
		else if (p->used)
			lodge_call_close(&p->call);
		p->used = false;
	}
	lodge_query_close(&t->console);
}

/* The guest's console on the terminal until Ctrl-], then the dashboard again. */
static void console_run(struct tui *t, const char *name, int fd)
{
	static const int sigs[] = { SIGTERM, SIGHUP, SIGSEGV };
	struct sigaction saved[3];
	unsigned i;

	/* The console sets its own handlers (restore its raw mode and die);
	 * back on the dashboard ours must be in force again. */
	for (i = 0; i < 3; i++)
		sigaction(sigs[i], NULL, &saved[i]);
	def_prog_mode();
	endwin();
	printf("\r\n[lodge: console of %s; Ctrl-] returns to the dashboard]\r\n", name);
	fflush(stdout);
	lodge_console_relay(fd);
	close(fd);
	for (i = 0; i < 3; i++)
		sigaction(sigs[i], &saved[i], NULL);
	reset_prog_mode();
	clearok(stdscr, TRUE);
	refresh();
	tui_status(t, false, "back from the console of %s", name);
}

/* Ask for the console and return: the main loop takes the answer
 * (actions_collect) and only then leaves the screen to it, so a domain
 * slow to answer holds neither the screen nor the keys meanwhile. */
void action_console(struct tui *t)
{
	struct dom_sample *d = tui_selected(t);
	struct lodge_err err;

	if (!d) {
		tui_status(t, true, "Domain-0 has no serial console here: select a domain");
		return;
	}
	if (install_key(t, d, 0))
		return;
	if (t->console.fd >= 0) {
		tui_status(t, true, "console: still waiting for %s to answer", t->console.name);
		return;
	}
	if (lodge_console_start(t->lg, d->st.name, false, &t->console, &err)) {
		tui_status(t, true, "console of %s: %s", d->st.name, err.msg);
		return;
	}
	t->console_deadline_ns = tui_now_ns() + (uint64_t)TUI_ACTION_WAIT_MS * 1000000;
	tui_status(t, false, "opening the console of %s...", d->st.name);
}

/* The console's answer, if it came: true if the screen changed. */
static bool console_collect(struct tui *t, uint64_t now_ns)
{
	char name[DOMAIN_NAME_MAX];
	struct lodge_err err;
	int fd, rc;

	if (t->console.fd < 0)
		return false;
	snprintf(name, sizeof(name), "%s", t->console.name);
	if ((rc = lodge_console_collect(&t->console, &fd, &err)) > 0) {
		console_run(t, name, fd);
	} else if (rc < 0) {
		tui_status(t, true, "console of %s: %s", name, err.msg);
	} else if (now_ns >= t->console_deadline_ns) {
		tui_status(t, true, "%s did not open its console in %d s", name, TUI_ACTION_WAIT_MS / 1000);
		lodge_query_close(&t->console);
	} else {
		return false;
	}
	return true;
}

/* A line of input in the status line; returns false on Esc. */
bool tui_prompt(struct tui *t, const char *label, char *buf, size_t len)
{
	size_t n = strlen(buf);
	int c, was = tui_modal_begin();

	for (;;) {
		move(LINES - 2, 0);
		attron(A_BOLD);
		printw("%s", label);
		attroff(A_BOLD);
		printw("%s", buf);
		clrtoeol();
		refresh();
		c = getch();
		if (c == '\n' || c == '\r' || c == KEY_ENTER)
			break;
		if (c == 27 || c == ERR) {      /* ERR: a signal, or the terminal gone */
			tui_modal_end(was);
			return false;
		}
		if ((c == KEY_BACKSPACE || c == 127 || c == 8) && n)
			buf[--n] = '\0';
		else if (c >= 32 && c < 127 && n + 1 < len) {
			buf[n++] = c;
			buf[n] = '\0';
		}
	}
	tui_modal_end(was);
	return true;
}

void action_filter(struct tui *t)
{
	char buf[sizeof(t->filter)];

	snprintf(buf, sizeof(buf), "%s", t->filter);
	if (tui_prompt(t, "filter: ", buf, sizeof(buf)))
		snprintf(t->filter, sizeof(t->filter), "%s", buf);
	else
		t->filter[0] = '\0';
	sample_sort(t);
	tui_select(t, 0);
}

void action_delay(struct tui *t)
{
	char buf[16] = "";
	double s;

	if (!tui_prompt(t, "refresh every (seconds, 0.2 to 60): ", buf, sizeof(buf)))
		return;
	if (sscanf(buf, "%lf", &s) != 1 || s < 0.2 || s > 60) {
		tui_status(t, true, "refresh interval must be 0.2 to 60 seconds, not '%s'", buf);
		return;
	}
	t->delay_ms = (int)(s * 1000);
	timeout(t->delay_ms);
	tui_status(t, false, "refreshing every %.1f s", s);
}
