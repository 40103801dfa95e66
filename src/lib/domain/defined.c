/* The defined domains: every config in domains_dir, running or not, as
 * xl's managed domains and virsh list --all.  One API for the lodge
 * command's list --all, the dashboard's table and the web page's: list,
 * start, the config's text read and written (checked by the config
 * loader before it replaces the file), delete (with its disks, only
 * files under storage_dirs) and autostart on and off. */
#include "incoming.h"
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIG_TEXT_MAX (1024 * 1024)      /* as the loader reads at most */

/* domains_dir/NAME.cfg for a valid name. */
static int config_path(const struct lodge *lg, const char *name, char *path, size_t len, struct lodge_err *err)
{
	if (!domain_name_valid(name))
		return lodge_fail(err, -EINVAL, "%s is not a domain name", name);
	if ((size_t)snprintf(path, len, "%s/%s.cfg", lg->hc.domains_dir, name) >= len)
		return lodge_fail(err, -ENAMETOOLONG, "%s/%s.cfg: path too long", lg->hc.domains_dir, name);
	return 0;
}

/* It has a runtime directory, as the poller counts the running: no
 * connect and no question (the dashboard calls this each refresh: a
 * stopped lodge-hyp's full backlog would hold a connect, and each one
 * would take a place in it). */
static bool runs(const struct lodge *lg, const char *name)
{
	char dir[CFG_PATH_MAX + DOMAIN_NAME_MAX + 2];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/%s", lg->hc.runtime_dir, name);
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct lodge_defined *)a)->name, ((const struct lodge_defined *)b)->name);
}

int lodge_defined_list(const struct lodge *lg, struct lodge_defined_list *out, struct lodge_err *err)
{
	static struct domain_config dc;
	struct dirent *de;
	char path[CFG_PATH_MAX + 300], msg[LODGE_ERR_MAX];
	unsigned cap = 0;
	DIR *d;

	*out = (struct lodge_defined_list){ 0 };
	if (!(d = opendir(lg->hc.domains_dir)))
		return errno == ENOENT ? 0 : lodge_fail(err, -errno, "cannot read %s: %s", lg->hc.domains_dir,
							 strerror(errno));
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct lodge_defined *def;

		if (len < 5 || len - 4 >= DOMAIN_NAME_MAX || strcmp(de->d_name + len - 4, ".cfg") != 0)
			continue;
		if (out->n == cap) {
			struct lodge_defined *grown = reallocarray(out->dom, cap ? cap * 2 : 16, sizeof(*grown));

			if (!grown) {
				closedir(d);
				lodge_defined_list_free(out);
				return lodge_fail(err, -ENOMEM, "%s", strerror(ENOMEM));
			}
			out->dom = grown;
			cap = cap ? cap * 2 : 16;
		}
		def = &out->dom[out->n];
		*def = (struct lodge_defined){ 0 };
		memcpy(def->name, de->d_name, len - 4);
		def->name[len - 4] = 0;
		if (!domain_name_valid(def->name))
			continue;       /* not a file create NAME could start */
		snprintf(def->config, sizeof(def->config), "%s/%s", lg->hc.domains_dir, de->d_name);
		snprintf(path, sizeof(path), "%s", def->config);
		/* Listed as it reads, host aside: a missing bridge is start's to say. */
		if (domain_config_load(path, &lg->hc, false, &dc, msg, sizeof(msg)) == 0) {
			def->loads = true;
			def->autostart = dc.autostart;
			def->memory_mib = dc.memory_mib;
			def->vcpus = dc.vcpus;
		} else {
			snprintf(def->why, sizeof(def->why), "%s", msg);
		}
		def->running = runs(lg, def->name);
		out->n++;
	}
	closedir(d);
	if (out->n)
		qsort(out->dom, out->n, sizeof(*out->dom), by_name);
	return 0;
}

void lodge_defined_list_free(struct lodge_defined_list *l)
{
	free(l->dom);
	*l = (struct lodge_defined_list){ 0 };
}

int lodge_defined_start(const struct lodge *lg, const char *name, struct lodge_err *err)
{
	static struct domain_config dc;
	char path[CFG_PATH_MAX + DOMAIN_NAME_MAX + 8];
	struct lodge_status st;
	int rc;

	if ((rc = config_path(lg, name, path, sizeof(path), err)))
		return rc;
	if (access(path, F_OK) < 0)
		return lodge_fail(err, -ENOENT, "no domain named %s is defined (%s)", name, path);
	if (lodge_status_of(lg, name, &st) == 0)
		return lodge_fail(err, -EEXIST, "domain %s is already running", name);
	if ((rc = lodge_config_find(lg, path, &dc, err)))
		return rc;
	return lodge_create(lg, &dc, 0, err);
}

int lodge_defined_text(const struct lodge *lg, const char *name, char **text, struct lodge_err *err)
{
	char path[CFG_PATH_MAX + DOMAIN_NAME_MAX + 8];
	size_t n = 0;
	ssize_t got;
	char *buf;
	int fd, rc;

	*text = NULL;
	if ((rc = config_path(lg, name, path, sizeof(path), err)))
		return rc;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0 && errno == ENOENT)
		return lodge_fail(err, -ENOENT, "no domain named %s is defined (%s)", name, path);
	if (fd < 0)
		return lodge_fail(err, -errno, "cannot read %s: %s", path, strerror(errno));
	if (!(buf = malloc(CONFIG_TEXT_MAX + 1))) {
		close(fd);
		return lodge_fail(err, -ENOMEM, "%s", strerror(ENOMEM));
	}
	while (n < CONFIG_TEXT_MAX && (got = read(fd, buf + n, CONFIG_TEXT_MAX - n)) > 0)
		n += got;
	close(fd);
	buf[n] = 0;
	*text = buf;
	return 0;
}

int lodge_defined_write(const struct lodge *lg, const char *name, const char *text, bool lent_only,
			struct lodge_err *err)
{
	static struct domain_config dc;
	char path[CFG_PATH_MAX + DOMAIN_NAME_MAX + 8], tmp[sizeof(path) + 16], msg[LODGE_ERR_MAX];
	size_t len = strlen(text);
	struct stat st;
	int fd, rc;

	if ((rc = config_path(lg, name, path, sizeof(path), err)))
		return rc;
	if (len > CONFIG_TEXT_MAX)
		return lodge_fail(err, -EFBIG, "%s: the config is over %d bytes", path, CONFIG_TEXT_MAX);
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return lodge_fail(err, -ENOENT, "no domain named %s is defined (%s)", name, path);
	/* Checked as the file it becomes: FILE:LINE name the config itself. */
	if ((rc = domain_config_load_text(path, text, len, &lg->hc, false, &dc, msg, sizeof(msg))))
		return lodge_fail(err, rc < 0 ? rc : -EINVAL, "%s", msg);
	if (strcmp(dc.name, name) != 0)
		return lodge_fail(err, -EINVAL, "%s: name: %s is not %s (a config keeps its file's name)", path,
				  dc.name, name);
	/* Checked against the file it replaces: still there. */
	if (lent_only && (rc = incoming_admit(&dc, &lg->hc, msg, sizeof(msg))))
		return lodge_fail(err, rc, "%s: %s", path, msg);
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0)
		return lodge_fail(err, -errno, "cannot write in %s: %s", lg->hc.domains_dir, strerror(errno));
	if (fchmod(fd, st.st_mode & 07777) < 0 || write(fd, text, len) != (ssize_t)len || fsync(fd) < 0 ||
	    close(fd) < 0 || rename(tmp, path) < 0) {
		rc = -errno;
		close(fd);
		unlink(tmp);
		return lodge_fail(err, rc ? rc : -EIO, "cannot write %s: %s", path, strerror(rc ? -rc : EIO));
	}
	return 0;
}

/* A line "autostart = ..." (spaces aside) starts at p. */
static bool autostart_line(const char *p)
{
	p += strspn(p, " \t");
	if (strncmp(p, "autostart", 9) != 0)
		return false;
	p += 9;
	p += strspn(p, " \t");
	return *p == '=';
}

int lodge_defined_autostart(const struct lodge *lg, const char *name, bool on, struct lodge_err *err)
{
	const char *word = on ? "true" : "false";
	char *text, *out, *line, *next;
	size_t len;
	bool done = false;
	int rc;

	if ((rc = lodge_defined_text(lg, name, &text, err)))
		return rc;
	len = strlen(text);
	if (!(out = malloc(len + 32))) {
		free(text);
		return lodge_fail(err, -ENOMEM, "%s", strerror(ENOMEM));
	}
	*out = 0;
	/* The file's own words kept, its autostart line alone replaced. */
	for (line = text; *line; line = next) {
		next = strchrnul(line, '\n');
		if (*next)
			next++;
		if (autostart_line(line)) {
			if (!done)
				sprintf(out + strlen(out), "autostart = %s\n", word);
			done = true;
			continue;
		}
		strncat(out, line, next - line);
	}
	if (!done) {
		if (len && text[len - 1] != '\n')
			strcat(out, "\n");
		sprintf(out + strlen(out), "autostart = %s\n", word);
	}
	rc = lodge_defined_write(lg, name, out, false, err);      /* what it names, as it was */
	free(out);
	free(text);
	return rc;
}

/* real lies inside one of storage_dirs. */
static bool in_storage(const struct lodge *lg, const char *real)
{
	char dir[PATH_MAX];
	unsigned i;

	for (i = 0; i < lg->hc.storage_dirs.n; i++) {
		size_t len;

		if (!realpath(lg->hc.storage_dirs.item[i], dir))
			continue;
		len = strlen(dir);
		if (strcmp(dir, "/") == 0 || (strncmp(real, dir, len) == 0 && real[len] == '/'))
			return true;
	}
	return false;
}

/* Another config of domains_dir names real as a disk: it is shared. */
static bool disk_shared(const struct lodge *lg, const char *name, const char *real)
{
	static struct domain_config other;
	struct lodge_defined_list l;
	char r[PATH_MAX], msg[LODGE_ERR_MAX];
	bool shared = false;
	unsigned i, j;

	if (lodge_defined_list(lg, &l, NULL))
		return true;    /* cannot tell: kept */
	for (i = 0; i < l.n && !shared; i++) {
		if (strcmp(l.dom[i].name, name) == 0 ||
		    domain_config_load(l.dom[i].config, &lg->hc, false, &other, msg, sizeof(msg)))
			continue;
		for (j = 0; j < other.ndisks && !shared; j++)
			shared = realpath(other.disks[j].path, r) && strcmp(r, real) == 0;
	}
	lodge_defined_list_free(&l);
	return shared;
}

int lodge_defined_delete(const struct lodge *lg, const char *name, bool disks, struct lodge_err *err)
{
	static struct domain_config dc;
	char path[CFG_PATH_MAX + DOMAIN_NAME_MAX + 8], real[PATH_MAX], msg[LODGE_ERR_MAX];
	struct lodge_status st;
	struct stat sb;
	unsigned i;
	int rc;

	if ((rc = config_path(lg, name, path, sizeof(path), err)))
		return rc;
	if (lstat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
		return lodge_fail(err, -ENOENT, "no domain named %s is defined (%s)", name, path);
	if (lodge_status_of(lg, name, &st) == 0)
		return lodge_fail(err, -EBUSY, "domain %s is running: destroy or shut it down first", name);
	if (disks && (rc = domain_config_load(path, &lg->hc, false, &dc, msg, sizeof(msg))))
		return lodge_fail(err, rc < 0 ? rc : -EINVAL, "%s (its disks are not known: nothing deleted)", msg);
	if (unlink(path) < 0)
		return lodge_fail(err, -errno, "cannot delete %s: %s", path, strerror(errno));
	for (i = 0; disks && i < dc.ndisks; i++) {
		const char *disk = dc.disks[i].path;

		/* A file of this host's storage, the domain's alone: never a
		 * block device, a read-only (shared) image or another's. */
		if (!realpath(disk, real) || stat(real, &sb) < 0)
			continue;
		if (!S_ISREG(sb.st_mode) || !in_storage(lg, real) || dc.disks[i].readonly ||
		    disk_shared(lg, name, real)) {
			lodge_warn(lg, "disk %s of %s is kept: %s", disk, name,
				   !S_ISREG(sb.st_mode) ? "not a file" : !in_storage(lg, real) ? "not under storage_dirs" :
				   dc.disks[i].readonly ? "read-only (shared)" : "another domain's config names it");
			continue;
		}
		if (unlink(real) < 0)
			lodge_warn(lg, "cannot delete disk %s of %s: %s", real, name, strerror(errno));
		else
			lodge_warn(lg, "deleted disk %s of %s", real, name);
	}
	return 0;
}
