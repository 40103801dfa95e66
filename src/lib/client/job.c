/* Jobs (lodge/job.h): a child process with a progress pipe, and the
 * phases a long library call reports through its hook (install.h's
 * struct job: a template build, a clone, an install). */
#include "lodge/job.h"
#include "job.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

_Static_assert(LODGE_JOB_ERROR_MAX == LODGE_ERR_MAX, "a job's error holds a library error whole");

/* ---- a job's phases (install.h) ------------------------------------------------------------ */

/* Each phase in words, and its share of a job that has it (a first
 * install spends most of its time in apt). */
static const struct {
	const char *words;
	unsigned weight;
} phases[LODGE_NPHASES] = {
	[LODGE_PHASE_CHECK] = { "checking", 0 },
	[LODGE_PHASE_UPDATE] = { "updating the package lists", 4 },
	[LODGE_PHASE_FETCH] = { "fetching packages", 10 },
	[LODGE_PHASE_UNPACK] = { "unpacking packages", 6 },
	[LODGE_PHASE_CONFIGURE] = { "configuring packages", 6 },
	[LODGE_PHASE_INSTALL] = { "installing the kernel, ssh, cloud-init", 50 },
	[LODGE_PHASE_IMAGE] = { "making the template's image", 10 },
	[LODGE_PHASE_CLONE] = { "cloning the template", 10 },
	[LODGE_PHASE_FILESYSTEM] = { "growing the filesystem, a fresh UUID", 4 },
	[LODGE_PHASE_SEED] = { "writing the seed disk", 1 },
	[LODGE_PHASE_CONFIG] = { "writing the config", 0 },
	[LODGE_PHASE_DONE] = { "done", 0 },
};

const char *lodge_phase_words(enum lodge_phase p)
{
	return (unsigned)p < LODGE_NPHASES ? phases[p].words : "?";
}

void job_init(struct job *j, unsigned mask, lodge_job_fn *fn, void *arg)
{
	memset(j, 0, sizeof(*j));
	j->fn = fn;
	j->arg = arg;
	j->phases = mask;
	j->phase = LODGE_PHASE_CHECK;
	j->phase_pct = -1;
}

static int job_pct(const struct job *j)
{
	unsigned total = 0, done = 0, p;

	for (p = 0; p < LODGE_NPHASES; p++) {
		if (!(j->phases & PHASE_BIT(p)))
			continue;
		total += phases[p].weight;
		if (p < j->phase)
			done += phases[p].weight * 100;
		else if (p == j->phase && j->phase_pct > 0)
			done += phases[p].weight * (unsigned)j->phase_pct;
	}
	if (j->phase == LODGE_PHASE_DONE)
		return 100;
	return total ? (int)(done / total) : 0;
}

bool job_report(struct job *j, enum lodge_phase phase, int pct, const char *note)
{
	struct lodge_job_progress p;

	if (j->cancelled)
		return false;
	/* Forward only: a bar that starts again within a phase (mmdebstrap
	 * draws one per step) does not move the job back. */
	if (phase > j->phase) {
		j->phase = phase;
		j->phase_pct = -1;
	} else if (phase < j->phase) {
		pct = -1;                 /* a late word of a phase that is over */
	}
	if (pct > j->phase_pct)
		j->phase_pct = pct > 100 ? 100 : pct;
	j->last_ms = lodge_now_ms();
	if (!j->fn)
		return true;
	p = (struct lodge_job_progress){ j->phase, j->phase_pct, job_pct(j), note };
	if (!j->fn(&p, j->arg))
		j->cancelled = true;
	return !j->cancelled;
}

bool job_tick(void *arg)
{
	struct job *j = arg;

	if (j->cancelled)
		return false;
	if (lodge_now_ms() - j->last_ms < 200)
		return true;
	return job_report(j, j->phase, -1, NULL);
}

int job_cancelled(struct lodge_err *err)
{
	return lodge_fail(err, -ECANCELED, "cancelled");
}

/* ---- the records, child to parent -----------------------------------------------------------
 * A header and its payload.  A progress record is smaller than PIPE_BUF,
 * so a write that does not wait puts it whole or not at all.  The end
 * record is written waiting: it must arrive. */
enum { REC_PROGRESS = 1, REC_END = 2 };

struct rec_head {
	uint32_t kind, len;
};

struct rec_progress {
	int32_t phase, pct;
	char text[LODGE_JOB_TEXT_MAX];
};

#define END_FIXED offsetof(struct lodge_job_end, result)

_Static_assert(sizeof(struct rec_head) + sizeof(struct rec_progress) <= PIPE_BUF, "a progress record is atomic");
_Static_assert(sizeof(struct rec_head) + sizeof(struct lodge_job_end) <= sizeof(((struct lodge_job *)0)->buf),
	       "a record fits the buffer");

/* ---- the child ------------------------------------------------------------------------------ */

#define CHILD_FD 3                     /* the pipe under LODGE_JOB_DETACH */

static int child_fd = -1;
static volatile sig_atomic_t child_stop;
static struct rec_progress child_last;
static bool child_sent;

static void on_child_stop(int sig)
{
	child_stop = sig;
}

bool lodge_job_stopping(void)
{
	return child_stop != 0;
}

bool lodge_job_progress(int phase, int pct, const char *text)
{
	struct {
		struct rec_head h;
		struct rec_progress p;
	} r;

	memset(&r, 0, sizeof(r));
	r.h = (struct rec_head){ REC_PROGRESS, sizeof(r.p) };
	r.p.phase = phase;
	r.p.pct = pct;
	if (text)
		snprintf(r.p.text, sizeof(r.p.text), "%s", text);
	if (child_fd >= 0 && (!child_sent || memcmp(&r.p, &child_last, sizeof(r.p)) != 0)) {
		child_sent = write(child_fd, &r, sizeof(r)) == (ssize_t)sizeof(r);
		child_last = r.p;
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
			return;                /* the parent is gone: no one to tell */
		p += n;
		len -= (size_t)n;
	}
}

static __attribute__((noreturn)) void child_run(lodge_job_work *work, void *arg, unsigned flags, int wfd,
						pid_t parent)
{
	static const int stops[] = { SIGTERM, SIGINT, SIGHUP };
	/* A parent's crash handler (the dashboard restores its terminal) is
	 * not the child's to run. */
	static const int reset[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGWINCH, SIGCHLD };
	static struct {
		struct rec_head h;
		struct lodge_job_end e;
	} end;
	struct sigaction sa = { .sa_handler = on_child_stop };   /* no SA_RESTART: waits return */
	unsigned i;
	int fd, rc;

	/* Its own process group: a cancel reaches what it started too. */
	setpgid(0, 0);
	/* The parent gone, however: cancel, as its quit would. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		child_stop = SIGTERM;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		sigaction(stops[i], &sa, NULL);
	for (i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
		signal(reset[i], SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	if (flags & LODGE_JOB_DETACH) {
		if ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0) {
			dup2(fd, STDIN_FILENO);
			close(fd);
		}
		dup2(STDERR_FILENO, STDOUT_FILENO);
		if (wfd != CHILD_FD) {
			dup2(wfd, CHILD_FD);
			close(wfd);
			wfd = CHILD_FD;
		}
		close_range(CHILD_FD + 1, ~0U, 0);
	}
	child_fd = wfd;
	fcntl(child_fd, F_SETFL, O_NONBLOCK);

	end.e.rc = child_stop ? -ECANCELED : work(arg, &end.e);
	if (end.e.rc == -ECANCELED && !end.e.error[0])
		snprintf(end.e.error, sizeof(end.e.error), "cancelled");
	else if (end.e.rc && !end.e.error[0])
		snprintf(end.e.error, sizeof(end.e.error), "%s", strerror(-end.e.rc));
	if (end.e.result_len > sizeof(end.e.result))
		end.e.result_len = sizeof(end.e.result);
	end.h = (struct rec_head){ REC_END, (uint32_t)(END_FIXED + end.e.result_len) };
	fcntl(child_fd, F_SETFL, 0);
	write_all(child_fd, &end, sizeof(end.h) + end.h.len);
	rc = end.e.rc;
	_exit(rc ? 1 : 0);             /* never exit(): the parent's atexit (a screen's end) is not ours */
}

/* ---- the parent ------------------------------------------------------------------------------- */

int lodge_job_start(struct lodge_job *j, lodge_job_work *work, void *arg, unsigned flags, char *error, size_t len)
{
	pid_t parent = getpid(), pid;
	int fds[2], e;

	memset(j, 0, sizeof(*j));
	j->fd = -1;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		e = errno;
		snprintf(error, len, "cannot make a pipe: %s", strerror(e));
		return -e;
	}
	fflush(NULL);                  /* nothing buffered is written twice */
	if ((pid = fork()) < 0) {
		e = errno;
		snprintf(error, len, "cannot fork: %s", strerror(e));
		close(fds[0]);
		close(fds[1]);
		return -e;
	}
	if (pid == 0) {
		close(fds[0]);
		child_run(work, arg, flags, fds[1], parent);
	}
	/* The child's group made from here too: a cancel that comes before
	 * the child ran its first line still reaches the group. */
	setpgid(pid, pid);
	close(fds[1]);
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	j->pid = pid;
	j->fd = fds[0];
	j->phase = j->pct = -1;
	j->started_ms = lodge_now_ms();
	return 0;
}

int lodge_job_fd(const struct lodge_job *j)
{
	return j->fd;
}

static void job_reap(struct lodge_job *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	if (j->pid > 0) {
		while (waitpid(j->pid, &j->status, 0) < 0 && errno == EINTR)
			;
		j->pid = 0;
	}
	j->reaped = true;
	if (!j->ended) {
		int st = j->status;

		j->end.rc = -EIO;
		j->end.result_len = 0;
		snprintf(j->end.error, sizeof(j->end.error), "its process ended (%s %d) before it said how it went",
			 WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	}
}

/* One whole record at the buffer's start: taken in. */
static int take_record(struct lodge_job *j, const struct rec_head *h)
{
	if (h->kind == REC_PROGRESS) {
		struct rec_progress p;

		memcpy(&p, j->buf + sizeof(*h), sizeof(p));
		p.text[sizeof(p.text) - 1] = '\0';
		j->phase = p.phase;
		j->pct = p.pct < 0 ? -1 : p.pct > 100 ? 100 : p.pct;
		memcpy(j->text, p.text, sizeof(j->text));
		j->progressed = true;
		return LODGE_JOB_PROGRESS;
	}
	memset(&j->end, 0, sizeof(j->end));
	memcpy(&j->end, j->buf + sizeof(*h), h->len);
	j->end.error[sizeof(j->end.error) - 1] = '\0';
	if (j->end.rc > 0 || j->end.result_len != h->len - END_FIXED) {
		j->end.rc = -EIO;
		j->end.result_len = 0;
		snprintf(j->end.error, sizeof(j->end.error), "its end record does not add up");
	}
	j->ended = true;
	return 0;
}

int lodge_job_collect(struct lodge_job *j)
{
	int changed = 0;

	while (j->fd >= 0) {
		struct rec_head h;
		ssize_t n = read(j->fd, j->buf + j->len, sizeof(j->buf) - j->len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return changed;        /* EAGAIN: all read */
		if (n == 0) {
			job_reap(j);
			return changed | LODGE_JOB_OVER;
		}
		j->len += (size_t)n;
		while (j->len >= sizeof(h)) {
			memcpy(&h, j->buf, sizeof(h));
			bool progress = h.kind == REC_PROGRESS && h.len == sizeof(struct rec_progress);
			bool end = h.kind == REC_END && h.len >= END_FIXED && h.len <= sizeof(struct lodge_job_end);

			if (j->ended || (!progress && !end)) {
				/* Not ours: nothing more from it can be trusted. */
				lodge_job_cancel(j);
				j->len = 0;
				break;
			}
			if (j->len < sizeof(h) + h.len)
				break;
			changed |= take_record(j, &h);
			memmove(j->buf, j->buf + sizeof(h) + h.len, j->len - sizeof(h) - h.len);
			j->len -= sizeof(h) + h.len;
		}
	}
	return changed;
}

void lodge_job_cancel(struct lodge_job *j)
{
	if (j->pid > 0)
		kill(-j->pid, SIGTERM);
}

void lodge_job_kill(struct lodge_job *j)
{
	if (j->pid > 0)
		kill(j->pid, SIGKILL);
	job_reap(j);
}

void lodge_job_wait(struct lodge_job *j)
{
	while (j->fd >= 0) {
		int fl = fcntl(j->fd, F_GETFL);

		fcntl(j->fd, F_SETFL, fl & ~O_NONBLOCK);
		lodge_job_collect(j);
	}
	if (!j->reaped)
		job_reap(j);
}

void lodge_job_release(struct lodge_job *j)
{
	if (!j->reaped && (j->pid > 0 || j->fd >= 0))
		job_reap(j);
}
