/* lodge check FILE|NAME: read and validate a domain config, as create
 * would, without starting anything.  One line out: "FILE: ok" or the
 * first error as "FILE:LINE: KEY: what is wrong". */
#include "agent.h"
#include "log.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int cmd_check(struct cli *c)
{
	static struct domain_config dc;
	struct lodge_err err;
	char shown[4 * sizeof(dc.file)];

	if (lodge_config_find(&c->lg, c->argv[0], &dc, &err)) {
		/* Bare, like a compiler's: editors jump to FILE:LINE.  (The
		 * message is escaped: it quotes the file.) */
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	printf("%s: ok\n", text_escape(shown, sizeof(shown), dc.file));
	return 0;
}
