/* The job runner (lodge/job.h): a function in a child, its progress and
 * its end on a pipe read by a poll loop, a cancel that reaches what the
 * child started and leaves nothing of it, and no zombie left.  Its result
 * records: many, far beyond an end's result, in order; a stream over the
 * caller's limit, a record the sink refuses and a child killed in the
 * middle of a record end the job with why, and nothing half-read is
 * taken. */
#include "lodge.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/lodge-job.XXXXXX";
static char answer[] = "forty-two", unicorn[] = "a unicorn";

/* Three phases, then a result. */
static int work_counts(void *arg, struct lodge_job_end *end)
{
	int i;

	for (i = 1; i <= 3; i++)
		lodge_job_progress(i, i * 30, i == 3 ? "the third" : NULL);
	end->result_len = (uint32_t)snprintf((char *)end->result, sizeof(end->result), "%s", (const char *)arg) + 1;
	return 0;
}

static int work_fails(void *arg, struct lodge_job_end *end)
{
	snprintf(end->error, sizeof(end->error), "no such thing as %s", (const char *)arg);
	return -ENOENT;
}

/* Makes a file and starts a process (its own child, in the job's group),
 * says so, and waits to be cancelled: then undoes both. */
static int work_cancelled(void *arg, struct lodge_job_end *end)
{
	char file[sizeof(dir) + 16], text[64];
	int exec_seen[2];
	pid_t helper;

	snprintf(file, sizeof(file), "%s/made", dir);
	if (close(creat(file, 0600)) < 0)
		return -errno;
	/* Told only once it runs sleep: a cancel before its exec would reach
	 * the job's own handler, inherited until then. */
	if (pipe2(exec_seen, O_CLOEXEC) < 0)
		return -errno;
	if ((helper = fork()) == 0) {
		execlp("sleep", "sleep", "600", (char *)NULL);
		_exit(127);
	}
	close(exec_seen[1]);
	while (read(exec_seen[0], text, 1) < 0 && errno == EINTR)
		;
	close(exec_seen[0]);
	snprintf(text, sizeof(text), "%d", (int)helper);
	while (lodge_job_progress(1, 50, text))
		poll(NULL, 0, 20);
	while (waitpid(helper, NULL, 0) < 0 && errno == EINTR)
		;
	unlink(file);
	return -ECANCELED;
}

static int work_dies(void *arg, struct lodge_job_end *end)
{
	raise(SIGKILL);
	return 0;
}

/* Result records: record i is i's number then i's bytes, its length
 * varying with i (a stream where records straddle every read). */
#define REC_MANY 600
#define REC_LIMITED 40                 /* records of REC_EACH the over-limit sink takes */
#define REC_EACH 1000
#define REC_CUT 100                    /* a page holds 37 records and a header of the next */

struct taken {
	unsigned n;                        /* records taken */
	unsigned bad;                      /* records not as sent */
	size_t bytes;
	int refuse_at;                     /* refuse record n (-1: none) */
};

static size_t rec_len(unsigned i)
{
	return sizeof(uint32_t) + 1 + (i * 37) % 200;
}

static void rec_fill(unsigned char *r, unsigned i, size_t len)
{
	memcpy(r, &i, sizeof(i));
	memset(r + sizeof(i), (int)(i & 0xff), len - sizeof(i));
}

static int take(void *arg, const void *rec, size_t len)
{
	struct taken *t = arg;
	unsigned char want[LODGE_JOB_RECORD_MAX];
	size_t wlen = rec_len(t->n);

	if ((int)t->n == t->refuse_at)
		return -EBADMSG;
	rec_fill(want, t->n, wlen);
	if (len != wlen || memcmp(rec, want, len) != 0)
		t->bad++;
	t->n++;
	t->bytes += len;
	return 0;
}

/* Records of REC_CUT bytes, numbered: taken by count only. */
static int take_count(void *arg, const void *rec, size_t len)
{
	struct taken *t = arg;
	unsigned i;

	memcpy(&i, rec, sizeof(i));
	if (len != REC_CUT || i != t->n)
		t->bad++;
	t->n++;
	return 0;
}

static int work_records(void *arg, struct lodge_job_end *end)
{
	unsigned char r[256];
	unsigned i, n = *(const unsigned *)arg;

	for (i = 0; i < n; i++) {
		rec_fill(r, i, rec_len(i));
		if (!lodge_job_record(r, rec_len(i)))
			return -ECANCELED;
		if (i == n / 2)
			lodge_job_progress(1, 50, "half");
	}
	end->result_len = (uint32_t)snprintf((char *)end->result, sizeof(end->result), "%u sent", n) + 1;
	return 0;
}

/* REC_EACH-byte records until told to stop; how many it sent in its end. */
static int work_floods(void *arg, struct lodge_job_end *end)
{
	unsigned char r[REC_EACH];
	unsigned i;

	for (i = 0; i < 100000; i++) {
		memset(r, 'x', sizeof(r));
		if (!lodge_job_record(r, sizeof(r)))
			break;
	}
	return lodge_job_stopping() ? -ECANCELED : 0;
}

/* REC_CUT-byte records for ever, once the parent says go (it shrinks the
 * pipe first): it blocks on the full pipe, part way through one. */
static int work_blocks(void *arg, struct lodge_job_end *end)
{
	unsigned char r[REC_CUT];
	unsigned i;
	char go;

	if (read(*(const int *)arg, &go, 1) != 1)
		return -EIO;
	memset(r, 'y', sizeof(r));
	for (i = 0;; i++) {
		memcpy(r, &i, sizeof(i));
		if (!lodge_job_record(r, sizeof(r)))
			return -EIO;
	}
}

/* pid sleeps (waiting for room on its pipe) while fd holds the same bytes
 * before and after: how many. */
static int blocked_at(pid_t pid, int fd)
{
	char path[64], stat[512], *state;
	int before = -1, after = -2;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (ioctl(fd, FIONREAD, &before) < 0 || (f = open(path, O_RDONLY)) < 0)
		return -1;
	n = read(f, stat, sizeof(stat) - 1);
	close(f);
	if (n <= 0 || ioctl(fd, FIONREAD, &after) < 0)
		return -1;
	stat[n] = '\0';
	state = strrchr(stat, ')');
	return state && state[1] == ' ' && state[2] == 'S' && before == after && after > 0 ? after : -1;
}

static int work_too_big(void *arg, struct lodge_job_end *end)
{
	static unsigned char r[LODGE_JOB_RECORD_MAX + 1];

	if (lodge_job_record(r, sizeof(r)))
		return 0;
	snprintf(end->error, sizeof(end->error), "refused at home");
	return -EMSGSIZE;
}

/* Poll the job's fd until what it says matches want (or it is over). */
static int run_until(struct lodge_job *j, int want)
{
	int got = 0;

	while (!(got & want) && !j->reaped) {
		struct pollfd p = { lodge_job_fd(j), POLLIN, 0 };

		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			break;
		got |= lodge_job_collect(j);
	}
	return got;
}

/* The child is reaped: no zombie of it, nothing to wait for. */
static bool gone(pid_t pid)
{
	return waitpid(pid, NULL, WNOHANG) < 0 && errno == ECHILD;
}

int main(void)
{
	static struct lodge_job j;
	char why[256], file[sizeof(dir) + 16];
	pid_t pid, helper;
	int got;

	if (!mkdtemp(dir))
		return 1;
	snprintf(file, sizeof(file), "%s/made", dir);

	CHECK("a job starts", lodge_job_start(&j, work_counts, answer, 0, why, sizeof(why)) == 0 && j.pid > 0);
	pid = j.pid;
	got = run_until(&j, LODGE_JOB_OVER);
	CHECK("its progress comes: the last phase, percent and text", (got & LODGE_JOB_PROGRESS) && j.phase == 3 &&
	      j.pct == 90 && strcmp(j.text, "the third") == 0);
	CHECK("its end comes: rc 0, the result whole", j.ended && j.end.rc == 0 && j.end.error[0] == '\0' &&
	      j.end.result_len == 10 && strcmp((char *)j.end.result, "forty-two") == 0);
	CHECK("over: reaped, no zombie, the fd closed", j.reaped && j.pid == 0 && lodge_job_fd(&j) < 0 && gone(pid) &&
	      WIFEXITED(j.status) && WEXITSTATUS(j.status) == 0);

	lodge_job_start(&j, work_fails, unicorn, 0, why, sizeof(why));
	pid = j.pid;
	run_until(&j, LODGE_JOB_OVER);
	CHECK("a failed job: its rc and its one-line error", j.ended && j.end.rc == -ENOENT &&
	      strcmp(j.end.error, "no such thing as a unicorn") == 0 && gone(pid));

	lodge_job_start(&j, work_cancelled, NULL, 0, why, sizeof(why));
	pid = j.pid;
	run_until(&j, LODGE_JOB_PROGRESS);
	helper = atoi(j.text);
	CHECK("a cancelled job had made its file and started its helper", access(file, F_OK) == 0 && helper > 0 &&
	      kill(helper, 0) == 0);
	lodge_job_cancel(&j);
	run_until(&j, LODGE_JOB_OVER);
	CHECK("cancelled: -ECANCELED, \"cancelled\"", j.ended && j.end.rc == -ECANCELED &&
	      strcmp(j.end.error, "cancelled") == 0);
	CHECK("cancelled: nothing left, its file gone, its helper (same group) ended", access(file, F_OK) < 0 &&
	      errno == ENOENT && kill(helper, 0) < 0 && errno == ESRCH);
	CHECK("cancelled: no zombie", gone(pid));

	lodge_job_start(&j, work_dies, NULL, 0, why, sizeof(why));
	pid = j.pid;
	run_until(&j, LODGE_JOB_OVER);
	CHECK("a job that dies without an end: -EIO, the signal named", !j.ended && j.reaped && j.end.rc == -EIO &&
	      strcmp(j.end.error, "its process ended (signal 9) before it said how it went") == 0 && gone(pid));

	lodge_job_start(&j, work_cancelled, NULL, 0, why, sizeof(why));
	pid = j.pid;
	run_until(&j, LODGE_JOB_PROGRESS);
	helper = atoi(j.text);
	lodge_job_cancel(&j);
	lodge_job_wait(&j);
	CHECK("lodge_job_wait: the cancelled job over, reaped, nothing left", j.reaped && j.end.rc == -ECANCELED &&
	      gone(pid) && access(file, F_OK) < 0 && kill(helper, 0) < 0);

	/* ---- result records */
	{
		static unsigned many = REC_MANY, few = 3;
		struct taken tk = { .refuse_at = -1 };
		size_t total = 0;
		unsigned i;

		for (i = 0; i < REC_MANY; i++)
			total += rec_len(i);
		lodge_job_start(&j, work_records, &many, 0, why, sizeof(why));
		lodge_job_records(&j, take, &tk, total);
		pid = j.pid;
		got = run_until(&j, LODGE_JOB_OVER);
		CHECK("records: 600 of them, far beyond an end's result, all taken whole and in order",
		      total > 4 * LODGE_JOB_RESULT_MAX && tk.n == REC_MANY && tk.bad == 0 && tk.bytes == total &&
		      j.nrecords == REC_MANY && j.records_len == total && (got & LODGE_JOB_RECORDS));
		CHECK("records: progress between them, then the end: rc 0, its result", j.ended && j.end.rc == 0 &&
		      (got & LODGE_JOB_PROGRESS) && strcmp(j.text, "half") == 0 &&
		      strcmp((char *)j.end.result, "600 sent") == 0 && gone(pid));

		tk = (struct taken){ .refuse_at = -1 };
		lodge_job_start(&j, work_floods, NULL, 0, why, sizeof(why));
		lodge_job_records(&j, take_count, &tk, REC_LIMITED * REC_EACH);
		pid = j.pid;
		run_until(&j, LODGE_JOB_OVER);
		snprintf(file, sizeof(file), "more than %d bytes", REC_LIMITED * REC_EACH);
		CHECK("records over the caller's limit: the job ends, -EMSGSIZE, the limit named",
		      j.reaped && !j.ended && j.refused && j.end.rc == -EMSGSIZE && strstr(j.end.error, file) && gone(pid));
		CHECK("records over the limit: exactly what fits was taken, nothing past it", tk.n == REC_LIMITED &&
		      j.records_len == REC_LIMITED * REC_EACH);

		tk = (struct taken){ .refuse_at = 2 };
		lodge_job_start(&j, work_records, &many, 0, why, sizeof(why));
		lodge_job_records(&j, take, &tk, total);
		pid = j.pid;
		run_until(&j, LODGE_JOB_OVER);
		CHECK("a record the sink refuses: the job ends with the sink's rc, the record named, none after it",
		      j.refused && j.end.rc == -EBADMSG && strstr(j.end.error, "record 3 ") && tk.n == 2 && gone(pid));

		lodge_job_start(&j, work_records, &few, 0, why, sizeof(why));
		pid = j.pid;
		run_until(&j, LODGE_JOB_OVER);
		CHECK("records no one asked for: refused, said so", j.refused && j.end.rc == -EPROTO &&
		      strstr(j.end.error, "none was asked for") && gone(pid));

		lodge_job_start(&j, work_too_big, NULL, 0, why, sizeof(why));
		lodge_job_records(&j, take, &tk, total);
		run_until(&j, LODGE_JOB_OVER);
		CHECK("a record over LODGE_JOB_RECORD_MAX does not leave the child", j.ended && j.end.rc == -EMSGSIZE &&
		      strcmp(j.end.error, "refused at home") == 0);

		/* Killed part way through a record: the pipe shrunk to a page
		 * (the kernel puts a write in the page's rest only whole), so
		 * the child blocks with a header sent and its payload not. */
		tk = (struct taken){ .refuse_at = -1 };
		{
			int go[2], queued = -1;

			if (pipe2(go, O_CLOEXEC) < 0)
				return 1;
			lodge_job_start(&j, work_blocks, &go[0], 0, why, sizeof(why));
			lodge_job_records(&j, take_count, &tk, (size_t)1 << 30);
			pid = j.pid;
			fcntl(lodge_job_fd(&j), F_SETPIPE_SZ, 4096);
			if (write(go[1], "g", 1) != 1)
				return 1;
			for (i = 0; i < 20000 && queued < 0; i++)
				if ((queued = blocked_at(pid, lodge_job_fd(&j))) < 0)
					poll(NULL, 0, 1);
			CHECK("a child blocked part way through a record (its pipe full)",
			      queued > 0 && queued % (REC_CUT + 8) != 0);
			kill(pid, SIGKILL);
			run_until(&j, LODGE_JOB_OVER);
			CHECK("killed mid-record: rc -EIO, signal 9, only the whole records taken, none cut",
			      j.reaped && !j.ended && j.end.rc == -EIO && strstr(j.end.error, "signal 9") &&
			      tk.n == (unsigned)queued / (REC_CUT + 8) && tk.n > 0 && tk.bad == 0 && gone(pid));
			close(go[0]);
			close(go[1]);
		}
	}

	rmdir(dir);
	UNIT_EXIT();
}
