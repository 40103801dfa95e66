/* liblodge: a running domain's status: what `lodge list -l` and the dashboard show. */
#ifndef LODGE_API_STATUS_H
#define LODGE_API_STATUS_H

#include "lodge/handle.h"

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
	enum domain_state state;       /* read from lodge-hyp's word once (UNKNOWN: a word it may not say); a face may set its own */
	unsigned vcpus;                /* online (vcpu-set) */
	unsigned max_vcpus;            /* maxvcpus: vcpu-set's ceiling (vcpus: those online) */
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

#endif
