/* A domain's CPU cgroup: Xen credit-scheduler weight and cap on the
 * kernel's CPU controller, cgroup v2 (cpu.weight, cpu.max) where the cpu
 * controller is on the unified hierarchy, v1 (cpu.shares, CFS quota)
 * otherwise.  lodge-hyp creates its domain's cgroup and moves itself in at
 * start, and removes it at exit; the agent removes one left by a lodge-hyp
 * that was killed.
 *
 * Weight: Xen's 1..65535, default 256, proportional.  The kernel's scales
 * are proportional too, so the mapping keeps ratios and puts Xen's default
 * on the kernel's default:
 *   v2  cpu.weight = weight * 100 / 256, clamped to 1..10000
 *       (256 -> 100; ratios hold for weights 3..25600)
 *   v1  cpu.shares = weight * 1024 / 256 = weight * 4 (1 -> 4, 65535 -> 262140,
 *       all inside the kernel's 2..262144: every ratio holds)
 * Cap: percent of one CPU, 0 = none; a CFS quota of cap * 1 ms per 100 ms
 * period (v2 "QUOTA 100000" or "max 100000", v1 cfs_quota_us or -1). */
#ifndef LODGE_CGROUP_H
#define LODGE_CGROUP_H

#include <stddef.h>
#include <sys/types.h>

#include "schema.h"

#define CGROUP_PERIOD_US      100000

struct cgroup_cpu_ops;

struct cgroup_cpu {
	const struct cgroup_cpu_ops *ops;
	char mount[1024];          /* where the hierarchy with the cpu controller is */
	char dir[2048];            /* the domain's cgroup: mount/rel */
	/* The weight and cap files, once cgroup_cpu_keep_open() has opened
	 * them: written through these from then on (nkept 0: by path). */
	unsigned nkept;
	const char *kept_name[3];
	int kept_fd[3];
};

/* Find the CPU controller and name the cgroup rel ("lodge/web") under it;
 * creates nothing. -ENODEV: no CPU controller is mounted. */
int cgroup_cpu_open(struct cgroup_cpu *cg, const char *rel);
/* Create the cgroup (and its parents, enabling the controller on the way
 * down for v2) and move process pid into it. */
int cgroup_cpu_create(struct cgroup_cpu *cg, pid_t pid);
/* Open the weight and cap files now and write them through these
 * descriptors from then on: a sandboxed lodge-hyp cannot open paths. */
int cgroup_cpu_keep_open(struct cgroup_cpu *cg);
int cgroup_cpu_set_weight(const struct cgroup_cpu *cg, unsigned weight);
int cgroup_cpu_set_cap(const struct cgroup_cpu *cg, unsigned cap_pct);
/* A process in the cgroup, 0 if none (or it does not exist). */
pid_t cgroup_cpu_first_task(const struct cgroup_cpu *cg);
/* A process in the cgroup other than a and b, 0 if none. */
pid_t cgroup_cpu_other_task(const struct cgroup_cpu *cg, pid_t a, pid_t b);
/* Move process pid back to the hierarchy's root (so the cgroup can go). */
int cgroup_cpu_leave(const struct cgroup_cpu *cg, pid_t pid);
/* The cgroup at an absolute directory under the CPU controller (as kept
 * in a domain's runtime directory). -ENODEV: no controller; -EINVAL: dir
 * is not under it. */
int cgroup_cpu_at(struct cgroup_cpu *cg, const char *dir);
/* Remove the cgroup, then its parents up to the mount while they are
 * empty; -EBUSY if a task is still in it, 0 if it is gone. */
int cgroup_cpu_remove(const struct cgroup_cpu *cg);
/* "cgroup v2" or "cgroup v1". */
const char *cgroup_cpu_kind(const struct cgroup_cpu *cg);

/* The mappings above, for the unit tests and the manual. */
unsigned cgroup_v2_weight(unsigned xen_weight);
unsigned long cgroup_v1_shares(unsigned xen_weight);

#endif
