/* The Lodge control protocol between `lodge` (and the dashboard) and each
 * domain's lodge-hyp.  Version 1.
 *
 * Transport: a Unix stream socket RUNDIR/DOMAIN/control, in a directory of
 * mode 0700 owned by root: only root connects (lodge.conf's control_group
 * and stats_group let others in, checked on each connection).  Root always
 * gets a connection; users other than root share 16 (8 for one uid), and
 * one over gets "error too many clients ...".  A request line must be
 * whole within 5 s ("error request line not finished ..."), and a client
 * that sends nothing for the idle timeout (lodge-hyp
 * --control-idle-timeout, 60 s) is closed without a word: connect again.
 *
 * Request: one line, at most PROTO_LINE_MAX bytes including the newline:
 *     lodge/1 COMMAND [ARG ...]\n
 * or "lodge/1:FACE COMMAND ..." where FACE (1 to 16 of a-z and -) names
 * the face that asks ("dashboard"): the event log shows it beside the
 * uid and pid the kernel gives for the peer, which alone are trusted.
 * Reply: one line, "ok\n" or "error MESSAGE\n"; for commands that return
 * data, "ok\n" is followed by "KEY VALUE\n" lines and an empty line.
 * After "console" answers "ok\n" the connection carries the raw serial
 * console both ways until either side closes it.  A request with another
 * version gets "error protocol version X not supported (lodge-hyp speaks 1)".
 *
 * Commands:
 *   status              keys: the table below (enum proto_status_key, named
 *                       in proto.c); guest_* only once the guest reports, save_*
 *                       only after a save or migration; vcpu_ns and
 *                       vcpu_wait_ns space-separated, one per vCPU
 *                       memory_mib: at boot; maxmem_mib: guest RAM; mem_max_mib:
 *                       mem-set's ceiling (mem-max, else maxmem_mib); target_mib:
 *                       what mem-set asks the guest to keep; balloon_mib: what
 *                       the guest's balloon driver has given back; guest_*:
 *                       the guest's own figures, once its driver reports them
 *                       disk_slots, vif_slots: each disk's and vif's PCI
 *                         slot, in guest order ("-": none), for detach and
 *                         the runtime config (slot=N)
 *                       diskN, vifN (one per device, in guest order): five
 *                         counters "IN_OPS IN_BYTES OUT_OPS OUT_BYTES ERRORS"
 *                         as the guest sees them (in = disk reads, packets
 *                         received; out = disk writes, packets sent)
 *                       disk_rd_ops disk_rd_bytes disk_wr_ops disk_wr_bytes
 *                       net_rx_packets net_rx_bytes net_tx_packets
 *                       net_tx_bytes: the sums
 *                       cpu_wait_ns vcpu_wait_ns (time runnable but not
 *                       running, from schedstat: the guest's steal)
 *                       cpu_weight cpu_cap (Xen credit weight, cap in
 *                       percent of one CPU, 0 none) cgroup (its directory, or -)
 *                       vifN_addrs (one per watched vif): the addresses the
 *                         guest claimed on it, "ADDR,HOW,AGE_S ..." (HOW:
 *                         arp, dhcp or nd; AGE_S: seconds since last seen),
 *                         or "-"; absent for a domain without a watcher
 *   peers               what each vif's watcher saw (error for a domain
 *                       without watched vifs); keys:
 *                       interval_ms: the length of the last whole interval
 *                       vifN_name: the tap; vifN_watch: "on" or why not
 *                       vifN_addrs: as in status
 *                       vifN_rate "PKTS_PER_S BYTES_PER_S DROPS": both
 *                         directions over the last interval; DROPS: frames
 *                         the capture ring lost since the domain started
 *                       vifN_peers "ADDR,PKTS,BYTES ...": the top peers of
 *                         the last interval by bytes, or "-"
 *   pause, unpause      stop/resume every vCPU
 *   shutdown            press the ACPI power button (graceful)
 *   reboot              reset the domain (on_reboot decides what follows)
 *   mem-set MIB         balloon the guest to MIB: from the floor (32 MiB, or
 *                       memory_mib if less) to maxmem_mib, else an error
 *   mem-max MIB         the ceiling mem-set may balloon up to (xl mem-max):
 *                       from the current target to maxmem_mib; status
 *                       gives it as mem_max_mib; not kept in a save
 *   sysrq KEY           a BREAK on the serial line then KEY (one printable
 *                       character): Linux's 8250 driver takes it as sysrq
 *   nmi                 an NMI on vCPU 0 (xl trigger DOMAIN nmi)
 *   vcpu-set N          vCPUs 0..N-1 online, N from 1 to max_vcpus (xl
 *                       vcpu-set): those added run at once and the guest is
 *                       told (CPU hot-plug, src/common/cpuhp.h); those
 *                       beyond N are asked of the guest, and go offline when
 *                       it ejects them (status: vcpus, the online count)
 *   rename NAME [cgroup]  lodge rename of a running domain: the caller
 *                       (root) has moved the runtime directory to
 *                       RUNDIR/NAME (and with cgroup, the cgroup beside it);
 *                       lodge-hyp's messages and status say NAME from now
 *                       on, and its event log a renamed line.  "ok", or
 *                       "error WHY" (not a domain's name)
 *   destroy             end the domain at once
 *   watchdog MS         the pool agent's watchdog (src/pool/README.md): the
 *                       domain ends at MS, a CLOCK_MONOTONIC time in ms
 *                       (every process of the host shares that clock),
 *                       unless a later watchdog moves it; once armed it
 *                       stays armed; taken during a save or migration too
 *   console [force]     attach to the serial console; one client at a time,
 *                       "force" takes it over from the current one
 *   console-log [BYTES] the last BYTES (default all kept) of console output
 *   vcpu-list           keys, each a space-separated list with one word per
 *                       vCPU: vcpu_tid vcpu_cpu (host CPU it last ran on, -1
 *                       unknown) vcpu_state (/proc state letter, - no thread)
 *                       vcpu_ns vcpu_wait_ns vcpu_affinity (CPU lists)
 *                       vcpu_online (1, or 0: held offline by vcpu-set);
 *                       also vcpus (maxvcpus) and paused (0 or 1)
 *   vcpu-pin VCPU|all CPUS  affinity of one vCPU thread or all; CPUS as
 *                       Xen writes them (0, 0-3, 0,2, ^1, all); every CPU
 *                       must be online; nothing changes on error
 *   sched WEIGHT CAP    Xen credit weight (1..65535) and cap (0..100 per
 *                       vCPU) through the domain's CPU cgroup; both or neither
 *   disk-attach SHARED SPEC  hot-plug a disk: the descriptors sent with the
 *                       request (SCM_RIGHTS, up to 8) are the disk (open
 *                       read-only or read-write as SPEC says) and the other
 *                       names of its blocks (src/common/disknames.h), which
 *                       the caller opened with its own rights; SHARED (hex)
 *                       the names locked shared (bit i: the i-th);
 *                       SPEC lodge-hyp's --disk form with %XX escapes.
 *                       "ok" then "slot N": the guest was told (PCI
 *                       hot-plug, src/common/pcihp.h), or "error WHY"
 *   vif-attach SPEC     hot-plug a vif on the tap sent with the request
 *                       (the caller made it, with vnet headers, and put it
 *                       on its bridge); SPEC lodge-hyp's --net form
 *                       escaped; "ok" then "slot N", or "error WHY" (a
 *                       MAC the domain has, no free vif or slot)
 *   detach SLOT TIMEOUT_MS [force]  ask the guest to eject the device in PCI
 *                       SLOT (status: disk_slots "S0 S1 ...", each disk's,
 *                       in guest order); the reply waits for its eject:
 *                       "ok" then "how ejected", or after TIMEOUT_MS
 *                       "error the guest did not eject ..." (the device
 *                       stays); force: removed at once, "how forced"
 *   save                write the domain's state to the descriptor sent with
 *                       the request (SCM_RIGHTS: the file, or a pipe to a
 *                       compressor, past the agent's magic and HEAD; see
 *                       stream.h); the vCPUs park, the reply waits for the
 *                       end: "ok pages N bytes N time_us N", and the domain
 *                       stays paused until this connection sends save-end;
 *                       or "error WHY" and it runs on
 *   migrate             live: send the domain down the socket sent with the
 *                       request (both agents have authenticated and agreed
 *                       on HEAD); after each pre-copy round a line
 *                       "progress round N dirty N pages N rate_kib N", then
 *                       "ok downtime_us N total_us N rounds N pages N bytes N"
 *                       (the receiver runs it, this one ends "migrated away")
 *                       or "error WHY" (it runs on here).  The hand-over
 *                       after the stream's END: receiver 'L' (loaded),
 *                       sender 'G' (yours), receiver 'R' (running)
 *   dump-core           the guest's RAM and vCPU registers as an ELF core
 *                       (ET_CORE: NT_PRSTATUS per vCPU, PT_LOAD per RAM
 *                       range at its guest-physical address) written to the
 *                       regular file sent with the request (SCM_RIGHTS),
 *                       the vCPUs parked meanwhile: "ok" or "error WHY".
 *                       Also answered once the guest ended (preserve)
 *   save-end destroy|resume  after a save's ok: end the domain (the file is
 *                       safe) or let it run on (--keep, or the file failed)
 *                       While a save or migration runs, the commands the
 *                       table (proto.c) marks PROTO_WHEN_SAVING are answered;
 *                       the rest get "error ... is being saved".
 *                       status then adds (after the job's first report, and
 *                       kept with the phase it ended in until the next):
 *                       save_kind save|migrate, save_phase
 *                       precopy|stopcopy|done|failed, save_round, save_pages
 *                       (sent), save_dirty (last round), save_rate_kib
 */
#ifndef LODGE_PROTO_H
#define LODGE_PROTO_H

#define PROTO_VERSION   1
#define PROTO_PREFIX    "lodge/"
#define PROTO_LINE_MAX  1024
#define PROTO_FACE_MAX  16
#define PROTO_FACE_CHARS "abcdefghijklmnopqrstuvwxyz-"
/* The socket is RUNDIR/NAME/control: runtime.h. */

#include <stdbool.h>
#include <stddef.h>

/* The commands, as a table (proto.c) both sides read: lodge-hyp answers
 * from it (src/hyp/ctl/ctl-commands.c), the library asks by it
 * (src/lib/client/actions.c).  The prose above says what each does and replies. */
enum proto_command {
	PROTO_STATUS, PROTO_PEERS, PROTO_VCPU_LIST, PROTO_DESTROY, PROTO_CONSOLE, PROTO_CONSOLE_LOG,
	PROTO_SAVE_END, PROTO_SAVE, PROTO_DUMP_CORE, PROTO_MIGRATE, PROTO_PAUSE, PROTO_UNPAUSE,
	PROTO_WATCHDOG, PROTO_SHUTDOWN, PROTO_REBOOT, PROTO_MEM_SET, PROTO_MEM_MAX, PROTO_SYSRQ, PROTO_NMI,
	PROTO_VCPU_PIN, PROTO_VCPU_SET, PROTO_SCHED,
	PROTO_DISK_ATTACH, PROTO_VIF_ATTACH, PROTO_DETACH, PROTO_RENAME, PROTO_NCOMMANDS
};
/* The domain's states a command is answered in (a bit each). */
enum proto_when {
	PROTO_WHEN_RUNNING = 1 << 0,   /* running or paused, no save or migration holding it */
	PROTO_WHEN_SAVING  = 1 << 1,   /* a save or migration runs, or a written save awaits save-end */
	PROTO_WHEN_ENDED   = 1 << 2,   /* the guest ended: the domain is kept (preserve) or going */
};
#define PROTO_WHEN_ANY (PROTO_WHEN_RUNNING | PROTO_WHEN_SAVING | PROTO_WHEN_ENDED)
struct proto_command_rule {
	const char *name;
	const char *usage;             /* its arguments, for "error usage: NAME USAGE" */
	unsigned char min_args, max_args;
	bool reads_only;               /* the stats group may send it */
	unsigned when;                 /* PROTO_WHEN_* */
	bool asks_only;                /* changes nothing, logs no event: sent without a face */
};
const struct proto_command_rule *proto_command_rule(enum proto_command c);
/* The command a word names: its enum, or -1. */
int proto_command_find(const char *name);

/* A domain's state: every word any face shows for a domain, as one enum
 * and one table (proto.c), compared by the enum, never by the text.  The
 * enum's order is the dashboard's sort by state (as xentop and htop sort
 * theirs: the live first): running, paused, those on their way (starting,
 * restarting, installing, placed, stopping), those that ended (shutdown,
 * crashed, failed, lost), those not running (stopped, off), and
 * unknown last.  Who may say each word is the table's (enum
 * domain_state_from): lodge-hyp's status key "state" says its own
 * words; a pool agent's report in etcd (src/pool) those and its own; the
 * pool's keys and the faces the rest.  UNKNOWN is "?": the domain could
 * not be asked (its status's end_reason says why), or a word its sayer
 * may not say (a newer lodge-hyp's, a forged etcd record's). */
enum domain_state {
	DOMAIN_STATE_RUNNING,
	DOMAIN_STATE_PAUSED,
	DOMAIN_STATE_STARTING,          /* the pool: owned, not reported yet */
	DOMAIN_STATE_RESTARTING,        /* the pool: an HA restart waits for its backoff */
	DOMAIN_STATE_INSTALLING,        /* the dashboard: its install runs */
	DOMAIN_STATE_PLACED,            /* the pool: waiting for its host's agent */
	DOMAIN_STATE_STOPPING,          /* the pool: its owner stops it */
	DOMAIN_STATE_SHUTDOWN,
	DOMAIN_STATE_CRASHED,
	DOMAIN_STATE_FAILED,            /* the pool: its owner could not start it */
	DOMAIN_STATE_LOST,              /* the pool: placed on a host that is not up, nobody owns it */
	DOMAIN_STATE_STOPPED,           /* the pool: desired stopped */
	DOMAIN_STATE_OFF,               /* defined (domains_dir), not running */
	DOMAIN_STATE_UNKNOWN,
	DOMAIN_STATE_COUNT
};
/* Who may say a state (a mask): what a reader of that sayer's words
 * takes; any other word is DOMAIN_STATE_UNKNOWN. */
enum domain_state_from {
	DOMAIN_STATE_FROM_HYP = 1,      /* lodge-hyp's status */
	DOMAIN_STATE_FROM_AGENT = 2,    /* a pool agent's report (domains/D/state) */
	DOMAIN_STATE_FROM_FACE = 4,     /* a face or the pool's keys: never read from a word */
};
/* Its word: "running", "paused", ..., "?". */
const char *domain_state_name(enum domain_state s);
/* The state a word names if one of from (a mask) may say it, else
 * DOMAIN_STATE_UNKNOWN. */
enum domain_state domain_state_of(const char *word, unsigned from);

/* status's keys, as a table (proto.c) both sides read: lodge-hyp's
 * ctl-status.c writes them, liblodge's status.c reads them.  A key of one
 * device (diskN, vifN, vifN_addrs) is its stem, the device's index and
 * its suffix (proto_status_key_name). */
enum proto_status_key {
	PROTO_KEY_NAME, PROTO_KEY_ID, PROTO_KEY_PID, PROTO_KEY_STATE, PROTO_KEY_VCPUS, PROTO_KEY_MAX_VCPUS,
	PROTO_KEY_MEMORY_MIB,
	PROTO_KEY_MAXMEM_MIB, PROTO_KEY_MEM_MAX_MIB, PROTO_KEY_TARGET_MIB, PROTO_KEY_BALLOON_MIB,
	PROTO_KEY_GUEST_TOTAL_KIB, PROTO_KEY_GUEST_FREE_KIB, PROTO_KEY_GUEST_AVAIL_KIB,
	PROTO_KEY_CPU_NS, PROTO_KEY_VCPU_NS, PROTO_KEY_RSS_KIB, PROTO_KEY_KSM_SHARED_KIB, PROTO_KEY_THP_KIB,
	PROTO_KEY_START_TIME, PROTO_KEY_UPTIME_S, PROTO_KEY_KERNEL, PROTO_KEY_END_REASON,
	PROTO_KEY_CPU_WAIT_NS, PROTO_KEY_VCPU_WAIT_NS, PROTO_KEY_CPU_WEIGHT, PROTO_KEY_CPU_CAP, PROTO_KEY_CGROUP,
	PROTO_KEY_DISK_SLOTS, PROTO_KEY_VIF_SLOTS,
	PROTO_KEY_DISK, PROTO_KEY_VIF, PROTO_KEY_VIF_ADDRS,                /* one of each device */
	PROTO_KEY_DISK_RD_OPS, PROTO_KEY_DISK_RD_BYTES, PROTO_KEY_DISK_WR_OPS, PROTO_KEY_DISK_WR_BYTES,
	PROTO_KEY_NET_RX_PACKETS, PROTO_KEY_NET_RX_BYTES, PROTO_KEY_NET_TX_PACKETS, PROTO_KEY_NET_TX_BYTES,
	PROTO_KEY_SAVE_KIND, PROTO_KEY_SAVE_PHASE, PROTO_KEY_SAVE_ROUND, PROTO_KEY_SAVE_PAGES,
	PROTO_KEY_SAVE_DIRTY, PROTO_KEY_SAVE_RATE_KIB,
	PROTO_NKEYS
};
#define PROTO_KEY_MAX 32
/* The key's name ("memory_mib"); a device's key with index ("vif2_addrs")
 * written into buf and buf returned. */
const char *proto_status_key(enum proto_status_key k);
const char *proto_status_key_name(enum proto_status_key k, unsigned index, char buf[PROTO_KEY_MAX]);

/* "KEY VALUE\n" appended at buf + n (KEY as proto_status_key_name
 * says, index for a device's key): the new length, never past len - 1. */
size_t proto_key_printf(char *buf, size_t len, size_t n, enum proto_status_key k, unsigned index, const char *fmt,
			...) __attribute__((format(printf, 6, 7)));

/* save_kind and save_phase: the last save or migration. */
enum proto_save_kind { PROTO_SAVE_KIND_SAVE, PROTO_SAVE_KIND_MIGRATE, PROTO_SAVE_NKINDS };
enum proto_save_phase {
	PROTO_SAVE_PRECOPY, PROTO_SAVE_STOPCOPY, PROTO_SAVE_DONE, PROTO_SAVE_FAILED, PROTO_SAVE_NPHASES
};
const char *proto_save_kind_name(enum proto_save_kind k);
const char *proto_save_phase_name(enum proto_save_phase ph);
/* The kind or phase a word names, or -1. */
int proto_save_kind_of(const char *word);
int proto_save_phase_of(const char *word);

#endif
