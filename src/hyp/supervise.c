/* Supervision (supervise.h): the caller's wait for a detached start, the
 * supervisor, and the clean-up once the domain is over. */
#include "supervise.h"
#include "cgroup.h"
#include "crash.h"
#include "domain.h"
#include "events.h"
#include "footprint.h"
#include "log.h"
#include "run.h"
#include "rundir.h"
#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* The caller's side: its exit status, with one line on stderr unless the
 * domain's processes wrote theirs there already.  (Until the domain runs,
 * they write to the caller's terminal, not to lodge-hyp.log: there is
 * nothing more to see there.) */
static int detach_wait(int fd, const char *name)
{
	char why[512];
	size_t len = 0;
	ssize_t n;
	char c;

	while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
		;
	if (n == 1 && c == READY_RUNNING)
		return 0;
	if (n == 1 && c == READY_FAILED)
		return DOMAIN_ERROR;
	if (n == 1 && c == READY_SAYS) {
		while (len < sizeof(why) - 1) {
			n = read(fd, why + len, sizeof(why) - 1 - len);
			if (n > 0)
				len += (size_t)n;
			else if (n == 0 || errno != EINTR)
				break;
		}
		why[len] = '\0';
		log_err("%s", why);
		return DOMAIN_ERROR;
	}
	log_err("domain %s ended during start-up without a word (killed by a signal?)", name);
	return DOMAIN_ERROR;
}

void detach_tell(int ready_fd, char what, const char *why)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%c%s", what, why ? why : "");
	if (ready_fd >= 0 && write(ready_fd, msg, strlen(msg)) < 0) {
		/* nobody waits any more */
	}
}

int detach_early(int *ready_fd, const char *name)
{
	int pipefd[2];
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		int st;

		close(pipefd[1]);
		waitpid(pid, &st, 0);     /* the middle process exits at once */
		exit(detach_wait(pipefd[0], name));
	}
	/* Whoever writes to a caller that has gone gets EPIPE, not SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	close(pipefd[0]);
	setsid();
	pid = fork();                     /* not a session leader: no controlling tty ever */
	if (pid < 0) {
		log_err("cannot detach: %s", strerror(errno));
		detach_tell(pipefd[1], READY_FAILED, NULL);
		_exit(DOMAIN_ERROR);
	}
	if (pid > 0)
		_exit(0);
	*ready_fd = pipefd[1];
	return 0;
}

void detached_io_open(struct detached_io *io, const char *dir)
{
	char path[4200];

	runtime_file_path(path, sizeof(path), dir, RT_HYP_LOG);
	io->null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	io->log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

void detached_io_switch(struct detached_io *io)
{
	if (io->null_fd >= 0) {
		dup2(io->null_fd, STDIN_FILENO);
		dup2(io->null_fd, STDOUT_FILENO);
		close(io->null_fd);
	}
	if (io->log_fd >= 0) {
		dup2(io->log_fd, STDERR_FILENO);
		close(io->log_fd);
		log_set_timestamps(true);       /* a file read later, unlike a terminal */
	}
	io->null_fd = io->log_fd = -1;
}

void detach_ready(int ready_fd, struct detached_io *io)
{
	detached_io_switch(io);
	detach_tell(ready_fd, READY_RUNNING, NULL);
	close(ready_fd);
}

/* Wait for the domain process, passing on the signals that would have
 * ended it had it been this process (the terminal's, the agent's kill),
 * and writing the events its processes send (events.h). */
static int wait_domain(pid_t pid, const sigset_t *sigs)
{
	struct signalfd_siginfo si;
	int st, sig_fd = signalfd(-1, sigs, SFD_CLOEXEC | SFD_NONBLOCK);

	for (;;) {
		struct pollfd p[2] = { { sig_fd, POLLIN, 0 }, { events_fd(), POLLIN, 0 } };

		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
		if (sig_fd < 0) {
			/* No signalfd: wait as before, without events until the end. */
			siginfo_t info;

			if (sigwaitinfo(sigs, &info) >= 0 && info.si_signo != SIGCHLD)
				kill(pid, info.si_signo);
			continue;
		}
		/* Woken only by an event or a signal, rarely: between them
		 * the supervisor keeps mapped none of the code it ran. */
		footprint_trim();
		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents & POLLIN)
			events_drain();
		while (read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
			char who[EVLOG_WHO_MAX];

			if (si.ssi_signo == SIGCHLD)
				continue;
			/* Who sent it, as the kernel says: the domain's process
			 * sees only this one passing it on. */
			event_send(EV_DESTROYED, event_who(who, sizeof(who), si.ssi_uid, (pid_t)si.ssi_pid, NULL),
				   "by signal %s", strsignal((int)si.ssi_signo));
			kill(pid, (int)si.ssi_signo);
		}
	}
	if (sig_fd >= 0)
		close(sig_fd);
	events_drain();         /* its last words are in the pipe still */
	return st;
}

/* The supervisor leaves the cgroup of whoever started it (a login
 * session's scope, the unit that ran lodge create, lodge-domains.service)
 * for the domain's own, where its children, each boot of the domain, are
 * born: under cgroup v2 the whole domain is then outside every systemd
 * unit, so neither a unit's stop nor a session's end at power-off signals
 * it before lodge host-stop has saved it.  One held by another process
 * (another --root's domain of this name) is left alone: the domain's
 * process refuses it and says why.  true if joined. */
static bool supervisor_join(const struct options *o, struct cgroup_cpu *cg)
{
	if (!o->cgroup || cgroup_cpu_open(cg, o->cgroup))
		return false;
	if (cgroup_cpu_other_task(cg, getpid(), 0) > 0)
		return false;
	return cgroup_cpu_create(cg, getpid()) == 0;
}

/* lodge rename moves a running domain's runtime directory, and its cgroup
 * beside it (proto.h, rename): what goes on (a restart's boot, the
 * clean-up at the end) takes the name the directory has now, and dir
 * (RUNDIR/NAME, of len bytes) its path. */
static void follow_rename(struct options *o, char *dir, size_t len_dir)
{
	static char name[DOMAIN_NAME_MAX], cgroup[4096];
	const char *now = events_domain();
	size_t len = o->cgroup ? strlen(o->cgroup) : 0, old = strlen(o->name);

	if (!now[0] || strcmp(now, o->name) == 0)
		return;
	log_info("domain %s is called %s now", o->name, now);
	if (len > old && o->cgroup[len - old - 1] == '/' && strcmp(o->cgroup + len - old, o->name) == 0) {
		/* followed only if it moved too (cgroup v2 renames none) */
		char moved[sizeof(cgroup)];
		struct cgroup_cpu cg;

		snprintf(moved, sizeof(moved), "%.*s%s", (int)(len - old), o->cgroup, now);
		if (cgroup_cpu_open(&cg, moved) == 0 && access(cg.dir, F_OK) == 0) {
			memcpy(cgroup, moved, sizeof(cgroup));
			o->cgroup = cgroup;
		}
	}
	snprintf(name, sizeof(name), "%s", now);
	o->name = name;
	if (dir[0])
		runtime_dir_path(dir, len_dir, o->runtime_dir, name);
}

/* The supervisor: lodge-hyp's first process stays privileged and outside
 * the sandbox, owning only the control socket.  Each boot of the domain
 * is a child process that sandboxes itself; a restart is a new child.
 * What a sandboxed process cannot do, this one does once the child is
 * gone: remove the cgroup and the runtime directory.  A child killed by
 * a signal (SIGKILL, the seccomp filter's SIGSYS) leaves both, as a
 * killed lodge-hyp always has, for lodge list to report and clean. */
int supervise(struct options *o, struct sandbox *sb, const char *start_dir, int listen_fd, int ready_fd)
{
	char dir[4200];
	struct detached_io io;
	struct cgroup_cpu cg;
	char killed[400] = "";
	const char *kept;
	sigset_t sigs;
	pid_t self = getpid(), pid;
	int st, status;
	bool first = true, held;

	snprintf(dir, sizeof(dir), "%s", start_dir);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGCHLD);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	crash_open(o);
	if (o->event_log && (st = events_open(o->event_log, o->name)))
		log_warn("domain %s has no event log: %s", o->name, strerror(-st));
	if (dir[0])
		events_follow(dir, o->name);
	held = supervisor_join(o, &cg);
	for (;;) {
		crash_arm();
		pid = fork();
		if (pid < 0) {
			log_err("cannot start the domain's process: %s", strerror(errno));
			st = DOMAIN_ERROR << 8;
			break;
		}
		if (pid == 0) {
			/* The domain goes with a killed supervisor. */
			prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
			if (getppid() != self)
				_exit(DOMAIN_ERROR);
			crash_child();
			events_child();
			exit(run_domain(o, sb, dir, listen_fd, ready_fd));
		}
		if (first && ready_fd >= 0) {
			/* The caller's terminal is the child's to use until it
			 * runs; this process writes to the log from now on. */
			detached_io_open(&io, dir);
			detached_io_switch(&io);
			if (sb->off)
				log_warn("THE SANDBOX IS OFF (--no-sandbox) for domain %s", o->name);
		}
		first = false;
		/* Only the first boot is restored from a stream or held
		 * paused; a restart boots afresh and runs. */
		o->paused = 0;
		if (o->incoming_fd >= 0) {
			close((int)o->incoming_fd);
			o->incoming_fd = -1;
		}
		st = wait_domain(pid, &sigs);
		follow_rename(o, dir, sizeof(dir));
		/* Before the runtime directory goes, and before a restart's
		 * logs grow on: this boot's crash, if it was one. */
		if (dir[0] && (kept = crash_collect(dir))) {
			event_send(EV_CRASH_KEPT, "lodge-hyp", "evidence in %s", kept);
			events_drain();
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) != EXIT_RESTART)
			break;
		log_info("restarting domain %s", o->name);
		if (ready_fd >= 0) {
			close(ready_fd);       /* the caller heard "running" already */
			ready_fd = -1;
		}
	}
	if (WIFSIGNALED(st)) {
		snprintf(killed, sizeof(killed), "domain %s: its lodge-hyp (pid %d) was killed by signal %s%s",
			 o->name, (int)pid, strsignal(WTERMSIG(st)),
			 WTERMSIG(st) == SIGSYS ? " (the sandbox's seccomp filter)" : "");
		log_err("%s", killed);
		event_send(EV_KILLED, "lodge-hyp", "its lodge-hyp (pid %d) was killed by signal %s%s", (int)pid,
			   strsignal(WTERMSIG(st)), WTERMSIG(st) == SIGSYS ? " (the sandbox's seccomp filter)" : "");
		events_drain();
		status = DOMAIN_ERROR;
	} else {
		int start_lock = -1;
		bool cg_open = o->cgroup && cgroup_cpu_open(&cg, o->cgroup) == 0;

		status = WIFEXITED(st) ? WEXITSTATUS(st) : DOMAIN_ERROR;
		/* Leaving the cgroup waits for an RCU grace period (10 to 20
		 * ms): done first, outside RUNDIR's lock, which every start
		 * takes, so that no create waits for a destroy's teardown.
		 * Then under the lock the runtime directory and the now empty
		 * cgroup go together, so a domain of the same name started
		 * at once never finds this process still in it. */
		if (cg_open && held)
			cgroup_cpu_leave(&cg, self);
		if (dir[0])
			rundir_remove(o->runtime_dir, o->name, &start_lock);
		if (cg_open)
			cgroup_cpu_remove(&cg);
		if (start_lock >= 0)
			close(start_lock);
	}
	/* Nobody may reach a domain that is no more: a caller told of its end
	 * finds the socket refusing (so the agent may remove what is left). */
	if (listen_fd >= 0)
		close(listen_fd);
	/* Held until now so a caller waiting on a failed start returns only
	 * once the runtime directory is gone.  A child that failed said why on
	 * the caller's terminal; a killed one could not, so this says it.  (A
	 * caller told "running" before has gone: nobody reads these.) */
	if (ready_fd >= 0) {
		if (killed[0]) {
			char why[sizeof(killed) + 32];

			snprintf(why, sizeof(why), "%s during start-up", killed);
			detach_tell(ready_fd, READY_SAYS, why);
		} else {
			detach_tell(ready_fd, READY_FAILED, NULL);
		}
		close(ready_fd);
	}
	return status;
}
