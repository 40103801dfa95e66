/* The helper programs of a template build and a clone (tool.h). */
#include "internal.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

/* Where the tools are on Debian (merged /usr or not), and nothing else:
 * the library runs them as root. */
#define TOOL_PATH "/usr/sbin:/usr/bin:/sbin:/bin"
#define LINE_MAX_BYTES 4096

struct reader {
	struct tool_run *t;
	char buf[LINE_MAX_BYTES];
	size_t n;
	bool in_escape, in_csi;
};

/* One line is whole: hand it on, remember it if it says something. */
static void line_done(struct reader *r)
{
	char *s = r->buf, *end;

	r->buf[r->n] = '\0';
	r->n = 0;
	while (*s == ' ' || *s == '\t')
		s++;
	for (end = s + strlen(s); end > s && (end[-1] == ' ' || end[-1] == '\t'); end--)
		end[-1] = '\0';
	if (!*s)
		return;
	snprintf(r->t->last, sizeof(r->t->last), "%s", s);
	if (r->t->line)
		r->t->line(s, r->t->arg);
}

/* Bytes of output: lines split at '\n' and '\r', escape sequences (ESC [
 * ... final byte, or ESC and one byte) and other control bytes dropped. */
static void feed(struct reader *r, const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];

		if (r->in_csi) {
			r->in_csi = !(c >= 0x40 && c <= 0x7e);
			continue;
		}
		if (r->in_escape) {
			r->in_escape = false;
			r->in_csi = c == '[';
			continue;
		}
		if (c == 0x1b)
			r->in_escape = true;
		else if (c == '\n' || c == '\r')
			line_done(r);
		else if (c >= 0x20 && c != 0x7f && r->n < sizeof(r->buf) - 1)
			r->buf[r->n++] = (char)c;
	}
}

#define ENV_MAX 256

extern char **environ;

/* The program's file on TOOL_PATH into path: 0, -ENOENT. */
static int find_program(const char *name, char *path, size_t len)
{
	const char *dir = TOOL_PATH, *end = dir;

	if (strchr(name, '/'))
		return (size_t)snprintf(path, len, "%s", name) < len && access(name, X_OK) == 0 ? 0 : -ENOENT;
	for (; *dir; dir = *end ? end + 1 : end) {
		end = dir + strcspn(dir, ":");
		if ((size_t)snprintf(path, len, "%.*s/%s", (int)(end - dir), dir, name) < len && access(path, X_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

/* The caller's environment with our PATH and LC_ALL (bare: those
 * alone), made before the fork (no allocation in the child). */
static char *const *tool_env(bool bare)
{
	static char *env[ENV_MAX + 3];
	static char path[] = "PATH=" TOOL_PATH, lc[] = "LC_ALL=C";
	unsigned n = 0;
	char **e;

	for (e = bare ? NULL : environ; e && *e && n < ENV_MAX; e++)
		if (strncmp(*e, "PATH=", 5) && strncmp(*e, "LC_ALL=", 7))
			env[n++] = *e;
	env[n++] = path;
	env[n++] = lc;
	env[n] = NULL;
	return env;
}

/* In the child: its place, then the program.  Never returns. */
static void __attribute__((noreturn)) child(struct tool_run *t, const char *prog, char *const *env, int out, int slave,
					    int errpipe, pid_t parent)
{
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC), e;
	unsigned i;

	/* The caller gone (killed, a Ctrl-C): stopped as a cancel stops it. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(127);

	if (t->pty) {
		setsid();
		ioctl(slave, TIOCSCTTY, 0);
		out = slave;
	} else {
		/* Its own process group: a Ctrl-C at the terminal reaches lodge,
		 * which stops it, never it alone. */
		setpgid(0, 0);
	}
	if (null >= 0)
		dup2(null, STDIN_FILENO);
	dup2(out, STDOUT_FILENO);
	dup2(out, STDERR_FILENO);
	for (i = 0; i < t->nkeep; i++)
		fcntl(t->keep[i], F_SETFD, 0);
	if (t->own_mounts &&
	    (unshare(CLONE_NEWNS) < 0 || mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)) {
		e = errno;
		if (write(errpipe, &e, sizeof(e)) < 0) {
			/* the parent sees end of file and status 127 */
		}
		_exit(127);
	}
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	execve(prog, (char *const *)t->argv, env);
	e = errno;
	if (write(errpipe, &e, sizeof(e)) < 0) {
		/* as above */
	}
	_exit(127);
}

/* Stop it: its process group SIGTERM, SIGKILL after the grace. */
static void stop(pid_t pid, int *status)
{
	long until = lodge_now_ms() + TOOL_GRACE_MS;

	kill(-pid, SIGTERM);
	kill(pid, SIGTERM);
	while (waitpid(pid, status, WNOHANG) == 0) {
		if (lodge_now_ms() >= until) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			break;
		}
		poll(NULL, 0, 50);
	}
	/* What it started and left in its group: a program run here owns
	 * nothing that lives on. */
	kill(-pid, SIGKILL);
}

static void drain(int fd, struct reader *r)
{
	char buf[4096];
	ssize_t got;

	while ((got = read(fd, buf, sizeof(buf))) > 0)
		feed(r, buf, (size_t)got);
}

int tool_run(struct tool_run *t)
{
	static struct reader r;
	char prog[512], *const *env = tool_env(t->bare_env);
	int fds[2] = { -1, -1 }, errpipe[2], st = 0, e = 0, rc;
	bool cancelled = false, hup = false;
	long next_tick;
	pid_t pid, parent = getpid();

	t->last[0] = '\0';
	if (find_program(t->argv[0], prog, sizeof(prog)))
		return -ENOENT;
	memset(&r, 0, sizeof(r));
	r.t = t;
	if (t->pty) {
		struct winsize ws = { .ws_row = 24, .ws_col = 100 };

		if (openpty(&fds[0], &fds[1], NULL, NULL, &ws) < 0)
			return -errno;
		fcntl(fds[0], F_SETFD, FD_CLOEXEC);
		fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	} else if (pipe2(fds, O_CLOEXEC) < 0) {
		return -errno;
	}
	if (pipe2(errpipe, O_CLOEXEC) < 0) {
		e = errno;
		close(fds[0]);
		close(fds[1]);
		return -e;
	}
	pid = fork();
	if (pid == 0)
		child(t, prog, env, fds[1], fds[1], errpipe[1], parent);
	e = errno;
	close(fds[1]);
	close(errpipe[1]);
	if (pid < 0) {
		close(fds[0]);
		close(errpipe[0]);
		return -e;
	}
	if (!t->pty)
		setpgid(pid, pid);        /* both sides: no race with a kill below */
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	next_tick = lodge_now_ms() + TOOL_TICK_MS;
	/* Read as it comes, to its exit (what it started may hold the
	 * output open past that). */
	for (;;) {
		struct pollfd p = { fds[0], POLLIN, 0 };
		long left = next_tick - lodge_now_ms();

		if (hup)                  /* no writer left: wait for the exit alone */
			poll(NULL, 0, left > 50 ? 50 : left > 0 ? (int)left : 0);
		else if (poll(&p, 1, left > 0 ? (int)left : 0) > 0) {
			drain(fds[0], &r);
			hup = !(p.revents & POLLIN);
		}
		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
		if (lodge_now_ms() >= next_tick) {
			next_tick = lodge_now_ms() + TOOL_TICK_MS;
			if (t->tick && !t->tick(t->arg)) {
				cancelled = true;
				stop(pid, &st);
				break;
			}
		}
	}
	drain(fds[0], &r);
	if (r.n)
		line_done(&r);
	close(fds[0]);
	if (read(errpipe[0], &e, sizeof(e)) == (ssize_t)sizeof(e)) {
		close(errpipe[0]);
		return -e;
	}
	close(errpipe[0]);
	if (cancelled)
		return -ECANCELED;
	if (WIFEXITED(st))
		rc = WEXITSTATUS(st);
	else
		rc = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 255;
	return rc;
}

void tool_describe(const struct tool_run *t, int rc, char *buf, size_t len)
{
	const char *prog = strrchr(t->argv[0], '/') ? strrchr(t->argv[0], '/') + 1 : t->argv[0];

	if (rc == -ENOENT)
		snprintf(buf, len, "%s is not installed", prog);
	else if (rc == -ECANCELED)
		snprintf(buf, len, "%s was stopped (cancelled)", prog);
	else if (rc < 0)
		snprintf(buf, len, "cannot run %s: %s", prog, strerror(-rc));
	else if (rc > 128)
		snprintf(buf, len, "%s was killed by signal %d%s%s", prog, rc - 128, t->last[0] ? ": " : "", t->last);
	else
		snprintf(buf, len, "%s failed (exit status %d)%s%s", prog, rc, t->last[0] ? ": " : "", t->last);
}
