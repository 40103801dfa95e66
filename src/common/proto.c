/* The protocol's vocabulary (proto.h), defined once. */
#include "proto.h"

#include <string.h>

#define R PROTO_WHEN_RUNNING
#define ANY PROTO_WHEN_ANY
/* Reading, destroying and the console work in every state: a domain being
 * saved or kept after its end can still be looked at and ended.  save-end
 * answers the save that holds the domain; everything else waits for a
 * running domain that no save or migration holds. */
static const struct proto_command_rule commands[PROTO_NCOMMANDS] = {
	/*                     name           usage                         args  reads  when, asks only */
	[PROTO_STATUS]      = { "status",      "",                           0, 0, true,  ANY, true },
	[PROTO_PEERS]       = { "peers",       "",                           0, 0, true,  ANY, true },
	[PROTO_VCPU_LIST]   = { "vcpu-list",   "",                           0, 0, true,  ANY, true },
	[PROTO_DESTROY]     = { "destroy",     "",                           0, 0, false, ANY },
	[PROTO_CONSOLE]     = { "console",     "[force]",                    0, 1, false, ANY, true },
	[PROTO_CONSOLE_LOG] = { "console-log", "[BYTES]",                    0, 1, false, ANY, true },
	[PROTO_SAVE_END]    = { "save-end",    "destroy|resume",             1, 1, false, R | PROTO_WHEN_SAVING },
	[PROTO_SAVE]        = { "save",        "",                           0, 0, false, R },
	[PROTO_DUMP_CORE]   = { "dump-core",   "",                           0, 0, false, R | PROTO_WHEN_ENDED },
	[PROTO_MIGRATE]     = { "migrate",     "",                           0, 0, false, R },
	[PROTO_PAUSE]       = { "pause",       "",                           0, 0, false, R },
	[PROTO_UNPAUSE]     = { "unpause",     "",                           0, 0, false, R },
	/* fed through a save or migration too: a pool's live migration of an
	 * HA domain may outlast the deadline (src/pool/README.md) */
	[PROTO_WATCHDOG]    = { "watchdog",    "MS",                         1, 1, false, R | PROTO_WHEN_SAVING },
	[PROTO_SHUTDOWN]    = { "shutdown",    "",                           0, 0, false, R },
	[PROTO_REBOOT]      = { "reboot",      "",                           0, 0, false, R },
	[PROTO_MEM_SET]     = { "mem-set",     "MIB",                        1, 1, false, R },
	[PROTO_MEM_MAX]     = { "mem-max",     "MIB",                        1, 1, false, R },
	[PROTO_SYSRQ]       = { "sysrq",       "KEY",                        1, 1, false, R },
	[PROTO_NMI]         = { "nmi",         "",                           0, 0, false, R },
	[PROTO_VCPU_PIN]    = { "vcpu-pin",    "VCPU|all CPUS",              2, 2, false, R },
	[PROTO_VCPU_SET]    = { "vcpu-set",    "N",                          1, 1, false, R },
	[PROTO_SCHED]       = { "sched",       "WEIGHT CAP",                 2, 2, false, R },
	[PROTO_DISK_ATTACH] = { "disk-attach", "SHARED SPEC",                2, 2, false, R },
	[PROTO_VIF_ATTACH]  = { "vif-attach",  "SPEC",                       1, 1, false, R },
	[PROTO_DETACH]      = { "detach",      "SLOT TIMEOUT_MS [force]",    2, 3, false, R },
};
#undef R
#undef ANY

const struct proto_command_rule *proto_command_rule(enum proto_command c)
{
	return (unsigned)c < PROTO_NCOMMANDS ? &commands[c] : NULL;
}

int proto_command_find(const char *name)
{
	unsigned i;

	for (i = 0; i < PROTO_NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return (int)i;
	return -1;
}

static const char *const state_names[DOMAIN_STATE_COUNT] = {
	[DOMAIN_STATE_RUNNING] = "running",
	[DOMAIN_STATE_PAUSED] = "paused",
	[DOMAIN_STATE_SHUTDOWN] = "shutdown",
	[DOMAIN_STATE_CRASHED] = "crashed",
	[DOMAIN_STATE_UNKNOWN] = "?",
};

const char *domain_state_name(enum domain_state s)
{
	return (unsigned)s < DOMAIN_STATE_COUNT ? state_names[s] : state_names[DOMAIN_STATE_UNKNOWN];
}

enum domain_state domain_state_of(const char *word)
{
	unsigned i;

	for (i = 0; i < DOMAIN_STATE_UNKNOWN; i++)
		if (strcmp(word, state_names[i]) == 0)
			return (enum domain_state)i;
	return DOMAIN_STATE_UNKNOWN;
}
