/* Debian installs from the create form.  lodge_install returns only when
 * done (minutes for a first install), so each runs in a child process
 * whose progress hook writes records to a pipe; the main loop reads them
 * without waiting, beside the keys and the replies.  Leaving the form or
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

/* ---- the records, child to dashboard ---------------------------------------------------------
 * A header and its payload.  A progress record is smaller than PIPE_BUF,
 * so a write that does not wait puts it whole or not at all (a full pipe,
 * the dashboard busy in a view of its own: the next one says the same,
 * newer).  The end record is written waiting: it must arrive. */
enum { REC_PROGRESS = 1, REC_END = 2 };

struct rec_head {
	uint32_t kind, len;
};

struct rec_progress {
	int32_t phase, pct;
	char note[200];
};

struct rec_end {
	int32_t rc;
	int32_t template_built;
	uint64_t disk_bytes;
	int64_t total_ms, template_ms;
	char dist[LODGE_DIST_MAX];
	char disk[CFG_PATH_MAX];
	char msg[LODGE_ERR_MAX + DOMAIN_NAME_MAX + 16];
};

_Static_assert(sizeof(struct rec_head) + sizeof(struct rec_progress) <= PIPE_BUF, "a progress record is atomic");
_Static_assert(sizeof(struct rec_head) + sizeof(struct rec_end) <= sizeof(((struct tui_install *)0)->buf),
	       "a record fits the buffer");

/* ---- the child -------------------------------------------------------------------------------- */

#define CHILD_FD 3                       /* the pipe's write end, the child's one other descriptor */

static volatile sig_atomic_t child_stop;

static void on_child_stop(int sig)
{
	child_stop = sig;
}

struct child_progress {
	struct rec_progress last;
	bool sent;
};

static bool child_hook(const struct lodge_job_progress *p, void *arg)
{
	struct child_progress *c = arg;
	struct {
		struct rec_head h;
		struct rec_progress p;
	} r = { { REC_PROGRESS, sizeof(struct rec_progress) }, { p->phase, p->pct, "" } };

	if (p->note)
		snprintf(r.p.note, sizeof(r.p.note), "%s", p->note);
	/* Only what is new: the hook runs every 200 ms. */
	if (!c->sent || memcmp(&r.p, &c->last, sizeof(r.p)) != 0) {
		c->sent = write(CHILD_FD, &r, sizeof(r)) == (ssize_t)sizeof(r);
		c->last = r.p;
	}
	return !child_stop;
}

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;           /* the dashboard is gone: no one to tell */
		p += n;
		len -= (size_t)n;
	}
}

static __attribute__((noreturn)) void child_run(const struct lodge *lg, struct lodge_install_opts o, int wfd,
						pid_t parent)
{
	static const int stops[] = { SIGTERM, SIGINT, SIGHUP };
	static const int reset[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGWINCH };
	static struct {
		struct rec_head h;
		struct rec_end e;
	} end;
	static struct lodge_install_result res;
	struct sigaction sa = { .sa_handler = on_child_stop };   /* no SA_RESTART: waits return */
	struct child_progress cp = { .sent = false };
	struct lodge_err err;
	unsigned i;
	int fd, rc;

	/* The dashboard gone, however: cancel, as its quit would. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		raise(SIGTERM);
	prctl(PR_SET_NAME, "lodge-install");
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		sigaction(stops[i], &sa, NULL);
	/* The dashboard's crash handler restores its terminal: not ours to. */
	for (i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
		signal(reset[i], SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	/* No terminal: the screen is the dashboard's (stderr is its file). */
	if ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0) {
		dup2(fd, STDIN_FILENO);
		close(fd);
	}
	dup2(STDERR_FILENO, STDOUT_FILENO);
	/* Nothing of the dashboard's (its control connections) held on. */
	if (wfd != CHILD_FD) {
		dup2(wfd, CHILD_FD);
		close(wfd);
	}
	close_range(CHILD_FD + 1, ~0U, 0);
	fcntl(CHILD_FD, F_SETFL, O_NONBLOCK);

	o.progress = child_hook;
	o.arg = &cp;
	rc = child_stop ? -ECANCELED : lodge_install(lg, &o, &res, &err);
	end.h = (struct rec_head){ REC_END, sizeof(end.e) };
	end.e.rc = rc;
	if (rc == -ECANCELED)
		snprintf(end.e.msg, sizeof(end.e.msg), "install %s: cancelled: no disk or config left", o.name);
	else if (rc)
		snprintf(end.e.msg, sizeof(end.e.msg), "install %s: %s", o.name, err.msg);
	snprintf(end.e.dist, sizeof(end.e.dist), "%s", rc ? "" : res.tmpl.dist);
	snprintf(end.e.disk, sizeof(end.e.disk), "%s", rc ? "" : res.disk);
	end.e.disk_bytes = res.disk_bytes;
	end.e.total_ms = res.total_ms;
	end.e.template_ms = res.template_ms;
	end.e.template_built = res.template_built;
	fcntl(CHILD_FD, F_SETFL, 0);
	write_all(CHILD_FD, &end, sizeof(end));
	_exit(rc ? 1 : 0);           /* never exit(): the dashboard's atexit would end its screen */
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

	if (in->fd >= 0)
		close(in->fd);
	if (in->pid > 0)
		waitpid(in->pid, NULL, 0);
	if (d) {
		/* Its row goes with it (an install row has no detail). */
		unsigned i = (unsigned)(d - t->doms);

		memmove(&t->doms[i], &t->doms[i + 1], (t->ndoms - i - 1) * sizeof(t->doms[0]));
		t->ndoms--;
		sample_sort(t);
	}
	memset(in, 0, sizeof(*in));
	in->fd = -1;
}

void install_forget(struct tui *t, struct dom_sample *d)
{
	struct tui_install *in = d->install;

	if (!in || in->state != INSTALL_DONE)
		return;
	d->install = NULL;
	memset(in, 0, sizeof(*in));
	in->fd = -1;
}

int install_start(struct tui *t, const struct lodge_install_opts *o, struct lodge_err *err)
{
	static struct lodge_install_result res;
	struct lodge_install_opts dry = *o;
	struct tui_install *in = NULL;
	struct dom_sample *d;
	pid_t parent = getpid(), pid;
	unsigned i;
	int fds[2];

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
	if (pipe2(fds, O_CLOEXEC) < 0) {
		snprintf(err->msg, sizeof(err->msg), "install %s: cannot make a pipe: %s", o->name, strerror(errno));
		return -errno;
	}
	fflush(NULL);
	if ((pid = fork()) < 0) {
		snprintf(err->msg, sizeof(err->msg), "install %s: cannot fork: %s", o->name, strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -EAGAIN;
	}
	if (pid == 0) {
		close(fds[0]);
		child_run(t->lg, *o, fds[1], parent);
	}
	close(fds[1]);
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	memset(in, 0, sizeof(*in));
	in->used = true;
	in->state = INSTALL_RUNNING;
	in->pid = pid;
	in->fd = fds[0];
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
	snprintf(d->st.state, sizeof(d->st.state), "installing");
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
		if (t->installs[i].used && t->installs[i].fd >= 0)
			fds[n++] = (struct pollfd){ t->installs[i].fd, POLLIN, 0 };
	return n;
}

static void fmt_duration(char *buf, size_t len, long long ms)
{
	if (ms < 60000)
		snprintf(buf, len, "%.1f s", ms / 1000.0);
	else
		snprintf(buf, len, "%lldm%02llds", ms / 60000, ms / 1000 % 60);
}

/* The end record: the row becomes a stopped domain, or goes with the
 * error shown whole. */
static void on_end(struct tui *t, struct tui_install *in, const struct rec_end *e)
{
	struct dom_sample *d = row_of(t, in);
	char took[32], tmpl[96] = "";

	if (e->rc) {
		tui_status(t, true, "%.*s", (int)sizeof(e->msg), e->msg);
		install_free(t, in);
		return;
	}
	in->state = INSTALL_DONE;
	in->phase = LODGE_PHASE_DONE;
	in->pct = 100;
	snprintf(in->disk, sizeof(in->disk), "%.*s", (int)sizeof(e->disk) - 1, e->disk);
	fmt_duration(took, sizeof(took), e->total_ms);
	if (e->template_built) {
		char built[32];

		fmt_duration(built, sizeof(built), e->template_ms);
		snprintf(tmpl, sizeof(tmpl), " (its template built first, in %s)", built);
	}
	snprintf(in->result, sizeof(in->result), "Debian %.*s on %s (%.1f GiB) in %s%s", LODGE_DIST_MAX,
		 e->dist, in->disk, e->disk_bytes / 1073741824.0, took, tmpl);
	tui_status(t, false, "installed %s: %s; S starts it", in->name, in->result);
	if (d)
		snprintf(d->st.state, sizeof(d->st.state), "%s", domain_state_name(DOMAIN_STATE_SHUTDOWN));
}

/* The records that have come from one child.  EOF without an end record:
 * it died (killed, or crashed). */
static bool collect_one(struct tui *t, struct tui_install *in)
{
	bool changed = false;

	for (;;) {
		struct rec_head h;
		ssize_t n = read(in->fd, in->buf + in->len, sizeof(in->buf) - in->len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			int st = 0;

			close(in->fd);
			in->fd = -1;
			if (in->pid > 0 && waitpid(in->pid, &st, 0) == in->pid)
				in->pid = 0;
			if (in->state != INSTALL_DONE) {
				tui_status(t, true, "install %s: its process ended (%s %d) before it said how it went", in->name,
					   WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
				install_free(t, in);
			}
			return true;
		}
		if (n < 0)
			return changed;          /* EAGAIN: all read */
		in->len += (size_t)n;
		while (in->len >= sizeof(h)) {
			memcpy(&h, in->buf, sizeof(h));
			if ((h.kind != REC_PROGRESS || h.len != sizeof(struct rec_progress)) &&
			    (h.kind != REC_END || h.len != sizeof(struct rec_end))) {
				/* Not ours: nothing more from it can be trusted. */
				kill(in->pid, SIGTERM);
				in->len = 0;
				break;
			}
			if (in->len < sizeof(h) + h.len)
				break;
			if (h.kind == REC_PROGRESS) {
				struct rec_progress p;

				memcpy(&p, in->buf + sizeof(h), sizeof(p));
				if (p.phase >= 0 && p.phase < LODGE_NPHASES)
					in->phase = p.phase;
				in->pct = p.pct < 0 ? 0 : p.pct > 100 ? 100 : p.pct;
				if (p.note[0]) {
					snprintf(in->note, sizeof(in->note), "%.*s", (int)sizeof(p.note) - 1, p.note);
					tui_status(t, false, "install %s: %s", in->name, in->note);
				}
			} else {
				static struct rec_end e;

				memcpy(&e, in->buf + sizeof(h), sizeof(e));
				e.msg[sizeof(e.msg) - 1] = e.disk[sizeof(e.disk) - 1] = e.dist[sizeof(e.dist) - 1] = '\0';
				on_end(t, in, &e);
			}
			memmove(in->buf, in->buf + sizeof(h) + h.len, in->len - sizeof(h) - h.len);
			in->len -= sizeof(h) + h.len;
			changed = true;
			if (!in->used)
				return true;
		}
	}
}

bool installs_collect(struct tui *t)
{
	bool changed = false;
	unsigned i;

	for (i = 0; i < TUI_MAX_INSTALLS; i++)
		if (t->installs[i].used && t->installs[i].fd >= 0 && collect_one(t, &t->installs[i]))
			changed = true;
	return changed;
}

void installs_stop_all(struct tui *t)
{
	unsigned i;

	for (i = 0; i < TUI_MAX_INSTALLS; i++)
		if (t->installs[i].used && t->installs[i].pid > 0 && t->installs[i].state != INSTALL_DONE)
			kill(t->installs[i].pid, SIGTERM);
	/* Each undoes what it made before the dashboard is gone. */
	for (i = 0; i < TUI_MAX_INSTALLS; i++)
		if (t->installs[i].used && t->installs[i].pid > 0) {
			while (waitpid(t->installs[i].pid, NULL, 0) < 0 && errno == EINTR)
				;
			t->installs[i].pid = 0;
		}
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
	if (in->used && in->state == INSTALL_RUNNING && in->pid > 0) {
		kill(in->pid, SIGTERM);
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
