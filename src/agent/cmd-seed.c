/* lodge seed NAME [-H HOSTNAME] [-k FILE] [-p FILE] [-P a,b] [-u FILE] [-o FILE]:
 * a guest's cloud-init NoCloud seed disk on its own (lodge install makes
 * the same one); the library does the work (src/lib/include/seed.h). */
#include "agent.h"
#include "log.h"
#include "seed.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_seed(struct cli *c)
{
	struct lodge_seed_result res;
	struct lodge_seed s = {
		.name = c->argv[0],
		.hostname = c->text['H'],
		.ssh_key_file = c->text['k'],
		.password_file = c->text['p'],
		.packages = c->text['P'],
		.user_data_file = c->text['u'],
		.result = &res,
	};
	char out[CFG_PATH_MAX], full[PATH_MAX], line[PATH_MAX + 32], shown[4 * PATH_MAX];
	struct lodge_err err;

	if (c->set['o'])
		snprintf(out, sizeof(out), "%s", c->text['o']);
	else if (lodge_seed_path(&c->lg, c->argv[0], out, sizeof(out), &err))
		return cli_fail(&err);
	if (lodge_seed_build(&s, out, &err))
		return cli_fail(&err);
	printf("seed for %s written to %s: instance-id %s, hostname %s, %u ssh key%s, %s, %u package%s%s; %s\n",
	       c->argv[0], text_escape(shown, sizeof(shown), out), res.instance_id,
	       s.hostname ? s.hostname : s.name, res.nkeys, res.nkeys == 1 ? "" : "s",
	       res.password ? "a password hash" : "no password", res.npackages, res.npackages == 1 ? "" : "s",
	       res.user_data ? ", the user-data merged" : "", res.schema_note);
	/* The line a config takes, by the path a config can use. */
	if (realpath(out, full) && lodge_seed_disk_line(full, NULL, line, sizeof(line), &err) == 0)
		printf("disk += [ '%s' ]\n", line);
	return 0;
}
