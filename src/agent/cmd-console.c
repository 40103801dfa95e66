/* lodge console NAME [--force | --log]: the guest's serial console on this
 * terminal until Ctrl-] (the domain runs on). */
#include "agent.h"
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

static int console_log(const char *rundir, const char *name)
{
	struct reply r;
	char buf[4096];
	ssize_t n;
	int fd = client_connect(rundir, name);

	if (fd < 0) {
		log_err("no domain named %s is running", name);
		return 1;
	}
	if (client_request(fd, "console-log", 0, &r, 5000) || r.error[0]) {
		log_err("%s: cannot read the console log", name);
		close(fd);
		return 1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(STDOUT_FILENO, buf, n) != n)
			break;
	close(fd);
	return 0;
}

int cmd_console(int argc, char **argv)
{
	struct host_config hc;
	const char *name = NULL;
	int i, force = 0, log_only = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--force") == 0 || strcmp(argv[i], "-f") == 0)
			force = 1;
		else if (strcmp(argv[i], "--log") == 0 || strcmp(argv[i], "-l") == 0)
			log_only = 1;
		else if (!name && argv[i][0] != '-')
			name = argv[i];
		else
			return EXIT_USAGE;
	}
	if (!name)
		return EXIT_USAGE;
	if (agent_host_config(&hc))
		return 1;
	return log_only ? console_log(hc.runtime_dir, name) : console_attach(hc.runtime_dir, name, force);
}
