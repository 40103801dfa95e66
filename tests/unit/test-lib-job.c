/* The job runner (lodge/job.h): a function in a child, its progress and
 * its end on a pipe read by a poll loop, a cancel that reaches what the
 * child started and leaves nothing of it, and no zombie left. */
#include "lodge.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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

	rmdir(dir);
	UNIT_EXIT();
}
