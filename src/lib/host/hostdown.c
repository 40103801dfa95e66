/* The host's shutdown and boot, as Xen's xendomains: lodge host-stop
 * saves (or shuts down) every running domain, lodge host-start restores
 * them and then starts the autostart ones (lodge-domains.service runs
 * both).
 *
 * Every domain is handled at once, each by a worker process of its own:
 * the library keeps large buffers static and is one thread at a time, and
 * a save or a guest's shutdown is mostly waiting.  A worker reports on a
 * pipe, in one write, and exits; the parent holds the deadline, so a
 * worker stuck in a save is killed at the timeout like one waiting for a
 * guest that ignores its power button, and the domain is destroyed. */
#include "incoming.h"
#include "internal.h"
#include "mkdirs.h"
#include "migrate.h"
#include "savestream.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DESTROY_PHASE_MS 30000     /* destroying what outlived the timeout */

/* What a worker writes to its pipe (one write: under PIPE_BUF). */
struct job_result {
	enum lodge_host_outcome outcome;
	bool failed;
	bool has_err;
	uint64_t file_bytes;
	struct lodge_err err;
};
_Static_assert(sizeof(struct job_result) <= 4096, "a worker's report is one atomic write");

struct job {
	char name[DOMAIN_NAME_MAX];
	char file[CFG_PATH_MAX + 300];   /* save_dir/NAME.save */
	pid_t pid;                 /* its worker, -1 once reaped */
	int fd;                    /* the worker's pipe, -1 once read or closed */
	bool done;                 /* res holds its report */
	long t0;
	struct job_result res;
};

typedef void job_work(const struct lodge *lg, struct job *j, long deadline, struct job_result *res);

/* Start j's worker: 0, or -errno (j failed, reported in j->res). */
static int job_fork(const struct lodge *lg, struct job *j, job_work *work, long deadline)
{
	int p[2] = { -1, -1 };

	j->t0 = lodge_now_ms();
	j->pid = -1;
	j->fd = -1;
	if (pipe2(p, O_CLOEXEC) < 0 || (j->pid = fork()) < 0) {
		int e = errno;

		if (p[0] >= 0) {
			close(p[0]);
			close(p[1]);
		}
		j->done = true;
		j->res.failed = j->res.has_err = true;
		j->res.outcome = LODGE_HOST_FAILED;
		return lodge_fail(&j->res.err, -e, "domain %s: cannot start a worker: %s", j->name, strerror(e));
	}
	if (j->pid == 0) {
		struct job_result res = { .outcome = LODGE_HOST_FAILED, .failed = true };

		close(p[0]);
		signal(SIGPIPE, SIG_IGN);
		work(lg, j, deadline, &res);
		_exit(write(p[1], &res, sizeof(res)) == sizeof(res) ? 0 : 1);
	}
	close(p[1]);
	j->fd = p[0];
	return 0;
}

static void job_reap(struct job *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	if (j->pid > 0)
		while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
			;
	j->pid = -1;
}

/* Take in a worker's report; one that ended without one failed. */
static void job_collect(struct job *j)
{
	ssize_t n;

	while ((n = read(j->fd, &j->res, sizeof(j->res))) < 0 && errno == EINTR)
		;
	if (n != sizeof(j->res)) {
		memset(&j->res, 0, sizeof(j->res));
		j->res.outcome = LODGE_HOST_FAILED;
		j->res.failed = j->res.has_err = true;
		lodge_fail(&j->res.err, -EIO, "domain %s: its worker ended without a word", j->name);
	}
	j->done = true;
	job_reap(j);
}

static void job_report(const struct job *j, lodge_host_fn *fn, void *arg)
{
	struct lodge_host_report r = {
		.name = j->name, .outcome = j->res.outcome, .failed = j->res.failed,
		.file = j->file[0] ? j->file : NULL, .file_bytes = j->res.file_bytes,
		.ms = lodge_now_ms() - j->t0, .err = j->res.has_err ? &j->res.err : NULL,
	};

	fn(&r, arg);
}

/* Run work for every job at once until each has reported or, deadline
 * >= 0, the deadline (lodge_now_ms) passes: then the workers still out
 * are killed and their jobs left not done.  Each report goes to fn as it
 * arrives; returns how many failed. */
static int jobs_run(const struct lodge *lg, struct job *jobs, unsigned n, job_work *work, long deadline,
		    lodge_host_fn *fn, void *arg)
{
	struct pollfd *pfd = calloc(n ? n : 1, sizeof(*pfd));
	unsigned i, out = 0;
	int failed = 0;

	for (i = 0; i < n; i++) {
		if (job_fork(lg, &jobs[i], work, deadline) == 0)
			out++;
		else if (fn)
			job_report(&jobs[i], fn, arg);
		failed += jobs[i].done;
	}
	while (out && pfd) {
		long left = deadline < 0 ? -1 : deadline - lodge_now_ms();
		unsigned k = 0;
		int rc;

		if (deadline >= 0 && left <= 0)
			break;
		for (i = 0; i < n; i++)
			if (jobs[i].fd >= 0)
				pfd[k++] = (struct pollfd){ .fd = jobs[i].fd, .events = POLLIN };
		rc = poll(pfd, k, left < 0 || left > 1000 ? 1000 : (int)left);
		if (rc < 0 && errno != EINTR)
			break;
		for (i = 0; rc > 0 && i < n; i++) {
			unsigned m;

			for (m = 0; m < k && pfd[m].fd != jobs[i].fd; m++)
				;
			if (jobs[i].fd < 0 || m == k || !pfd[m].revents)
				continue;
			job_collect(&jobs[i]);
			out--;
			failed += jobs[i].res.failed;
			if (fn)
				job_report(&jobs[i], fn, arg);
		}
	}
	/* Past the deadline: what is still out is stopped where it is. */
	for (i = 0; i < n; i++)
		if (jobs[i].pid > 0) {
			kill(jobs[i].pid, SIGKILL);
			job_reap(&jobs[i]);
		}
	free(pfd);
	return failed;
}

/* ---- host-stop ------------------------------------------------------------------------ */

/* mkdir -p, root's alone: saved files hold guests' memory. */
static int make_save_dir(const char *dir)
{
	return mkdirs(dir, DIR_MODE_PRIVATE, NULL, 0);
}

/* Would lodge host-start's restore lend this domain what it uses?  A
 * domain restore would refuse is better shut down than saved.  Its save
 * is signed with this host's key, which host-start trusts to name what
 * it named; only without a key is the domain held to lodge.conf. */
static int restore_would_admit(const struct lodge *lg, const char *name, char *why, size_t len)
{
	static struct domain_config dc;
	static struct secret own_key;
	struct lodge_err err;
	int rc;

	if (stream_key(NULL, &own_key, true, why, len))
		return 0;

	if ((rc = lodge_runtime_config(lg, name, &dc, &err))) {
		snprintf(why, len, "%s", err.msg);
		return rc;
	}
	return incoming_admit(&dc, &lg->hc, why, len);
}

/* Why a domain is destroyed: the timeout. */
static void not_in_time(const struct lodge *lg, const char *name, struct lodge_err *err)
{
	lodge_fail(err, -ETIMEDOUT, "domain %s was not %s within %u s (shutdown_timeout)", name,
		   lg->hc.host_shutdown_saves ? "saved" : "shut down", lg->hc.shutdown_timeout_s);
}

/* Save the domain, or shut it down: a save that fails or that restore
 * would refuse is followed by a shutdown, and the failure is reported. */
static void stop_one(const struct lodge *lg, struct job *j, long deadline, struct job_result *res)
{
	struct lodge_save_opts o = { 0 };
	struct lodge_save_result saved;
	struct lodge_err e;
	char why[LODGE_ERR_MAX] = "";
	bool saves = lg->hc.host_shutdown_saves;
	long left;
	int rc;

	res->has_err = true;
	if (saves) {
		if ((rc = restore_would_admit(lg, j->name, why, sizeof(why))) != 0) {
			lodge_fail(&e, rc, "not saved, as lodge host-start could not restore it: %s", why);
		} else if ((rc = lodge_save(lg, j->name, j->file, &o, &saved, &e)) == 0) {
			res->outcome = LODGE_HOST_SAVED;
			res->failed = res->has_err = false;
			res->file_bytes = saved.file_bytes;
			return;
		}
		snprintf(why, sizeof(why), "%s", e.msg);
		if (rc == -ENOENT)     /* it ended by itself meanwhile */
			saves = false;
	}
	/* Up to the deadline, rounded up: the parent's word on the timeout
	 * is the one that counts. */
	left = (deadline - lodge_now_ms() + 999) / 1000;
	rc = lodge_shutdown(lg, j->name, left > 0 ? (int)left : 1, &e);
	if (rc == -ETIMEDOUT)
		not_in_time(lg, j->name, &e);
	if (rc == 0 || rc == -ENOENT) {
		res->outcome = LODGE_HOST_SHUT_DOWN;
		res->failed = saves;           /* it was to be saved */
		res->has_err = saves;
		lodge_fail(&res->err, -EIO, "%s; shut down instead", why);
		return;
	}
	/* Not down in time, or the button could not be pressed: destroyed
	 * once every worker is done, with this as the reason. */
	res->outcome = LODGE_HOST_DESTROYED;
	if (saves)
		lodge_fail(&res->err, rc, "%s; then %s", why, e.msg);
	else
		res->err = e;
}

static void destroy_one(const struct lodge *lg, struct job *j, long deadline, struct job_result *res)
{
	int rc = lodge_destroy(lg, j->name, &res->err);

	(void)deadline;
	res->has_err = rc != 0;
	res->outcome = rc == 0 || rc == -ENOENT ? LODGE_HOST_DESTROYED : LODGE_HOST_FAILED;
}

/* Destroy each job not done in phase 1 (or done with "destroy it"), as
 * the report it is owed: why it was destroyed, or why even that failed. */
static int destroy_leftovers(const struct lodge *lg, struct job *jobs, unsigned n, lodge_host_fn *fn, void *arg)
{
	struct job *left = calloc(n ? n : 1, sizeof(*left));
	struct lodge_err *why = calloc(n ? n : 1, sizeof(*why));  /* why each is destroyed */
	long t0 = n ? jobs[0].t0 : lodge_now_ms();
	unsigned i, k = 0;
	int failed = 0;

	if (!left || !why) {
		free(left);
		free(why);
		return (int)n;
	}
	for (i = 0; i < n; i++) {
		if (jobs[i].done && jobs[i].res.outcome != LODGE_HOST_DESTROYED)
			continue;
		left[k] = jobs[i];
		if (!jobs[i].done) {
			left[k].res.has_err = true;
			not_in_time(lg, jobs[i].name, &left[k].res.err);
		}
		why[k] = left[k].res.err;
		left[k].done = false;
		k++;
	}
	jobs_run(lg, left, k, destroy_one, lodge_now_ms() + DESTROY_PHASE_MS, NULL, NULL);
	for (i = 0; i < k; i++) {
		struct lodge_err got = left[i].res.err;

		if (!left[i].done) {
			left[i].res.outcome = LODGE_HOST_FAILED;
			lodge_fail(&left[i].res.err, -ETIMEDOUT, "%s; not destroyed within %d s either",
				   why[i].msg, DESTROY_PHASE_MS / 1000);
		} else if (left[i].res.outcome == LODGE_HOST_DESTROYED) {
			left[i].res.err = why[i];
		} else {
			lodge_fail(&left[i].res.err, -EIO, "%s; cannot destroy it: %s", why[i].msg, got.msg);
		}
		left[i].res.has_err = true;
		left[i].res.failed = true;
		left[i].t0 = t0;
		failed++;
		job_report(&left[i], fn, arg);
	}
	free(why);
	free(left);
	return failed;
}

struct report_to {
	lodge_host_fn *fn;
	void *arg;
};

/* A domain to destroy is reported once destroyed. */
static void stop_report(const struct lodge_host_report *r, void *arg)
{
	const struct report_to *a = arg;

	if (r->outcome != LODGE_HOST_DESTROYED)
		a->fn(r, a->arg);
}

int lodge_host_stop(const struct lodge *lg, lodge_host_fn *fn, void *arg)
{
	struct report_to a = { fn, arg };
	struct lodge_list l;
	struct lodge_err err;
	struct job *jobs;
	unsigned i, n = 0;
	long deadline;
	int failed, rc;

	if ((rc = lodge_list(lg, &l, &err))) {
		struct lodge_host_report r = { .name = "", .outcome = LODGE_HOST_FAILED, .failed = true, .err = &err };

		fn(&r, arg);
		return 1;
	}
	if (lg->hc.host_shutdown_saves && (rc = make_save_dir(lg->hc.save_dir))) {
		lodge_fail(&err, rc, "cannot make %s: %s (the domains are shut down instead)", lg->hc.save_dir,
			   strerror(-rc));
		lodge_warn(lg, "%s", err.msg);
	}
	jobs = calloc(l.n + l.nunasked + 1, sizeof(*jobs));
	if (!jobs) {
		lodge_list_free(&l);
		return -ENOMEM;
	}
	/* A domain that could not be asked is still one to stop: its worker
	 * finds out what it can do. */
	for (i = 0; i < l.n + l.nunasked; i++) {
		const char *name = i < l.n ? l.dom[i].name : l.unasked[i - l.n].name;
		struct job *j = &jobs[n++];

		snprintf(j->name, sizeof(j->name), "%s", name);
		if (lg->hc.host_shutdown_saves)
			snprintf(j->file, sizeof(j->file), "%s/%s" SAVE_SUFFIX, lg->hc.save_dir, name);
	}
	lodge_list_free(&l);
	deadline = lodge_now_ms() + (long)lg->hc.shutdown_timeout_s * 1000;
	jobs_run(lg, jobs, n, stop_one, deadline, stop_report, &a);
	failed = 0;
	for (i = 0; i < n; i++)
		if (jobs[i].done && jobs[i].res.outcome != LODGE_HOST_DESTROYED)
			failed += jobs[i].res.failed;
	failed += destroy_leftovers(lg, jobs, n, fn, arg);
	free(jobs);
	return failed;
}

/* ---- host-start ----------------------------------------------------------------------- */

static void restore_one(const struct lodge *lg, struct job *j, long deadline, struct job_result *res)
{
	struct lodge_restore_opts o = { 0 };
	struct lodge_restore_result r;
	struct lodge_err e;

	(void)deadline;
	if (lodge_restore(lg, j->file, &o, &r, &e)) {
		res->has_err = true;
		lodge_fail(&res->err, -EIO, "%s (%s is kept; while it is, autostart does not boot domain %s afresh)", e.msg,
			  j->file, j->name);
		return;
	}
	snprintf(j->name, sizeof(j->name), "%s", r.name);
	/* It runs: the file is spent (restored twice, its disks would be
	 * written by two pasts). */
	if (unlink(j->file) < 0) {
		res->has_err = true;
		lodge_fail(&res->err, -errno, "domain %s was restored, but %s cannot be removed: %s", r.name, j->file,
			   strerror(errno));
	}
	res->outcome = LODGE_HOST_RESTORED;
	res->failed = res->has_err;
}

static void autostarted(const char *name, const struct lodge_err *err, void *arg)
{
	const struct report_to *a = arg;
	struct lodge_host_report r = {
		.name = name, .outcome = err ? LODGE_HOST_FAILED : LODGE_HOST_STARTED, .failed = err != NULL, .err = err,
	};

	a->fn(&r, a->arg);
}

static void network_autostarted(const char *name, const struct lodge_err *err, void *arg)
{
	char label[NETWORK_NAME_MAX + 16];

	snprintf(label, sizeof(label), "network %s", name);
	autostarted(label, err, arg);
}

int lodge_host_start(const struct lodge *lg, lodge_host_fn *fn, void *arg)
{
	struct report_to a = { fn, arg };
	struct dirent *de;
	struct job *jobs = NULL;
	unsigned n = 0, cap = 0;
	/* The networks before the restores: a restored domain's vifs join
	 * their bridges (lodge_autostart, below, finds them up). */
	int failed = lodge_network_autostart(lg, network_autostarted, &a);
	DIR *d = opendir(lg->hc.save_dir);

	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name), slen = strlen(SAVE_SUFFIX);
		struct job *j;

		if (len <= slen || strcmp(de->d_name + len - slen, SAVE_SUFFIX))
			continue;
		if (n == cap) {
			struct job *more = realloc(jobs, (cap = cap ? 2 * cap : 16) * sizeof(*jobs));

			if (!more)
				break;
			jobs = more;
		}
		j = &jobs[n++];
		memset(j, 0, sizeof(*j));
		snprintf(j->name, sizeof(j->name), "%.*s", (int)(len - slen), de->d_name);
		snprintf(j->file, sizeof(j->file), "%s/%s", lg->hc.save_dir, de->d_name);
	}
	if (d)
		closedir(d);
	if (n)
		failed += jobs_run(lg, jobs, n, restore_one, -1, fn, arg);
	free(jobs);
	/* After the restores: a domain whose file is still there is not
	 * started afresh (lodge_autostart says so). */
	return failed + lodge_autostart(lg, autostarted, &a);
}
