/* lodge web and lodge web-passwd: run lodge-web, the web interface's own
 * program (src/web/README: a program of its own keeps libwebsockets and
 * its TLS out of every other lodge command), from the directory lodge
 * itself is in, as make install and the build tree both put them. */
#include "agent.h"
#include "log.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int run_web(struct cli *c, const char **args, int n)
{
	char exe[PATH_MAX], prog[PATH_MAX + 16];
	const char *argv[16];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int a = 0, i;

	if (len <= 0) {
		log_err("cannot find lodge's own directory: %s", strerror(errno));
		return EXIT_FAILED;
	}
	exe[len] = '\0';
	snprintf(prog, sizeof(prog), "%s/lodge-web", dirname(exe));
	argv[a++] = prog;
	if (cfg_root()[0]) {
		argv[a++] = "--root";
		argv[a++] = cfg_root();
	}
	for (i = 0; i < n && a < 15; i++)
		argv[a++] = args[i];
	argv[a] = NULL;
	execv(prog, (char *const *)argv);
	log_err("cannot run %s: %s", prog, strerror(errno));
	return EXIT_FAILED;
}

int cmd_web(struct cli *c)
{
	const char *args[10];
	int n = 0;

	args[n++] = "serve";
	if (c->set['l']) {
		args[n++] = "--listen";
		args[n++] = c->text['l'];
	}
	if (c->set['c']) {
		args[n++] = "--cert";
		args[n++] = c->text['c'];
	}
	if (c->set['k']) {
		args[n++] = "--key";
		args[n++] = c->text['k'];
	}
	if (c->set['n']) {
		args[n++] = "--server-name";
		args[n++] = c->text['n'];
	}
	return run_web(c, args, n);
}

int cmd_web_passwd(struct cli *c)
{
	const char *args[4] = { "passwd", c->argv[0], "--role", c->set['r'] ? c->text['r'] : "admin" };

	return run_web(c, args, 4);
}
