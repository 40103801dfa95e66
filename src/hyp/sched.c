/* CPU scheduling of a domain: its vCPU threads' host-CPU affinity and
 * scheduler statistics, and its CPU cgroup (Xen credit weight and cap).
 * The kernel schedules; Lodge only sets its knobs and reads its counters:
 * /proc/self/task/TID/stat (state, last CPU) and .../schedstat (time run
 * and time spent runnable but waiting for a CPU: the guest's steal). */
#include "domain.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int open_task_file(pid_t tid, const char *file)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, file);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int sched_vcpu_keep_open(struct vcpu *v)
{
	pid_t tid = atomic_load(&v->tid);

	if (v->stats_kept)
		return 0;
	if (tid <= 0)
		return -ESRCH;
	if ((v->stat_fd = open_task_file(tid, "stat")) < 0)
		return -errno;
	if ((v->schedstat_fd = open_task_file(tid, "schedstat")) < 0) {
		int e = errno;

		close(v->stat_fd);
		return -e;
	}
	v->stats_kept = true;
	return 0;
}

/* One small read of a file under /proc/self/task/TID: through the kept
 * descriptor (pread at 0 makes procfs write it afresh), else by path. */
static int read_task_file(struct vcpu *v, pid_t tid, const char *file, char *buf, size_t len)
{
	bool stat = strcmp(file, "stat") == 0;
	ssize_t n;
	int fd;

	if (v->stats_kept) {
		n = pread(stat ? v->stat_fd : v->schedstat_fd, buf, len - 1, 0);
	} else {
		if ((fd = open_task_file(tid, file)) < 0)
			return -errno;
		n = read(fd, buf, len - 1);
		close(fd);
	}
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	buf[n] = '\0';
	return 0;
}

int sched_vcpu_stats(struct vcpu *v, struct vcpu_sched_stats *s)
{
	pid_t tid = atomic_load(&v->tid);
	char buf[1024], *p;
	unsigned long long run = 0, wait = 0;
	int field, rc;

	memset(s, 0, sizeof(*s));
	s->cpu = -1;
	s->state = '-';
	if (tid <= 0)
		return -ESRCH;                 /* not started yet, or gone */
	s->tid = tid;
	if (read_task_file(v, tid, "schedstat", buf, sizeof(buf)) == 0 &&
	    sscanf(buf, "%llu %llu", &run, &wait) == 2) {
		s->run_ns = run;
		s->wait_ns = wait;
	}
	if (pthread_getaffinity_np(v->thread, sizeof(s->affinity), &s->affinity))
		CPU_ZERO(&s->affinity);
	/* stat: "TID (COMM) STATE ..."; COMM may hold spaces, so count
	 * fields from the last ')'. Field 39 is the CPU it last ran on. */
	if ((rc = read_task_file(v, tid, "stat", buf, sizeof(buf))))
		return rc;
	if (!(p = strrchr(buf, ')')) || p[1] != ' ')
		return -EPROTO;
	p += 2;
	s->state = *p;
	for (field = 3; field < 39 && p; field++)
		if ((p = strchr(p, ' ')))
			p++;
	if (p)
		s->cpu = atoi(p);
	return 0;
}

uint64_t sched_vcpu_wait_ns(struct vcpu *v)
{
	pid_t tid = atomic_load(&v->tid);
	unsigned long long run, wait;
	char buf[128];

	if (tid <= 0 || read_task_file(v, tid, "schedstat", buf, sizeof(buf)) ||
	    sscanf(buf, "%llu %llu", &run, &wait) != 2)
		return 0;
	return wait;
}

int sched_vcpu_pin(struct vcpu *v, const cpu_set_t *set)
{
	/* pthread_setaffinity_np returns the error, it does not set errno. */
	return -pthread_setaffinity_np(v->thread, sizeof(*set), set);
}

int sched_cgroup_join(struct domain *dom, const char *rel, char *why, size_t whylen)
{
	const char *kind;
	pid_t other;
	int rc = cgroup_cpu_open(&dom->cgroup, rel);

	if (rc == -ENODEV) {
		snprintf(why, whylen, "no cgroup CPU controller is mounted (neither cgroup2 with cpu in "
			 "cgroup.controllers nor a v1 cpu hierarchy)");
		return rc;
	}
	kind = cgroup_cpu_kind(&dom->cgroup);
	if (rc) {
		snprintf(why, whylen, "cgroup %s: %s", rel, strerror(-rc));
		return rc;
	}
	/* Two --root trees with one cgroup parent and one domain name would
	 * share a cgroup: refuse rather than mix their shares.  The
	 * supervisor, this process's parent, may be in it already: it is
	 * the domain's own (supervise.c). */
	other = cgroup_cpu_other_task(&dom->cgroup, getpid(), getppid());
	if (other > 0) {
		snprintf(why, whylen, "%s %s is in use by process %d (another domain of this name? "
			 "give each root its own cgroup in lodge.conf)", kind, dom->cgroup.dir, (int)other);
		return -EBUSY;
	}
	if ((rc = cgroup_cpu_create(&dom->cgroup, getpid()))) {
		snprintf(why, whylen, "cannot create the %s %s: %s", kind, dom->cgroup.dir, strerror(-rc));
		return rc;
	}
	dom->has_cgroup = true;
	log_debug("domain %s in %s %s", dom->name, kind, dom->cgroup.dir);
	return 0;
}

/* Both or neither: the cap is written first and undone if the weight
 * fails, so a refused request changes nothing. */
int sched_set(struct domain *dom, unsigned weight, unsigned cap)
{
	int rc;

	if (!dom->has_cgroup)
		return -ENODEV;
	if (weight < DOMAIN_CPU_WEIGHT_MIN || weight > DOMAIN_CPU_WEIGHT_MAX || cap > SCHED_CAP_MAX(dom))
		return -ERANGE;
	if ((rc = cgroup_cpu_set_cap(&dom->cgroup, cap)))
		return rc;
	if ((rc = cgroup_cpu_set_weight(&dom->cgroup, weight))) {
		cgroup_cpu_set_cap(&dom->cgroup, dom->cpu_cap);
		return rc;
	}
	dom->cpu_weight = weight;
	dom->cpu_cap = cap;
	return 0;
}

/* At exit: out of the cgroup (back to the hierarchy's root) so that its
 * directory can go while this process still runs to remove it. */
void sched_cgroup_leave(struct domain *dom)
{
	int rc;

	if (!dom->has_cgroup)
		return;
	if ((rc = cgroup_cpu_leave(&dom->cgroup, getpid())) || (rc = cgroup_cpu_remove(&dom->cgroup)))
		log_warn("cannot remove %s: %s", dom->cgroup.dir, strerror(-rc));
	dom->has_cgroup = false;
}
