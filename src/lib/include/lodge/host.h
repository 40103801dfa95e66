/* liblodge: the host: its shutdown and boot (lodge host-stop, host-start), its CPUs and memory. */
#ifndef LODGE_API_HOST_H
#define LODGE_API_HOST_H

#include "lodge/handle.h"

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

#endif
