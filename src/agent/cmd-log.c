/* lodge log [NAME] [-f] [-n N]: the event log, as tail shows a file;
 * lodge dmesg DOMAIN: a running domain's lodge-hyp.log (xl dmesg). */
#include "agent.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>


/* Each line as it comes: a follower's reader sees it at once.  Stop once
 * nobody reads (a closed pipe). */
static int print_line(const char *line, void *arg)
{
	(void)arg;
	return puts(line) == EOF || fflush(stdout) == EOF;
}

int cmd_log(struct cli *c)
{
	struct lodge_err err;
	unsigned last = c->set['n'] ? (unsigned)c->num['n'] : CLI_LOG_LINES_DEFAULT;

	if (lodge_log_read(&c->lg, c->argc ? c->argv[0] : NULL, last, c->set['f'], print_line, NULL, &err))
		return cli_fail(&err);
	return EXIT_OK;
}

int cmd_dmesg(struct cli *c)
{
	struct lodge_err err;
	char buf[65536];
	ssize_t n;
	int fd = lodge_hyp_log_open(&c->lg, c->argv[0], &err);

	if (fd < 0)
		return cli_fail(&err);
	/* lodge-hyp escaped each line as it wrote it: copied as it is. */
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0 && fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			break;
	close(fd);
	return fflush(stdout) == EOF ? EXIT_FAILED : EXIT_OK;
}
