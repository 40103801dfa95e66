/* A domain's serial console on this process's terminal: the bytes both
 * ways until Ctrl-] (or the end of scripted input), the terminal raw
 * meanwhile and restored after, even on SIGTERM or SIGHUP.  Shared by the
 * lodge command and the dashboard. */
#include "client.h"
#include "console.h"
#include "log.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#define ESCAPE_KEY 0x1d   /* Ctrl-] */

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

static int relay(int fd)
{
	char buf[4096];

	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
		struct termios raw = saved_tio;

		tio_saved = 1;
		signal(SIGTERM, restore_and_die);
		signal(SIGHUP, restore_and_die);
		signal(SIGSEGV, restore_and_die);
		cfmakeraw(&raw);
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
		fprintf(stderr, "[lodge: connected; Ctrl-] detaches]\r\n");
	}
	int in_open = 1;

	for (;;) {
		struct pollfd p[2] = { { fd, POLLIN, 0 }, { in_open ? STDIN_FILENO : -1, POLLIN, 0 } };
		ssize_t n;
		int ready;

		/* Scripted input (not a terminal) that has ended: stay for the
		 * guest's answer, and leave once it has been quiet for a while. */
		ready = poll(p, 2, in_open ? -1 : 1500);
		if (ready < 0 && errno != EINTR)
			break;
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
	if (isatty(STDIN_FILENO))
		fprintf(stderr, "\n[lodge: detached]\n");
	return 0;
}

int console_attach(const char *rundir, const char *name, int force)
{
	struct reply r;
	int fd = client_connect(rundir, name), rc;

	if (fd < 0) {
		log_err("no domain named %s is running", name);
		return 1;
	}
	rc = client_request(fd, force ? "console force" : "console", 0, &r, 5000);
	if (rc || r.error[0]) {
		log_err("%s", rc ? strerror(-rc) : r.error);
		close(fd);
		return 1;
	}
	rc = relay(fd);
	close(fd);
	return rc;
}

