/* lodge: the console agent's command line.  One table: each command with
 * its options, operands and help (cli.h reads a command line from it).
 * Any unambiguous prefix of a command works, as with xl. */
#include "agent.h"
#include "complete.h"
#include "log.h"
#include "output.h"
#include "tui.h"
#include "version.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLAG(l, n, h)              { l, n, CLI_FLAG, NULL, h, 0, 0, NULL, NULL }
#define TEXT(l, n, a, h)           { l, n, CLI_TEXT, a, h, 0, 0, NULL, NULL }
#define NUMBER(l, n, a, lo, hi, h) { l, n, CLI_NUMBER, a, h, lo, hi, NULL, NULL }
#define WORD(l, n, a, w, h)        { l, n, CLI_WORD, a, h, 0, 0, NULL, w }

static const struct cli_option top_opts[] = {
	FLAG('b', "batch", "print the table as text, for scripts"),
	NUMBER('n', "iterations", "N", 1, INT_MAX, "stop after N tables (with -b)"),
	{ 'd', "delay", CLI_SECONDS, "SECS", "seconds between samples (default 1)", 0.1, 86400, NULL, NULL },
	FLAG('C', "monochrome", "no colours"),
	{ 0 },
};
static const struct cli_option create_opts[] = {
	FLAG('c', "console", "attach to its console once it runs"),
	FLAG('p', "paused", "hold its vCPUs before the guest's first instruction (unpause lets it run)"),
	TEXT('O', "on", "HOST", "in a pool: on this host (default: the one up with the most memory not yet placed)"),
	FLAG('L', "local", "on a pool host: a plain domain of this host, not in the pool"),
	{ 0 },
};
static const struct cli_option list_opts[] = {
	FLAG('l', "long", "more columns: memory, balloon, save, KSM, THP, addresses"),
	FLAG('a', "all", "also the domains defined in domains_dir that are not running (state off), with autostart"),
	FLAG('P', "pool", "every domain of this host's pool, with its host"),
	OUT_OPTIONS,
	{ 0 },
};
static const struct cli_option console_opts[] = {
	FLAG('f', "force", "take the console over from the client that has it"),
	FLAG('l', "log", "print what the console has kept, and return"),
	{ 0 },
};
static const struct cli_option shutdown_opts[] = {
	FLAG('a', "all", "every running domain of this host"),
	FLAG('w', "wait", "return once the domain (each of them) has gone"),
	NUMBER('t', "timeout", "SECS", 1, 86400, "how long --wait waits (default " SCHEMA_TEXT(CLI_WAIT_DEFAULT_S) ")"),
	{ 0 },
};
static const struct cli_option reboot_opts[] = {
	FLAG('w', "wait", "return once the domain runs again"),
	NUMBER('t', "timeout", "SECS", 1, 86400, "how long --wait waits (default " SCHEMA_TEXT(CLI_WAIT_DEFAULT_S) ")"),
	{ 0 },
};
static const struct cli_option save_opts[] = {
	FLAG('c', "compress", "compress the file with bzip2"),
	FLAG('k', "keep", "keep the domain running after the save"),
	{ 0 },
};
static const struct cli_option restore_opts[] = {
	FLAG('p', "paused", "bring it back paused"),
	{ 0 },
};
static const struct cli_option migrate_opts[] = {
	TEXT('s', "secret-file", "FILE", "the shared migration secret (default: lodge.conf's migration_secret_file)"),
	FLAG('q', "quiet", "no line per pre-copy round"),
	{ 0 },
};
static const struct cli_option receive_opts[] = {
	TEXT('l', "listen", "ADDR:PORT|SOCKET", "where to listen (default: a root-only socket in the runtime "
	     "directory, or with a secret lodge.conf's migration_listen)"),
	FLAG('1', "once", "return after the first migration (its exit status)"),
	TEXT('s', "secret-file", "FILE", "the shared migration secret (default: lodge.conf's migration_secret_file)"),
	{ 0 },
};
static const struct cli_option output_opts[] = {
	OUT_OPTIONS,
	{ 0 },
};
static const struct cli_option sched_opts[] = {
	NUMBER('w', "weight", "W", DOMAIN_CPU_WEIGHT_MIN, DOMAIN_CPU_WEIGHT_MAX,
	       "credit weight (default " SCHEMA_TEXT(DOMAIN_CPU_WEIGHT_DEFAULT) ")"),
	{ 'c', "cap", CLI_NUMBER, "PCT", "cap in percent of one CPU (0: none)", 0, DOMAIN_CAP_MAX(DOMAIN_VCPUS_MAX),
	  " percent of one CPU, 0: no cap", NULL },
	{ 0 },
};
static const struct cli_option addr_opts[] = {
	FLAG('t', "traffic", "add each vif's rates, drops and top peers"),
	OUT_OPTIONS,
	{ 0 },
};
static const struct cli_option capture_opts[] = {
	TEXT('w', "write", "FILE", "write a pcap file instead of one line a frame"),
	NUMBER('c', "count", "N", 1, 1e12, "stop after N frames"),
	NUMBER('t', "time", "SECS", 1, 31536000, "stop after SECS seconds"),
	{ 0 },
};
static const struct cli_option bridge_opts[] = {
	TEXT('n', "nic", "NIC", "move this host NIC and its addresses and routes onto the bridge"),
	FLAG('f', "force", "with --nic: even the NIC this ssh session comes in on"),
	{ 0 },
};
static const struct cli_option pool_join_opts[] = {
	TEXT('e', "etcd", "URL[,URL...]", "the pool's etcd client URLs (http://HOST:PORT)"),
	TEXT('n', "host", "NAME", "this host's name in the pool (default its hostname)"),
	TEXT('p', "prefix", "KEY", "where the pool's keys are in etcd (default /lodge/pool)"),
	TEXT('a', "cacert", "FILE", "the CA that signed etcd's certificate (PEM; required with https URLs)"),
	TEXT('c', "cert", "FILE", "this host's client certificate for etcd (PEM)"),
	TEXT('k', "key", "FILE", "the key of --cert (PEM, owned by root, mode 600)"),
	TEXT('u', "user", "NAME", "this host's user in etcd's own authentication"),
	TEXT('w', "password-file", "FILE", "--user's password, the file's first line (owned by root, mode 600)"),
	{ 0 },
};
static const struct cli_option log_opts[] = {
	FLAG('f', "follow", "then print each event as it is written"),
	NUMBER('n', "lines", "N", 0, 1000000, "the last N events (default " SCHEMA_TEXT(CLI_LOG_LINES_DEFAULT) ")"),
	{ 0 },
};
static const struct cli_option seed_opts[] = {
	TEXT('H', "hostname", "HOSTNAME", "the guest's hostname (default: NAME)"),
	TEXT('k', "ssh-key", "FILE", "OpenSSH public keys, one a line, for the guest's default user"),
	TEXT('p', "password-file", "FILE", "the default user's password, the file's one line (only its hash is kept)"),
	TEXT('P', "packages", "a,b", "Debian packages cloud-init installs at first boot"),
	TEXT('u', "user-data", "FILE", "your own #cloud-config, merged with these"),
	TEXT('o', "output", "FILE", "where the seed goes (default: IMAGE_DIR/NAME-seed.img)"),
	{ 0 },
};
static const struct cli_option install_opts[] = {
	TEXT('d', "dist", "DIST", "the Debian release (default " LODGE_DIST_DEFAULT ")"),
	TEXT('s', "size", "SIZE", "a new disk file's size (default 2G; a number with b, k, m, g or t; no unit: MiB)"),
	TEXT('D', "disk", "FILE|/dev/PART", "a new disk file, or a partition written whole (default: the image "
	     "directory's NAME.img)"),
	NUMBER('m', "memory", "MiB", DOMAIN_MEMORY_MIN_MIB, DOMAIN_MEMORY_MAX_MIB,
	       "guest RAM (default " SCHEMA_TEXT(LODGE_INSTALL_MEMORY_DEFAULT) ")"),
	NUMBER('c', "vcpus", "N", DOMAIN_VCPUS_MIN, DOMAIN_VCPUS_MAX, "virtual CPUs (default " SCHEMA_TEXT(DOMAIN_VCPUS_DEFAULT) ")"),
	TEXT('b', "bridge", "BRIDGE", "an existing bridge for its vif (default: the network \"default\")"),
	TEXT('N', "network", "NETWORK", "an existing Lodge network for its vif (default: \"default\", made on first use)"),
	TEXT('P', "packages", "A,B", "packages cloud-init installs at its first boot"),
	TEXT('k', "ssh-key", "FILE", "an ssh public key for its default user"),
	TEXT('p', "password-file", "FILE", "the default user's password, hashed into the seed"),
	TEXT('u', "user-data", "FILE", "cloud-config of your own, merged into the seed's"),
	FLAG('n', "dry-run", "check everything and say what would be done; write nothing"),
	{ 0 },
};
static const struct cli_option template_update_opts[] = {
	FLAG('n', "dry-run", "print the mmdebstrap command line a build runs; build nothing"),
	{ 0 },
};
static const struct cli_option detach_opts[] = {
	FLAG('f', "force", "remove the disk even if the guest does not give it up (it was not asked)"),
	NUMBER('t', "timeout", "SECS", 1, 3600, "how long the guest has to give it up (default " SCHEMA_TEXT(LODGE_DETACH_TIMEOUT_S) ")"),
	{ 0 },
};
static const struct cli_option network_create_opts[] = {
	TEXT('s', "subnet", "A.B.C.D/N", "its IPv4 subnet (/8 to /30); the first host is the gateway, on its bridge"),
	FLAG('n', "nat", "masqueraded out of the host's other interfaces (the default)"),
	FLAG('r', "routed", "forwarded with the guests' own addresses, no masquerade"),
	FLAG('i', "isolated", "the host's DHCP and DNS only, no way out"),
	TEXT('R', "dhcp-range", "A-B", "the addresses DHCP gives (default: the subnet's hosts after the gateway)"),
	TEXT('d', "domain", "DOMAIN", "DNS domain: a domain NAME on it resolves as NAME.DOMAIN"),
	TEXT('b', "bridge", "BRIDGE", "its bridge (default: " NETWORK_BRIDGE_PREFIX "NAME)"),
	FLAG('a', "autostart", "lodge autostart starts it at boot"),
	FLAG('f', "dns-forward", "names dnsmasq does not know go to the host's resolv.conf servers"),
	{ 0 },
};
static const struct cli_option web_opts[] = {
	TEXT('l', "listen", "ADDR:PORT", "where to serve (default 127.0.0.1:8080; other than loopback only with TLS)"),
	TEXT('c', "cert", "FILE", "serve HTTPS with this certificate (PEM)"),
	TEXT('k', "key", "FILE", "... and its private key (PEM)"),
	TEXT('n', "server-name", "NAME", "a DNS name browsers may use for this host (besides its addresses, "
	     "localhost and its hostname)"),
	{ 0 },
};
static const struct cli_option web_passwd_opts[] = {
	WORD('r', "role", "ROLE", "admin viewer", "admin (the default: may change domains) or viewer (may only look)"),
	{ 0 },
};
static const struct cli_option no_opts[] = { { 0 } };

static int cmd_help(struct cli *c);
static int cmd_top(struct cli *c);

#define ANY (-1)
static const struct command commands[] = {
	{ "top", top_opts, "", 0, 0, "the dashboard (also lodge with no command)", 0, cmd_top },
	{ "create", create_opts, "FILE|NAME [KEY=VALUE...]", 1, ANY,
	  "start a domain from its config, KEY=VALUE replacing the config's KEY (memory=512)", 0, cmd_create },
	{ "list", list_opts, "[DOMAIN...]", 0, ANY, "list domains (or only those), Domain-0 first", 0, cmd_list },
	{ "console", console_opts, "DOMAIN", 1, 1, "attach to a domain's serial console (Ctrl-] detaches)", 0,
	  cmd_console },
	{ "pause", no_opts, "DOMAIN", 1, 1, "stop a domain's vCPUs", 0, cmd_pause },
	{ "unpause", no_opts, "DOMAIN", 1, 1, "let a paused domain run again", 0, cmd_unpause },
	{ "shutdown", shutdown_opts, "DOMAIN|-a", 0, 1,
	  "ask the guest to power off (ACPI power button); a pool's stays stopped", 0, cmd_shutdown },
	{ "reboot", reboot_opts, "DOMAIN", 1, 1, "reset the domain (on_reboot decides what follows)", 0, cmd_reboot },
	{ "trigger", no_opts, "DOMAIN nmi|reset|power", 2, 2,
	  "an NMI, a reset or the power button, as xl trigger (s3resume does not apply)", 0, cmd_trigger },
	{ "sysrq", no_opts, "DOMAIN KEY", 2, 2,
	  "a serial BREAK then KEY: the guest kernel's magic SysRq (h: its help)", 0, cmd_sysrq },
	{ "destroy", no_opts, "DOMAIN", 1, 1, "end a domain at once", 0, cmd_destroy },
	{ "save", save_opts, "DOMAIN FILE", 2, 2, "save a domain to FILE and destroy it (or keep it running)",
	  CMD_OPTIONS_FIRST, cmd_save },
	{ "restore", restore_opts, "FILE", 1, 1, "bring a saved domain back", CMD_OPTIONS_FIRST, cmd_restore },
	{ "dump-core", no_opts, "DOMAIN FILE", 2, 2, "write a domain's memory and registers to FILE as an ELF core",
	  CMD_OPTIONS_FIRST, cmd_dump_core },
	{ "migrate", migrate_opts, "DOMAIN HOST[:PORT]|SOCKET", 2, 2, "move a running domain to another host, live",
	  CMD_OPTIONS_FIRST, cmd_migrate },
	{ "migrate-receive", receive_opts, "", 0, 0, "take domains migrated to this host", CMD_OPTIONS_FIRST,
	  cmd_migrate_receive },
	{ "block-list", output_opts, "DOMAIN", 1, 1, "a domain's disks with their I/O counters", 0, cmd_block_list },
	{ "block-attach", no_opts, "DOMAIN DISKSPEC", 2, 2, "give a running domain a disk (DISKSPEC as a config's "
	  "disk entry, e.g. /img/x.img,raw,vdb,rw)", 0, cmd_block_attach },
	{ "block-detach", detach_opts, "DOMAIN VDEV", 2, 2, "take a disk from a running domain once the guest gives "
	  "it up", 0, cmd_block_detach },
	{ "network-attach", no_opts, "DOMAIN [VIFSPEC]", 1, 2, "give a running domain a vif (VIFSPEC as a config's "
	  "vif entry, e.g. bridge=br0,mac=02:..)", 0, cmd_network_attach },
	{ "network-detach", detach_opts, "DOMAIN MAC|DEVID", 2, 2, "take a vif from a running domain once the guest "
	  "gives it up", 0, cmd_network_detach },
	{ "network-list", output_opts, "[DOMAIN]", 0, 1,
	  "the networks (mode, bridge, subnet, dnsmasq, leases); with DOMAIN, its vifs with their traffic counters", 0,
	  cmd_network_list },
	{ "vcpu-list", output_opts, "[DOMAIN]", 0, 1, "each vCPU's host CPU, state, CPU and wait time, affinity", 0,
	  cmd_vcpu_list },
	{ "vcpu-pin", no_opts, "DOMAIN VCPU|all CPUS", 3, 3,
	  "set the host CPUs a vCPU may run on (CPUS: 0, 0-1, 0,2, all)", CMD_OPTIONS_FIRST, cmd_vcpu_pin },
	{ "vcpu-set", no_opts, "DOMAIN N", 2, 2, "bring N vCPUs online (1 to maxvcpus; the guest ejects the rest)",
	  CMD_OPTIONS_FIRST, cmd_vcpu_set },
	{ "sched", sched_opts, "[DOMAIN]", 0, 1, "show or set the CPU weight (" SCHEMA_TEXT(DOMAIN_CPU_WEIGHT_MIN) "-" SCHEMA_TEXT(DOMAIN_CPU_WEIGHT_MAX) ", "
	  SCHEMA_TEXT(DOMAIN_CPU_WEIGHT_DEFAULT) ") and cap (% of a CPU, 0: none)",
	  0, cmd_sched },
	{ "mem-set", no_opts, "DOMAIN SIZE", 2, 2, "balloon a running domain to SIZE (MiB, or 64m, 1g; up to maxmem)",
	  CMD_OPTIONS_FIRST, cmd_mem_set },
	{ "mem-max", no_opts, "DOMAIN SIZE", 2, 2,
	  "the most mem-set may give a running domain (up to its maxmem; not below its target)",
	  CMD_OPTIONS_FIRST, cmd_mem_max },
	{ "addr", addr_opts, "DOMAIN", 1, 1, "each vif's addresses, learned from the guest's own traffic", 0, cmd_addr },
	{ "capture", capture_opts, "DOMAIN [VIF] [FILTER...]", 1, ANY,
	  "capture a vif's frames (pcap file or one line each)", 0, cmd_capture },
	{ "info", output_opts, "", 0, 0, "the host: CPUs, memory, KVM backend", 0, cmd_info },
	{ "log", log_opts, "[NAME]", 0, 1, "the event log: who created, paused, ... each domain, and when", 0, cmd_log },
	{ "dmesg", no_opts, "DOMAIN", 1, 1, "a running domain's lodge-hyp messages", 0, cmd_dmesg },
	{ "uptime", no_opts, "[DOMAIN]", 0, 1, "how long each domain (or that one) has run", 0, cmd_uptime },
	{ "config", no_opts, "DOMAIN|FILE", 1, 1, "print a domain's resolved config", 0, cmd_config },
	{ "config-update", no_opts, "NAME [FILE] [KEY=VALUE...]", 1, ANY,
	  "replace a domain's config (with FILE's, or KEY=VALUE in it), checked first; its next create "
	  "reads it", CMD_OPTIONS_FIRST, cmd_config_update },
	{ "rename", no_opts, "DOMAIN|NAME NEW", 2, 2, "rename a domain, running or not, and its config, to NEW",
	  CMD_OPTIONS_FIRST, cmd_rename },
	{ "check", no_opts, "FILE|NAME", 1, 1, "validate a domain config without starting it", 0, cmd_check },
	{ "seed", seed_opts, "NAME", 1, 1, "make a guest's cloud-init seed disk (hostname, keys, password, packages)",
	  0, cmd_seed },
	{ "autostart", no_opts, "", 0, 0, "start the domains marked autostart", 0, cmd_autostart },
	{ "host-stop", no_opts, "", 0, 0, "the host shuts down: save (or shut down) every domain at once",
	  0, cmd_host_stop },
	{ "host-start", no_opts, "", 0, 0, "the host is up: restore the saved domains, then autostart", 0,
	  cmd_host_start },
	{ "install", install_opts, "NAME", 1, 1,
	  "install Debian into a new disk or a partition (a clone of a template) and write its config", 0,
	  cmd_install },
	{ "template-list", output_opts, "", 0, 0, "the Debian templates installs clone", 0, cmd_template_list },
	{ "template-update", template_update_opts, "DIST", 1, 1,
	  "build a Debian release's template (anew) with mmdebstrap", 0, cmd_template_update },
	{ "template-delete", no_opts, "DIST", 1, 1, "delete a Debian release's template", 0, cmd_template_delete },
	{ "bridge-create", bridge_opts, "BRIDGE", 1, 1,
	  "create a bridge (with --nic: move the host's NIC and its addresses onto it)", CMD_NO_HOST,
	  cmd_bridge_create },
	{ "bridge-delete", no_opts, "BRIDGE", 1, 1,
	  "delete a bridge, giving an adopted NIC its addresses back (refused while vifs are attached)", CMD_NO_HOST,
	  cmd_bridge_delete },
	{ "network-create", network_create_opts, "NETWORK", 1, 1,
	  "create a network behind the host and start it: a bridge, dnsmasq for DHCP and DNS, nftables rules", 0,
	  cmd_network_create },
	{ "network-delete", no_opts, "NETWORK", 1, 1,
	  "stop a network and remove it (refused while domains' vifs are on it)", 0, cmd_network_delete },
	{ "network-start", no_opts, "NETWORK", 1, 1,
	  "bring up what of a network is down (its bridge, rules, dnsmasq)", 0, cmd_network_start },
	{ "network-stop", no_opts, "NETWORK", 1, 1,
	  "stop a network's dnsmasq, remove its rules and bridge (refused while vifs are on it)", 0,
	  cmd_network_stop },
	{ "bridge-list", output_opts, "", 0, 0, "list bridges with their port counts", CMD_NO_HOST, cmd_bridge_list },
	{ "pool-join", pool_join_opts, "", 0, 0, "join a pool of Lodge hosts on etcd (recorded in lodge.conf)", 0,
	  cmd_pool_join },
	{ "pool-leave", no_opts, "", 0, 0, "leave the pool (refused while its domains run here)", 0, cmd_pool_leave },
	{ "pool-forget", no_opts, "NAME", 1, 1, "drop a stopped domain from the pool (its config and state)", 0,
	  cmd_pool_forget },
	{ "pool-list", output_opts, "", 0, 0, "the pool's hosts: state, CPUs, memory, domains", 0, cmd_pool_list },
	{ "pool-agent", no_opts, "", 0, 0, "this host's pool agent, in the foreground (lodge-pool.service)", 0,
	  cmd_pool_agent },
	{ "web", web_opts, "", 0, 0, "serve the web interface (lodge-web(8)) in the foreground", 0, cmd_web },
	{ "web-passwd", web_passwd_opts, "USER", 1, 1,
	  "add a web interface user or set its password (read from standard input) and role", 0, cmd_web_passwd },
	{ "help", no_opts, "[COMMAND]", 0, 1, "this list, or a command's usage and options", CMD_NO_HOST, cmd_help },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

#define HELP_INDENT 20             /* where each command's help begins */

/* One command a paragraph: its name and operands, then its help from
 * HELP_INDENT (on the next line when they are longer), all within 80
 * columns; its options are lodge help COMMAND's. */
static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: lodge [--root DIR] [COMMAND] [ARGS]\n\ncommands:\n");
	for (i = 0; i < NCOMMANDS; i++) {
		int col = fprintf(f, "  %s%s%s", commands[i].name, commands[i].operands[0] ? " " : "",
				  commands[i].operands);

		if (col > HELP_INDENT - 1) {
			fputc('\n', f);
			col = 0;
		}
		fprintf(f, "%*s", HELP_INDENT - col, "");
		cli_wrap(f, commands[i].help, HELP_INDENT, HELP_INDENT);
	}
	fprintf(f, "\nDOMAIN: a running domain's name, or its ID.  Every command takes --help and\n"
		"--version; lodge help COMMAND gives its options.  --root DIR (or LODGE_ROOT)\n"
		"puts /etc/lodge, /var/lib/lodge, /var/log/lodge, /run/lodge... under DIR.\n");
}

/* The command a word names, whole or by an unambiguous prefix; NULL with
 * the reason said. */
static const struct command *find_command(const char *name)
{
	const struct command *found = NULL;
	size_t i, len = strlen(name);

	for (i = 0; i < NCOMMANDS; i++) {
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
		if (len && strncmp(commands[i].name, name, len) == 0) {
			if (found) {
				log_err("'%s' is ambiguous: %s, %s, ... (see lodge --help)", name, found->name,
					commands[i].name);
				return NULL;
			}
			found = &commands[i];
		}
	}
	if (!found)
		log_err("unknown command '%s' (see lodge --help)", name);
	return found;
}

static int cmd_help(struct cli *c)
{
	const struct command *cmd;

	if (c->argc == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!(cmd = find_command(c->argv[0])))
		return EXIT_USAGE;
	cli_help(stdout, cmd);
	return EXIT_OK;
}

static int cmd_top(struct cli *c)
{
	struct tui_options o = {
		.batch = c->set['b'],
		.iterations = c->set['n'] ? (int)c->num['n'] : 0,
		.delay_ms = c->set['d'] ? (int)(c->secs['d'] * 1000) : 1000,
		.monochrome = c->set['C'],
	};

	return tui_main(&c->lg, &o);
}

int main(int argc, char **argv)
{
	const char *root = getenv("LODGE_ROOT");
	const struct command *cmd;

	log_init("lodge");
	/* Bash completion's question (share/bash-completion/lodge). */
	if (argc > 1 && strcmp(argv[1], "--complete") == 0)
		return complete_main(commands, NCOMMANDS, argc - 2, argv + 2);
	/* Lodge's own options, before any command. */
	while (argc > 1) {
		if (strcmp(argv[1], "--root") == 0 && argc > 2) {
			root = argv[2];
			argv[2] = argv[0];
			argc -= 2;
			argv += 2;
		} else if (strcmp(argv[1], "--root") == 0) {
			log_err("--root needs a directory; usage: lodge [--root DIR] [COMMAND] [ARGS]");
			return EXIT_USAGE;
		} else if (strncmp(argv[1], "--root=", 7) == 0) {
			root = argv[1] + 7;
			argv[1] = argv[0];
			argc--;
			argv++;
		} else if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
			usage(stdout);
			return EXIT_OK;
		} else if (strcmp(argv[1], "--version") == 0) {
			printf("lodge %s\n", LODGE_VERSION);
			return EXIT_OK;
		} else {
			break;
		}
	}
	/* No command, or only the dashboard's options: the dashboard. */
	if (argc < 2 || argv[1][0] == '-')
		return cli_run(&commands[0], argc, argv, root);
	if (!(cmd = find_command(argv[1])))
		return EXIT_USAGE;
	return cli_run(cmd, argc - 1, argv + 1, root);
}
