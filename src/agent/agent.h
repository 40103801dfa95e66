/* The console agent: the `lodge` command.  Each command is one entry in
 * the table in main.c and one function, returning an exit status; the
 * user's message is printed once, where the command knows what failed. */
#ifndef LODGE_AGENT_H
#define LODGE_AGENT_H

#include "exit-status.h"

struct command {
	const char *name;
	const char *args;
	const char *help;
	int (*run)(int argc, char **argv);
};

#include "config.h"

/* main.c: the host config, with --root applied; prints its own error. */
int agent_host_config(struct host_config *hc);

/* cmd-domain.c */
int cmd_create(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_pause(int argc, char **argv);
int cmd_unpause(int argc, char **argv);
int cmd_shutdown(int argc, char **argv);
int cmd_reboot(int argc, char **argv);
int cmd_destroy(int argc, char **argv);
int cmd_uptime(int argc, char **argv);
int cmd_config(int argc, char **argv);
/* cmd-mem.c */
int cmd_mem_set(int argc, char **argv);
/* cmd-check.c */
int cmd_check(int argc, char **argv);
/* cmd-console.c */
int cmd_console(int argc, char **argv);
/* cmd-info.c, cmd-autostart.c */
int cmd_info(int argc, char **argv);
int cmd_autostart(int argc, char **argv);

/* cmd-devices.c */
int cmd_block_list(int argc, char **argv);
int cmd_network_list(int argc, char **argv);
/* A running domain as the device commands see it. */
#include "domains.h"
struct running {
	struct host_config hc;
	struct domain_config dc;    /* as `lodge create` wrote it in the runtime directory */
	struct dom_status st;
};
/* Load one: 0, or exit status 1 with the message printed. */
int running_load(const char *name, struct running *r);

/* cmd-addr.c, cmd-capture.c */
int cmd_addr(int argc, char **argv);
int cmd_capture(int argc, char **argv);

/* cmd-cpu.c */
int cmd_vcpu_pin(int argc, char **argv);
int cmd_vcpu_list(int argc, char **argv);
int cmd_sched(int argc, char **argv);

/* cmd-save.c, cmd-migrate.c */
int cmd_save(int argc, char **argv);
int cmd_restore(int argc, char **argv);
int cmd_migrate(int argc, char **argv);
int cmd_migrate_receive(int argc, char **argv);

/* cmd-bridge.c */
int cmd_bridge_create(int argc, char **argv);
int cmd_bridge_delete(int argc, char **argv);
int cmd_bridge_list(int argc, char **argv);

#endif
