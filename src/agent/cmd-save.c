/* lodge save, lodge restore and lodge dump-core, as xl save, xl restore
 * and xl dump-core (the library does the work: src/lib/migrate/save.c). */
#include "agent.h"

#include <stdio.h>

int cmd_save(struct cli *c)
{
	struct lodge_save_opts o = { .compress = c->set['c'], .keep = c->set['k'] };
	struct lodge_save_result res;
	struct lodge_err err;

	if (lodge_save(&c->lg, c->argv[0], c->argv[1], &o, &res, &err))
		return cli_fail(&err);
	printf("saved domain %s to %s (%.1f MiB%s, %ld ms)%s\n", res.name, c->argv[1], res.file_bytes / 1048576.0,
	       o.compress ? ", bzip2" : "", res.ms, o.keep ? "; it runs on" : "");
	return 0;
}

int cmd_restore(struct cli *c)
{
	struct lodge_restore_opts o = { .paused = c->set['p'] };
	struct lodge_restore_result res;
	struct lodge_err err;

	if (lodge_restore(&c->lg, c->argv[0], &o, &res, &err))
		return cli_fail(&err);
	printf("restored domain %s from %s (%ld ms)\n", res.name, c->argv[0], res.ms);
	return 0;
}

int cmd_dump_core(struct cli *c)
{
	struct lodge_err err;

	if (lodge_dump_core(&c->lg, c->argv[0], c->argv[1], &err))
		return cli_fail(&err);
	printf("dumped domain %s's core to %s\n", c->argv[0], c->argv[1]);
	return 0;
}
