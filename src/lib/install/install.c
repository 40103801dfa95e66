/* lodge install (lodge.h): a Debian guest's disk, a clone of its
 * distribution's template (built first if there is none), and its
 * config.  Every check comes first; then the template, the clone, the
 * seed and the config, each made unnamed or under a temporary name and
 * named last, the config after the disk: a guest is there when its config
 * is, and not before its disk is whole.  A job's progress is reported
 * through one hook (job_*), which the dashboard will drive as the
 * command line does. */
#include "install.h"
#include "default-guest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config-keys.h"
#include "seed.h"

/* ---- a job's progress -------------------------------------------------------------------- */

/* Each phase in words, and its share of a job that has it (a first
 * install spends most of its time in apt). */
static const struct {
	const char *words;
	unsigned weight;
} phases[LODGE_NPHASES] = {
	[LODGE_PHASE_CHECK] = { "checking", 0 },
	[LODGE_PHASE_UPDATE] = { "updating the package lists", 4 },
	[LODGE_PHASE_FETCH] = { "fetching packages", 10 },
	[LODGE_PHASE_UNPACK] = { "unpacking packages", 6 },
	[LODGE_PHASE_CONFIGURE] = { "configuring packages", 6 },
	[LODGE_PHASE_INSTALL] = { "installing the kernel, ssh, cloud-init", 50 },
	[LODGE_PHASE_IMAGE] = { "making the template's image", 10 },
	[LODGE_PHASE_CLONE] = { "cloning the template", 10 },
	[LODGE_PHASE_FILESYSTEM] = { "growing the filesystem, a fresh UUID", 4 },
	[LODGE_PHASE_SEED] = { "writing the seed disk", 1 },
	[LODGE_PHASE_CONFIG] = { "writing the config", 0 },
	[LODGE_PHASE_DONE] = { "done", 0 },
};

const char *lodge_phase_words(enum lodge_phase p)
{
	return (unsigned)p < LODGE_NPHASES ? phases[p].words : "?";
}

void job_init(struct job *j, unsigned mask, lodge_job_fn *fn, void *arg)
{
	memset(j, 0, sizeof(*j));
	j->fn = fn;
	j->arg = arg;
	j->phases = mask;
	j->phase = LODGE_PHASE_CHECK;
	j->phase_pct = -1;
}

static int job_pct(const struct job *j)
{
	unsigned total = 0, done = 0, p;

	for (p = 0; p < LODGE_NPHASES; p++) {
		if (!(j->phases & PHASE_BIT(p)))
			continue;
		total += phases[p].weight;
		if (p < j->phase)
			done += phases[p].weight * 100;
		else if (p == j->phase && j->phase_pct > 0)
			done += phases[p].weight * (unsigned)j->phase_pct;
	}
	if (j->phase == LODGE_PHASE_DONE)
		return 100;
	return total ? (int)(done / total) : 0;
}

bool job_report(struct job *j, enum lodge_phase phase, int pct, const char *note)
{
	struct lodge_job_progress p;

	if (j->cancelled)
		return false;
	/* Forward only: a bar that starts again within a phase (mmdebstrap
	 * draws one per step) does not move the job back. */
	if (phase > j->phase) {
		j->phase = phase;
		j->phase_pct = -1;
	} else if (phase < j->phase) {
		pct = -1;                 /* a late word of a phase that is over */
	}
	if (pct > j->phase_pct)
		j->phase_pct = pct > 100 ? 100 : pct;
	j->last_ms = lodge_now_ms();
	if (!j->fn)
		return true;
	p = (struct lodge_job_progress){ j->phase, j->phase_pct, job_pct(j), note };
	if (!j->fn(&p, j->arg))
		j->cancelled = true;
	return !j->cancelled;
}

bool job_tick(void *arg)
{
	struct job *j = arg;

	if (j->cancelled)
		return false;
	if (lodge_now_ms() - j->last_ms < 200)
		return true;
	return job_report(j, j->phase, -1, NULL);
}

int job_cancelled(struct lodge_err *err)
{
	return lodge_fail(err, -ECANCELED, "cancelled");
}

/* ---- the config ------------------------------------------------------------------------- */

/* The domain's config as text into res->config_text. */
/* The guest's vif: on a bridge, a Lodge network (network=NAME), or with
 * neither the default network, as libvirt's: a guest installed with no
 * network option has an address and a way out. */
static void vif_spec(const struct lodge *lg, const struct lodge_install_opts *o, char *vif, size_t len)
{
	if (o->bridge)
		snprintf(vif, len, "bridge=%s", o->bridge);
	else
		snprintf(vif, len, "network=%s", o->network ? o->network : LODGE_NETWORK_DEFAULT);
}

static int config_text(const struct lodge *lg, const struct lodge_install_opts *o, const char *dist,
		       const struct clone_target *c, struct lodge_install_result *res)
{
	char *text = NULL, disk[CFG_PATH_MAX + 32], vif[NETWORK_NAME_MAX + IFNAMSIZ + 16];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	fprintf(f, "# %s: Debian %s (%s), installed by lodge install.\n", o->name, dist, host_arch());
	fprintf(f, "# Its kernel and initrd are read from its own disk at each start.\n");
	fprintf(f, "name = ");
	cfg_put_string(f, o->name);
	fprintf(f, "\nmemory = %u\nvcpus = %u\nbootloader = \"lodge\"\n",
		o->memory_mib ? o->memory_mib : LODGE_INSTALL_MEMORY_DEFAULT, o->vcpus ? o->vcpus : 1);
	snprintf(disk, sizeof(disk), "%s:%s,vda,w", c->partition ? "phy" : "file", c->path);
	fprintf(f, "disk = [ ");
	cfg_put_string(f, disk);
	if (res->seed[0]) {
		if (lodge_seed_disk_line(res->seed, NULL, disk, sizeof(disk), NULL)) {
			fclose(f);
			free(text);
			return -EINVAL;     /* checked before (check_options) */
		}
		fprintf(f, ", ");
		cfg_put_string(f, disk);
	}
	vif_spec(lg, o, vif, sizeof(vif));
	fprintf(f, " ]\nvif = [ ");
	cfg_put_string(f, vif);
	fprintf(f, " ]\n");
	if (fclose(f) || !text || len >= sizeof(res->config_text)) {
		free(text);
		return -ENOMEM;
	}
	memcpy(res->config_text, text, len + 1);
	free(text);
	return 0;
}

/* Write the config, checked as lodge create reads it, unnamed and then
 * named (never over another's). */
static int config_write(const struct lodge *lg, struct lodge_install_result *res, struct lodge_err *err)
{
	static struct domain_config dc;
	char why[LODGE_ERR_MAX - 64], proc[64], dir[CFG_PATH_MAX];
	size_t len = strlen(res->config_text);
	int fd, rc;

	if ((rc = domain_config_load_text(res->config, res->config_text, len, &lg->hc, false, &dc, why, sizeof(why))))
		return lodge_fail(err, rc, "the config lodge install wrote does not load: %s", why);
	if ((rc = mkdirs(lg->hc.domains_dir, DIR_MODE_PUBLIC, NULL, 0)))
		return lodge_fail(err, rc, "cannot make %s: %s", lg->hc.domains_dir, strerror(-rc));
	snprintf(dir, sizeof(dir), "%s", lg->hc.domains_dir);
	if ((fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644)) < 0)
		return lodge_fail(err, -errno, "cannot write in %s: %s", dir, strerror(errno));
	if (fchmod(fd, 0644) < 0 || write(fd, res->config_text, len) != (ssize_t)len || fsync(fd) < 0) {
		rc = errno ? -errno : -EIO;
		close(fd);
		return lodge_fail(err, rc, "cannot write %s: %s", res->config, strerror(-rc));
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	rc = linkat(AT_FDCWD, proc, AT_FDCWD, res->config, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
	close(fd);
	if (rc)
		return lodge_fail(err, rc, "cannot write %s: %s", res->config,
				  rc == -EEXIST ? "a config of that name appeared meanwhile" : strerror(-rc));
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(fd);
		close(fd);
	}
	return 0;
}

/* ---- the checks ---------------------------------------------------------------------------- */

/* A setting as the config would have it: 0, or -errno with the config's message. */
static int check_key(const struct lodge *lg, const char *key, const char *value, const char *option,
		     bool check_host, struct lodge_err *err)
{
	char why[LODGE_ERR_MAX - 64];
	int rc = domain_key_check(key, value, &lg->hc, check_host, why, sizeof(why));

	return rc ? lodge_fail(err, rc, "%s: %s", option, why) : 0;
}

static int check_readable(const char *file, const char *option, struct lodge_err *err)
{
	struct stat sb;
	int fd;

	if (!file)
		return 0;
	if ((fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return lodge_fail(err, -errno, "%s %s: %s", option, file, strerror(errno));
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return lodge_fail(err, -EINVAL, "%s %s: not a regular file", option, file);
	}
	close(fd);
	return 0;
}

/* The guest's own settings, for its cloud-init seed disk (seed.h): the
 * hostname is its name, and a fresh instance-id makes cloud-init treat
 * the clone as a new machine. */
static struct lodge_seed seed_of(const struct lodge_install_opts *o)
{
	return (struct lodge_seed){ .name = o->name, .ssh_key_file = o->ssh_key_file,
				    .password_file = o->password_file, .packages = o->packages,
				    .user_data_file = o->user_data_file };
}

static int check_options(const struct lodge *lg, const struct lodge_install_opts *o, struct lodge_err *err)
{
	char value[64], vif[NETWORK_NAME_MAX + IFNAMSIZ + 16], why[256];
	int rc;

	if ((rc = check_key(lg, "name", o->name ? o->name : "", "the name", false, err)))
		return rc;
	snprintf(value, sizeof(value), "%u", o->memory_mib ? o->memory_mib : LODGE_INSTALL_MEMORY_DEFAULT);
	if ((rc = check_key(lg, "memory", value, "--memory", false, err)))
		return rc;
	snprintf(value, sizeof(value), "%u", o->vcpus ? o->vcpus : 1);
	if ((rc = check_key(lg, "vcpus", value, "--vcpus", false, err)))
		return rc;
	if (o->bridge && o->network)
		return lodge_fail(err, -EINVAL, "--bridge and --network: a vif is on one or the other");
	if (o->bridge && (rc = ifname_check(o->bridge, why, sizeof(why))))
		return lodge_fail(err, rc, "--bridge: %s", why);
	if (o->network && !network_name_valid(o->network))
		return lodge_fail(err, -EINVAL, "--network: '%.40s' is not a network name (%s)", o->network,
				  network_name_rule());
	/* A bridge or a network named must be there (as lodge create will
	 * want them); the default network is made on first use. */
	vif_spec(lg, o, vif, sizeof(vif));
	if ((rc = check_key(lg, "vif", vif, o->network ? "--network" : o->bridge ? "--bridge" : "the default network",
			    o->network || o->bridge, err)))
		return rc;
	if ((rc = check_readable(o->ssh_key_file, "--ssh-key", err)) ||
	    (rc = check_readable(o->password_file, "--password-file", err)) ||
	    (rc = check_readable(o->user_data_file, "--user-data", err)))
		return rc;
	/* The seed's every check (keys, password, packages, user-data and
	 * cloud-init schema), nothing written. */
	{
		struct lodge_seed s = seed_of(o);
		char path[CFG_PATH_MAX], line[CFG_PATH_MAX + 16];

		if ((rc = lodge_seed_path(lg, o->name, path, sizeof(path), err)) ||
		    (rc = lodge_seed_disk_line(path, NULL, line, sizeof(line), err)))
			return rc;
		return lodge_seed_check(&s, err);
	}
}

/* ---- sizes ------------------------------------------------------------------------------------- */

int lodge_parse_mib(const char *arg, unsigned long *mib)
{
	static const char units[] = "bkmgt";
	unsigned long long n, bytes;
	const char *u;
	char *end;
	int shift;

	if (!arg[0] || arg[0] < '0' || arg[0] > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(arg, &end, 10);
	if (errno)
		return -EINVAL;
	if (!*end)
		shift = 20;
	else if (!end[1] && (u = strchr(units, end[0] | 0x20)))
		shift = 10 * (int)(u - units);
	else
		return -EINVAL;
	if (n > (~0ULL >> shift))
		return -EINVAL;
	bytes = n << shift;
	if (bytes % (1ULL << 20) || bytes >> 20 > 0xffffffffULL)
		return -EINVAL;
	*mib = (unsigned long)(bytes >> 20);
	return 0;
}

/* ---- the install ----------------------------------------------------------------------------- */

int lodge_install(const struct lodge *lg, const struct lodge_install_opts *o, struct lodge_install_result *res,
		  struct lodge_err *err)
{
	static struct clone_target c;
	struct lodge_template *t = &res->tmpl;
	const char *dist = o->dist ? o->dist : LODGE_DIST_DEFAULT;
	char disk[CFG_PATH_MAX];
	long t0 = lodge_now_ms(), t1;
	struct stat sb;
	struct job j;
	int rc, seed_fd = -1;

	memset(res, 0, sizeof(*res));
	job_init(&j, JOB_TEMPLATE_PHASES | PHASE_BIT(LODGE_PHASE_CLONE) | PHASE_BIT(LODGE_PHASE_FILESYSTEM) |
			     PHASE_BIT(LODGE_PHASE_SEED) | PHASE_BIT(LODGE_PHASE_CONFIG),
		 o->progress, o->arg);

	/* Every check, before anything is written. */
	if ((rc = check_options(lg, o, err)))
		return rc;
	if (!o->dry_run && pvm_linux_note_here(NULL, true))
		lodge_warn(lg, "%s: %s", o->name, pvm_linux_note_here(NULL, true));
	if ((size_t)snprintf(res->config, sizeof(res->config), "%s/%s.cfg", lg->hc.domains_dir, o->name) >=
	    sizeof(res->config))
		return lodge_fail(err, -ENAMETOOLONG, "the config's path is too long");
	if (lstat(res->config, &sb) == 0)
		return lodge_fail(err, -EEXIST, "domain %s has a config already (%s)", o->name, res->config);
	if (o->disk)
		snprintf(disk, sizeof(disk), "%s", o->disk);
	else if ((size_t)snprintf(disk, sizeof(disk), "%s/%s.img", lg->hc.image_dir, o->name) >= sizeof(disk))
		return lodge_fail(err, -ENAMETOOLONG, "the disk's path is too long");
	rc = lodge_template_get(lg, dist, t, err);
	if (rc && rc != -ENOENT)
		return rc;
	res->template_built = rc == -ENOENT;
	if (res->template_built) {
		/* Its size is known once it is built: the rest now, the size then. */
		struct lodge_template none = { .bytes = 0 };

		snprintf(none.dist, sizeof(none.dist), "%s", dist);
		rc = clone_check(lg, &none, disk, o->size, !o->disk, &c, err);
	} else {
		j.phases &= ~JOB_TEMPLATE_PHASES;
		rc = clone_check(lg, t, disk, o->size, !o->disk, &c, err);
	}
	if (rc)
		return rc;
	snprintf(res->disk, sizeof(res->disk), "%s", c.path);
	res->disk_bytes = c.bytes;
	res->is_partition = c.partition;
	if ((rc = config_text(lg, o, dist, &c, res)))
		return lodge_fail(err, rc, "cannot write the config: %s", strerror(-rc));
	/* The default network: a subnet free for it, or there already. */
	if (!o->network && !o->bridge && (rc = lodge_network_default(lg, true, &res->net, err)))
		return rc;
	if (o->dry_run)
		return 0;
	if (!job_report(&j, LODGE_PHASE_CHECK, 100, NULL))
		return job_cancelled(err);
	/* Made (or started) first: the host's, outliving this install if it
	 * fails, as libvirt's default network does. */
	if (!o->network && !o->bridge && (res->net.created || res->net.started) &&
	    (rc = lodge_network_default(lg, false, &res->net, err)))
		return rc;
	/* The image directory even for a disk elsewhere: the seed is made there. */
	if ((rc = mkdirs(lg->hc.image_dir, DIR_MODE_PUBLIC, NULL, 0)))
		return lodge_fail(err, rc, "cannot make %s: %s", lg->hc.image_dir, strerror(-rc));

	/* The template, if there is none. */
	if (res->template_built) {
		bool built;

		if ((rc = template_ensure(lg, dist, &j, t, &built, err)))
			return rc;
		res->template_built = built;
		res->template_ms = lodge_now_ms() - t0;
		if ((rc = clone_check(lg, t, disk, o->size, false, &c, err)))
			return rc;
		res->disk_bytes = c.bytes;
	}
	/* The disk, unnamed until the config is ready. */
	t1 = lodge_now_ms();
	if ((rc = clone_make(t, &c, &j, err))) {
		clone_abandon(&c, false);
		return rc;
	}
	res->clone_ms = lodge_now_ms() - t1;
	snprintf(res->uuid, sizeof(res->uuid), "%s", c.uuid);
	/* The seed, unnamed too, and the config now with its disk. */
	if (!job_report(&j, LODGE_PHASE_SEED, 0, NULL)) {
		clone_abandon(&c, false);
		return job_cancelled(err);
	}
	{
		struct lodge_seed s = seed_of(o);

		if ((rc = lodge_seed_path(lg, o->name, res->seed, sizeof(res->seed), err)) ||
		    (rc = lodge_seed_build_fd(&s, res->seed, &seed_fd, err))) {
			clone_abandon(&c, false);
			return rc;
		}
	}
	if ((rc = config_text(lg, o, dist, &c, res))) {
		close(seed_fd);
		clone_abandon(&c, false);
		return lodge_fail(err, rc, "cannot write the config: %s", strerror(-rc));
	}
	if (!job_report(&j, LODGE_PHASE_CONFIG, 0, NULL)) {
		close(seed_fd);
		clone_abandon(&c, false);
		return job_cancelled(err);
	}
	/* Named last: the disk, its seed, then the config that makes it a
	 * guest. */
	if ((rc = clone_commit(&c, err))) {
		close(seed_fd);
		clone_abandon(&c, false);
		return rc;
	}
	rc = lodge_seed_name(seed_fd, res->seed, err);
	close(seed_fd);
	if (rc) {
		clone_abandon(&c, true);
		return rc;
	}
	if ((rc = config_write(lg, res, err))) {
		unlink(res->seed);
		clone_abandon(&c, true);
		return rc;
	}
	res->total_ms = lodge_now_ms() - t0;
	job_report(&j, LODGE_PHASE_DONE, 100, NULL);
	return 0;
}
