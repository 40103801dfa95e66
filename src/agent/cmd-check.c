/* lodge check FILE|NAME: read and validate a domain config, as create
 * would, without starting anything.  One line out: "FILE: ok" or the
 * first error as "FILE:LINE: KEY: what is wrong". */
#include "agent.h"
#include "log.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int cmd_check(int argc, char **argv)
{
	static struct domain_config dc;
	struct host_config hc;
	char path[CFG_PATH_MAX + 80], err[2048], shown[4 * sizeof(path)];
	struct stat st;

	if (argc != 2)
		return EXIT_USAGE;
	if (agent_host_config(&hc))
		return 1;
	/* A name means DOMAINS_DIR/NAME.cfg, as for lodge create. */
	if (strchr(argv[1], '/') || stat(argv[1], &st) == 0)
		snprintf(path, sizeof(path), "%s", argv[1]);
	else
		snprintf(path, sizeof(path), "%s/%s.cfg", hc.domains_dir, argv[1]);
	if (domain_config_load(path, &hc, true, &dc, err, sizeof(err))) {
		/* Bare, like a compiler's: editors jump to FILE:LINE.  (The
		 * message is escaped: it quotes the file.) */
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("%s: ok\n", text_escape(shown, sizeof(shown), path));
	return 0;
}
