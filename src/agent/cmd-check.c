/* lodge check FILE|NAME: read and validate a domain config, as create
 * would, without starting anything.  One line out: "FILE: ok" or the
 * first error as "FILE:LINE: KEY: what is wrong". */
#include "agent.h"
#include "default-guest.h"
#include "log.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int cmd_check(struct cli *c)
{
	static struct domain_config dc;
	struct lodge_err err;
	char shown[4 * sizeof(dc.file)];
	const char *note;

	if (lodge_config_find(&c->lg, c->argv[0], &dc, &err)) {
		/* Bare, like a compiler's: editors jump to FILE:LINE.  (The
		 * message is escaped: it quotes the file.) */
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	printf("%s: ok\n", text_escape(shown, sizeof(shown), dc.file));
	if ((note = pvm_linux_note_here(dc.kernel, dc.bootloader)))
		log_warn("%s: %s", dc.name, note);
	return 0;
}
