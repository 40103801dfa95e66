/* Configs and starting a domain: lodge-hyp detached, with its own words
 * (what it writes until the domain runs) brought back to the face. */
#include "cgroup.h"
#include "default-guest.h"
#include "internal.h"
#include "mkdirs.h"
#include "network.h"
#include "runtime.h"

#include <acl/libacl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/acl.h>
#include <sys/file.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_DOMAIN_IDS 1024
#define HYP_OUTPUT_MAX (64 * 1024)

void lodge_vif_name(const char *name, unsigned id, unsigned n, char out[IFNAMSIZ])
{
	char full[DOMAIN_NAME_MAX + 24];

	snprintf(full, sizeof(full), "vif-%s.%u", name, n);
	if (strlen(full) < IFNAMSIZ)
		memcpy(out, full, strlen(full) + 1);
	else
		snprintf(out, IFNAMSIZ, "vif%u.%u", id % 100000, n % 100);
}

void lodge_vif_ifname(const struct domain_config *dc, const char *name, unsigned id, unsigned n, char out[IFNAMSIZ])
{
	if (dc->vifs[n].vifname[0])
		snprintf(out, IFNAMSIZ, "%s", dc->vifs[n].vifname);
	else
		lodge_vif_name(name, id, n, out);
}

void lodge_vif_mac(const struct domain_config *dc, unsigned i, uint8_t mac[6])
{
	if (dc->vifs[i].mac_set)
		memcpy(mac, dc->vifs[i].mac, 6);
	else
		cfg_default_mac(dc->name, i, mac);
}

/* mkdir -p: the runtime directory may live under a fresh --root. */
int lodge_runtime_dir_create(const char *rundir)
{
	return mkdirs(rundir, DIR_MODE_PUBLIC, NULL, 0);
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

static void mark_id(const struct lodge_status *st, void *arg)
{
	uint8_t *used = arg;

	if (st->id < MAX_DOMAIN_IDS)
		used[st->id] = 1;
}

struct mac_check {
	const struct lodge *lg;
	const struct domain_config *dc;
	char clash[DOMAIN_NAME_MAX];
};

/* Two domains on one host never share a MAC: compare with every running
 * domain's resolved config. */
static void check_macs(const struct lodge_status *st, void *arg)
{
	static struct domain_config other;
	struct mac_check *m = arg;
	uint8_t a[6], b[6];
	unsigned i, k;

	if (m->clash[0] || lodge_runtime_config(m->lg, st->name, &other, NULL))
		return;
	for (i = 0; i < m->dc->nvifs; i++)
		for (k = 0; k < other.nvifs; k++) {
			lodge_vif_mac(m->dc, i, a);
			lodge_vif_mac(&other, k, b);
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
 * ACLs, with a notice). */
static int share_with_groups(const struct lodge *lg, const char *path, char *why, size_t whylen)
{
	const struct host_config *hc = &lg->hc;
	long a = hc->stats_gid >= 0 ? hc->stats_gid : hc->control_gid;
	long b = hc->stats_gid >= 0 && hc->control_gid != hc->stats_gid ? hc->control_gid : -1;
	int rc;

	if (a < 0)
		return 0;
	if (b >= 0) {
		if (!(rc = acl_share(path, (gid_t)a, (gid_t)b)))
			return 0;
		if (rc != -EOPNOTSUPP) {
			snprintf(why, whylen, "cannot give groups %ld and %ld read access to %s: %s", a, b, path,
				 strerror(-rc));
			return rc;
		}
		lodge_warn(lg, "the file system of %s has no ACLs: only group %ld (stats_group) may read it, "
			   "not group %ld (control_group)", path, a, b);
	}
	if (chown(path, (uid_t)-1, (gid_t)a) < 0 || chmod(path, 0640) < 0) {
		rc = -errno;
		snprintf(why, whylen, "cannot give group %ld read access to %s: %s", a, path, strerror(errno));
		return rc;
	}
	return 0;
}

/* A running domain's resolved config names its command line, disks and
 * MACs: root's and the domain's groups' to read, nobody else's, though
 * its directory lets everyone reach the control socket when groups are
 * named.  Written whole with umask 077 (root-only from its first byte),
 * then opened to the groups. */
int lodge_keep_config(const struct lodge *lg, const char *path, const struct domain_config *dc, char *why,
		       size_t whylen)
{
	mode_t old = umask(077);
	int rc = domain_config_save(path, dc, why, whylen);

	umask(old);
	return rc ? rc : share_with_groups(lg, path, why, whylen);
}

/* lodge-hyp's command line for dc as domain ID id. */
struct hyp_args {
	const char *argv[100 + 2 * DOMAIN_VCPUS_MAX];
	char disks[DOMAIN_DISKS_MAX][CFG_PATH_MAX + 64], vifs[DOMAIN_VIFS_MAX][128];
	char pins[DOMAIN_VCPUS_MAX][DOMAIN_CPULIST_MAX + 8];
	char mem[16], maxmem[16], vcpus[16], maxvcpus[16], id[16], logsize[16], weight[16], cap[16];
	char cgroup[sizeof(((struct host_config *)0)->cgroup) + DOMAIN_NAME_MAX + 1];
	char control_gid[24], stats_gid[24], incoming[16], watchdog[16], id_lock[16];
	char event_log[CFG_PATH_MAX];
	int disk_fds[DOMAIN_DISKS_MAX];   /* each disk opened once here, handed on as fd=N */
};

static void hyp_args_build(struct hyp_args *h, const struct host_config *hc, const struct domain_config *dc,
			   unsigned id, int id_lock_fd, bool paused, int incoming_fd)
{
	const char **argv = h->argv;
	unsigned i, a = 0;

	snprintf(h->mem, sizeof(h->mem), "%u", dc->memory_mib);
	snprintf(h->vcpus, sizeof(h->vcpus), "%u", dc->vcpus);
	snprintf(h->id, sizeof(h->id), "%u", id);
	snprintf(h->logsize, sizeof(h->logsize), "%u", hc->console_log_kib);
	argv[a++] = hyp_path();
	if (dc->bootloader) {
		argv[a++] = "--bootloader-disk"; argv[a++] = dc->disks[0].path;
	} else {
		argv[a++] = "--kernel"; argv[a++] = dc->kernel;
	}
	if (dc->ramdisk[0]) { argv[a++] = "--initrd"; argv[a++] = dc->ramdisk; }
	argv[a++] = "--cmdline"; argv[a++] = dc->cmdline;
	argv[a++] = "--memory"; argv[a++] = h->mem;
	if (dc->maxmem_mib > dc->memory_mib) {
		snprintf(h->maxmem, sizeof(h->maxmem), "%u", dc->maxmem_mib);
		argv[a++] = "--maxmem"; argv[a++] = h->maxmem;
	}
	if (dc->ksm) argv[a++] = "--ksm";
	/* An HA domain of a pool is armed from its first instant: the pool
	 * agent's feeds move the deadline (src/pool/README.md, "Fencing"). */
	if (dc->ha && hc->pool_etcd[0]) {
		snprintf(h->watchdog, sizeof(h->watchdog), "%u", hc->pool_fence_deadline_s);
		argv[a++] = "--watchdog"; argv[a++] = h->watchdog;
	}
	if (dc->hugepages) argv[a++] = "--hugepages";
	argv[a++] = "--vcpus"; argv[a++] = h->vcpus;
	if (dc->maxvcpus > dc->vcpus) {
		snprintf(h->maxvcpus, sizeof(h->maxvcpus), "%u", dc->maxvcpus);
		argv[a++] = "--max-vcpus"; argv[a++] = h->maxvcpus;
	}
	for (i = 0; i < dc->ndisks; i++) {
		int n = snprintf(h->disks[i], sizeof(h->disks[i]), "%s%s,id=%s,fd=%d", dc->disks[i].path,
				 dc->disks[i].readonly ? ",ro" : "", dc->disks[i].vdev, h->disk_fds[i]);

		if (dc->disks[i].slot && n > 0 && (size_t)n < sizeof(h->disks[i]))
			snprintf(h->disks[i] + n, sizeof(h->disks[i]) - (size_t)n, ",slot=%u", dc->disks[i].slot);
		argv[a++] = "--disk"; argv[a++] = h->disks[i];
	}
	for (i = 0; i < dc->nvifs; i++) {
		const struct cfg_vif *v = &dc->vifs[i];
		char name[IFNAMSIZ];
		uint8_t mac[6];

		lodge_vif_ifname(dc, dc->name, id, i, name);
		lodge_vif_mac(dc, i, mac);
		snprintf(h->vifs[i], sizeof(h->vifs[i]), "tap=%s,bridge=%s,mac=%02x:%02x:%02x:%02x:%02x:%02x%s%.0u", name,
			 v->bridge[0] ? v->bridge : hc->default_bridge, mac[0], mac[1], mac[2], mac[3], mac[4], mac[5],
			 v->slot ? ",slot=" : "", v->slot);
		argv[a++] = "--net"; argv[a++] = h->vifs[i];
	}
	argv[a++] = "--name"; argv[a++] = dc->name;
	argv[a++] = "--id"; argv[a++] = h->id;
	snprintf(h->id_lock, sizeof(h->id_lock), "%d", id_lock_fd);
	argv[a++] = "--id-lock"; argv[a++] = h->id_lock;
	argv[a++] = "--runtime-dir"; argv[a++] = hc->runtime_dir;
	argv[a++] = "--console-log-size"; argv[a++] = h->logsize;
	argv[a++] = "--on-poweroff"; argv[a++] = domain_action_name(dc->on_poweroff);
	argv[a++] = "--on-reboot"; argv[a++] = domain_action_name(dc->on_reboot);
	argv[a++] = "--on-crash"; argv[a++] = domain_action_name(dc->on_crash);
	argv[a++] = "--crash-dir"; argv[a++] = hc->crash_dir;
	/* Every domain gets its cgroup, so lodge sched works on any of them;
	 * weight and cap go only when the config asks for them, so a host
	 * without a CPU controller still runs domains that do not. */
	snprintf(h->weight, sizeof(h->weight), "%u", dc->cpu_weight);
	snprintf(h->cap, sizeof(h->cap), "%u", dc->cap);
	snprintf(h->cgroup, sizeof(h->cgroup), "%s/%s", hc->cgroup, dc->name);
	argv[a++] = "--cgroup"; argv[a++] = h->cgroup;
	if (hc->control_gid >= 0) {
		snprintf(h->control_gid, sizeof(h->control_gid), "%ld", hc->control_gid);
		argv[a++] = "--control-group"; argv[a++] = h->control_gid;
	}
	if (hc->stats_gid >= 0) {
		snprintf(h->stats_gid, sizeof(h->stats_gid), "%ld", hc->stats_gid);
		argv[a++] = "--stats-group"; argv[a++] = h->stats_gid;
	}
	if (dc->cpu_weight != DOMAIN_CPU_WEIGHT_DEFAULT) { argv[a++] = "--cpu-weight"; argv[a++] = h->weight; }
	if (dc->cap) { argv[a++] = "--cap"; argv[a++] = h->cap; }
	if (dc->ncpus == 1) { argv[a++] = "--cpus"; argv[a++] = dc->cpus[0]; }
	for (i = 0; dc->ncpus > 1 && i < dc->ncpus; i++) {
		snprintf(h->pins[i], sizeof(h->pins[i]), "%u=%s", i, dc->cpus[i]);
		argv[a++] = "--vcpu-cpus"; argv[a++] = h->pins[i];
	}
	if (incoming_fd >= 0) {
		snprintf(h->incoming, sizeof(h->incoming), "%d", incoming_fd);
		argv[a++] = "--incoming"; argv[a++] = h->incoming;
	}
	if (paused)
		argv[a++] = "--paused";        /* not one guest instruction before unpause */
	if (lodge_event_log_dir(h->event_log, sizeof(h->event_log)) == 0) {
		argv[a++] = "--event-log"; argv[a++] = h->event_log;
	}
	if (client_face()[0]) {
		argv[a++] = "--via"; argv[a++] = client_face();
	}
	argv[a++] = "--detach";
	argv[a] = NULL;
}

/* What lodge-hyp writes until the domain runs (its stderr is a pipe of
 * ours until then; after, its runtime directory's log). */
struct hyp_output {
	char buf[HYP_OUTPUT_MAX];
	size_t n;
};

/* Take in what is there without waiting. */
static void hyp_output_read(int fd, struct hyp_output *o)
{
	ssize_t got;

	while (o->n + 1 < sizeof(o->buf) && (got = read(fd, o->buf + o->n, sizeof(o->buf) - 1 - o->n)) > 0)
		o->n += (size_t)got;
	o->buf[o->n] = '\0';
}

/* On success every line is a notice; on failure they are the error. */
static void hyp_output_deliver(const struct lodge *lg, struct hyp_output *o, bool failed, struct lodge_err *err)
{
	char *line, *save = NULL, *text = o->buf;
	size_t len, i, k;

	/* A line ending in \r\n (lodge-hyp's for a terminal in raw mode, never
	 * a pipe like this one, but a lodge-hyp of an older build): plain here. */
	for (i = k = 0; i < o->n; i++)
		if (o->buf[i] != '\r' || (i + 1 < o->n && o->buf[i + 1] != '\n'))
			o->buf[k++] = o->buf[i];
	o->n = k;
	o->buf[k] = '\0';
	while (o->n && o->buf[o->n - 1] == '\n')
		o->buf[--o->n] = '\0';
	if (failed) {
		len = strlen(text);
		/* The error is the last line: keep the end of a long story. */
		if (len >= LODGE_ERR_MAX) {
			char *nl;

			text += len - (LODGE_ERR_MAX - 1);
			if ((nl = strchr(text, '\n')))
				text = nl + 1;
		}
		if (err) {
			snprintf(err->msg, sizeof(err->msg), "%.*s", LODGE_ERR_MAX - 1, text);
			err->from_hyp = true;
		}
		return;
	}
	for (line = strtok_r(o->buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (lg->notice)
			lg->notice(LODGE_NOTICE_HYP, line, lg->notice_arg);
}

/* The lowest domain id neither a running domain has (used, from a scan)
 * nor another start holds: RUNDIR/.id:N locked, the fd returned in
 * *lock_fd; lodge-hyp inherits it (--id-lock) and holds it for the
 * domain's life, so two creates at once never get the same id.  The id,
 * or -ENOSPC, or -errno.  (':' is in no domain name, so these files are
 * no domain's temporary directory RUNDIR/.NAME.) */
static int id_reserve(const char *rundir, const uint8_t *used, int *lock_fd)
{
	char path[CFG_PATH_MAX + 32];
	unsigned id;
	int fd;

	for (id = 1; id < MAX_DOMAIN_IDS; id++) {
		if (used[id])
			continue;
		snprintf(path, sizeof(path), "%s/.id:%u", rundir, id);
		if ((fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			*lock_fd = fd;
			return (int)id;
		}
		close(fd);
		if (errno != EWOULDBLOCK)
			return -errno;
	}
	return -ENOSPC;
}

/* Each disk of dc opened once (lodge_disk_open) into fds, for lodge-hyp
 * to take as fd=N: it opens no disk by path.  A disk incoming_admit
 * checked must still be the file it checked.  0, or -errno with err and
 * every fd closed. */
static int open_disks(const struct lodge *lg, const struct domain_config *dc, int fds[DOMAIN_DISKS_MAX],
		      struct lodge_err *err)
{
	char real[4096];
	unsigned i;
	int rc = 0;

	for (i = 0; i < DOMAIN_DISKS_MAX; i++)
		fds[i] = -1;
	for (i = 0; !rc && i < dc->ndisks; i++) {
		const struct cfg_disk *d = &dc->disks[i];

		if ((fds[i] = lodge_disk_open(lg, d->path, d->readonly, false, real, err)) < 0)
			rc = fds[i];
		else if (d->checked && strcmp(real, d->path) != 0)
			rc = lodge_fail(err, -EAGAIN, "domain %s: disk %s changed after it was checked (it leads to %s "
					"now): not started", dc->name, d->path, real);
	}
	if (rc)
		for (i = 0; i < DOMAIN_DISKS_MAX; i++)
			if (fds[i] >= 0)
				close(fds[i]);
	return rc;
}

/* Run lodge-hyp --detach and wait for it: its exit status, or -errno.
 * *sig: the signal that killed it, 0 if none. */
static int run_hyp(const char *const *argv, int incoming_fd, int id_lock_fd, const int *disk_fds,
		   struct hyp_output *out, void (*tick)(void *), void *tick_arg, pid_t *pidp, int *sig,
		   struct lodge_err *err)
{
	long next_tick = lodge_now_ms() + 500;
	int outp[2], execp[2], wst, exec_errno = 0, pidfd;
	pid_t pid;

	*sig = 0;
	if (pipe2(outp, O_CLOEXEC) < 0)
		return lodge_fail(err, -errno, "cannot start lodge-hyp: %s", strerror(errno));
	if (pipe2(execp, O_CLOEXEC) < 0) {
		int e = errno;

		close(outp[0]);
		close(outp[1]);
		return lodge_fail(err, -e, "cannot start lodge-hyp: %s", strerror(e));
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(outp[0]); close(outp[1]); close(execp[0]); close(execp[1]);
		return lodge_fail(err, -e, "cannot start lodge-hyp: %s", strerror(e));
	}
	if (pid == 0) {
		int e;

		dup2(outp[1], STDERR_FILENO);           /* dup2 clears close-on-exec */
		if (incoming_fd >= 0)
			fcntl(incoming_fd, F_SETFD, 0); /* the stream is lodge-hyp's to read */
		fcntl(id_lock_fd, F_SETFD, 0);          /* the id's lock is lodge-hyp's to hold */
		for (unsigned i = 0; i < DOMAIN_DISKS_MAX; i++)
			if (disk_fds[i] >= 0)
				fcntl(disk_fds[i], F_SETFD, 0);   /* the disks too (fd=N) */
		execvp(argv[0], (char *const *)argv);
		e = errno;
		if (write(execp[1], &e, sizeof(e)) < 0) {
			/* the parent sees EOF and a status of 127 */
		}
		_exit(127);
	}
	*pidp = pid;
	close(outp[1]);
	close(execp[1]);
	fcntl(outp[0], F_SETFL, O_NONBLOCK);
	/* Woken by its exit itself where the kernel can say (a pidfd), so a
	 * create returns the moment lodge-hyp does; else polled. */
	pidfd = pidfd_open(pid, 0);
	/* Read as it comes: lodge-hyp must never block on a full pipe, and a
	 * warning is worth seeing while a long restore runs.  Its processes
	 * may keep the pipe past the exit of the one we wait for, so the
	 * wait ends at that exit, not at end of file. */
	for (bool out_open = true;;) {
		/* A pipe at its end (or a full buffer) would wake us at once: then only the exit. */
		struct pollfd p[2] = { { pidfd, POLLIN, 0 }, { out_open ? outp[0] : -1, POLLIN, 0 } };
		pid_t w;

		hyp_output_read(outp[0], out);
		if ((w = waitpid(pid, &wst, WNOHANG)) == pid || (w < 0 && errno != EINTR))
			break;
		if (poll(p, 2, 50) > 0 && (p[1].revents & (POLLHUP | POLLERR) || out->n + 1 >= sizeof(out->buf)))
			out_open = false;
		if (tick && lodge_now_ms() >= next_tick) {
			tick(tick_arg);
			next_tick += 500;
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	hyp_output_read(outp[0], out);
	close(outp[0]);
	if (read(execp[0], &exec_errno, sizeof(exec_errno)) != sizeof(exec_errno))
		exec_errno = 0;
	close(execp[0]);
	if (exec_errno)
		return lodge_fail(err, -exec_errno, "cannot run %s: %s", argv[0], strerror(exec_errno));
	if (WIFSIGNALED(wst)) {
		*sig = WTERMSIG(wst);
		return -EINTR;
	}
	return WIFEXITED(wst) ? WEXITSTATUS(wst) : -ECHILD;
}

int lodge_start(const struct lodge *lg, const struct domain_config *dc, bool paused, int incoming_fd,
		struct lodge_err *err)
{
	return lodge_start_ticking(lg, dc, paused, incoming_fd, NULL, NULL, err);
}

/* A vif on a Lodge network joins its bridge, and its MAC gets the
 * network's fixed address for it: *out is a copy of dc with the bridges
 * filled in (to free), or NULL if no vif names a network. */
static int resolve_networks(const struct lodge *lg, const struct domain_config *dc, struct domain_config **out,
			    struct lodge_err *err)
{
	struct domain_config *r = NULL;
	char addr[16];
	uint8_t mac[6];
	unsigned i;
	int rc;

	*out = NULL;
	for (i = 0; i < dc->nvifs; i++) {
		if (!dc->vifs[i].network[0] || dc->vifs[i].bridge[0])
			continue;
		if (!r) {
			if (!(r = malloc(sizeof(*r))))
				return lodge_fail(err, -ENOMEM, "%s", strerror(ENOMEM));
			*r = *dc;
			*out = r;
		}
		lodge_vif_mac(dc, i, mac);
		if ((rc = net_vif_attach(lg, dc->vifs[i].network, dc->name, mac, r->vifs[i].bridge, addr, err))) {
			free(r);
			*out = NULL;
			return rc;
		}
	}
	return 0;
}

int lodge_start_ticking(const struct lodge *lg, const struct domain_config *dc, bool paused, int incoming_fd,
			void (*tick)(void *arg), void *tick_arg, struct lodge_err *err)
{
	const struct host_config *hc = &lg->hc;
	uint8_t used[MAX_DOMAIN_IDS] = { 1 };      /* id 0 is Domain-0, the host */
	char path[CFG_PATH_MAX + 80], why[CFG_PATH_MAX + 200];
	struct hyp_output *out = NULL;
	struct hyp_args *args = NULL;
	struct domain_config *resolved = NULL;
	struct lodge_status st;
	unsigned nextid, i;
	pid_t pid = -1;
	int rc, sig, id_lock = -1;

	if (lodge_status_of(lg, dc->name, &st) == 0)
		return lodge_fail(err, -EEXIST, "domain %s is already running (id %u)", dc->name, st.id);
	lodge_scan(lg, mark_id, used);
	if (dc->nvifs) {
		struct mac_check m = { lg, dc, "" };

		lodge_scan(lg, check_macs, &m);
		if (m.clash[0])
			return lodge_fail(err, -EEXIST, "domain %s: a MAC of its vifs is already used by domain %s",
					  dc->name, m.clash);
	}
	if ((rc = resolve_networks(lg, dc, &resolved, err)))
		return rc;
	if (resolved)
		dc = resolved;
	if ((rc = lodge_runtime_dir_create(hc->runtime_dir))) {
		free(resolved);
		return lodge_fail(err, rc, "cannot create %s: %s", hc->runtime_dir, strerror(-rc));
	}
	if ((rc = id_reserve(hc->runtime_dir, used, &id_lock)) < 0) {
		free(resolved);
		if (rc == -ENOSPC)
			return lodge_fail(err, rc, "domain %s: all %u domain ids are in use", dc->name,
					  (unsigned)MAX_DOMAIN_IDS - 1);
		return lodge_fail(err, rc, "domain %s: cannot reserve a domain id in %s: %s", dc->name,
				  hc->runtime_dir, strerror(-rc));
	}
	nextid = (unsigned)rc;
	if (!(args = malloc(sizeof(*args))) || !(out = calloc(1, sizeof(*out)))) {
		free(args);
		free(resolved);
		close(id_lock);
		return lodge_fail(err, -ENOMEM, "%s", strerror(ENOMEM));
	}
	if ((rc = open_disks(lg, dc, args->disk_fds, err))) {
		free(args);
		free(out);
		free(resolved);
		close(id_lock);
		return rc;
	}
	hyp_args_build(args, hc, dc, nextid, id_lock, paused, incoming_fd);
	/* lodge-hyp --detach returns once the domain runs, having said why
	 * otherwise; it leaves nothing behind on failure. */
	rc = run_hyp(args->argv, incoming_fd, id_lock, args->disk_fds, out, tick, tick_arg, &pid, &sig, err);
	close(id_lock);         /* lodge-hyp holds it now, or it is free again */
	for (i = 0; i < dc->ndisks; i++)
		close(args->disk_fds[i]);       /* the same */
	if (rc > 0 || rc == -EINTR || rc == -ECHILD) {
		/* Its exit status says lodge-hyp spoke; a signal, that it could not. */
		if (sig)
			lodge_fail(err, -EIO, "domain %s did not start: its lodge-hyp (pid %d) was killed by signal %s",
				   dc->name, (int)pid, strsignal(sig));
		else if (out->n)
			hyp_output_deliver(lg, out, true, err);
		else
			lodge_fail(err, -EIO, "domain %s did not start (lodge-hyp exited with status %d)", dc->name, rc);
		/* What a start that died may leave: only a socket that refuses
		 * proves every process of it is gone (none at all may be a
		 * start still under way: only its caller was killed). */
		{
			int fd = client_connect(hc->runtime_dir, dc->name);

			if (fd >= 0)
				close(fd);
			if (fd == -ECONNREFUSED)
				lodge_remove_stale(lg, dc->name, true);
		}
		rc = -EIO;
	} else if (rc == 0) {
		hyp_output_deliver(lg, out, false, err);
		runtime_path(path, sizeof(path), hc->runtime_dir, dc->name, RT_CONFIG);
		if (lodge_keep_config(lg, path, dc, why, sizeof(why)))
			lodge_warn(lg, "cannot keep the resolved config: %s", why);
	}
	free(args);
	free(out);
	free(resolved);
	return rc;
}

int lodge_create(const struct lodge *lg, const struct domain_config *dc, unsigned flags, struct lodge_err *err)
{
	const char *note = pvm_linux_note_here(dc->kernel, dc->bootloader);

	if (note)
		lodge_warn(lg, "%s: %s", dc->name, note);
	return lodge_start(lg, dc, flags & LODGE_CREATE_PAUSED, -1, err);
}

struct network_report {
	void (*fn)(const char *name, const struct lodge_err *err, void *arg);
	void *arg;
};

/* A network's outcome as a line of the domains': "network NAME". */
static void network_started(const char *name, const struct lodge_err *err, void *arg)
{
	const struct network_report *r = arg;
	char label[NETWORK_NAME_MAX + 16];

	snprintf(label, sizeof(label), "network %s", name);
	r->fn(label, err, r->arg);
}

int lodge_autostart(const struct lodge *lg, void (*fn)(const char *name, const struct lodge_err *err, void *arg),
		    void *arg)
{
	static struct domain_config dc;
	struct network_report nr = { fn, arg };
	struct lodge_status st;
	struct lodge_err err;
	struct dirent *de;
	char path[CFG_PATH_MAX + 300];
	/* The networks first: their domains' vifs join their bridges. */
	int failed = lodge_network_autostart(lg, network_started, &nr);
	DIR *d = opendir(lg->hc.domains_dir);

	if (!d)
		return failed;      /* no domains configured */
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len < 5 || strcmp(de->d_name + len - 4, ".cfg") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", lg->hc.domains_dir, de->d_name);
		if (lodge_config_find(lg, path, &dc, &err)) {
			fn(de->d_name, &err, arg);
			failed++;
			continue;
		}
		if (!dc.autostart || lodge_status_of(lg, dc.name, &st) == 0)
			continue;
		if (lodge_saved_state(lg, dc.name, path, sizeof(path))) {
			lodge_fail(&err, -EEXIST, "domain %s is not started afresh: %s holds its saved state "
				   "(lodge restore it, or remove it to boot the domain anew)", dc.name, path);
			fn(dc.name, &err, arg);
			failed++;
			continue;
		}
		if (lodge_create(lg, &dc, 0, &err)) {
			fn(dc.name, &err, arg);
			failed++;
			continue;
		}
		fn(dc.name, NULL, arg);
	}
	closedir(d);
	return failed;
}

bool lodge_saved_state(const struct lodge *lg, const char *name, char *file, size_t len)
{
	struct stat st;

	snprintf(file, len, "%s/%s" SAVE_SUFFIX, lg->hc.save_dir, name);
	return stat(file, &st) == 0;
}
