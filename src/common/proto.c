/* The protocol's vocabulary (proto.h), defined once. */
#include "proto.h"

#include <stdarg.h>
#include <stdio.h>
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
	[PROTO_RENAME]      = { "rename",      "NAME [cgroup]",              1, 2, false, R },
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

#define HYP (DOMAIN_STATE_FROM_HYP | DOMAIN_STATE_FROM_AGENT)     /* an agent reports what lodge-hyp says */
#define AGENT DOMAIN_STATE_FROM_AGENT
#define FACE DOMAIN_STATE_FROM_FACE
static const struct {
	const char *word;
	unsigned from;
} domain_states[DOMAIN_STATE_COUNT] = {
	[DOMAIN_STATE_RUNNING]    = { "running",    HYP },
	[DOMAIN_STATE_PAUSED]     = { "paused",     HYP },
	[DOMAIN_STATE_STARTING]   = { "starting",   FACE },
	[DOMAIN_STATE_RESTARTING] = { "restarting", AGENT },
	[DOMAIN_STATE_INSTALLING] = { "installing", FACE },
	[DOMAIN_STATE_PLACED]     = { "placed",     FACE },
	[DOMAIN_STATE_STOPPING]   = { "stopping",   AGENT },
	[DOMAIN_STATE_SHUTDOWN]   = { "shutdown",   HYP },
	[DOMAIN_STATE_CRASHED]    = { "crashed",    HYP },
	[DOMAIN_STATE_FAILED]     = { "failed",     AGENT },
	[DOMAIN_STATE_LOST]       = { "lost",       FACE },
	[DOMAIN_STATE_STOPPED]    = { "stopped",    FACE },
	[DOMAIN_STATE_OFF]        = { "off",        FACE },
	[DOMAIN_STATE_UNKNOWN]    = { "?",          FACE },   /* read from no word: any other is unknown */
};
#undef HYP
#undef AGENT
#undef FACE

const char *domain_state_name(enum domain_state s)
{
	return (unsigned)s < DOMAIN_STATE_COUNT ? domain_states[s].word : domain_states[DOMAIN_STATE_UNKNOWN].word;
}

enum domain_state domain_state_of(const char *word, unsigned from)
{
	unsigned i;

	for (i = 0; i < DOMAIN_STATE_COUNT; i++)
		if ((domain_states[i].from & from) && strcmp(word, domain_states[i].word) == 0)
			return (enum domain_state)i;
	return DOMAIN_STATE_UNKNOWN;
}

/* A device's key is stem, index, suffix: "vif" 2 "_addrs". */
static const struct {
	const char *stem, *suffix;         /* suffix NULL: a key of the domain */
} status_keys[PROTO_NKEYS] = {
	[PROTO_KEY_NAME] = { "name" },
	[PROTO_KEY_ID] = { "id" },
	[PROTO_KEY_PID] = { "pid" },
	[PROTO_KEY_STATE] = { "state" },
	[PROTO_KEY_VCPUS] = { "vcpus" },            /* online (vcpu-set) */
	[PROTO_KEY_MAX_VCPUS] = { "max_vcpus" },
	[PROTO_KEY_MEMORY_MIB] = { "memory_mib" },
	[PROTO_KEY_MAXMEM_MIB] = { "maxmem_mib" },
	[PROTO_KEY_MEM_MAX_MIB] = { "mem_max_mib" },
	[PROTO_KEY_TARGET_MIB] = { "target_mib" },
	[PROTO_KEY_BALLOON_MIB] = { "balloon_mib" },
	[PROTO_KEY_GUEST_TOTAL_KIB] = { "guest_total_kib" },
	[PROTO_KEY_GUEST_FREE_KIB] = { "guest_free_kib" },
	[PROTO_KEY_GUEST_AVAIL_KIB] = { "guest_avail_kib" },
	[PROTO_KEY_CPU_NS] = { "cpu_ns" },
	[PROTO_KEY_VCPU_NS] = { "vcpu_ns" },
	[PROTO_KEY_RSS_KIB] = { "rss_kib" },
	[PROTO_KEY_KSM_SHARED_KIB] = { "ksm_shared_kib" },
	[PROTO_KEY_THP_KIB] = { "thp_kib" },
	[PROTO_KEY_START_TIME] = { "start_time" },
	[PROTO_KEY_UPTIME_S] = { "uptime_s" },
	[PROTO_KEY_KERNEL] = { "kernel" },
	[PROTO_KEY_END_REASON] = { "end_reason" },
	[PROTO_KEY_CPU_WAIT_NS] = { "cpu_wait_ns" },
	[PROTO_KEY_VCPU_WAIT_NS] = { "vcpu_wait_ns" },
	[PROTO_KEY_CPU_WEIGHT] = { "cpu_weight" },
	[PROTO_KEY_CPU_CAP] = { "cpu_cap" },
	[PROTO_KEY_CGROUP] = { "cgroup" },
	[PROTO_KEY_DISK_SLOTS] = { "disk_slots" },
	[PROTO_KEY_VIF_SLOTS] = { "vif_slots" },
	[PROTO_KEY_DISK] = { "disk", "" },
	[PROTO_KEY_VIF] = { "vif", "" },
	[PROTO_KEY_VIF_ADDRS] = { "vif", "_addrs" },
	[PROTO_KEY_DISK_RD_OPS] = { "disk_rd_ops" },
	[PROTO_KEY_DISK_RD_BYTES] = { "disk_rd_bytes" },
	[PROTO_KEY_DISK_WR_OPS] = { "disk_wr_ops" },
	[PROTO_KEY_DISK_WR_BYTES] = { "disk_wr_bytes" },
	[PROTO_KEY_NET_RX_PACKETS] = { "net_rx_packets" },
	[PROTO_KEY_NET_RX_BYTES] = { "net_rx_bytes" },
	[PROTO_KEY_NET_TX_PACKETS] = { "net_tx_packets" },
	[PROTO_KEY_NET_TX_BYTES] = { "net_tx_bytes" },
	[PROTO_KEY_SAVE_KIND] = { "save_kind" },
	[PROTO_KEY_SAVE_PHASE] = { "save_phase" },
	[PROTO_KEY_SAVE_ROUND] = { "save_round" },
	[PROTO_KEY_SAVE_PAGES] = { "save_pages" },
	[PROTO_KEY_SAVE_DIRTY] = { "save_dirty" },
	[PROTO_KEY_SAVE_RATE_KIB] = { "save_rate_kib" },
};

const char *proto_status_key(enum proto_status_key k)
{
	return (unsigned)k < PROTO_NKEYS ? status_keys[k].stem : "";
}

const char *proto_status_key_name(enum proto_status_key k, unsigned index, char buf[PROTO_KEY_MAX])
{
	if ((unsigned)k >= PROTO_NKEYS || !status_keys[k].suffix)
		return proto_status_key(k);
	snprintf(buf, PROTO_KEY_MAX, "%s%u%s", status_keys[k].stem, index, status_keys[k].suffix);
	return buf;
}

size_t proto_key_printf(char *buf, size_t len, size_t n, enum proto_status_key k, unsigned index, const char *fmt,
			...)
{
	char key[PROTO_KEY_MAX];
	const char *name = proto_status_key_name(k, index, key);
	size_t klen = strlen(name);
	va_list ap;
	int w;

	/* the key copied, not formatted: status is asked every second of
	 * each of 50 domains */
	if (n + klen + 2 >= len)
		return n;
	memcpy(buf + n, name, klen);
	n += klen;
	buf[n++] = ' ';
	va_start(ap, fmt);
	w = vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
	n = w > 0 && (size_t)w < len - n ? n + (size_t)w : len - 1;
	if (n + 1 < len) {
		buf[n++] = '\n';
		buf[n] = '\0';
	}
	return n;
}

static const char *const save_kinds[PROTO_SAVE_NKINDS] = {
	[PROTO_SAVE_KIND_SAVE] = "save",
	[PROTO_SAVE_KIND_MIGRATE] = "migrate",
};
static const char *const save_phases[PROTO_SAVE_NPHASES] = {
	[PROTO_SAVE_PRECOPY] = "precopy",
	[PROTO_SAVE_STOPCOPY] = "stopcopy",
	[PROTO_SAVE_DONE] = "done",
	[PROTO_SAVE_FAILED] = "failed",
};

const char *proto_save_kind_name(enum proto_save_kind k)
{
	return (unsigned)k < PROTO_SAVE_NKINDS ? save_kinds[k] : "?";
}

const char *proto_save_phase_name(enum proto_save_phase ph)
{
	return (unsigned)ph < PROTO_SAVE_NPHASES ? save_phases[ph] : "?";
}

static int word_index(const char *const *words, unsigned n, const char *word)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (strcmp(words[i], word) == 0)
			return (int)i;
	return -1;
}

int proto_save_kind_of(const char *word)
{
	return word_index(save_kinds, PROTO_SAVE_NKINDS, word);
}

int proto_save_phase_of(const char *word)
{
	return word_index(save_phases, PROTO_SAVE_NPHASES, word);
}
