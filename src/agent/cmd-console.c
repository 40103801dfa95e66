/* lodge console [--force | --log] DOMAIN: the guest's serial console on
 * this terminal until Ctrl-] (the domain runs on). */
#include "agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int console_tty(const struct lodge *lg, const char *domain, bool force)
{
	struct lodge_err err;
	int fd = lodge_console_open(lg, domain, force, &err);

	if (fd < 0)
		return cli_fail(&err);
	if (isatty(STDIN_FILENO))
		fprintf(stderr, "[lodge: connected; %s detaches]\r\n", LODGE_CONSOLE_ESCAPE);
	lodge_console_relay(fd);
	close(fd);
	if (isatty(STDIN_FILENO))
		fprintf(stderr, "\n[lodge: detached]\n");
	return 0;
}

static int console_log(const struct lodge *lg, const char *domain)
{
	struct lodge_err err;
	size_t len;
	char *text;

	if (lodge_console_log(lg, domain, 0, 10000, &text, &len, &err))
		return cli_fail(&err);
	fwrite(text, 1, len, stdout);
	free(text);
	return 0;
}

int cmd_console(struct cli *c)
{
	if (c->set['l'])
		return console_log(&c->lg, c->argv[0]);
	return console_tty(&c->lg, c->argv[0], c->set['f']);
}
