/* Jobs (lodge/job.h): a child process with a progress pipe, and the
 * phases a long library call reports through its hook (install.h's
 * struct job: a template build, a clone, an install). */
#include "lodge/job.h"
#include "job.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
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
 * so a write that does not wait puts it whole or not at all.  Result
 * records and the end record are written waiting: they must arrive. */
enum { REC_PROGRESS = 1, REC_END = 2, REC_RESULT = 3 };

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
	       "an end record fits the buffer");
_Static_assert(sizeof(struct rec_head) + LODGE_JOB_RECORD_MAX <= sizeof(((struct lodge_job *)0)->buf),
	       "a result record fits the buffer");

/* ---- the child ------------------------------------------------------------------------------ */

#define CHILD_FD 3                     /* the pipe under LODGE_JOB_DETACH */

static int child_fd = -1;
static bool child_broken;              /* a record went out in part: no end can follow it */
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

/* Whole, waiting for room on a pipe that does not wait (a cancel's
 * signal does not cut a record short): false once the parent is gone. */
static bool write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EAGAIN) {
			struct pollfd room = { fd, POLLOUT, 0 };

			poll(&room, 1, -1);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;          /* the parent is gone: no one to tell */
		p += n;
		len -= (size_t)n;
	}
	return true;
}

bool lodge_job_record(const void *rec, size_t len)
{
	struct rec_head h = { REC_RESULT, (uint32_t)len };

	if (child_fd < 0 || child_broken || len > LODGE_JOB_RECORD_MAX)
		return false;
	if (!write_all(child_fd, &h, sizeof(h)) || !write_all(child_fd, rec, len)) {
		child_broken = true;
		return false;
	}
	return !child_stop;
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
	if (!child_broken) {
		fcntl(child_fd, F_SETFL, 0);
		write_all(child_fd, &end, sizeof(end.h) + end.h.len);
	}
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

void lodge_job_records(struct lodge_job *j, lodge_job_sink *sink, void *arg, size_t limit)
{
	j->sink = sink;
	j->sink_arg = arg;
	j->records_limit = limit;
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
	if (!j->ended && !j->refused) {
		int st = j->status;

		j->end.rc = -EIO;
		j->end.result_len = 0;
		snprintf(j->end.error, sizeof(j->end.error), "its process ended (%s %d) before it said how it went",
			 WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	}
}

/* Nothing more of the child is taken: it is cancelled, what it still
 * writes is read and dropped until its pipe ends, and its end is why. */
static void __attribute__((format(printf, 3, 4))) refuse(struct lodge_job *j, int rc, const char *fmt, ...)
{
	va_list ap;

	memset(&j->end, 0, sizeof(j->end));
	j->end.rc = rc;
	va_start(ap, fmt);
	vsnprintf(j->end.error, sizeof(j->end.error), fmt, ap);
	va_end(ap);
	j->refused = true;
	j->len = 0;
	lodge_job_cancel(j);
}

/* A record's header, before its payload is read: one of ours, of a size
 * its kind has, within what the parent takes; else the stream refused. */
static bool head_ok(struct lodge_job *j, const struct rec_head *h)
{
	switch (h->kind) {
	case REC_PROGRESS:
		if (h->len == sizeof(struct rec_progress) && !j->ended)
			return true;
		break;
	case REC_END:
		if (h->len >= END_FIXED && h->len <= sizeof(struct lodge_job_end) && !j->ended)
			return true;
		break;
	case REC_RESULT:
		if (j->ended)
			break;
		if (h->len > LODGE_JOB_RECORD_MAX) {
			refuse(j, -EMSGSIZE, "it sent a result record of %u bytes, more than %d", h->len,
			       LODGE_JOB_RECORD_MAX);
			return false;
		}
		if (!j->sink) {
			refuse(j, -EPROTO, "it sent a result record where none was asked for");
			return false;
		}
		if (h->len > j->records_limit - j->records_len) {
			refuse(j, -EMSGSIZE, "its result records came to more than %zu bytes, the most taken", j->records_limit);
			return false;
		}
		return true;
	}
	refuse(j, -EIO, "its records do not add up (kind %u, %u bytes%s)", h->kind, h->len, j->ended ? ", after its end" : "");
	return false;
}

/* One whole record at rec: taken in. */
static int take_record(struct lodge_job *j, const struct rec_head *h, const unsigned char *rec)
{
	int rc;

	if (h->kind == REC_PROGRESS) {
		struct rec_progress p;

		memcpy(&p, rec, sizeof(p));
		p.text[sizeof(p.text) - 1] = '\0';
		j->phase = p.phase;
		j->pct = p.pct < 0 ? -1 : p.pct > 100 ? 100 : p.pct;
		memcpy(j->text, p.text, sizeof(j->text));
		j->progressed = true;
		return LODGE_JOB_PROGRESS;
	}
	if (h->kind == REC_RESULT) {
		if ((rc = j->sink(j->sink_arg, rec, h->len)) != 0) {
			refuse(j, rc < 0 ? rc : -EPROTO, "its result record %zu (%u bytes) was refused: %s", j->nrecords + 1,
			       h->len, strerror(rc < 0 ? -rc : EPROTO));
			return 0;
		}
		j->records_len += h->len;
		j->nrecords++;
		return LODGE_JOB_RECORDS;
	}
	memset(&j->end, 0, sizeof(j->end));
	memcpy(&j->end, rec, h->len);
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
		size_t off = 0;
		ssize_t n = read(j->fd, j->buf + j->len, sizeof(j->buf) - j->len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return changed;        /* EAGAIN: all read */
		if (n == 0) {
			job_reap(j);           /* a record cut short is dropped with it */
			return changed | LODGE_JOB_OVER;
		}
		if (j->refused)
			continue;              /* read only to let it end */
		j->len += (size_t)n;
		while (j->len - off >= sizeof(h)) {
			memcpy(&h, j->buf + off, sizeof(h));
			if (!head_ok(j, &h))
				break;
			if (j->len - off < sizeof(h) + h.len)
				break;
			changed |= take_record(j, &h, j->buf + off + sizeof(h));
			if (j->refused)
				break;
			off += sizeof(h) + h.len;
		}
		if (j->refused) {
			j->len = 0;
			continue;
		}
		memmove(j->buf, j->buf + off, j->len - off);
		j->len -= off;
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
