/* A domain's CPU cgroup on cgroup v2 or v1: one small ops table per
 * version, chosen once by what /proc/self/mountinfo shows. */
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cgroup_cpu_ops {
	const char *kind;
	/* Make the controller usable in mount/rel/... (v2: subtree_control). */
	int (*enable)(const struct cgroup_cpu *cg, const char *parent);
	int (*set_weight)(const struct cgroup_cpu *cg, unsigned weight);
	int (*set_cap)(const struct cgroup_cpu *cg, unsigned cap_pct);
};

unsigned cgroup_v2_weight(unsigned xen_weight)
{
	unsigned long w = (unsigned long)xen_weight * 100 / DOMAIN_CPU_WEIGHT_DEFAULT;

	return w < 1 ? 1 : w > 10000 ? 10000 : (unsigned)w;
}

unsigned long cgroup_v1_shares(unsigned xen_weight)
{
	unsigned long s = (unsigned long)xen_weight * 1024 / DOMAIN_CPU_WEIGHT_DEFAULT;

	return s < 2 ? 2 : s > 262144 ? 262144 : s;
}

static int write_file(const char *dir, const char *file, const char *text)
{
	char path[2300];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	if (n < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	return (size_t)n == strlen(text) ? 0 : -EIO;
}

/* A knob of the domain's own cgroup: through the descriptor kept open if
 * there is one (each write to a cgroup file is one whole value). */
static int write_knob(const struct cgroup_cpu *cg, const char *file, const char *text)
{
	unsigned i;

	for (i = 0; i < cg->nkept; i++)
		if (strcmp(cg->kept_name[i], file) == 0) {
			ssize_t n = pwrite(cg->kept_fd[i], text, strlen(text), 0);

			if (n < 0)
				return -errno;
			return (size_t)n == strlen(text) ? 0 : -EIO;
		}
	return write_file(cg->dir, file, text);
}

/* ---- cgroup v2 --------------------------------------------------------- */

/* "+cpu" in the parent's subtree_control puts cpu.weight and cpu.max in
 * its children; already enabled is not an error. */
static int v2_enable(const struct cgroup_cpu *cg, const char *parent)
{
	return write_file(parent, "cgroup.subtree_control", "+cpu");
}

static int v2_set_weight(const struct cgroup_cpu *cg, unsigned weight)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%u", cgroup_v2_weight(weight));
	return write_knob(cg, "cpu.weight", buf);
}

static int v2_set_cap(const struct cgroup_cpu *cg, unsigned cap_pct)
{
	char buf[64];

	if (cap_pct)
		snprintf(buf, sizeof(buf), "%lu %u", (unsigned long)cap_pct * (CGROUP_PERIOD_US / 100), CGROUP_PERIOD_US);
	else
		snprintf(buf, sizeof(buf), "max %u", CGROUP_PERIOD_US);
	return write_knob(cg, "cpu.max", buf);
}

static const struct cgroup_cpu_ops v2_ops = { "cgroup v2", v2_enable, v2_set_weight, v2_set_cap };

/* ---- cgroup v1 --------------------------------------------------------- */

static int v1_enable(const struct cgroup_cpu *cg, const char *parent)
{
	return 0;                  /* every v1 cgroup has its hierarchy's controllers */
}

static int v1_set_weight(const struct cgroup_cpu *cg, unsigned weight)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lu", cgroup_v1_shares(weight));
	return write_knob(cg, "cpu.shares", buf);
}

static int v1_set_cap(const struct cgroup_cpu *cg, unsigned cap_pct)
{
	char buf[32];
	int rc;

	/* The period first: a quota is checked against the period in force. */
	snprintf(buf, sizeof(buf), "%u", CGROUP_PERIOD_US);
	if ((rc = write_knob(cg, "cpu.cfs_period_us", buf)))
		return rc;
	if (cap_pct)
		snprintf(buf, sizeof(buf), "%lu", (unsigned long)cap_pct * (CGROUP_PERIOD_US / 100));
	else
		snprintf(buf, sizeof(buf), "-1");
	return write_knob(cg, "cpu.cfs_quota_us", buf);
}

static const struct cgroup_cpu_ops v1_ops = { "cgroup v1", v1_enable, v1_set_weight, v1_set_cap };

/* ---- finding the controller ----------------------------------------------- */

static int has_word(const char *list, const char *word, const char *seps)
{
	size_t len = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		if ((p == list || strchr(seps, p[-1])) && (p[len] == '\0' || strchr(seps, p[len])))
			return 1;
		p += len;
	}
	return 0;
}

static int v2_has_cpu(const char *mount)
{
	char path[1100], buf[512] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", mount);
	if (!(f = fopen(path, "r")))
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return has_word(buf, "cpu", " ");
}

/* mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SOURCE SUPEROPTS */
int cgroup_cpu_open(struct cgroup_cpu *cg, const char *rel)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096], v1[1024] = "", v2[1024] = "";

	memset(cg, 0, sizeof(*cg));
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mnt[1024], fstype[64], super[1024], *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %*s %1023s", mnt) != 1 ||
		    sscanf(dash + 3, "%63s %*s %1023s", fstype, super) != 2)
			continue;
		if (strcmp(fstype, "cgroup2") == 0 && !v2[0] && v2_has_cpu(mnt))
			snprintf(v2, sizeof(v2), "%s", mnt);
		else if (strcmp(fstype, "cgroup") == 0 && !v1[0] && has_word(super, "cpu", ","))
			snprintf(v1, sizeof(v1), "%s", mnt);
	}
	fclose(f);
	if (!v2[0] && !v1[0])
		return -ENODEV;
	cg->ops = v2[0] ? &v2_ops : &v1_ops;
	snprintf(cg->mount, sizeof(cg->mount), "%s", v2[0] ? v2 : v1);
	if ((size_t)snprintf(cg->dir, sizeof(cg->dir), "%s/%s", cg->mount, rel) >= sizeof(cg->dir))
		return -ENAMETOOLONG;
	return 0;
}

static int create_levels(struct cgroup_cpu *cg)
{
	char path[sizeof(cg->dir)], *p, *next;
	int rc;

	snprintf(path, sizeof(path), "%s", cg->dir);
	/* Each level below the mount, top down (p at the '/' before it):
	 * enable the controller in its parent (v2), then create it. */
	for (p = path + strlen(cg->mount); p; p = next) {
		next = strchr(p + 1, '/');
		*p = '\0';
		rc = cg->ops->enable(cg, path);
		*p = '/';
		if (rc)
			return rc;
		if (next)
			*next = '\0';
		rc = mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
		if (next)
			*next = '/';
		if (rc)
			return rc;
	}
	return 0;
}

int cgroup_cpu_at(struct cgroup_cpu *cg, const char *dir)
{
	char want[sizeof(cg->dir)];
	size_t len;
	int rc;

	snprintf(want, sizeof(want), "%s", dir);      /* dir may be cg->dir itself */
	if ((rc = cgroup_cpu_open(cg, "")))
		return rc;
	len = strlen(cg->mount);
	if (strncmp(want, cg->mount, len) != 0 || want[len] != '/' || !want[len + 1] || strstr(want, "/.."))
		return -EINVAL;
	snprintf(cg->dir, sizeof(cg->dir), "%s", want);
	return 0;
}

/* pid is in cg already (cgroup.procs lists it). */
static bool cgroup_has(const struct cgroup_cpu *cg, pid_t pid)
{
	char path[2300];
	bool found = false;
	FILE *f;
	int p;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg->dir);
	if (!(f = fopen(path, "re")))
		return false;
	while (!found && fscanf(f, "%d", &p) == 1)
		found = p == (int)pid;
	fclose(f);
	return found;
}

int cgroup_cpu_create(struct cgroup_cpu *cg, pid_t pid)
{
	char buf[32];
	int rc, tries = 0;

	/* ENOENT: the last other domain of this parent removed the parent
	 * between our mkdirs (cgroup_cpu_remove); make it again. */
	while ((rc = create_levels(cg)) == -ENOENT && ++tries < 3)
		;
	if (rc)
		return rc;
	/* A move waits for an RCU grace period (10 to 20 ms) under a lock
	 * the whole host shares (cgroup_threadgroup_rwsem): every create at
	 * once queues on it.  A domain process forked by a supervisor that
	 * joined is born in the cgroup, and moves nowhere. */
	if (cgroup_has(cg, pid))
		return 0;
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	return write_file(cg->dir, "cgroup.procs", buf);
}

int cgroup_cpu_keep_open(struct cgroup_cpu *cg)
{
	static const char *const v2[] = { "cpu.weight", "cpu.max", NULL };
	static const char *const v1[] = { "cpu.shares", "cpu.cfs_period_us", "cpu.cfs_quota_us", NULL };
	const char *const *names = cg->ops == &v2_ops ? v2 : v1;
	char path[2300];
	unsigned i;

	for (i = 0; i < cg->nkept; i++)
		close(cg->kept_fd[i]);
	cg->nkept = 0;
	for (i = 0; names[i]; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/%s", cg->dir, names[i]);
		if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0) {
			int e = errno;

			while (cg->nkept)
				close(cg->kept_fd[--cg->nkept]);
			return -e;
		}
		cg->kept_name[cg->nkept] = names[i];
		cg->kept_fd[cg->nkept++] = fd;
	}
	return 0;
}

int cgroup_cpu_set_weight(const struct cgroup_cpu *cg, unsigned weight)
{
	if (weight < DOMAIN_CPU_WEIGHT_MIN || weight > DOMAIN_CPU_WEIGHT_MAX)
		return -ERANGE;
	return cg->ops->set_weight(cg, weight);
}

int cgroup_cpu_set_cap(const struct cgroup_cpu *cg, unsigned cap_pct)
{
	return cg->ops->set_cap(cg, cap_pct);
}

pid_t cgroup_cpu_first_task(const struct cgroup_cpu *cg)
{
	char path[2300];
	FILE *f;
	int pid = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg->dir);
	if ((f = fopen(path, "r"))) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	return pid;
}

pid_t cgroup_cpu_other_task(const struct cgroup_cpu *cg, pid_t a, pid_t b)
{
	char path[2300];
	FILE *f;
	int pid, other = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg->dir);
	if (!(f = fopen(path, "r")))
		return 0;
	while (!other && fscanf(f, "%d", &pid) == 1)
		if (pid != a && pid != b)
			other = pid;
	fclose(f);
	return other;
}

int cgroup_cpu_leave(const struct cgroup_cpu *cg, pid_t pid)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", (int)pid);
	return write_file(cg->mount, "cgroup.procs", buf);
}

int cgroup_cpu_remove(const struct cgroup_cpu *cg)
{
	char path[sizeof(cg->dir)], *slash;
	size_t root = strlen(cg->mount);

	if (rmdir(cg->dir) < 0 && errno != ENOENT)
		return -errno;
	/* Parents Lodge made go too once empty (the last domain of a --root
	 * tree); one still holding a domain refuses, and that is the end. */
	snprintf(path, sizeof(path), "%s", cg->dir);
	while ((slash = strrchr(path, '/')) && (size_t)(slash - path) > root) {
		*slash = '\0';
		if (rmdir(path) < 0)
			break;
	}
	return 0;
}

const char *cgroup_cpu_kind(const struct cgroup_cpu *cg)
{
	return cg->ops ? cg->ops->kind : "none";
}
