/* Templates (lodge.h): one ext4 image per distribution and architecture,
 * ROOT/var/lib/lodge/templates/DIST-ARCH.img with DIST-ARCH.info beside
 * it.  A build runs mmdebstrap (root mode) into a directory, then makes
 * the image with mkfs.ext4 -d: no loop device, no mount, nothing of the
 * host's held while it runs (mmdebstrap straight into a mounted image
 * would save the copy, a few seconds, at the price of a loop device and a
 * mount to leak).  Builds take one lock, which mmdebstrap inherits: a
 * build whose lodge was killed still holds it until its mmdebstrap ends,
 * and a directory .build-* found under the lock is a dead build's. */
#include "install.h"
#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define TEMPLATES_SUBDIR "/var/lib/lodge/templates"
#define CACHE_SUBDIR     "/var/cache/lodge"
#define BUILD_PREFIX     ".build-"
#define LOCK_FILE        ".lock"
/* The image: what the tree holds, a quarter more, and room for ext4's own
 * (inode tables, journal, reserved blocks), in whole 64 MiB. */
#define IMAGE_SLACK_BYTES (320ull << 20)
#define IMAGE_ROUND_BYTES (64ull << 20)

int template_dir(char *out, size_t len)
{
	return (size_t)snprintf(out, len, "%s%s", cfg_root(), TEMPLATES_SUBDIR) < len ? 0 : -ENAMETOOLONG;
}

int template_cache_dir(char *out, size_t len)
{
	return (size_t)snprintf(out, len, "%s%s", cfg_root(), CACHE_SUBDIR) < len ? 0 : -ENAMETOOLONG;
}

static int remove_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int remove_tree(const char *path)
{
	if (nftw(path, remove_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0)
		return errno == ENOENT ? 0 : -errno;
	return 0;
}

/* ---- what a template is --------------------------------------------------------------- */

static void fill_from_info(struct lodge_template *t, const char *info)
{
	FILE *f = fopen(info, "re");
	char line[512], *v;

	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!(v = strchr(line, '=')))
			continue;
		*v++ = '\0';
		if (!strcmp(line, "dist"))
			snprintf(t->dist, sizeof(t->dist), "%s", v);
		else if (!strcmp(line, "arch"))
			snprintf(t->arch, sizeof(t->arch), "%s", v);
		else if (!strcmp(line, "kernel"))
			snprintf(t->kernel, sizeof(t->kernel), "%s", v);
		else if (!strcmp(line, "built"))
			t->built = strtoll(v, NULL, 10);
		else if (!strcmp(line, "build_seconds"))
			t->build_s = strtol(v, NULL, 10);
	}
	if (f)
		fclose(f);
}

/* The template named NAME (DIST-ARCH) in dir: 0, or -errno. */
static int template_read(const char *dir, const char *name, struct lodge_template *t)
{
	char info[CFG_PATH_MAX + 80];
	const char *dash = strrchr(name, '-');
	struct stat sb;

	memset(t, 0, sizeof(*t));
	if ((size_t)snprintf(t->path, sizeof(t->path), "%s/%s.img", dir, name) >= sizeof(t->path))
		return -ENAMETOOLONG;
	if (stat(t->path, &sb) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return -EINVAL;
	snprintf(t->name, sizeof(t->name), "%s", name);
	if (dash) {
		snprintf(t->dist, sizeof(t->dist), "%.*s", (int)(dash - name), name);
		snprintf(t->arch, sizeof(t->arch), "%s", dash + 1);
	}
	t->bytes = (uint64_t)sb.st_size;
	t->used_bytes = (uint64_t)sb.st_blocks * 512;
	snprintf(info, sizeof(info), "%s/%s.info", dir, name);
	fill_from_info(t, info);
	return 0;
}

static const struct dist_info *known_dist(const char *dist, struct lodge_err *err)
{
	const struct dist_info *d = dist_find(dist);

	if (!d)
		lodge_fail(err, -EINVAL, "unknown distribution '%s' (Lodge knows %s)", dist ? dist : "", dist_known());
	return d;
}

int lodge_template_get(const struct lodge *lg, const char *dist, struct lodge_template *t, struct lodge_err *err)
{
	char dir[CFG_PATH_MAX], name[LODGE_DIST_MAX + 16];
	int rc;

	if (!known_dist(dist, err))
		return -EINVAL;
	if (template_dir(dir, sizeof(dir)))
		return lodge_fail(err, -ENAMETOOLONG, "the templates' directory's path is too long");
	snprintf(name, sizeof(name), "%s-%s", dist, host_arch());
	if ((rc = template_read(dir, name, t)) == -ENOENT)
		return lodge_fail(err, rc, "there is no %s template yet (lodge template-update %s builds it)", dist,
				  dist);
	if (rc)
		return lodge_fail(err, rc, "cannot read the %s template %s: %s", dist, t->path, strerror(-rc));
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct lodge_template *)a)->name, ((const struct lodge_template *)b)->name);
}

int lodge_template_list(const struct lodge *lg, struct lodge_template *out, unsigned max, struct lodge_err *err)
{
	char dir[CFG_PATH_MAX], name[LODGE_DIST_MAX + 16];
	struct lodge_template t;
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	if (template_dir(dir, sizeof(dir)))
		return lodge_fail(err, -ENAMETOOLONG, "the templates' directory's path is too long");
	if (!(d = opendir(dir)))
		return errno == ENOENT ? 0 : lodge_fail(err, -errno, "cannot read %s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' || len < 5 || len - 4 >= sizeof(name) || strcmp(de->d_name + len - 4, ".img"))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(len - 4), de->d_name);
		if (template_read(dir, name, &t) == 0 && n++ < max)
			out[n - 1] = t;
	}
	closedir(d);
	qsort(out, n < max ? n : max, sizeof(*out), by_name);
	return (int)n;
}

/* ---- the build's lock ------------------------------------------------------------------- */

/* The builds' lock, taken (waiting, cancellably, for a build under way):
 * its descriptor, or -errno with why. */
static int build_lock(const char *dir, struct job *j, struct lodge_err *err)
{
	char path[CFG_PATH_MAX + 16];
	int fd, rc;

	if ((rc = mkdirs(dir, DIR_MODE_PUBLIC, NULL, 0)))
		return lodge_fail(err, rc, "cannot make %s: %s", dir, strerror(-rc));
	snprintf(path, sizeof(path), "%s/%s", dir, LOCK_FILE);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
		return lodge_fail(err, -errno, "cannot open %s: %s", path, strerror(errno));
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return fd;
		if (errno != EWOULDBLOCK) {
			rc = lodge_fail(err, -errno, "cannot lock %s: %s", path, strerror(errno));
			break;
		}
		if (!job_tick(j)) {
			rc = job_cancelled(err);
			break;
		}
		poll(NULL, 0, TOOL_TICK_MS);
	}
	close(fd);
	return rc;
}

/* Under the lock: what a dead build left. */
/* The tree is built in a tmpfs where one has room: dpkg's writes and
 * fsyncs (it syncs its database after each package) and mkfs.ext4 -d's
 * reads then cost no disk I/O, about a quarter of a build's time (the
 * tree is ~470 MiB; only the image is wanted on disk).  The build
 * directory's "root" is then a symlink to it, so that a dead build's
 * tree is found and removed with it. */
#define TMPFS_DIR       "/dev/shm"
#define TMPFS_PREFIX    TMPFS_DIR "/lodge-template-"
#define TMPFS_MIN_BYTES (2ULL << 30)

/* A build directory, and its tree in the tmpfs if it has one there. */
static void remove_build(const char *work)
{
	char link[CFG_PATH_MAX + 80], to[CFG_PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "%s/root", work);
	n = readlink(link, to, sizeof(to) - 1);
	if (n > 0) {
		to[n] = '\0';
		if (!strncmp(to, TMPFS_PREFIX, strlen(TMPFS_PREFIX)) && !strstr(to, ".."))
			remove_tree(to);
	}
	remove_tree(work);
}

/* tree: a fresh directory in the tmpfs, linked from work/root, if the
 * tmpfs has room and runs programs; else work/root itself. */
static void make_tree(const char *work, char *tree, size_t len)
{
	char link[CFG_PATH_MAX + 80];
	struct statvfs sv;

	snprintf(link, sizeof(link), "%s/root", work);
	if (statvfs(TMPFS_DIR, &sv) == 0 && !(sv.f_flag & (ST_RDONLY | ST_NOEXEC)) &&
	    (unsigned long long)sv.f_bavail * sv.f_frsize >= TMPFS_MIN_BYTES) {
		snprintf(tree, len, "%sXXXXXX", TMPFS_PREFIX);
		if (mkdtemp(tree)) {
			/* 0755: apt drops to its _apt user to download into the tree. */
			if (chmod(tree, 0755) == 0 && symlink(tree, link) == 0)
				return;
			rmdir(tree);
		}
	}
	snprintf(tree, len, "%s", link);
}

static void remove_dead_builds(const char *dir)
{
	char path[CFG_PATH_MAX + 300];
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, BUILD_PREFIX, strlen(BUILD_PREFIX)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		remove_build(path);
	}
	if (d)
		closedir(d);
}

/* ---- mmdebstrap's progress ------------------------------------------------------------------ */

struct build {
	struct job *j;
	char error[512];               /* its first E: line: the cause (the last is mmdebstrap's "failed to run") */
	const char *image;             /* mkfs.ext4: the image being filled */
	uint64_t tree_bytes;           /* ... from a tree of this much */
};

/* Its stage lines, and the bars it draws on a terminal: "downloading:
 * 42.00 [==>  ]". */
static void on_mmdebstrap_line(const char *line, void *arg)
{
	static const struct {
		const char *prefix;
		enum lodge_phase phase;
	} stages[] = {
		{ "I: running apt-get update", LODGE_PHASE_UPDATE },
		{ "I: downloading packages", LODGE_PHASE_FETCH },
		{ "I: extracting archives", LODGE_PHASE_UNPACK },
		{ "I: installing essential packages", LODGE_PHASE_UNPACK },
		{ "I: installing remaining packages", LODGE_PHASE_INSTALL },
	};
	struct build *b = arg;
	enum lodge_phase phase = b->j->phase;
	char word[16];
	double pct;
	size_t i;
	int p;

	if (!strncmp(line, "W: ", 3)) {
		job_report(b->j, phase, b->j->phase_pct, line);
		return;
	}
	if (!strncmp(line, "E: ", 3)) {
		if (!b->error[0])
			snprintf(b->error, sizeof(b->error), "%s", line + 3);
		return;
	}
	for (i = 0; i < sizeof(stages) / sizeof(stages[0]); i++)
		if (!strncmp(line, stages[i].prefix, strlen(stages[i].prefix))) {
			job_report(b->j, stages[i].phase, 0, NULL);
			return;
		}
	if (sscanf(line, "%15[a-z]: %lf", word, &pct) != 2 || pct < 0 || pct > 100)
		return;
	p = (int)pct;
	/* apt's own install of the rest: its download, then its dpkg run. */
	if (phase == LODGE_PHASE_INSTALL)
		p = !strcmp(word, "downloading") ? p / 4 : 25 + p * 3 / 4;
	else if (!strcmp(word, "configuring"))
		phase = LODGE_PHASE_CONFIGURE;
	job_report(b->j, phase, p, NULL);
}

static bool build_tick(void *arg)
{
	return job_tick(((struct build *)arg)->j);
}

/* mkfs.ext4 -d says nothing as it goes: the image's growth does. */
static bool mkfs_tick(void *arg)
{
	struct build *b = arg;
	struct stat sb;
	int pct = -1;

	if (stat(b->image, &sb) == 0 && b->tree_bytes)
		pct = (int)((uint64_t)sb.st_blocks * 512 * 100 / b->tree_bytes);
	return job_report(b->j, LODGE_PHASE_IMAGE, pct > 99 ? 99 : pct, NULL);
}

/* ---- the tree, finished as every guest needs it --------------------------------------------- */

static int put(int root, const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd, rc = 0;

	/* Never through a link the packages left: the tree's own file only. */
	if (unlinkat(root, path, 0) < 0 && errno != ENOENT)
		return -errno;
	if ((fd = openat(root, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		rc = -EIO;
	close(fd);
	return rc;
}

static int link_unit(int root, const char *wants, const char *name, const char *target)
{
	char path[256];

	snprintf(path, sizeof(path), "etc/systemd/system/%s", wants);
	if (mkdirat(root, path, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "etc/systemd/system/%s/%s", wants, name);
	if (unlinkat(root, path, 0) < 0 && errno != ENOENT)
		return -errno;
	return symlinkat(target, root, path) < 0 ? -errno : 0;
}

#define SSH_KEYGEN_UNIT \
	"# lodge install: a clone has no ssh host keys; each makes its own at first boot.\n" \
	"[Unit]\nDescription=SSH host keys of this guest (made at its first boot)\n" \
	"ConditionPathExistsGlob=!/etc/ssh/ssh_host_*_key\nBefore=ssh.service\n\n" \
	"[Service]\nType=oneshot\nExecStart=/usr/bin/ssh-keygen -A\n\n[Install]\nWantedBy=ssh.service\n"
#define HOSTS "127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n" \
	"ff02::1\t\tip6-allnodes\nff02::2\t\tip6-allrouters\n"
#define FSTAB_PLACEHOLDER "# lodge install writes the root filesystem's UUID here in each guest.\n"

/* The newest /boot/vmlinuz-VERSION that has its initrd: 0 with version. */
static int find_kernel(const char *tree, char *version, size_t len, char *why, size_t whylen)
{
	char pattern[CFG_PATH_MAX + 200], initrd[CFG_PATH_MAX + 400];
	struct stat sb;
	glob_t g;
	size_t i;

	version[0] = '\0';
	snprintf(pattern, sizeof(pattern), "%s/boot/vmlinuz-*", tree);
	if (glob(pattern, 0, NULL, &g) != 0) {
		snprintf(why, whylen, "it has no kernel (/boot/vmlinuz-*)");
		return -ENOENT;
	}
	for (i = 0; i < g.gl_pathc; i++) {
		const char *v = strrchr(g.gl_pathv[i], '/') + strlen("/vmlinuz-");

		snprintf(initrd, sizeof(initrd), "%s/boot/initrd.img-%s", tree, v);
		if (stat(initrd, &sb) == 0 && sb.st_size > 0 && strverscmp(v, version) > 0)
			snprintf(version, len, "%s", v);
	}
	globfree(&g);
	if (!version[0]) {
		snprintf(why, whylen, "its kernel has no initrd (/boot/initrd.img-*: initramfs-tools failed?)");
		return -ENOENT;
	}
	return 0;
}

/* What mmdebstrap made, made a template: no host name (cloud-init's),
 * no resolv.conf (DHCP's), no machine-id or ssh host keys (each guest's
 * own at first boot), a getty on the serial console, our build settings
 * gone.  0, or -errno with why. */
static int finish_tree(const char *tree, char *kernel, size_t klen, char *why, size_t whylen)
{
	static const char *const drop[] = {
		"etc/hostname", "etc/resolv.conf", "etc/dpkg/dpkg.cfg.d/99mmdebstrap", "etc/apt/apt.conf.d/99mmdebstrap",
	};
	static const char *const need[] = { "usr/sbin/sshd", "usr/bin/cloud-init" };
	char pattern[CFG_PATH_MAX + 200];
	int root = open(tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;
	glob_t g;
	size_t i;

	if (root < 0) {
		snprintf(why, whylen, "cannot open its tree: %s", strerror(errno));
		return -errno;
	}
	for (i = 0; i < sizeof(need) / sizeof(need[0]) && !rc; i++)
		if (faccessat(root, need[i], X_OK, AT_SYMLINK_NOFOLLOW) < 0) {
			snprintf(why, whylen, "it has no /%s", need[i]);
			rc = -ENOENT;
		}
	for (i = 0; i < sizeof(drop) / sizeof(drop[0]) && !rc; i++)
		if (unlinkat(root, drop[i], 0) < 0 && errno != ENOENT)
			rc = -errno;
	snprintf(pattern, sizeof(pattern), "%s/etc/ssh/ssh_host_*", tree);
	if (!rc && glob(pattern, 0, NULL, &g) == 0) {
		for (i = 0; i < g.gl_pathc; i++)
			unlink(g.gl_pathv[i]);
		globfree(&g);
	}
	if (!rc && ((rc = put(root, "etc/hosts", HOSTS)) || (rc = put(root, "etc/fstab", FSTAB_PLACEHOLDER)) ||
		    (rc = put(root, "etc/machine-id", "")) ||
		    (rc = put(root, "etc/systemd/system/lodge-ssh-keygen.service", SSH_KEYGEN_UNIT)) ||
		    (rc = link_unit(root, "ssh.service.wants", "lodge-ssh-keygen.service",
				    "/etc/systemd/system/lodge-ssh-keygen.service")) ||
		    (rc = link_unit(root, "getty.target.wants", "serial-getty@ttyS0.service",
				    "/lib/systemd/system/serial-getty@.service"))))
		snprintf(why, whylen, "cannot finish its /etc: %s", strerror(-rc));
	if (!rc)
		rc = find_kernel(tree, kernel, klen, why, whylen);
	close(root);
	return rc;
}

static uint64_t tree_total;

static int add_size(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	tree_total += (uint64_t)sb->st_blocks * 512;
	return 0;
}

/* ---- a build ---------------------------------------------------------------------------- */

static int write_info(const char *path, const struct dist_info *dist, const struct lodge_template *t)
{
	FILE *f = fopen(path, "we");
	int rc;

	if (!f)
		return -errno;
	fprintf(f, "dist=%s\narch=%s\nkernel=%s\nbuilt=%lld\nbuild_seconds=%ld\npackages=%s\n", dist->name,
		host_arch(), t->kernel, t->built, t->build_s, dist->packages);
	rc = fflush(f) || fsync(fileno(f)) ? -errno : 0;
	fclose(f);
	return rc;
}

/* Build dist's template in work/ and put it in dir, the lock (lockfd)
 * held.  0 with *t. */
static int build(const char *dir, const char *work, const struct dist_info *dist, const char *mirror,
		 struct job *j, int lockfd, struct lodge_template *t, struct lodge_err *err)
{
	char cache[CFG_PATH_MAX], tree[CFG_PATH_MAX + 80], image[CFG_PATH_MAX + 80], info[CFG_PATH_MAX + 80];
	char name[LODGE_DIST_MAX + 16], dest[CFG_PATH_MAX + 80], why[1024], size_arg[32];
	static struct template_cmd cmd;
	struct build b = { .j = j, .image = image };
	struct tool_run run = { .argv = NULL };
	struct lodge_template made = { .built = (long long)time(NULL) };
	long t0 = lodge_now_ms();
	uint64_t bytes;
	int rc;

	snprintf(name, sizeof(name), "%s-%s", dist->name, host_arch());
	if (template_cache_dir(cache, sizeof(cache)) || strlen(cache) + strlen(name) + 2 > sizeof(cache))
		return lodge_fail(err, -ENAMETOOLONG, "the package cache's path is too long");
	strcat(strcat(cache, "/"), name);
	make_tree(work, tree, sizeof(tree));
	snprintf(image, sizeof(image), "%s/image", work);
	snprintf(info, sizeof(info), "%s/info", work);
	if ((rc = mkdirs(cache, DIR_MODE_PUBLIC, NULL, 0)))
		return lodge_fail(err, rc, "cannot make %s: %s", cache, strerror(-rc));
	if ((rc = template_cmd(&cmd, dist, tree, cache, mirror, why, sizeof(why))))
		return lodge_fail(err, rc, "%s", why);
	job_report(j, LODGE_PHASE_UPDATE, 0, NULL);
	run = (struct tool_run){ .argv = cmd.argv, .pty = true, .own_mounts = true, .keep = &lockfd, .nkeep = 1,
				 .line = on_mmdebstrap_line, .tick = build_tick, .arg = &b };
	if ((rc = tool_run(&run))) {
		if (rc == -ECANCELED)
			return job_cancelled(err);
		if (rc == -ENOENT)
			return lodge_fail(err, rc, "mmdebstrap is not installed (apt-get install mmdebstrap)");
		tool_describe(&run, rc, why, sizeof(why));
		/* apt's "Failed to fetch URL  REASON": the mirror, named where it was set. */
		if (!strncmp(b.error, "Failed to fetch ", 16))
			return lodge_fail(err, -EHOSTUNREACH, "building the %s template failed: a mirror does not answer "
					  "(%s): %s", dist->name, mirror && mirror[0] ? "lodge.conf's template_mirror" :
					  "the host's apt sources", b.error);
		return lodge_fail(err, -EIO, "building the %s template failed: %s", dist->name,
				  b.error[0] ? b.error : why);
	}
	if ((rc = finish_tree(tree, made.kernel, sizeof(made.kernel), why, sizeof(why))))
		return lodge_fail(err, rc, "the %s template mmdebstrap made is not a guest: %s", dist->name, why);
	tree_total = 0;
	nftw(tree, add_size, 32, FTW_PHYS | FTW_MOUNT);
	b.tree_bytes = tree_total;
	bytes = (tree_total + tree_total / 4 + IMAGE_SLACK_BYTES + IMAGE_ROUND_BYTES - 1) / IMAGE_ROUND_BYTES *
		IMAGE_ROUND_BYTES;
	snprintf(size_arg, sizeof(size_arg), "%lluk", (unsigned long long)(bytes >> 10));
	if (!job_report(j, LODGE_PHASE_IMAGE, 0, NULL))
		return job_cancelled(err);
	/* metadata_csum_seed: a clone's fresh UUID leaves every checksum as
	 * it is (tune2fs -U then rewrites nothing; no fsck needed first). */
	{
		const char *argv[] = { "mkfs.ext4", "-q", "-F", "-b", "4096", "-O", "metadata_csum_seed",
				       "-d", tree, image, size_arg, NULL };

		run = (struct tool_run){ .argv = argv, .tick = mkfs_tick, .arg = &b };
		if ((rc = tool_run(&run))) {
			if (rc == -ECANCELED)
				return job_cancelled(err);
			tool_describe(&run, rc, why, sizeof(why));
			return lodge_fail(err, rc < 0 ? rc : -EIO, "making the %s template's image failed: %s",
					  dist->name, why);
		}
	}
	made.build_s = (lodge_now_ms() - t0 + 500) / 1000;
	{
		/* The file as long as its filesystem (mke2fs need not write
		 * its last block): its size is what a disk needs. */
		int fd = open(image, O_WRONLY | O_CLOEXEC);

		rc = fd < 0 || ftruncate(fd, (off_t)bytes) < 0 || fsync(fd) < 0 ? -errno : 0;
		if (fd >= 0)
			close(fd);
	}
	if (!rc)
		rc = write_info(info, dist, &made);
	snprintf(dest, sizeof(dest), "%s/%s.info", dir, name);
	if (!rc && rename(info, dest) < 0)
		rc = -errno;
	snprintf(dest, sizeof(dest), "%s/%s.img", dir, name);
	if (!rc && rename(image, dest) < 0)
		rc = -errno;
	if (rc)
		return lodge_fail(err, rc, "cannot put the %s template in %s: %s", dist->name, dir, strerror(-rc));
	{
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
	}
	job_report(j, LODGE_PHASE_IMAGE, 100, NULL);
	return template_read(dir, name, t) ? lodge_fail(err, -EIO, "the %s template vanished", dist->name) : 0;
}

/* Build under the lock (taken here) in a fresh work directory, removed after. */
static int build_locked(const struct dist_info *dist, const char *mirror, struct job *j, bool only_if_missing,
			struct lodge_template *t, bool *built, struct lodge_err *err)
{
	char dir[CFG_PATH_MAX], work[CFG_PATH_MAX + 64];
	int lock, rc;

	*built = false;
	if (geteuid() != 0)
		return lodge_fail(err, -EPERM, "building the %s template needs root (mmdebstrap's root mode)",
				  dist->name);
	if (template_dir(dir, sizeof(dir)))
		return lodge_fail(err, -ENAMETOOLONG, "the templates' directory's path is too long");
	if ((lock = build_lock(dir, j, err)) < 0)
		return lock;
	/* Another build may have made it while this one waited. */
	if (only_if_missing && lodge_template_get(NULL, dist->name, t, NULL) == 0) {
		close(lock);
		return 0;
	}
	remove_dead_builds(dir);
	snprintf(work, sizeof(work), "%s/%s%s-%s-XXXXXX", dir, BUILD_PREFIX, dist->name, host_arch());
	/* 0755: apt drops to its _apt user to download into the tree. */
	if (!mkdtemp(work) || chmod(work, 0755) < 0) {
		rc = lodge_fail(err, -errno, "cannot make a directory in %s: %s", dir, strerror(errno));
	} else {
		rc = build(dir, work, dist, mirror, j, lock, t, err);
		remove_build(work);
		*built = rc == 0;
	}
	close(lock);
	return rc;
}

int template_ensure(const struct lodge *lg, const char *dist, struct job *j, struct lodge_template *t, bool *built,
		    struct lodge_err *err)
{
	const struct dist_info *d = known_dist(dist, err);
	int rc;

	*built = false;
	if (!d)
		return -EINVAL;
	if ((rc = lodge_template_get(lg, dist, t, err)) != -ENOENT)
		return rc;
	return build_locked(d, lg ? lg->hc.template_mirror : NULL, j, true, t, built, err);
}

int lodge_template_update(const struct lodge *lg, const char *dist, lodge_job_fn *fn, void *arg,
			  struct lodge_template *t, struct lodge_err *err)
{
	const struct dist_info *d = known_dist(dist, err);
	struct job j;
	bool built;

	if (!d)
		return -EINVAL;
	job_init(&j, JOB_TEMPLATE_PHASES, fn, arg);
	return build_locked(d, lg ? lg->hc.template_mirror : NULL, &j, false, t, &built, err);
}

int lodge_template_command(const struct lodge *lg, const char *dist, char *buf, size_t len, struct lodge_err *err)
{
	const struct dist_info *d = known_dist(dist, err);
	char dir[CFG_PATH_MAX], cache[CFG_PATH_MAX], target[CFG_PATH_MAX + 80], why[512];
	static struct template_cmd cmd;
	size_t n = 0;
	unsigned i;
	int rc;

	if (!d)
		return -EINVAL;
	if (template_dir(dir, sizeof(dir)) || template_cache_dir(cache, sizeof(cache)) ||
	    strlen(cache) + strlen(dist) + 20 > sizeof(cache))
		return lodge_fail(err, -ENAMETOOLONG, "the templates' directory's path is too long");
	snprintf(target, sizeof(target), "%s/%s%s-%s-XXXXXX/root", dir, BUILD_PREFIX, dist, host_arch());
	snprintf(cache + strlen(cache), sizeof(cache) - strlen(cache), "/%s-%s", dist, host_arch());
	if ((rc = template_cmd(&cmd, d, target, cache, lg ? lg->hc.template_mirror : NULL, why, sizeof(why))))
		return lodge_fail(err, rc, "%s", why);
	buf[0] = '\0';
	for (i = 0; i < cmd.argc && n < len; i++) {
		const char *a = cmd.argv[i];
		bool plain = strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:+@") ==
			     strlen(a);
		char quoted[4096];
		size_t q = 0;

		/* '...' with each ' as '\'' */
		quoted[q++] = '\'';
		for (; *a && q < sizeof(quoted) - 6; a++) {
			if (*a == '\'') {
				memcpy(quoted + q, "'\\''", 4);
				q += 4;
			} else {
				quoted[q++] = *a;
			}
		}
		quoted[q++] = '\'';
		quoted[q] = '\0';
		n += (size_t)snprintf(buf + n, len - n, "%s%s%s\n", i ? "  " : "", plain ? cmd.argv[i] : quoted,
				      i + 1 < cmd.argc ? " \\" : "");
	}
	return n < len ? 0 : lodge_fail(err, -E2BIG, "the command line is longer than %zu bytes", len);
}

int lodge_template_delete(const struct lodge *lg, const char *dist, struct lodge_err *err)
{
	char dir[CFG_PATH_MAX], path[CFG_PATH_MAX + 80], lockpath[CFG_PATH_MAX + 16];
	struct lodge_template t;
	int lock, rc;

	if ((rc = lodge_template_get(lg, dist, &t, err)))
		return rc;
	template_dir(dir, sizeof(dir));
	snprintf(lockpath, sizeof(lockpath), "%s/%s", dir, LOCK_FILE);
	if ((lock = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
		return lodge_fail(err, -errno, "cannot open %s: %s", lockpath, strerror(errno));
	if (flock(lock, LOCK_EX | LOCK_NB) < 0) {
		close(lock);
		return lodge_fail(err, -EBUSY, "a template is being built; delete %s once the build ends", dist);
	}
	/* The image first: a template is there while its image is.  Clones
	 * under way read on from their open descriptor. */
	rc = unlink(t.path) < 0 ? -errno : 0;
	snprintf(path, sizeof(path), "%s/%s.info", dir, t.name);
	if (!rc)
		unlink(path);
	close(lock);
	return rc ? lodge_fail(err, rc, "cannot remove %s: %s", t.path, strerror(-rc)) : 0;
}
