/* A domain's serial console: a raw connection for a face that pumps it
 * itself, its log, and the terminal helper shared by the lodge command
 * and the dashboard: the bytes both ways until Ctrl-] (or the end of
 * scripted input), the terminal raw meanwhile and restored after, even on
 * SIGTERM or SIGHUP. */
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#define ESCAPE_KEY 0x1d            /* Ctrl-] */
#define SCRIPT_QUIET_MS 1500       /* scripted input ended: leave once the guest is this quiet */

int lodge_console_open(const struct lodge *lg, const char *domain, bool force, struct lodge_err *err)
{
	char name[DOMAIN_NAME_MAX];
	struct reply r;
	int fd, rc;

	if ((rc = lodge_resolve(lg, domain, name, err)))
		return rc;
	if ((fd = client_connect(lg->hc.runtime_dir, name)) < 0)
		return lodge_not_running(err, name);
	rc = client_request(fd, force ? "console force" : "console", 0, &r, LODGE_REPLY_MS);
	if (rc || r.error[0]) {
		close(fd);
		return rc ? lodge_fail(err, rc, "%s", strerror(-rc)) : lodge_fail(err, -EPROTO, "%s", r.error);
	}
	return fd;
}

int lodge_console_log(const struct lodge *lg, const char *domain, size_t last, int timeout_ms, char **text,
		      size_t *len, struct lodge_err *err)
{
	char name[DOMAIN_NAME_MAX], cmd[48];
	size_t n = 0, cap = 65536;
	long deadline = lodge_now_ms() + timeout_ms;
	struct reply r;
	char *buf;
	int fd, rc;

	*text = NULL;
	*len = 0;
	if ((rc = lodge_resolve(lg, domain, name, err)))
		return rc;
	if ((fd = client_connect(lg->hc.runtime_dir, name)) < 0)
		return lodge_not_running(err, name);
	if (last)
		snprintf(cmd, sizeof(cmd), "console-log %zu", last);
	else
		snprintf(cmd, sizeof(cmd), "console-log");
	if (client_request(fd, cmd, 0, &r, timeout_ms) || r.error[0]) {
		close(fd);
		return lodge_fail(err, -EPROTO, "%s: cannot read the console log", name);
	}
	if (!(buf = malloc(cap))) {
		close(fd);
		return lodge_fail(err, -ENOMEM, "%s", strerror(ENOMEM));
	}
	/* The log follows the "ok" to the end of the connection. */
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		long left = deadline - lodge_now_ms();
		ssize_t got;

		if (n + 1 == cap) {
			char *more = realloc(buf, cap * 2);

			if (!more)
				break;
			buf = more;
			cap *= 2;
		}
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		if ((got = read(fd, buf + n, cap - 1 - n)) <= 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

static struct termios saved_tio;
static int tio_saved;

static void restore_tty(void)
{
	if (tio_saved)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
	tio_saved = 0;
}

static void restore_and_die(int sig)
{
	restore_tty();
	signal(sig, SIG_DFL);
	raise(sig);
}

int lodge_console_relay(int fd)
{
	char buf[4096];
	int in_open = 1, rc = 0;

	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
		struct termios raw = saved_tio;

		tio_saved = 1;
		signal(SIGTERM, restore_and_die);
		signal(SIGHUP, restore_and_die);
		signal(SIGSEGV, restore_and_die);
		cfmakeraw(&raw);
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
	}
	for (;;) {
		struct pollfd p[2] = { { fd, POLLIN, 0 }, { in_open ? STDIN_FILENO : -1, POLLIN, 0 } };
		ssize_t n;
		int ready;

		/* Scripted input (not a terminal) that has ended: stay for the
		 * guest's answer, and leave once it has been quiet for a while. */
		ready = poll(p, 2, in_open ? -1 : SCRIPT_QUIET_MS);
		if (ready < 0 && errno != EINTR) {
			rc = -errno;
			break;
		}
		if (ready == 0)
			break;
		if (p[0].revents & (POLLIN | POLLHUP)) {
			n = read(fd, buf, sizeof(buf));
			if (n <= 0)
				break;    /* the domain ended or another client took over */
			if (write(STDOUT_FILENO, buf, n) != n)
				break;
		}
		if (p[1].revents & (POLLIN | POLLHUP)) {
			char *esc;

			n = read(STDIN_FILENO, buf, sizeof(buf));
			if (n <= 0) {
				in_open = 0;
				continue;
			}
			esc = tio_saved ? memchr(buf, ESCAPE_KEY, n) : NULL;
			if (esc)
				n = esc - buf;
			if (n > 0 && write(fd, buf, n) != n)
				break;
			if (esc)
				break;
		}
	}
	restore_tty();
	return rc;
}
