/* lodge: the console agent's command line.  Any unambiguous prefix of a
 * command works, as with xl. */
#include "agent.h"
#include "log.h"

#include <stdio.h>
#include <string.h>

static const struct command commands[] = {
	{ "bridge-create", "BRIDGE", "create a bridge and bring it up", cmd_bridge_create },
	{ "bridge-delete", "BRIDGE", "delete a bridge (refused while vifs are attached)", cmd_bridge_delete },
	{ "bridge-list", "", "list bridges with their port counts", cmd_bridge_list },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: lodge COMMAND [ARGS]\n\ncommands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-14s %-10s %s\n", commands[i].name, commands[i].args, commands[i].help);
}

static const struct command *find_command(const char *name)
{
	const struct command *found = NULL;
	size_t i, len = strlen(name);

	for (i = 0; i < NCOMMANDS; i++) {
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
		if (strncmp(commands[i].name, name, len) == 0) {
			if (found) {
				log_err("'%s' is ambiguous: %s, %s, ...", name, found->name, commands[i].name);
				return NULL;
			}
			found = &commands[i];
		}
	}
	if (!found)
		log_err("unknown command '%s' (see lodge help)", name);
	return found;
}

int main(int argc, char **argv)
{
	const struct command *cmd;
	int rc;

	log_init("lodge");
	if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	cmd = find_command(argv[1]);
	if (!cmd)
		return EXIT_USAGE;
	rc = cmd->run(argc - 1, argv + 1);
	if (rc == EXIT_USAGE)
		fprintf(stderr, "usage: lodge %s %s\n", cmd->name, cmd->args);
	return rc;
}
