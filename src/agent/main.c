/* lodge: the console agent's command line.  Any unambiguous prefix of a
 * command works, as with xl. */
#include "agent.h"
#include "log.h"
#include "tui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct command commands[] = {
	{ "top", "[-b] [-n N] [-d SECS] [-C]", "the dashboard (also lodge with no command)", tui_main },
	{ "create", "[-c] [-p] FILE|NAME", "start a domain from its config (-c: attach the console, -p: paused)", cmd_create },
	{ "list", "[-l] [-o tsv]", "list domains, Domain-0 first", cmd_list },
	{ "console", "[--force|--log] NAME", "attach to a domain's serial console (Ctrl-] detaches)", cmd_console },
	{ "pause", "NAME", "stop a domain's vCPUs", cmd_pause },
	{ "unpause", "NAME", "let a paused domain run again", cmd_unpause },
	{ "shutdown", "[-w] [-t SECS] NAME", "ask the guest to power off (ACPI power button)", cmd_shutdown },
	{ "reboot", "NAME", "reset the domain (on_reboot decides what follows)", cmd_reboot },
	{ "destroy", "NAME", "end a domain at once", cmd_destroy },
	{ "save", "[-c] [-k] NAME FILE", "save a domain to FILE and destroy it (-c: bzip2, -k: keep it running)", cmd_save },
	{ "restore", "[-p] FILE", "bring a saved domain back (-p: paused)", cmd_restore },
	{ "migrate", "[--secret-file F] NAME HOST[:PORT]", "move a running domain to another host, live", cmd_migrate },
	{ "migrate-receive", "[--listen ADDR:PORT] [--once]", "take domains migrated to this host", cmd_migrate_receive },
	{ "block-list", "NAME", "a domain's disks with their I/O counters", cmd_block_list },
	{ "network-list", "NAME", "a domain's vifs with their traffic counters", cmd_network_list },
	{ "vcpu-list", "[-o tsv] [NAME]", "each vCPU's host CPU, state, CPU and wait time, affinity", cmd_vcpu_list },
	{ "vcpu-pin", "NAME VCPU|all CPUS", "set the host CPUs a vCPU may run on (CPUS: 0, 0-1, 0,2, all)", cmd_vcpu_pin },
	{ "sched", "[NAME [--weight W] [--cap PCT]]", "show or set the CPU weight (1-65535, 256) and cap (% of a CPU, 0: none)", cmd_sched },
	{ "mem-set", "NAME MiB", "balloon a running domain to MiB (32 MiB up to its maxmem)", cmd_mem_set },
	{ "addr", "[-t] NAME", "each vif's addresses, learned from the guest's own traffic (-t: rates, drops, top peers)", cmd_addr },
	{ "capture", "NAME [VIF] [-w FILE] [-c N] [-t SECS] [FILTER]", "capture a vif's frames (pcap file or one line each)", cmd_capture },
	{ "info", "", "the host: CPUs, memory, KVM backend", cmd_info },
	{ "uptime", "", "how long each domain has run", cmd_uptime },
	{ "config", "NAME", "print a domain's resolved config", cmd_config },
	{ "check", "FILE|NAME", "validate a domain config without starting it", cmd_check },
	{ "autostart", "", "start the domains marked autostart", cmd_autostart },
	{ "bridge-create", "BRIDGE [--nic NIC [--force]]", "create a bridge (with NIC: move the host's NIC and its addresses onto it)", cmd_bridge_create },
	{ "bridge-delete", "BRIDGE", "delete a bridge, giving an adopted NIC its addresses back (refused while vifs are attached)", cmd_bridge_delete },
	{ "bridge-list", "", "list bridges with their port counts", cmd_bridge_list },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: lodge [--root DIR] COMMAND [ARGS]\n\ncommands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-14s %-22s %s\n", commands[i].name, commands[i].args, commands[i].help);
	fprintf(f, "\n--root DIR (or LODGE_ROOT) puts /etc/lodge and /run/lodge under DIR.\n");
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

int agent_host_config(struct host_config *hc)
{
	char err[1024];

	if (host_config_load(hc, err, sizeof(err))) {
		log_err("%s", err);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const struct command *cmd;
	int rc;

	log_init("lodge");
	if (getenv("LODGE_ROOT"))
		cfg_set_root(getenv("LODGE_ROOT"));
	while (argc > 2 && strcmp(argv[1], "--root") == 0) {
		cfg_set_root(argv[2]);
		argv[2] = argv[0];
		argc -= 2;
		argv += 2;
	}
	/* No command (or only dashboard options): the dashboard. */
	if (argc < 2 || argv[1][0] == '-')
		return tui_main(argc, argv);
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	cmd = find_command(argv[1]);
	if (!cmd)
		return EXIT_USAGE;
	rc = cmd->run(argc - 1, argv + 1);
	if (rc == EXIT_USAGE)
		fprintf(stderr, "usage: lodge %s %s\n", cmd->name, cmd->args);
	return rc;
}
