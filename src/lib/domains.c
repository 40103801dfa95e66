#include "cgroup.h"
#include "runtime.h"
#include "domains.h"
#include "log.h"
#include "netview.h"

#include <acl/libacl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/acl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_DOMAINS 1024

/* "diskN" and "vifN" lines: five counters each. */
static void io_from_reply(const struct reply *r, const char *kind, struct dev_io *dev, unsigned max,
			  unsigned *n, struct dev_io *sum)
{
	char key[16];
	const char *v;

	for (*n = 0; *n < max; (*n)++) {
		struct dev_io *d = &dev[*n];

		snprintf(key, sizeof(key), "%s%u", kind, *n);
		if (!(v = reply_get(r, key)) ||
		    sscanf(v, "%lu %lu %lu %lu %lu", &d->in_ops, &d->in_bytes, &d->out_ops, &d->out_bytes,
			   &d->errors) != 5)
			break;
		sum->in_ops += d->in_ops;
		sum->in_bytes += d->in_bytes;
		sum->out_ops += d->out_ops;
		sum->out_bytes += d->out_bytes;
		sum->errors += d->errors;
	}
}

unsigned domain_parse_list(const char *text, uint64_t *out, unsigned max)
{
	unsigned n = 0;
	char *end;

	while (n < max && *text) {
		out[n] = strtoull(text, &end, 10);
		if (end == text)
			break;
		n++;
		text = end;
	}
	return n;
}

/* save_kind save|migrate, save_phase precopy|stopcopy|done|failed, then
 * the figures; an unknown kind or phase is left as no save at all. */
static void save_from_reply(const struct reply *r, struct dom_status *st)
{
	static const char *const phases[] = { "precopy", "stopcopy", "done", "failed" };
	const char *kind = reply_get(r, "save_kind"), *phase = reply_get(r, "save_phase"), *v;
	unsigned i;

	if (!kind || !phase)
		return;
	if (strcmp(kind, "save") == 0)
		st->save_kind = DOM_SAVE_SNAPSHOT;
	else if (strcmp(kind, "migrate") == 0)
		st->save_kind = DOM_SAVE_MIGRATE;
	else
		return;
	for (i = 0; i < sizeof(phases) / sizeof(phases[0]) && strcmp(phase, phases[i]); i++)
		;
	if (i == sizeof(phases) / sizeof(phases[0])) {
		st->save_kind = DOM_SAVE_NONE;
		return;
	}
	st->save_phase = i;
	if ((v = reply_get(r, "save_round"))) st->save_round = strtoul(v, NULL, 10);
	if ((v = reply_get(r, "save_pages"))) st->save_pages = strtoull(v, NULL, 10);
	if ((v = reply_get(r, "save_dirty"))) st->save_dirty = strtoull(v, NULL, 10);
	if ((v = reply_get(r, "save_rate_kib"))) st->save_rate_kib = strtoull(v, NULL, 10);
}

const char *domain_save_word(const struct dom_status *st)
{
	if (!dom_saving(st))
		return NULL;
	return st->save_kind == DOM_SAVE_MIGRATE ? "migr" : "save";
}

void domain_save_describe(const struct dom_status *st, char *buf, size_t len)
{
	static const char *const ended[] = { [DOM_SAVE_DONE] = "done", [DOM_SAVE_FAILED] = "failed" };

	if (st->save_kind == DOM_SAVE_NONE)
		snprintf(buf, len, "-");
	else if (st->save_kind == DOM_SAVE_SNAPSHOT && dom_saving(st))
		snprintf(buf, len, "Save: writing");
	else if (st->save_kind == DOM_SAVE_SNAPSHOT)
		snprintf(buf, len, "Save: %s, %llu pages", ended[st->save_phase], (unsigned long long)st->save_pages);
	else if (st->save_phase == DOM_SAVE_PRECOPY)
		snprintf(buf, len, "Migration: round %u, %llu pages dirty, %llu sent, %.0f MiB/s", st->save_round,
			 (unsigned long long)st->save_dirty, (unsigned long long)st->save_pages,
			 st->save_rate_kib / 1024.0);
	else
		snprintf(buf, len, "Migration: %s after %u rounds, %llu pages sent",
			 st->save_phase == DOM_SAVE_STOPCOPY ? "paused, copying the rest" : ended[st->save_phase],
			 st->save_round, (unsigned long long)st->save_pages);
}

void domain_status_from_reply(const struct reply *r, const char *name, struct dom_status *st)
{
	const char *v;
	unsigned i;

	memset(st, 0, sizeof(*st));
	snprintf(st->name, sizeof(st->name), "%s", name);
	if ((v = reply_get(r, "id"))) st->id = strtoul(v, NULL, 10);
	if ((v = reply_get(r, "pid"))) st->pid = atoi(v);
	if ((v = reply_get(r, "state"))) snprintf(st->state, sizeof(st->state), "%s", v);
	if ((v = reply_get(r, "vcpus"))) st->vcpus = strtoul(v, NULL, 10);
	if ((v = reply_get(r, "memory_mib"))) st->memory_mib = strtoul(v, NULL, 10);
	st->maxmem_mib = st->target_mib = st->memory_mib;    /* a lodge-hyp without a balloon */
	if ((v = reply_get(r, "maxmem_mib"))) st->maxmem_mib = strtoul(v, NULL, 10);
	if ((v = reply_get(r, "target_mib"))) st->target_mib = strtoul(v, NULL, 10);
	if ((v = reply_get(r, "balloon_mib"))) st->balloon_mib = strtoul(v, NULL, 10);
	if ((v = reply_get(r, "guest_total_kib"))) st->guest_total_kib = strtoul(v, NULL, 10);
	if ((v = reply_get(r, "guest_free_kib"))) {
		st->guest_free_kib = strtoul(v, NULL, 10);
		st->guest_stats = true;
	}
	if ((v = reply_get(r, "guest_avail_kib"))) st->guest_avail_kib = strtoul(v, NULL, 10);
	if ((v = reply_get(r, "cpu_ns"))) st->cpu_ns = strtoull(v, NULL, 10);
	if ((v = reply_get(r, "rss_kib"))) st->rss_kib = strtoul(v, NULL, 10);
	if ((v = reply_get(r, "ksm_shared_kib"))) st->ksm_shared_kib = strtoul(v, NULL, 10);
	if ((v = reply_get(r, "thp_kib"))) st->thp_kib = strtoul(v, NULL, 10);
	if ((v = reply_get(r, "uptime_s"))) st->uptime_s = strtoul(v, NULL, 10);
	if ((v = reply_get(r, "end_reason"))) snprintf(st->end_reason, sizeof(st->end_reason), "%s", v);
	io_from_reply(r, "disk", st->disk, DOM_MAX_DISKS, &st->ndisks, &st->disk_sum);
	io_from_reply(r, "vif", st->vif, DOM_MAX_VIFS, &st->nvifs, &st->vif_sum);
	for (i = 0; i < DOM_MAX_VIFS; i++) {
		char key[24];

		snprintf(key, sizeof(key), "vif%u_addrs", i);
		if ((v = reply_get(r, key)))
			netview_parse_addrs(v, i, st->addrs, DOM_MAX_ADDRS, &st->naddrs);
	}
	if ((v = reply_get(r, "vcpu_ns")))
		domain_parse_list(v, st->vcpu_ns, DOMAIN_VCPUS_MAX);
	if ((v = reply_get(r, "cpu_wait_ns"))) st->cpu_wait_ns = strtoull(v, NULL, 10);
	if ((v = reply_get(r, "vcpu_wait_ns")))
		domain_parse_list(v, st->vcpu_wait_ns, DOMAIN_VCPUS_MAX);
	st->cpu_weight = (v = reply_get(r, "cpu_weight")) ? strtoul(v, NULL, 10) : CGROUP_WEIGHT_DEFAULT;
	if ((v = reply_get(r, "cpu_cap"))) st->cpu_cap = strtoul(v, NULL, 10);
	snprintf(st->cgroup, sizeof(st->cgroup), "%s", (v = reply_get(r, "cgroup")) ? v : "-");
	save_from_reply(r, st);
}

int domain_status(const char *rundir, const char *name, struct dom_status *st)
{
	struct reply r;
	int rc = client_call(rundir, name, "status", 1, &r);

	if (rc == -ECONNREFUSED || rc == -ENOENT || rc == -ENOTDIR)
		return -ENOENT;
	if (rc)
		return rc;
	if (r.error[0])
		return -EPROTO;
	domain_status_from_reply(&r, name, st);
	return 0;
}

/* Remove a dead domain's cgroup: its lodge-hyp's socket refuses already,
 * but its threads may still be on their way out of the cgroup (EBUSY) for
 * a moment. */
static int remove_dead_cgroup(const struct cgroup_cpu *cg)
{
	int rc, tries;

	for (tries = 0; (rc = cgroup_cpu_remove(cg)) == -EBUSY && tries < 300; tries++)
		usleep(10000);
	return rc;
}

/* The CPU cgroup a dead lodge-hyp named in its runtime directory: empty
 * now that its tasks are gone, so it can go, with its parent if that is
 * empty too. */
static void remove_stale_cgroup(const char *rundir, const char *name, bool quiet)
{
	char path[4200], dir[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/cgroup", rundir, name);
	if (!(f = fopen(path, "r")))
		return;
	if (fgets(dir, sizeof(dir), f)) {
		struct cgroup_cpu cg;
		int rc;

		dir[strcspn(dir, "\n")] = '\0';
		if (((rc = cgroup_cpu_at(&cg, dir)) || (rc = remove_dead_cgroup(&cg))) && !quiet)
			log_warn("cannot remove domain %s's cgroup %s: %s", name, dir, strerror(-rc));
	}
	fclose(f);
}

static void remove_runtime_dir(const char *rundir, const char *name, bool quiet)
{
	char dir[4200];

	remove_stale_cgroup(rundir, name, quiet);
	if (runtime_dir_path(dir, sizeof(dir), rundir, name) == 0)
		runtime_dir_remove(dir);
}

/* A directory whose socket no longer answers: its lodge-hyp died without
 * cleaning up (SIGKILL, a host crash). Keep nothing a live domain needs. */
void domain_remove_stale(const char *rundir, const char *name)
{
	log_warn("domain %s is gone (its lodge-hyp is not running); removing %s/%s",
		 name, rundir, name);
	remove_runtime_dir(rundir, name, false);
}

/* What a start that died may leave (lodge-hyp's processes were killed
 * before they could clean up), removed without a word: the error said
 * enough.  Only a socket that refuses proves every process of the start
 * is gone; one that answers is a live domain of this name, and none at
 * all may be a start still under way (only its caller was killed).  The
 * domain's cgroup goes too, known by its name: a kill may come before the
 * runtime directory names it. */
static void remove_dead_start(const struct host_config *hc, const char *name)
{
	char rel[sizeof(hc->cgroup) + CFG_NAME_MAX + 1];
	struct cgroup_cpu cg;
	int fd = client_connect(hc->runtime_dir, name);

	if (fd >= 0)
		close(fd);
	if (fd != -ECONNREFUSED)
		return;
	remove_runtime_dir(hc->runtime_dir, name, true);
	snprintf(rel, sizeof(rel), "%s/%s", hc->cgroup, name);
	if (cgroup_cpu_open(&cg, rel) == 0 && access(cg.dir, F_OK) == 0) {
		int rc = remove_dead_cgroup(&cg);

		if (rc)
			log_warn("cannot remove domain %s's cgroup %s: %s", name, cg.dir, strerror(-rc));
	}
}

int domains_scan(const char *rundir, void (*fn)(const struct dom_status *, void *), void *arg)
{
	struct status_poller *p = status_poller_new();
	int n;

	if (!p)
		return 0;
	n = status_poller_scan(p, rundir, fn, arg);
	status_poller_free(p);
	return n;
}

static void mark_id(const struct dom_status *st, void *arg)
{
	uint8_t *used = arg;

	if (st->id < MAX_DOMAINS)
		used[st->id] = 1;
}

void domain_vif_name(const char *name, unsigned id, unsigned n, char out[IFNAMSIZ])
{
	char full[CFG_NAME_MAX + 24];

	snprintf(full, sizeof(full), "vif-%s.%u", name, n);
	if (strlen(full) < IFNAMSIZ)
		memcpy(out, full, strlen(full) + 1);
	else
		snprintf(out, IFNAMSIZ, "vif%u.%u", id % 100000, n % 100);
}

void domain_vif_ifname(const struct domain_config *dc, const struct dom_status *st, unsigned n, char out[IFNAMSIZ])
{
	if (dc->vifs[n].vifname[0])
		snprintf(out, IFNAMSIZ, "%s", dc->vifs[n].vifname);
	else
		domain_vif_name(st->name, st->id, n, out);
}

/* Where lodge-hyp is: $LODGE_HYP, beside this program, or on PATH. */
static const char *hyp_path(void)
{
	static char path[4096];
	ssize_t n;
	char *slash;

	if (getenv("LODGE_HYP"))
		return getenv("LODGE_HYP");
	n = readlink("/proc/self/exe", path, sizeof(path) - 16);
	if (n > 0) {
		path[n] = '\0';
		slash = strrchr(path, '/');
		if (slash) {
			strcpy(slash + 1, "lodge-hyp");
			if (access(path, X_OK) == 0)
				return path;
		}
	}
	return "lodge-hyp";
}

/* mkdir -p: the runtime directory may live under a fresh --root. */
static int mkdir_parents(const char *path, mode_t mode)
{
	char buf[CFG_PATH_MAX];
	char *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0755) < 0 && errno != EEXIST)
				return -errno;
			*p = '/';
		}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int domain_runtime_config(const struct host_config *hc, const char *name, struct domain_config *dc,
			  char *err, size_t errlen)
{
	char path[CFG_PATH_MAX + CFG_NAME_MAX + 16];

	if (runtime_path(path, sizeof(path), hc->runtime_dir, name, RT_CONFIG)) {
		snprintf(err, errlen, "%s/%s: path too long", hc->runtime_dir, name);
		return -ENAMETOOLONG;
	}
	return domain_config_load(path, hc, false, dc, err, errlen);
}

int runtime_dir_create(const char *rundir)
{
	return mkdir_parents(rundir, 0755);
}

void domain_vif_mac(const struct domain_config *dc, unsigned i, uint8_t mac[6])
{
	if (dc->vifs[i].mac_set)
		memcpy(mac, dc->vifs[i].mac, 6);
	else
		cfg_default_mac(dc->name, i, mac);
}

struct mac_check {
	const struct domain_config *dc;
	const char *rundir;
	const struct host_config *hc;
	char clash[CFG_NAME_MAX];
};

/* Two domains on one host never share a MAC: compare with every running
 * domain's resolved config. */
static void check_macs(const struct dom_status *st, void *arg)
{
	static struct domain_config other;
	struct mac_check *m = arg;
	char err[256];
	uint8_t a[6], b[6];
	unsigned i, k;

	if (m->clash[0] || domain_runtime_config(m->hc, st->name, &other, err, sizeof(err)))
		return;
	for (i = 0; i < m->dc->nvifs; i++)
		for (k = 0; k < other.nvifs; k++) {
			domain_vif_mac(m->dc, i, a);
			domain_vif_mac(&other, k, b);
			if (memcmp(a, b, 6) == 0)
				snprintf(m->clash, sizeof(m->clash), "%s", st->name);
		}
}

static int acl_add_group_read(acl_t *acl, gid_t gid)
{
	acl_permset_t perms;
	acl_entry_t e;

	if (acl_create_entry(acl, &e) || acl_set_tag_type(e, ACL_GROUP) || acl_set_qualifier(e, &gid) ||
	    acl_get_permset(e, &perms) || acl_clear_perms(perms) || acl_add_perm(perms, ACL_READ) ||
	    acl_set_permset(e, perms))
		return -errno;
	return 0;
}

/* Root's (rw), and readable by groups a and b, by nobody else. */
static int acl_share(const char *path, gid_t a, gid_t b)
{
	acl_t acl = acl_from_mode(0600);
	int rc;

	if (!acl)
		return -errno;
	if (!(rc = acl_add_group_read(&acl, a)) && !(rc = acl_add_group_read(&acl, b)) &&
	    (acl_calc_mask(&acl) || acl_set_file(path, ACL_TYPE_ACCESS, acl)))
		rc = -errno;
	acl_free(acl);
	return rc;
}

/* Open a root-only file to the groups lodge.conf lets see a domain
 * (stats_group, control_group): by its group when one is named, by an
 * ACL when two are (group ownership alone where the file system has no
 * ACLs, with one warning). */
static int share_with_groups(const char *path, const struct host_config *hc, char *err, size_t errlen)
{
	long a = hc->stats_gid >= 0 ? hc->stats_gid : hc->control_gid;
	long b = hc->stats_gid >= 0 && hc->control_gid != hc->stats_gid ? hc->control_gid : -1;
	int rc;

	if (a < 0)
		return 0;
	if (b >= 0) {
		if (!(rc = acl_share(path, (gid_t)a, (gid_t)b)))
			return 0;
		if (rc != -EOPNOTSUPP) {
			snprintf(err, errlen, "cannot give groups %ld and %ld read access to %s: %s", a, b, path,
				 strerror(-rc));
			return rc;
		}
		log_warn("the file system of %s has no ACLs: only group %ld (stats_group) may read it, "
			 "not group %ld (control_group)", path, a, b);
	}
	if (chown(path, (uid_t)-1, (gid_t)a) < 0 || chmod(path, 0640) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot give group %ld read access to %s: %s", a, path, strerror(errno));
		return rc;
	}
	return 0;
}

/* A running domain's resolved config names its command line, disks and
 * MACs: root's and the domain's groups' to read, nobody else's, though
 * its directory lets everyone reach the control socket when groups are
 * named.  Written whole with umask 077 (root-only from its first byte;
 * an instant without the groups' access is no more than the instant
 * before it exists), then opened to the groups. */
static int keep_config(const char *path, const struct domain_config *dc, const struct host_config *hc,
		       char *err, size_t errlen)
{
	mode_t old = umask(077);
	int rc = domain_config_save(path, dc, err, errlen);

	umask(old);
	return rc ? rc : share_with_groups(path, hc, err, errlen);
}


int domain_start(const struct domain_config *dc, const struct host_config *hc, bool paused,
		 int incoming_fd)
{
	static char args[CFG_MAX_DISKS + CFG_MAX_VIFS][CFG_PATH_MAX + 64];
	char mem[16], maxmem[16], vcpus[16], id[16], logsize[16], dir[CFG_PATH_MAX + 80];
	char weight[16], cap[16], cgroup[sizeof(hc->cgroup) + CFG_NAME_MAX + 1], control_gid[24], stats_gid[24];
	char incoming[16];
	static char pins[CFG_MAX_VCPUS][CFG_CPUS_MAX + 8];
	const char *argv[100 + 2 * CFG_MAX_VCPUS];
	uint8_t used[MAX_DOMAINS] = { 1 };      /* id 0 is Domain-0, the host */
	unsigned i, a = 0, nextid;
	struct dom_status st;
	pid_t pid;
	int wst, rc;

	if (domain_status(hc->runtime_dir, dc->name, &st) == 0) {
		log_err("domain %s is already running (id %u)", dc->name, st.id);
		return -EEXIST;
	}
	domains_scan(hc->runtime_dir, mark_id, used);
	if (dc->nvifs) {
		struct mac_check m = { dc, hc->runtime_dir, hc, "" };

		domains_scan(hc->runtime_dir, check_macs, &m);
		if (m.clash[0]) {
			log_err("domain %s: a MAC of its vifs is already used by domain %s", dc->name, m.clash);
			return -EEXIST;
		}
	}
	for (nextid = 1; nextid < MAX_DOMAINS && used[nextid]; nextid++)
		;
	if ((rc = mkdir_parents(hc->runtime_dir, 0755))) {
		log_err("cannot create %s: %s", hc->runtime_dir, strerror(-rc));
		return rc;
	}
	snprintf(mem, sizeof(mem), "%u", dc->memory_mib);
	snprintf(vcpus, sizeof(vcpus), "%u", dc->vcpus);
	snprintf(id, sizeof(id), "%u", nextid);
	snprintf(logsize, sizeof(logsize), "%u", hc->console_log_kib);
	argv[a++] = hyp_path();
	argv[a++] = "--kernel"; argv[a++] = dc->kernel;
	if (dc->ramdisk[0]) { argv[a++] = "--initrd"; argv[a++] = dc->ramdisk; }
	argv[a++] = "--cmdline"; argv[a++] = dc->cmdline;
	argv[a++] = "--memory"; argv[a++] = mem;
	if (dc->maxmem_mib > dc->memory_mib) {
		snprintf(maxmem, sizeof(maxmem), "%u", dc->maxmem_mib);
		argv[a++] = "--maxmem"; argv[a++] = maxmem;
	}
	if (dc->ksm) argv[a++] = "--ksm";
	if (dc->hugepages) argv[a++] = "--hugepages";
	argv[a++] = "--vcpus"; argv[a++] = vcpus;
	for (i = 0; i < dc->ndisks; i++) {
		snprintf(args[i], sizeof(args[i]), "%s%s,id=%s", dc->disks[i].path,
			 dc->disks[i].readonly ? ",ro" : "", dc->disks[i].vdev);
		argv[a++] = "--disk";
		argv[a++] = args[i];
	}
	for (i = 0; i < dc->nvifs; i++) {
		const struct cfg_vif *v = &dc->vifs[i];
		char *s = args[CFG_MAX_DISKS + i], name[IFNAMSIZ];
		uint8_t mac[6];

		if (v->vifname[0])
			snprintf(name, sizeof(name), "%s", v->vifname);
		else
			domain_vif_name(dc->name, nextid, i, name);
		domain_vif_mac(dc, i, mac);
		snprintf(s, CFG_PATH_MAX, "tap=%s,bridge=%s,mac=%02x:%02x:%02x:%02x:%02x:%02x", name,
			 v->bridge[0] ? v->bridge : hc->default_bridge,
			 mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
		argv[a++] = "--net";
		argv[a++] = s;
	}
	argv[a++] = "--name"; argv[a++] = dc->name;
	argv[a++] = "--id"; argv[a++] = id;
	argv[a++] = "--runtime-dir"; argv[a++] = hc->runtime_dir;
	argv[a++] = "--console-log-size"; argv[a++] = logsize;
	argv[a++] = "--on-poweroff"; argv[a++] = domain_action_name(dc->on_poweroff);
	argv[a++] = "--on-reboot"; argv[a++] = domain_action_name(dc->on_reboot);
	argv[a++] = "--on-crash"; argv[a++] = domain_action_name(dc->on_crash);
	/* Every domain gets its cgroup, so lodge sched works on any of them;
	 * weight and cap go only when the config asks for them, so a host
	 * without a CPU controller still runs domains that do not. */
	snprintf(weight, sizeof(weight), "%u", dc->cpu_weight);
	snprintf(cap, sizeof(cap), "%u", dc->cap);
	snprintf(cgroup, sizeof(cgroup), "%s/%s", hc->cgroup, dc->name);
	argv[a++] = "--cgroup"; argv[a++] = cgroup;
	if (hc->control_gid >= 0) {
		snprintf(control_gid, sizeof(control_gid), "%ld", hc->control_gid);
		argv[a++] = "--control-group"; argv[a++] = control_gid;
	}
	if (hc->stats_gid >= 0) {
		snprintf(stats_gid, sizeof(stats_gid), "%ld", hc->stats_gid);
		argv[a++] = "--stats-group"; argv[a++] = stats_gid;
	}
	if (dc->cpu_weight != CGROUP_WEIGHT_DEFAULT) { argv[a++] = "--cpu-weight"; argv[a++] = weight; }
	if (dc->cap) { argv[a++] = "--cap"; argv[a++] = cap; }
	if (dc->ncpus == 1) { argv[a++] = "--cpus"; argv[a++] = dc->cpus[0]; }
	for (i = 0; dc->ncpus > 1 && i < dc->ncpus; i++) {
		snprintf(pins[i], sizeof(pins[i]), "%u=%s", i, dc->cpus[i]);
		argv[a++] = "--vcpu-cpus";
		argv[a++] = pins[i];
	}
	if (incoming_fd >= 0) {
		snprintf(incoming, sizeof(incoming), "%d", incoming_fd);
		argv[a++] = "--incoming"; argv[a++] = incoming;
	}
	if (paused)
		argv[a++] = "--paused";        /* not one guest instruction before unpause */
	argv[a++] = "--detach";
	argv[a] = NULL;

	/* lodge-hyp --detach returns once the domain runs, having printed its
	 * own one-line error otherwise; it leaves nothing behind on failure. */
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* The stream's descriptor is lodge-hyp's to read. */
		if (incoming_fd >= 0)
			fcntl(incoming_fd, F_SETFD, 0);
		execvp(argv[0], (char *const *)argv);
		log_err("cannot run %s: %s", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &wst, 0) < 0 || !WIFEXITED(wst) || WEXITSTATUS(wst) != 0) {
		/* Its exit status says lodge-hyp spoke; a signal, that it could not. */
		if (WIFSIGNALED(wst))
			log_err("domain %s did not start: its lodge-hyp (pid %d) was killed by signal %s",
				dc->name, (int)pid, strsignal(WTERMSIG(wst)));
		remove_dead_start(hc, dc->name);
		return -EIO;
	}
	runtime_path(dir, sizeof(dir), hc->runtime_dir, dc->name, RT_CONFIG);
	{
		char err[CFG_PATH_MAX + 200];

		if (keep_config(dir, dc, hc, err, sizeof(err)))
			log_warn("cannot keep the resolved config: %s", err);
	}
	return 0;
}
