/* The console agent: the `lodge` command.  Each command is one entry in
 * the table in main.c and one function, returning an exit status; the
 * user's message is printed once, where the command knows what failed. */
#ifndef LODGE_AGENT_H
#define LODGE_AGENT_H

#define EXIT_USAGE 2

struct command {
	const char *name;
	const char *args;
	const char *help;
	int (*run)(int argc, char **argv);
};

/* cmd-bridge.c */
int cmd_bridge_create(int argc, char **argv);
int cmd_bridge_delete(int argc, char **argv);
int cmd_bridge_list(int argc, char **argv);

#endif
