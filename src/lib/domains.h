/* Running domains, as the agent sees them: directories in the runtime
 * directory whose control socket answers.  Nothing else is remembered. */
#ifndef LODGE_DOMAINS_H
#define LODGE_DOMAINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client.h"
#include "config.h"

/* One device's counters as the guest sees them: "in" is disk reads or
 * packets received, "out" disk writes or packets sent. */
struct dev_io {
	uint64_t in_ops, in_bytes, out_ops, out_bytes, errors;
};

#define DOM_MAX_DISKS DOMAIN_DISKS_MAX
#define DOM_MAX_VIFS  DOMAIN_VIFS_MAX
#define DOM_MAX_ADDRS 16

/* An address the guest claimed on a vif, as its watcher saw it. */
struct dom_addr {
	char addr[46];                 /* INET6_ADDRSTRLEN */
	char how[8];                   /* arp, dhcp, nd */
	unsigned vif;
	unsigned long age_s;           /* since last seen */
};

struct dom_status {
	char name[CFG_NAME_MAX];
	unsigned id;
	int pid;
	char state[16];
	unsigned vcpus;
	unsigned long memory_mib;      /* at boot */
	unsigned long maxmem_mib;      /* the guest's RAM, the most mem-set gives */
	unsigned long target_mib;      /* what mem-set last asked the guest to keep */
	unsigned long balloon_mib;     /* what the guest's balloon has given back */
	bool guest_stats;              /* the guest_* figures are the guest's own report */
	unsigned long guest_total_kib, guest_free_kib, guest_avail_kib;
	uint64_t cpu_ns;
	unsigned long rss_kib;          /* resident, net of what KSM merged */
	unsigned long ksm_shared_kib;   /* resident pages KSM merged (with other pages, any process) */
	unsigned long thp_kib;          /* resident in transparent huge pages (AnonHugePages) */
	unsigned long uptime_s;
	char end_reason[256];
	uint64_t vcpu_ns[DOMAIN_VCPUS_MAX];          /* per vCPU, as many as vcpus */
	struct dev_io disk[DOM_MAX_DISKS], vif[DOM_MAX_VIFS];
	unsigned ndisks, nvifs;
	struct dev_io disk_sum, vif_sum;
	uint64_t cpu_wait_ns;          /* runnable but not running: the guest's steal */
	uint64_t vcpu_wait_ns[DOMAIN_VCPUS_MAX];
	unsigned cpu_weight, cpu_cap;  /* Xen credit weight and cap (percent, 0: none) */
	char cgroup[256];              /* its CPU cgroup directory, "-" if none */
	struct dom_addr addrs[DOM_MAX_ADDRS];   /* every vif's, in vif order */
	unsigned naddrs;
	/* The last save or migration (lodge-hyp's save_* keys), if any: its
	 * phase stays done or failed once it ended. */
	enum { DOM_SAVE_NONE, DOM_SAVE_SNAPSHOT, DOM_SAVE_MIGRATE } save_kind;
	enum { DOM_SAVE_PRECOPY, DOM_SAVE_STOPCOPY, DOM_SAVE_DONE, DOM_SAVE_FAILED } save_phase;
	unsigned save_round;
	uint64_t save_pages;           /* page records sent so far */
	uint64_t save_dirty;           /* pages found dirty in the last round */
	uint64_t save_rate_kib;        /* KiB/s of the last round */
};

/* Whether a save or migration of the domain is under way (not ended). */
static inline bool dom_saving(const struct dom_status *st)
{
	return st->save_kind != DOM_SAVE_NONE &&
	       (st->save_phase == DOM_SAVE_PRECOPY || st->save_phase == DOM_SAVE_STOPCOPY);
}
/* One short word while one runs, "migr" or "save" (the dashboard's state
 * column); NULL otherwise. */
const char *domain_save_word(const struct dom_status *st);
/* The last save or migration in words, for the dashboard's detail view:
 * "-" if none ran, else e.g. "Migration: round 3, 1234 pages dirty, 8192
 * sent, 750 MiB/s" or "Save: writing". */
void domain_save_describe(const struct dom_status *st, char *buf, size_t len);

/* Visit every running domain (sorted by id). Stale directories (their
 * lodge-hyp is gone) are reported on stderr and removed. Returns the count. */
int domains_scan(const char *rundir, void (*fn)(const struct dom_status *, void *), void *arg);
/* The same, over connections kept between calls, all domains asked at
 * once (status-poll.c): the dashboard's sampler. */
struct status_poller;
struct status_poller *status_poller_new(void);
int status_poller_scan(struct status_poller *p, const char *rundir,
		       void (*fn)(const struct dom_status *, void *), void *arg);
void status_poller_free(struct status_poller *p);
/* Wait at most TIMEOUT_MS a scan; a domain slower than that is reported
 * to LATE (with the scan's arg) and its reply awaited at the next scan. */
void status_poller_patient(struct status_poller *p, int timeout_ms, void (*late)(const char *name, void *arg));
/* A domain whose lodge-hyp runs but could not be asked this scan (it
 * refused the connection or the request, closed it, or did not answer
 * in time) goes to UNASKED with why, after the others; without it, each
 * is a warning on stderr. */
void status_poller_on_unasked(struct status_poller *p,
			      void (*unasked)(const char *name, const char *why, void *arg));
/* A reply's keys as a dom_status. */
void domain_status_from_reply(const struct reply *r, const char *name, struct dom_status *st);
/* Remove the runtime directory of a domain whose lodge-hyp is gone (with a warning). */
void domain_remove_stale(const char *rundir, const char *name);
/* Status of one domain: 0, -ENOENT if no such domain is running. */
int domain_status(const char *rundir, const char *name, struct dom_status *st);
/* Start a domain from a validated config: lodge-hyp detached, taps on
 * their bridges; paused: its vCPUs wait for unpause before the guest's
 * first instruction. Returns 0 once it runs, or -errno with the error already
 * printed (by lodge-hyp or here).  incoming_fd >= 0: restore it from the
 * saved-state stream on that descriptor (past its header) instead of
 * booting it. */
int domain_start(const struct domain_config *dc, const struct host_config *hc, bool paused,
		 int incoming_fd);
/* The resolved config a running domain was started with (its runtime
 * directory's copy): 0, or -errno with err set. */
int domain_runtime_config(const struct host_config *hc, const char *name, struct domain_config *dc,
			  char *err, size_t errlen);
/* Make the runtime directory, and its parents (it may be under a fresh
 * --root): 0 or -errno. */
int runtime_dir_create(const char *rundir);
/* The numbers of a space-separated per-vCPU value into out[max]; returns
 * how many. */
unsigned domain_parse_list(const char *text, uint64_t *out, unsigned max);
/* The vif's interface name: vif-NAME.N if it fits IFNAMSIZ, else vifID.N. */
void domain_vif_name(const char *name, unsigned id, unsigned n, char out[IFNAMSIZ]);
/* The MAC vif n of a config gets: its mac=, or the stable default. */
void domain_vif_mac(const struct domain_config *dc, unsigned n, uint8_t mac[6]);
/* The tap of a running domain's vif n: its vifname= or the name above. */
void domain_vif_ifname(const struct domain_config *dc, const struct dom_status *st, unsigned n, char out[IFNAMSIZ]);

#endif
