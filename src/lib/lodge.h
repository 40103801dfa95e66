/* liblodge: the one client library beneath every face of Lodge (the
 * lodge command, the dashboard, and the faces to come).  It speaks the
 * control protocol (src/common/proto.h) to each domain's lodge-hyp,
 * starts lodge-hyp for a new domain, writes and reads saved streams, and
 * samples the host.
 *
 * Conventions
 *   - A call returns 0 (or a count or a descriptor where it says so), or
 *     a negative errno.  A call that can fail for a reason a user should
 *     read fills a struct lodge_err with it: the whole reason, ready to
 *     show ("no domain named web is running").
 *   - Nothing here prints.  A warning (a dead domain's directory cleaned
 *     up, an address two domains claim) and each line lodge-hyp writes
 *     while a domain starts go to the face's notice hook.
 *   - DOMAIN, below, is what a user types for a domain, as in xl: its
 *     name, or its ID (digits) when no running domain has that name.  A
 *     word that is neither a valid name nor an ID is refused (-EINVAL).
 *   - The library's own children (lodge-hyp, a bzip2 pump, a migration
 *     receiver's workers) are its business: each is waited for before
 *     the call that started it returns (the receiver's, before it does).
 *   - One thread at a time: some calls keep their large buffers static. */
#ifndef LODGE_H
#define LODGE_H

#include <net/if.h>                 /* IFNAMSIZ */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"      /* struct domain_config, struct host_config: the schema's */
#include "proto.h"       /* enum domain_state: a status's state, by its word */

/* ---- the handle, errors and notices ----------------------------------------------- */

#define LODGE_ERR_MAX 2048

struct lodge_err {
	char msg[LODGE_ERR_MAX];       /* why, one line (lodge-hyp's: its own lines) */
	bool from_hyp;                 /* msg is what lodge-hyp wrote, each line with its own prefix */
};

enum lodge_notice {
	LODGE_NOTICE_WARNING,          /* the library's: a sentence without prefix */
	LODGE_NOTICE_HYP,              /* a line lodge-hyp wrote while starting, prefix and all */
};
typedef void lodge_notice_fn(enum lodge_notice kind, const char *text, void *arg);

struct lodge {
	struct host_config hc;         /* lodge.conf, the root applied */
	lodge_notice_fn *notice;       /* NULL: notices are dropped */
	void *notice_arg;
};

/* Read lodge.conf under ROOT (NULL or "": /) into lg: 0, or -errno with
 * FILE:LINE: KEY: why. */
int lodge_open(struct lodge *lg, const char *root, struct lodge_err *err);
void lodge_on_notice(struct lodge *lg, lodge_notice_fn *fn, void *arg);

/* The running domain DOMAIN names (see above) into name: 0; -EINVAL for
 * a word that is no name or ID, or Domain-0; -ENOENT for an ID no running
 * domain has.  A valid name that is not running resolves to itself: the
 * call that uses it says it is not running. */
int lodge_resolve(const struct lodge *lg, const char *domain, char name[DOMAIN_NAME_MAX],
		  struct lodge_err *err);

/* ---- status: what `lodge list -l` and the dashboard show ------------------------------- */

/* One device's counters as the guest sees them: in = disk reads or
 * packets received, out = disk writes or packets sent. */
struct lodge_io {
	uint64_t in_ops, in_bytes, out_ops, out_bytes, errors;
};

#define LODGE_MAX_ADDRS 16

/* An address a guest claimed on a vif, as its watcher saw it. */
struct lodge_addr {
	char addr[46];                 /* INET6_ADDRSTRLEN */
	char how[8];                   /* arp, dhcp, nd */
	unsigned vif;
	unsigned long age_s;           /* since last seen */
};

enum lodge_save_kind { LODGE_SAVE_NONE, LODGE_SAVE_SNAPSHOT, LODGE_SAVE_MIGRATE };
enum lodge_save_phase { LODGE_SAVE_PRECOPY, LODGE_SAVE_STOPCOPY, LODGE_SAVE_DONE, LODGE_SAVE_FAILED };

struct lodge_status {
	char name[DOMAIN_NAME_MAX];
	unsigned id;
	int pid;
	char state[16];                /* as sent: domain_state_of() reads it (proto.h); a face may put its own word */
	unsigned vcpus;
	unsigned long memory_mib;      /* at boot */
	unsigned long maxmem_mib;      /* the guest's RAM, the most mem-set gives */
	unsigned long target_mib;      /* what mem-set last asked the guest to keep */
	unsigned long balloon_mib;     /* what the guest's balloon has given back */
	bool guest_stats;              /* the guest_* figures are the guest's own report */
	unsigned long guest_total_kib, guest_free_kib, guest_avail_kib;
	uint64_t cpu_ns;
	unsigned long rss_kib;         /* resident, net of what KSM merged */
	unsigned long ksm_shared_kib;  /* resident pages KSM merged */
	unsigned long thp_kib;         /* resident in transparent huge pages */
	unsigned long uptime_s;
	char end_reason[256];          /* state "?": why it could not be asked; "crashed": how it ended */
	uint64_t vcpu_ns[DOMAIN_VCPUS_MAX];
	struct lodge_io disk[DOMAIN_DISKS_MAX], vif[DOMAIN_VIFS_MAX];
	unsigned ndisks, nvifs;
	struct lodge_io disk_sum, vif_sum;
	uint64_t cpu_wait_ns;          /* runnable but not running: the guest's steal */
	uint64_t vcpu_wait_ns[DOMAIN_VCPUS_MAX];
	unsigned cpu_weight, cpu_cap;  /* Xen credit weight and cap (percent, 0: none) */
	char cgroup[256];              /* its CPU cgroup directory, "-" if none */
	struct lodge_addr addrs[LODGE_MAX_ADDRS];   /* every vif's, in vif order */
	unsigned naddrs;
	/* The last save or migration, if any: its phase stays done or
	 * failed once it ended. */
	enum lodge_save_kind save_kind;
	enum lodge_save_phase save_phase;
	unsigned save_round;
	uint64_t save_pages;           /* page records sent so far */
	uint64_t save_dirty;           /* pages found dirty in the last round */
	uint64_t save_rate_kib;        /* KiB/s of the last round */
};

/* A save or migration of the domain is under way (not ended). */
static inline bool lodge_saving(const struct lodge_status *st)
{
	return st->save_kind != LODGE_SAVE_NONE &&
	       (st->save_phase == LODGE_SAVE_PRECOPY || st->save_phase == LODGE_SAVE_STOPCOPY);
}
/* While one runs, "migr" or "save"; NULL otherwise. */
const char *lodge_save_word(const struct lodge_status *st);
/* The last save or migration in words: "-" if none ran, else e.g.
 * "Migration: round 3, 1234 pages dirty, 8192 sent, 750 MiB/s". */
void lodge_save_describe(const struct lodge_status *st, char *buf, size_t len);
/* The addresses, comma-separated, IPv4 first; "-" if none. */
void lodge_addrs_join(const struct lodge_status *st, char *buf, size_t len);

/* One running domain's status: 0; -ENOENT if it is not running. */
int lodge_status(const struct lodge *lg, const char *domain, struct lodge_status *st, struct lodge_err *err);
/* Domain-0, the host itself, as a row of the list. */
void lodge_host_status(struct lodge_status *dom0);

/* A domain whose lodge-hyp runs but could not be asked (too many
 * clients, no permission, no answer in time). */
struct lodge_unasked {
	char name[DOMAIN_NAME_MAX];
	char why[256];
};
struct lodge_list {
	unsigned n;
	struct lodge_status *dom;      /* sorted by ID */
	unsigned nunasked;
	struct lodge_unasked *unasked;
};
/* Every running domain (a stale directory, its lodge-hyp gone, is
 * removed with a notice): 0 or -ENOMEM.  Free with lodge_list_free. */
int lodge_list(const struct lodge *lg, struct lodge_list *out, struct lodge_err *err);
void lodge_list_free(struct lodge_list *l);

/* An address claimed by two or more domains on one bridge: each
 * lodge-hyp watches only its own vifs, so only here can it be seen.
 * Neither is taken for the owner: both keep it. */
struct lodge_conflict {
	char addr[46], bridge[IFNAMSIZ];
	char first[DOMAIN_NAME_MAX];   /* the first claimant by ID */
	char others[256];              /* the rest, comma-separated */
};
/* The conflicts among l's domains into out[max]: how many. */
unsigned lodge_conflicts(const struct lodge *lg, const struct lodge_list *l, struct lodge_conflict *out,
			 unsigned max);

/* The same over connections kept between scans, every domain asked at
 * once: the dashboard's sampler.  fn gets each domain (sorted by ID); a
 * patient poller (timeout_ms) hands a slow domain to late and awaits its
 * reply at the next scan; unasked hears of a domain that could not be
 * asked, with why (without it, each is a notice). */
struct lodge_poller;
struct lodge_poller *lodge_poller_new(void);
void lodge_poller_patient(struct lodge_poller *p, int timeout_ms, void (*late)(const char *name, void *arg));
void lodge_poller_on_unasked(struct lodge_poller *p, void (*unasked)(const char *name, const char *why, void *arg));
int lodge_poller_scan(struct lodge_poller *p, const struct lodge *lg,
		      void (*fn)(const struct lodge_status *st, void *arg), void *arg);
void lodge_poller_free(struct lodge_poller *p);

/* The same without waiting, for a face with a main loop of its own (the
 * dashboard): send asks every running domain whose last reply is in
 * (connecting without waiting; one that cannot be asked goes to unasked
 * at once) and returns how many requests went out; pollfds fills fds[max]
 * with the sockets whose replies are due (POLLIN); collect takes in what
 * has arrived and never blocks: fn for each reply, unasked for each domain
 * that refused or hung up, and returns how many replies are still due.
 * Its ready[nready] are pollfds' as poll() returned them (only those with
 * revents are read); NULL: it looks at every socket itself.  A domain slow
 * to answer keeps its request out until it does: no second one is sent
 * meanwhile.  knows: NAME was running at the last send.  late: the
 * patient poller's late hears of each domain whose reply is still due
 * (the web's update goes out without it, the domain listed as slow). */
struct pollfd;
int lodge_poller_send(struct lodge_poller *p, const struct lodge *lg, void *arg);
unsigned lodge_poller_pollfds(const struct lodge_poller *p, struct pollfd *fds, unsigned max);
int lodge_poller_collect(struct lodge_poller *p, const struct lodge *lg, const struct pollfd *ready, unsigned nready,
			 void (*fn)(const struct lodge_status *st, void *arg), void *arg);
bool lodge_poller_knows(const struct lodge_poller *p, const char *name);
void lodge_poller_late(const struct lodge_poller *p, void *arg);

/* ---- configs and creating a domain --------------------------------------------------- */

/* A config by file or name (NAME: domains_dir/NAME.cfg, as xl create),
 * read and checked as create does: 0, or -errno with FILE:LINE: KEY: why. */
int lodge_config_find(const struct lodge *lg, const char *file_or_name, struct domain_config *dc,
		      struct lodge_err *err);
/* The same with xl create's KEY=VALUE overrides: each replaces the
 * file's statement of KEY, checked by the same schema. */
int lodge_config_find_with(const struct lodge *lg, const char *file_or_name, char *const *overrides, unsigned n,
			   struct domain_config *dc, struct lodge_err *err);
/* xl config-update: the config create NAME reads (domains_dir/NAME.cfg)
 * replaced by from's text (NULL: its own) with the overrides, checked by
 * the schema first and written whole; a running domain runs on as it
 * was started (a reboot restarts it so), the next create takes it. */
int lodge_config_update(const struct lodge *lg, const char *name, const char *from, char *const *overrides,
			unsigned n, struct lodge_err *err);
/* xl rename, for a domain not running: its config file and name key;
 * refused while it (or another of the new name) runs, or a config of
 * the new name exists. */
int lodge_rename(const struct lodge *lg, const char *old, const char *new_name, struct lodge_err *err);
/* The resolved config a running domain was started with. */
int lodge_running_config(const struct lodge *lg, const char *domain, struct domain_config *dc,
			 struct lodge_err *err);
/* ... as its text (malloc'd, NUL-terminated): lodge config prints it. */
int lodge_running_config_text(const struct lodge *lg, const char *domain, char **text, struct lodge_err *err);

#define LODGE_CREATE_PAUSED 1u     /* its vCPUs wait for unpause before the guest's first instruction */
/* Start a domain from a checked config: lodge-hyp detached, taps on
 * their bridges.  Returns 0 once it runs.  lodge-hyp's refusal comes
 * back in err (from_hyp); its warnings as notices. */
int lodge_create(const struct lodge *lg, const struct domain_config *dc, unsigned flags, struct lodge_err *err);

/* A domain from a create form (config-form.h: the dashboard's form, the
 * web page's), and what the form asks to be made for it: a disk field
 * "new:SIZE" a sparse image file IMAGE_DIR/NAME-vda.img (never over one
 * that is there), a bridge field "new:NAME" that bridge. */
struct domain_form;
struct lodge_form_opts {
	bool ext4;                     /* the new disk made ext4 (mkfs.ext4), else left blank */
	/* The caller is not the host's root (a web user; the server is):
	 * the kernel, ramdisk, disks and bridges only what lodge.conf lends
	 * (kernel_dirs, storage_dirs, storage_devices, bridges; a bridge
	 * made for the domain is lent to it), a new disk only under
	 * storage_dirs. */
	bool lent_only;
};
struct lodge_form_result {
	char config[CFG_PATH_MAX + DOMAIN_NAME_MAX + 8];     /* domains_dir/NAME.cfg */
	char disk[256];                /* the new disk's path; "" none */
	int field;                     /* a failure's field (enum form_field); -1: the form whole */
};
/* Check the whole form as lodge_form_create will, with nothing made:
 * 0, or -EINVAL (a field, or the form whole), -EEXIST (the name runs or
 * has a config; the new disk's file or the new bridge is there),
 * -EACCES (not this host's to lend), with err and res->field. */
int lodge_form_check(const struct lodge *lg, const struct domain_form *form, const struct lodge_form_opts *o,
		     struct lodge_form_result *res, struct lodge_err *err);
/* Check it, make the new disk and bridge, save its config as
 * domains_dir/NAME.cfg (never over one) and start it: 0 once it runs.
 * On any failure, start included, nothing it made is left: the config,
 * the disk file and the bridge are removed.  A new ext4 disk takes
 * seconds (mkfs.ext4): a face with an event loop runs this apart (in a
 * child process: both calls keep their large scratch structs static, so
 * neither is for two threads at once). */
int lodge_form_create(const struct lodge *lg, const struct domain_form *form, const struct lodge_form_opts *o,
		      struct lodge_form_result *res, struct lodge_err *err);
/* The form makes a new disk. */
bool lodge_form_new_disk(const struct domain_form *form);
/* Start every network marked autostart that is not running (fn hears
 * "network NAME"), then every domain of domains_dir marked autostart that
 * is not running; each outcome goes to fn (err NULL: started).  One whose saved
 * state waits in save_dir (lodge_host_start could not restore it) is not
 * booted afresh: its disks belong to that state.  Returns how many
 * failed. */
int lodge_autostart(const struct lodge *lg,
		    void (*fn)(const char *name, const struct lodge_err *err, void *arg), void *arg);

/* ---- the defined domains: domains_dir's configs, running or not ------------------------ */

/* A config domains_dir/NAME.cfg, as `lodge list --all`, the dashboard and
 * the web page show it. */
struct lodge_defined {
	char name[DOMAIN_NAME_MAX];
	char config[CFG_PATH_MAX + DOMAIN_NAME_MAX + 8];
	bool running;                  /* a domain of that name runs */
	bool loads;                    /* the config reads (host aside); else why says what is wrong */
	bool autostart;
	unsigned vcpus;
	unsigned long memory_mib;
	char why[LODGE_ERR_MAX];
};
struct lodge_defined_list {
	unsigned n;
	struct lodge_defined *dom;     /* sorted by name */
};
/* Every config in domains_dir (none: 0, empty): 0 or -errno.  Free with
 * lodge_defined_list_free. */
int lodge_defined_list(const struct lodge *lg, struct lodge_defined_list *out, struct lodge_err *err);
void lodge_defined_list_free(struct lodge_defined_list *l);
/* Start the domain NAME.cfg defines (checked as create checks it). */
int lodge_defined_start(const struct lodge *lg, const char *name, struct lodge_err *err);
/* NAME.cfg's text (malloc'd, NUL-terminated, 1 MiB at most). */
int lodge_defined_text(const struct lodge *lg, const char *name, char **text, struct lodge_err *err);
/* Replace NAME.cfg with text once the config loader takes it (its name
 * still NAME): else -EINVAL with FILE:LINE: KEY: why, the file untouched.
 * lent_only: the caller is not the host's root (a web user): every
 * kernel, ramdisk, disk, bridge and vifname the text names is one the
 * config it replaces named, or one lodge.conf lends (as a migrated
 * domain's, incoming.h), else -EACCES naming it. */
int lodge_defined_write(const struct lodge *lg, const char *name, const char *text, bool lent_only,
			struct lodge_err *err);
/* Its autostart line set (the rest of the file as it is). */
int lodge_defined_autostart(const struct lodge *lg, const char *name, bool on, struct lodge_err *err);
/* Delete NAME.cfg, never while NAME runs (-EBUSY); disks: also each of
 * its disks that is a file under storage_dirs, writable and named by no
 * other config (each kept or deleted is a notice). */
int lodge_defined_delete(const struct lodge *lg, const char *name, bool disks, struct lodge_err *err);

/* ---- the host's shutdown and boot (lodge-domains.service, as Xen's xendomains) ------------ */

enum lodge_host_outcome {
	LODGE_HOST_SAVED,              /* to file */
	LODGE_HOST_SHUT_DOWN,          /* its guest powered off */
	LODGE_HOST_DESTROYED,          /* still running at the timeout (err: what it waited for) */
	LODGE_HOST_RESTORED,           /* from file, which is removed */
	LODGE_HOST_STARTED,            /* autostart */
	LODGE_HOST_FAILED,             /* err: why */
};
/* What became of one domain.  failed: not what was asked (a save that
 * failed and was followed by a shutdown, a destroy), err saying why. */
struct lodge_host_report {
	const char *name;              /* "" for the host's own failure (no list of domains) */
	enum lodge_host_outcome outcome;
	bool failed;
	const char *file;              /* saved to or restored from; NULL if none */
	uint64_t file_bytes;           /* saved */
	long ms;
	const struct lodge_err *err;   /* NULL: nothing to say */
};
typedef void lodge_host_fn(const struct lodge_host_report *r, void *arg);
/* The host shuts down: every running domain at once is saved to
 * save_dir/NAME.save, or shut down, as lodge.conf's on_host_shutdown says
 * (a save that fails, or that restore would refuse, is followed by a
 * shutdown); what still runs after shutdown_timeout is destroyed.  One
 * report per domain, as each ends; returns how many failed. */
int lodge_host_stop(const struct lodge *lg, lodge_host_fn *fn, void *arg);
/* The host boots: every save_dir/NAME.save restored at once (its file
 * removed once it runs, kept if it does not), then lodge_autostart.
 * Returns how many failed. */
int lodge_host_start(const struct lodge *lg, lodge_host_fn *fn, void *arg);

/* ---- lifecycle ------------------------------------------------------------------------- */

enum lodge_verb { LODGE_PAUSE, LODGE_UNPAUSE, LODGE_SHUTDOWN, LODGE_REBOOT, LODGE_DESTROY, LODGE_NVERBS };
const char *lodge_verb_name(enum lodge_verb v);      /* "pause", ... */

int lodge_pause(const struct lodge *lg, const char *domain, struct lodge_err *err);
int lodge_unpause(const struct lodge *lg, const char *domain, struct lodge_err *err);
/* Reset the domain; its on_reboot decides what follows. */
int lodge_reboot(const struct lodge *lg, const char *domain, struct lodge_err *err);
/* The same; wait_s > 0: return once it runs again (-ETIMEDOUT past
 * wait_s, -ESRCH if it ended instead: on_reboot = "destroy"). */
int lodge_reboot_wait(const struct lodge *lg, const char *domain, int wait_s, struct lodge_err *err);
/* Press the ACPI power button; wait_s > 0: return once the domain is
 * gone, -ETIMEDOUT if it is not within wait_s seconds. */
int lodge_shutdown(const struct lodge *lg, const char *domain, int wait_s, struct lodge_err *err);
/* xl shutdown -a: the power button of every running domain, then (wait_s
 * > 0) each waited for.  fn hears each domain (err NULL: done) and a
 * failure to list them (name NULL).  Returns how many failed. */
typedef void lodge_shutdown_fn(const char *name, const struct lodge_err *err, void *arg);
int lodge_shutdown_all(const struct lodge *lg, int wait_s, lodge_shutdown_fn *fn, void *arg);
/* End it at once; returns once its process and runtime directory are gone. */
int lodge_destroy(const struct lodge *lg, const char *domain, struct lodge_err *err);

/* The same requests without waiting (the dashboard: a slow domain must
 * not hold the screen).  start: 0 with c->fd to poll for input, or
 * -errno; collect: 1 done (0 in *result or the refusal's -errno, err
 * set), 0 not yet, never blocks; close: drop it (the domain may still
 * act on it). */
struct lodge_call {
	int fd;                        /* -1: none */
	char buf[640];
	size_t n;
};
int lodge_call_start(const struct lodge *lg, const char *domain, enum lodge_verb v, struct lodge_call *c,
		     struct lodge_err *err);
int lodge_call_collect(struct lodge_call *c, int *result, struct lodge_err *err);
void lodge_call_close(struct lodge_call *c);

/* A pool domain's watchdog (src/pool/README.md, "Fencing"): it ends at
 * deadline_ms (CLOCK_MONOTONIC, ms) unless fed a later one. */
int lodge_watchdog(const struct lodge *lg, const char *domain, uint64_t deadline_ms, struct lodge_err *err);

/* ---- memory and CPUs ------------------------------------------------------------------- */

/* The ceiling mem-set may balloon up to (xl mem-max): from the current
 * target up to maxmem; the target stays. */
int lodge_mem_max(const struct lodge *lg, const char *domain, unsigned long mib, struct lodge_err *err);
/* A serial BREAK then key, the guest's sysrq (xl sysrq). */
int lodge_sysrq(const struct lodge *lg, const char *domain, char key, struct lodge_err *err);
/* vCPUs 0..n-1 online (xl vcpu-set), n from 1 to the domain's maxvcpus:
 * added ones run at once; removed ones leave once the guest ejects them. */
int lodge_vcpu_set(const struct lodge *lg, const char *domain, unsigned long n, struct lodge_err *err);
/* An NMI on the first vCPU (xl trigger DOMAIN nmi). */
int lodge_nmi(const struct lodge *lg, const char *domain, struct lodge_err *err);
/* Balloon a running domain to mib (its floor up to its maxmem). */
int lodge_mem_set(const struct lodge *lg, const char *domain, unsigned long mib, struct lodge_err *err);
/* Credit weight (1-65535) and cap (percent of one CPU, 0: none); -1
 * keeps the current value.  One request: a refusal changes neither. */
int lodge_sched_set(const struct lodge *lg, const char *domain, long weight, long cap, struct lodge_err *err);
/* The host CPUs vcpu ("0", "all") may run on (cpus: "0", "0-1", "0,2", "all"). */
int lodge_vcpu_pin(const struct lodge *lg, const char *domain, const char *vcpu, const char *cpus,
		   struct lodge_err *err);

struct lodge_vcpu {
	int cpu;                       /* host CPU it last ran on, -1 unknown */
	char state;                    /* /proc state letter, '-' no thread */
	bool offline;                  /* beyond vcpu-set's count: held, not in the guest */
	uint64_t ns, wait_ns;
	char affinity[512];            /* a CPU list */
};
struct lodge_vcpus {
	char name[DOMAIN_NAME_MAX];
	unsigned id;
	bool paused;
	unsigned n;
	struct lodge_vcpu v[DOMAIN_VCPUS_MAX];
};
int lodge_vcpu_list(const struct lodge *lg, const char *domain, struct lodge_vcpus *out, struct lodge_err *err);

/* ---- devices, addresses and traffic ----------------------------------------------------- */

struct lodge_disk {
	char vdev[16];
	bool readonly, is_phy;
	char path[CFG_PATH_MAX];
	struct lodge_io io;
};
struct lodge_vif {
	char ifname[IFNAMSIZ];             /* its tap on the host */
	uint8_t mac[6];
	char bridge[IFNAMSIZ];
	struct lodge_io io;
};
struct lodge_devices {
	struct lodge_status st;
	unsigned ndisks, nvifs;
	struct lodge_disk disk[DOMAIN_DISKS_MAX];
	struct lodge_vif vif[DOMAIN_VIFS_MAX];
};
/* A running domain's disks and vifs (its resolved config) with their counters. */
int lodge_devices(const struct lodge *lg, const char *domain, struct lodge_devices *out, struct lodge_err *err);
/* The same from a status the caller has (the poller's): its resolved
 * config into dc and its devices into out, from the runtime directory's
 * copy alone (a file; the domain is not asked), the counters st's. */
int lodge_devices_of(const struct lodge *lg, const struct lodge_status *st, struct domain_config *dc,
		     struct lodge_devices *out, struct lodge_err *err);

#define LODGE_MAX_PEERS 5
struct lodge_vif_net {
	struct lodge_vif vif;
	char watch[256];               /* "on", or why its traffic is not watched */
	unsigned naddrs;
	struct {
		struct lodge_addr a;
		char others[256];      /* other domains on its bridge claiming it (lodge_net_conflicts) */
	} addrs[LODGE_MAX_ADDRS];
	uint64_t pps, bps, drops;      /* over the last interval; drops since start */
	unsigned npeers;
	struct {
		char addr[46];
		uint64_t packets, bytes;
	} peers[LODGE_MAX_PEERS];      /* the top peers of the last interval, by bytes */
};
struct lodge_net {
	char name[DOMAIN_NAME_MAX];
	unsigned long interval_ms;
	unsigned nvifs;
	struct lodge_vif_net vifs[DOMAIN_VIFS_MAX];
};
/* What each vif's watcher saw: the addresses the guest claimed, rates,
 * top peers.  -ENODEV for a domain without vifs, -EPROTO with lodge-hyp's
 * word for one whose vifs are not watched. */
int lodge_net(const struct lodge *lg, const char *domain, struct lodge_net *out, struct lodge_err *err);
/* Fill each address's others: the domains on the same bridge that claim
 * it too (this asks every running domain). */
void lodge_net_conflicts(const struct lodge *lg, struct lodge_net *n);

/* A host interface's counters, from netlink; for a vif's tap, rx is what
 * the guest sent and tx what it was sent. */
struct lodge_link {
	uint64_t rx_packets, rx_bytes, rx_dropped, tx_packets, tx_bytes, tx_dropped;
};
int lodge_link_stats(const char *ifname, struct lodge_link *out, struct lodge_err *err);

/* Hot-plug (lodge block-attach, block-detach).  Attach: spec is xl's disk
 * spec as in a config (relative paths from the working directory); the
 * disk is opened here with the caller's own rights (never a file the
 * caller may not open) with every name its blocks go by, and those
 * descriptors go to lodge-hyp, which locks them as at start: refused with
 * one line if the vdev is taken, the disk is another domain's (or this
 * one's), or no slot is free.  The guest is told; the runtime config
 * gains the disk.  Detach: the guest is asked to eject the disk's slot;
 * -ETIMEDOUT if it has not within timeout_ms (the disk stays), unless
 * force (the disk goes at once: the guest was not asked).  The runtime
 * config loses it, the disk's locks are free. */
#define LODGE_DETACH_TIMEOUT_MS 10000
/* lent_only: the caller is not the host's root (a web user; the server
 * is): only a disk lodge.conf lends (lodge_disk_open). */
int lodge_block_attach(const struct lodge *lg, const char *domain, const char *spec, bool lent_only, char vdev[16],
		       struct lodge_err *err);
/* A host disk (a regular file or a block device) opened once, as the
 * caller may: its name looked up one time (O_PATH: no device's open
 * runs), what was found checked (its type; with lent_only, a file under
 * storage_dirs or a device matching storage_devices, by the descriptor's
 * real path) and opened through that descriptor (readonly: O_RDONLY,
 * else O_RDWR, with the process's own rights), never by the name again.
 * The descriptor (O_CLOEXEC, O_NONBLOCK) with its real path in real, or
 * -errno (-EACCES: not lent) with err.  Every face's disk goes through
 * here; the descriptor is what lodge-hyp gets. */
int lodge_disk_open(const struct lodge *lg, const char *path, bool readonly, bool lent_only, char real[4096],
		    struct lodge_err *err);
int lodge_block_detach(const struct lodge *lg, const char *domain, const char *vdev, bool force,
		       unsigned timeout_ms, struct lodge_err *err);
/* A vif (spec as a config's vif entry: bridge=, mac=, vifname=): its tap
 * is made here (root: CAP_NET_ADMIN), put on its bridge and handed to
 * lodge-hyp; refused if the MAC is the domain's already, or another
 * running domain's, or no slot is free.  Detach by MAC or index (devid,
 * as network-list numbers them); the tap Lodge made goes with it.  The
 * runtime config follows; every vif keeps its tap name and MAC from then
 * on (vifname=, mac=), whatever index it has. */
int lodge_network_attach(const struct lodge *lg, const char *domain, const char *spec, char ifname[16],
			 struct lodge_err *err);
int lodge_network_detach(const struct lodge *lg, const char *domain, const char *which, bool force,
			 unsigned timeout_ms, struct lodge_err *err);

/* A disk's size in bytes, a file's or a block device's: 0 or -errno. */
int lodge_disk_size(const char *path, uint64_t *bytes);
/* Why PATH may not be a new domain's disk: a block device mounted on the
 * host, a disk of a running domain (from their runtime configs; no
 * domain is asked), or a block device held on the host (swap, LVM, RAID,
 * a mounted partition of a whole disk).  true with why ("used by domain
 * web"), false if free.  The dashboard's picker and lodge install both
 * ask this: one rule set. */
bool lodge_disk_taken(const struct lodge *lg, const char *path, char *why, size_t len);
/* A block device of the host (ram disks left out), for a new domain's disk. */
struct lodge_blockdev {
	char path[300];                /* /dev/NAME */
	uint64_t bytes;
	char taken[128];               /* lodge_disk_taken's why; "" if free */
};
/* The host's block devices into out[max]: how many. */
unsigned lodge_host_blockdevs(const struct lodge *lg, struct lodge_blockdev *out, unsigned max);

/* ---- queries that never wait --------------------------------------------------------------- */

/* For a face with a main loop of its own: a query goes out at once and its
 * reply is taken in whenever it arrives, so a domain slow to answer (or
 * stopped) holds neither the screen nor the keys.  start: 0 with q->fd to
 * poll for input (POLLIN), or -errno with err; collect reads what has
 * arrived and never blocks: 1 done (the result filled), 0 not yet, -errno
 * with err; after 1 or -errno the query is closed.  close drops one still
 * out.  A query is closed (fd -1, buf NULL) before its first start. */
struct lodge_query {
	int fd;                        /* -1: none out */
	char name[DOMAIN_NAME_MAX];
	char *buf;                     /* the reply so far */
	size_t n, cap;
};
#define LODGE_QUERY_CLOSED ((struct lodge_query){ .fd = -1 })
void lodge_query_close(struct lodge_query *q);
/* lodge_net's view of the vifs; dev: the domain's devices (lodge_devices_of). */
int lodge_net_start(const struct lodge *lg, const char *domain, struct lodge_query *q, struct lodge_err *err);
int lodge_net_collect(struct lodge_query *q, const struct lodge_devices *dev, struct lodge_net *out,
		      struct lodge_err *err);
/* lodge_console_log's text: *text malloc'd (NUL-terminated), the caller's. */
int lodge_console_log_start(const struct lodge *lg, const char *domain, size_t last, struct lodge_query *q,
			    struct lodge_err *err);
int lodge_console_log_collect(struct lodge_query *q, char **text, size_t *len, struct lodge_err *err);
/* lodge_console_open's console: collect's 1 comes with *fd, the console
 * (blocking, the caller's to close). */
int lodge_console_start(const struct lodge *lg, const char *domain, bool force, struct lodge_query *q,
			struct lodge_err *err);
int lodge_console_collect(struct lodge_query *q, int *fd, struct lodge_err *err);

/* ---- the serial console -------------------------------------------------------------------- */

/* A raw console: the returned descriptor carries the guest's serial
 * bytes both ways until either side closes it (force: take it over from
 * the client that has it).  A face that pumps it itself uses this. */
int lodge_console_open(const struct lodge *lg, const char *domain, bool force, struct lodge_err *err);
/* The last `last` bytes (0: all kept) of its console output, malloc'd. */
int lodge_console_log(const struct lodge *lg, const char *domain, size_t last, int timeout_ms, char **text,
		      size_t *len, struct lodge_err *err);
/* The terminal helper: pump fd and this process's stdin/stdout until
 * Ctrl-] (on a terminal, raw meanwhile and restored after, even on
 * SIGTERM or SIGHUP) or, for scripted input, until the guest has been
 * quiet a while after it ends.  Returns 0, or -errno. */
#define LODGE_CONSOLE_ESCAPE "Ctrl-]"
int lodge_console_relay(int fd);

/* ---- save, restore, migrate --------------------------------------------------------------- */

/* Where a long job is: a migration's pre-copy rounds (round > 0 once
 * the first whole pass is done: round, pages, dirty, rate_kib), or the
 * bytes of a saved file written or read so far (bytes, of total if
 * known, and rate_kib). */
struct lodge_progress {
	unsigned round;
	uint64_t pages, dirty, rate_kib;
	uint64_t bytes, total;
};
typedef void lodge_progress_fn(const struct lodge_progress *p, void *arg);

struct lodge_save_opts {
	bool compress;                 /* bzip2 */
	bool keep;                     /* the domain runs on (else it ends once the file is safe) */
	lodge_progress_fn *progress;   /* NULL: none */
	void *arg;
};
struct lodge_save_result {
	char name[DOMAIN_NAME_MAX];
	uint64_t file_bytes;
	long ms;
};
/* Save DOMAIN to file: made unnamed and named only once whole and on
 * disk, so a failed or killed save leaves no file and the domain runs on. */
int lodge_save(const struct lodge *lg, const char *domain, const char *file, const struct lodge_save_opts *o,
	       struct lodge_save_result *res, struct lodge_err *err);

/* xl dump-core: DOMAIN's RAM and vCPU registers as an ELF core file
 * (gdb, crash(8)) at file, made with the caller's rights and named only
 * once whole; the guest is paused meanwhile and runs on after. */
int lodge_dump_core(const struct lodge *lg, const char *domain, const char *file, struct lodge_err *err);

struct lodge_restore_opts {
	bool paused;
	lodge_progress_fn *progress;
	void *arg;
};
struct lodge_restore_result {
	char name[DOMAIN_NAME_MAX];
	long ms;
};
/* Bring a saved domain back (a bzip2'd file too).  Whoever wrote the file
 * chose every path in it: the domain may use only what this host lends
 * (incoming.h). */
int lodge_restore(const struct lodge *lg, const char *file, const struct lodge_restore_opts *o,
		  struct lodge_restore_result *res, struct lodge_err *err);

struct lodge_migrate_opts {
	const char *secret_file;       /* NULL: lodge.conf's migration_secret_file */
	lodge_progress_fn *progress;
	void *arg;
};
struct lodge_migrate_result {
	char name[DOMAIN_NAME_MAX];
	char peer[CFG_PATH_MAX + 16];  /* where it went, as the user wrote it */
	long ms;
	uint64_t downtime_us, total_us, pages, bytes;
	unsigned rounds;
};
/* Move DOMAIN, live, to dest: HOST[:PORT] (TCP, the shared secret
 * required) or a Unix socket path (unix:PATH or one with a '/').  It
 * runs on here unless this returns 0.  -EINVAL: dest is neither. */
int lodge_migrate(const struct lodge *lg, const char *domain, const char *dest, const struct lodge_migrate_opts *o,
		  struct lodge_migrate_result *res, struct lodge_err *err);

/* The receiving end: a listener, each connection served in a child of
 * its own with deadlines, the number at once capped.  What happens goes
 * to the event hook, in the listener's process. */
enum lodge_recv_event {
	LODGE_RECV_RECEIVED,           /* name runs here now, from peer */
	LODGE_RECV_WARNING,            /* text: a peer refused before it authenticated, or turned away */
	LODGE_RECV_ERROR,              /* text: an authenticated peer's domain refused, or a start failed */
	LODGE_RECV_HYP,                /* text: what lodge-hyp wrote starting it, its own prefix and all */
};
struct lodge_receiver;
struct lodge_receiver_opts {
	const char *listen;            /* ADDR:PORT or a Unix socket; NULL: lodge.conf's, or
					* without a secret the root-only socket in the runtime dir */
	const char *secret_file;       /* NULL: lodge.conf's */
	bool once;                     /* return after the first authenticated peer */
	void (*event)(enum lodge_recv_event e, const char *name, const char *peer, const char *text, void *arg);
	void *arg;
};
/* Listen: 0 with *out, and where it listens in words ("PATH (root only)"),
 * or -errno (-EINVAL: a listen address that is not one). */
int lodge_receiver_open(const struct lodge *lg, const struct lodge_receiver_opts *o, struct lodge_receiver **out,
			char *where, size_t wherelen, struct lodge_err *err);
/* Serve until an error (-errno with why), or with once until the first
 * authenticated peer is served: 0 if its domain runs here, else -EIO
 * with err->msg empty (the events said why). */
int lodge_receiver_run(struct lodge_receiver *r, struct lodge_err *err);
void lodge_receiver_close(struct lodge_receiver *r);

/* ---- the host ------------------------------------------------------------------------------ */

struct lodge_host {
	unsigned ncpus;
	double load1, load5, load15;
	unsigned long mem_total_mib, mem_avail_mib;
	unsigned long uptime_s;
	uint64_t busy_ticks, total_ticks;  /* all CPUs, from /proc/stat */
	double cpu_pct;                /* of one CPU, between this sample and the one before in *h */
};
/* Sample the host into h (its previous sample, if any, gives cpu_pct). */
void lodge_host_sample(struct lodge_host *h);

struct lodge_host_info {
	char model[256];               /* the CPU's */
	unsigned ncpus;
	unsigned long mem_total_mib, mem_avail_mib;
	const char *kvm_backend;       /* in words */
	int max_vcpus;                 /* per domain, as KVM and Lodge allow; 0 without KVM */
};
void lodge_host_info(struct lodge_host_info *hi);

/* ---- networks (network.c, netfilter.c) ------------------------------------------------------ */

/* A private network behind the host: a bridge holding the gateway
 * address, dnsmasq for DHCP and DNS on it, and Lodge's nftables rules. */
enum lodge_net_mode {
	LODGE_NET_NAT,                 /* masqueraded out of any other interface (libvirt's default) */
	LODGE_NET_ROUTED,              /* forwarded with the guests' own addresses */
	LODGE_NET_ISOLATED,            /* the host's DHCP and DNS only; no way out */
};
#define LODGE_NET_MODES 3
/* "nat", "routed", "isolated"; parse: 0, or -EINVAL. */
const char *lodge_net_mode_name(enum lodge_net_mode m);
int lodge_net_mode_parse(const char *word, enum lodge_net_mode *m);

/* A network's name: schema.h's network_name_valid (it names a file, a
 * bridge and nftables chains). */
#define LODGE_NETWORK_NAME_MAX NETWORK_NAME_MAX
#define LODGE_NETWORK_BRIDGE_PREFIX NETWORK_BRIDGE_PREFIX   /* the bridge's name when none is given */
#define LODGE_NETWORK_DOMAIN_MAX NETWORK_DOMAIN_MAX
bool lodge_network_name_ok(const char *name);

struct lodge_network {
	char name[LODGE_NETWORK_NAME_MAX];
	char file[CFG_PATH_MAX];       /* ROOT/etc/lodge/networks/NAME.cfg */
	enum lodge_net_mode mode;
	char subnet[20];               /* "10.77.0.0/24" */
	char gateway[16];              /* the bridge's address: the subnet's first host */
	char range_start[16], range_end[16];   /* DHCP's */
	char domain[LODGE_NETWORK_DOMAIN_MAX]; /* NAME.DOMAIN resolves; "" none */
	char bridge[IFNAMSIZ];
	bool autostart;
	bool dns_forward;              /* names it does not know go to the host's resolv.conf servers */
	uint32_t net, range_lo, range_hi;      /* host order */
	unsigned prefix;
	/* What runs (lodge_network_get and _list fill it in). */
	bool bridge_up;                /* the bridge exists */
	int ports;                     /* interfaces on it (the domains' vifs) */
	int dnsmasq_pid;               /* > 0: it runs */
	bool dnsmasq_died;             /* started and not stopped, but gone */
	int rules;                     /* its nftables rules: 1 in place, 0 not, -1 unknown (not root) */
	unsigned leases;
};

struct lodge_network_opts {
	const char *name, *subnet;
	enum lodge_net_mode mode;
	const char *dhcp_range;        /* "A-B"; NULL: the subnet's hosts after the gateway */
	const char *domain;            /* NULL: none */
	const char *bridge;            /* NULL: LODGE_NETWORK_BRIDGE_PREFIX NAME */
	bool autostart;
	bool dns_forward;
};
/* Write the network's config and start it (lodge_network_start): every
 * check first (name, CIDR, range, a subnet overlapping a route of the host
 * or another network, a bridge name that does not fit), and nothing left
 * if the start fails.  0, or -errno with one line in err. */
int lodge_network_create(const struct lodge *lg, const struct lodge_network_opts *o, struct lodge_err *err);
/* Stop it and remove its config and addresses; refused (-EBUSY) while a
 * domain's vif is on its bridge. */
int lodge_network_delete(const struct lodge *lg, const char *name, struct lodge_err *err);
/* Bring up what of it is not up: the bridge with the gateway address, its
 * nftables rules, IPv4 forwarding (a notice when this turns it on) and
 * dnsmasq, started detached (it outlives the caller).  0 if all runs. */
int lodge_network_start(const struct lodge *lg, const char *name, struct lodge_err *err);
/* Stop dnsmasq, remove the rules and the bridge; refused (-EBUSY) while a
 * domain's vif is on the bridge. */
int lodge_network_stop(const struct lodge *lg, const char *name, struct lodge_err *err);
int lodge_network_get(const struct lodge *lg, const char *name, struct lodge_network *out, struct lodge_err *err);
/* Every network, sorted by name, into out[max]: how many (may exceed max), or -errno. */
int lodge_network_list(const struct lodge *lg, struct lodge_network *out, unsigned max, struct lodge_err *err);
/* The network a guest joins when it is given none, as libvirt's: NAT, DHCP
 * and DNS on a private /24 that no route of the host's overlaps. */
#define LODGE_NETWORK_DEFAULT "default"
struct lodge_network_default {
	char subnet[20];               /* its subnet, or the one it would get */
	bool created;                  /* made (would be, dry run) by this call */
	bool started;                  /* defined but down: started by this call */
};
/* The default network: found (and started if it is down), or, on first
 * use, made on the first subnet of a table of candidates (libvirt's
 * 192.168.122.0/24 first) that overlaps no route of the host and no other
 * network, autostarted.  dry_run: only what would be done, into *out.  0,
 * or -errno with why (every candidate taken: network-create default
 * --subnet, by hand). */
int lodge_network_default(const struct lodge *lg, bool dry_run, struct lodge_network_default *out,
			  struct lodge_err *err);
/* Start each network marked autostart that is not running; fn hears each
 * outcome (err NULL: started).  How many failed. */
int lodge_network_autostart(const struct lodge *lg,
			    void (*fn)(const char *name, const struct lodge_err *err, void *arg), void *arg);

/* A lease dnsmasq gave (its lease file). */
struct lodge_lease {
	char network[LODGE_NETWORK_NAME_MAX];
	uint8_t mac[6];
	char addr[16];
	char hostname[64];             /* "" if none */
	long long expires;             /* Unix time; 0: never */
};
/* Every lease of every running network into out[max]: how many. */
unsigned lodge_network_leases(const struct lodge *lg, struct lodge_lease *out, unsigned max);
/* Add to each vif of n on a Lodge network the address dnsmasq leased its
 * MAC, learned by "lease", its age the time since the lease was given or
 * renewed (lodge addr shows them beside what the watcher learned). */
void lodge_net_leases(const struct lodge *lg, struct lodge_net *n);

/* ---- bridges ------------------------------------------------------------------------------- */

/* A bridge; with nic, the host's NIC joins it and its addresses and
 * routes move onto the bridge (force: even one that carries this ssh
 * session). */
int lodge_bridge_create(const char *bridge, const char *nic, bool force, struct lodge_err *err);
/* Delete it; a NIC it adopted goes back first, named in nic ("" if none). */
int lodge_bridge_delete(const char *bridge, char nic[IFNAMSIZ], struct lodge_err *err);
int lodge_bridge_list(void (*fn)(const char *name, int ports, bool up, void *arg), void *arg,
		      struct lodge_err *err);

/* ---- Debian guests: templates and installs (template.c, clone.c, install.c) ---------------- */

/* A guest is a clone of a template: one ext4 image per distribution and
 * architecture (DIST-ARCH.img under ROOT/var/lib/lodge/templates), built
 * once by mmdebstrap from the host's apt sources (their Debian entries,
 * the suite made DIST's), its downloaded packages kept under
 * ROOT/var/cache/lodge so a rebuild fetches nothing it has.  A template
 * is there only whole: built under a temporary name and renamed. */
#define LODGE_DIST_DEFAULT "bookworm"
#define LODGE_DIST_MAX     32

enum lodge_phase {
	LODGE_PHASE_CHECK,             /* the input checked: nothing written yet */
	LODGE_PHASE_UPDATE,            /* template: the package lists fetched (apt-get update) */
	LODGE_PHASE_FETCH,             /* template: the essential packages fetched */
	LODGE_PHASE_UNPACK,            /* template: ... unpacked */
	LODGE_PHASE_CONFIGURE,         /* template: ... configured */
	LODGE_PHASE_INSTALL,           /* template: the rest (kernel, ssh, cloud-init) fetched and installed */
	LODGE_PHASE_IMAGE,             /* template: its ext4 image made */
	LODGE_PHASE_CLONE,             /* the template copied onto the disk */
	LODGE_PHASE_FILESYSTEM,        /* the copy grown to the disk, a fresh UUID, fstab */
	LODGE_PHASE_SEED,              /* the cloud-init seed disk */
	LODGE_PHASE_CONFIG,            /* the domain's config */
	LODGE_PHASE_DONE,
	LODGE_NPHASES
};
/* The phase in words: "fetching packages". */
const char *lodge_phase_words(enum lodge_phase p);

struct lodge_job_progress {
	enum lodge_phase phase;
	int phase_pct;                 /* of the phase, 0-100; -1 unknown */
	int pct;                       /* of the whole job, 0-100 (the dashboard's "installing 42%") */
	const char *note;              /* NULL, or a warning of mmdebstrap's to show as it is */
};
/* Called as a job moves, and at least every 200 ms while it runs: false
 * cancels it (the job then undoes what it made and returns -ECANCELED). */
typedef bool lodge_job_fn(const struct lodge_job_progress *p, void *arg);

struct lodge_template {
	char name[LODGE_DIST_MAX + 16];        /* bookworm-amd64 */
	char dist[LODGE_DIST_MAX], arch[16];
	char path[CFG_PATH_MAX];       /* its image */
	uint64_t bytes;                /* its filesystem's size: the smallest disk a clone fits on */
	uint64_t used_bytes;           /* what the image holds (it is sparse) */
	char kernel[64];               /* the kernel's version, e.g. 6.1.0-28-cloud-amd64 */
	long long built;               /* when (Unix time); 0 unknown */
	long build_s;                  /* how long the build took */
};

/* Every template, sorted by name, into out[max]: how many there are (may
 * exceed max), or -errno. */
int lodge_template_list(const struct lodge *lg, struct lodge_template *out, unsigned max, struct lodge_err *err);
/* DIST's template for this host's architecture: 0, -ENOENT if there is
 * none yet, -EINVAL for a distribution Lodge does not know. */
int lodge_template_get(const struct lodge *lg, const char *dist, struct lodge_template *t, struct lodge_err *err);
/* Build DIST's template anew (root only: mmdebstrap's root mode) and put
 * it in place of the old one, which clones under way keep reading.  fn
 * (may be NULL) hears the phases update to image.  0 with *t. */
int lodge_template_update(const struct lodge *lg, const char *dist, lodge_job_fn *fn, void *arg,
			  struct lodge_template *t, struct lodge_err *err);
/* The mmdebstrap command line a build of DIST runs, one argument a line,
 * quoted as for a shell (lodge template-update --dry-run). */
int lodge_template_command(const struct lodge *lg, const char *dist, char *buf, size_t len, struct lodge_err *err);
int lodge_template_delete(const struct lodge *lg, const char *dist, struct lodge_err *err);

#define LODGE_INSTALL_SIZE_DEFAULT (2ull << 30)
/* A size as a person types it: a number with an optional unit (b, k, m,
 * g, t; none: MiB), a whole number of MiB: 0 with *mib, or -EINVAL. */
int lodge_parse_mib(const char *text, unsigned long *mib);
#define LODGE_INSTALL_MEMORY_DEFAULT 512      /* MiB: cloud-init and apt want more than Mini-OS */

struct lodge_install_opts {
	const char *name;              /* the new domain's */
	const char *dist;              /* NULL: LODGE_DIST_DEFAULT */
	uint64_t size;                 /* a file disk's bytes; 0: LODGE_INSTALL_SIZE_DEFAULT */
	const char *disk;              /* NULL: image_dir/NAME.img; a new file, or a block device
					* (a partition), which is written whole */
	unsigned memory_mib, vcpus;    /* 0: the defaults */
	const char *bridge;            /* an existing bridge; NULL: a network */
	const char *network;           /* an existing Lodge network; NULL with no bridge:
					* LODGE_NETWORK_DEFAULT, made on first use */
	/* The guest's own settings, for its cloud-init seed disk. */
	const char *packages;          /* "a,b" */
	const char *ssh_key_file, *password_file, *user_data_file;
	bool dry_run;                  /* check and say what would be done; write nothing */
	lodge_job_fn *progress;        /* NULL: none */
	void *arg;
};
struct lodge_install_result {
	char config[CFG_PATH_MAX];     /* the domain's config */
	char disk[CFG_PATH_MAX];
	char seed[CFG_PATH_MAX];       /* "" if none */
	uint64_t disk_bytes;
	char uuid[37];                 /* its root filesystem's */
	bool is_partition;
	struct lodge_template tmpl;
	bool template_built;           /* the template was built first (or would be, dry run) */
	long template_ms, clone_ms, total_ms;
	char config_text[4096];        /* what the config says */
	struct lodge_network_default net;   /* with neither bridge nor network: the default network */
};
/* Install a Debian guest: its disk (a clone of DIST's template, built
 * first if there is none) and its config, bootloader = "lodge".  Every
 * check comes before anything is written; the disk, the seed and the
 * config appear only once all are whole, and a failure or a cancel
 * leaves none of them (a partition is left without a filesystem).  0 with
 * *res, or -errno with why.  It returns when done (minutes for a first
 * install, seconds after): a face with a main loop of its own runs it in
 * a child process, its progress hook writing to a pipe. */
int lodge_install(const struct lodge *lg, const struct lodge_install_opts *o, struct lodge_install_result *res,
		  struct lodge_err *err);

/* ---- logs (events.c) ----------------------------------------------------------------------- */

/* Which face this process is ("dashboard"): each request to a lodge-hyp
 * and each domain started says it, and the event log shows it beside the
 * uid and pid the kernel gives (which alone are trusted).  0, or -EINVAL
 * for a word other than 1 to 16 of a-z and '-'. */
int lodge_set_face(const char *face);

/* A line of a log, without its newline; nonzero stops the reading. */
typedef int lodge_line_fn(const char *line, void *arg);
/* The event log (ROOT/var/log/lodge/lodge.log; evlog.h says its lines):
 * its last `last` lines (of domain only, unless NULL: a name, as domains
 * come and go there), then with follow each line as it is written, across
 * rotation, until fn says stop or an error.  No log yet: nothing to show
 * (follow waits for it).  0, or -errno. */
int lodge_log_read(const struct lodge *lg, const char *domain, unsigned last, bool follow, lodge_line_fn *fn,
		   void *arg, struct lodge_err *err);
/* The running domain's lodge-hyp.log (its runtime directory), open for
 * reading: the descriptor, or -errno. */
int lodge_hyp_log_open(const struct lodge *lg, const char *domain, struct lodge_err *err);

/* ---- text ---------------------------------------------------------------------------------- */

/* Text from a guest or a peer, fit to show on a terminal: its control
 * characters escaped (\n, \t, \e, \xNN), cut to fit out[len].  Returns out. */
char *lodge_text_shown(char *out, size_t len, const char *text);

/* ---- frames -------------------------------------------------------------------------------- */

/* One line describing a captured Ethernet frame (caplen bytes of len). */
void lodge_frame_line(const uint8_t *frame, size_t caplen, size_t len, char *buf, size_t buflen);

#endif
