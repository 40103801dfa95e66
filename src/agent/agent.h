/* The console agent: the `lodge` command, a thin face on liblodge
 * (lodge.h).  Each command is one entry in the table in main.c and one
 * function that reads its parsed command line, calls the library and
 * prints the result, returning an exit status; the user's message is
 * printed once, here. */
#ifndef LODGE_AGENT_H
#define LODGE_AGENT_H

/* The CLI's own defaults, printed in its help from these numbers. */
#define CLI_WAIT_DEFAULT_S 60          /* --wait without --timeout */
#define CLI_LOG_LINES_DEFAULT 20       /* lodge log without --lines */

#include "cli.h"
#include "lodge.h"

/* cmd-domain.c */
int cmd_create(struct cli *c);
int cmd_pause(struct cli *c);
int cmd_unpause(struct cli *c);
int cmd_shutdown(struct cli *c);
int cmd_reboot(struct cli *c);
int cmd_destroy(struct cli *c);
int cmd_list(struct cli *c);
int cmd_uptime(struct cli *c);
int cmd_trigger(struct cli *c);
int cmd_sysrq(struct cli *c);
int cmd_config_update(struct cli *c);
int cmd_rename(struct cli *c);
int cmd_config(struct cli *c);
/* cmd-check.c, cmd-autostart.c, cmd-info.c */
int cmd_check(struct cli *c);
int cmd_autostart(struct cli *c);
int cmd_host_stop(struct cli *c);
int cmd_host_start(struct cli *c);
int cmd_info(struct cli *c);
/* cmd-console.c */
int cmd_console(struct cli *c);
/* DOMAIN's console on this terminal until Ctrl-]: an exit status. */
int console_tty(const struct lodge *lg, const char *domain, bool force);
/* cmd-devices.c, cmd-addr.c, cmd-capture.c */
int cmd_block_list(struct cli *c);
int cmd_block_attach(struct cli *c);
int cmd_block_detach(struct cli *c);
int cmd_network_attach(struct cli *c);
int cmd_network_detach(struct cli *c);
int cmd_network_list(struct cli *c);
int cmd_addr(struct cli *c);
int cmd_capture(struct cli *c);
/* cmd-cpu.c, cmd-mem.c */
int cmd_vcpu_pin(struct cli *c);
int cmd_vcpu_list(struct cli *c);
int cmd_sched(struct cli *c);
int cmd_mem_set(struct cli *c);
int cmd_vcpu_set(struct cli *c);
int cmd_mem_max(struct cli *c);
/* cmd-save.c, cmd-migrate.c */
int cmd_save(struct cli *c);
int cmd_restore(struct cli *c);
int cmd_dump_core(struct cli *c);
int cmd_migrate(struct cli *c);
int cmd_migrate_receive(struct cli *c);
/* cmd-log.c */
int cmd_log(struct cli *c);
int cmd_dmesg(struct cli *c);
/* cmd-seed.c */
int cmd_seed(struct cli *c);
/* cmd-install.c */
int cmd_install(struct cli *c);
int cmd_template_list(struct cli *c);
int cmd_template_update(struct cli *c);
int cmd_template_delete(struct cli *c);
/* cmd-bridge.c */
int cmd_bridge_create(struct cli *c);
int cmd_bridge_delete(struct cli *c);
int cmd_bridge_list(struct cli *c);
/* cmd-pool.c */
int cmd_pool_join(struct cli *c);
int cmd_pool_leave(struct cli *c);
int cmd_pool_list(struct cli *c);
int cmd_pool_agent(struct cli *c);
int cmd_pool_create(struct cli *c);
int cmd_pool_domains(struct cli *c);
int cmd_pool_destroy(struct cli *c);
int cmd_pool_shutdown(struct cli *c);
int cmd_pool_forget(struct cli *c);
int cmd_pool_local_check(struct cli *c, const char *name);
int cmd_pool_rename_check(struct cli *c, const char *old, const char *new_name);
int cmd_pool_migrate(struct cli *c);
/* cmd-network.c */
int cmd_network_create(struct cli *c);
int cmd_network_delete(struct cli *c);
int cmd_network_start(struct cli *c);
int cmd_network_stop(struct cli *c);
int cmd_network_list_networks(struct cli *c);

/* cmd-web.c */
int cmd_web(struct cli *c);
int cmd_web_passwd(struct cli *c);

#endif
