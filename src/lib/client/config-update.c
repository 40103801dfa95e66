/* A domain's config in the domains directory changed in place, as xl
 * config-update and (for a domain not running) xl rename: the file's own
 * text with the statements replaced, read by the same schema before it
 * is written, and written whole or not at all (a temporary file renamed
 * over it), so its comments and layout stay. */
#include "config.h"
#include "internal.h"
#include "schema.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIG_MODE 0644           /* as lodge install writes one */

/* DOMAINS_DIR/NAME.cfg, the file create NAME reads. */
static int config_path(const struct lodge *lg, const char *name, char *path, size_t len, struct lodge_err *err)
{
	if (!domain_name_valid(name))
		return lodge_fail(err, -EINVAL, "'%s' is not a domain name (letters, digits, . _ -; up to %d)", name,
				  DOMAIN_NAME_MAX - 1);
	if (snprintf(path, len, "%s/%s.cfg", lg->hc.domains_dir, name) >= (int)len)
		return lodge_fail(err, -ENAMETOOLONG, "%s/%s.cfg: path too long", lg->hc.domains_dir, name);
	return 0;
}

/* text into path, by a temporary file beside it renamed over it; with
 * no_replace, refused if path exists (a rename's new name). */
static int write_whole(const char *path, const char *text, size_t len, bool no_replace, struct lodge_err *err)
{
	char tmp[CFG_PATH_MAX + 16];
	int fd, rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	if ((fd = mkstemp(tmp)) < 0)
		return lodge_fail(err, -errno, "cannot write %s: %s", path, strerror(errno));
	if (fchmod(fd, CONFIG_MODE) || write(fd, text, len) != (ssize_t)len || fsync(fd))
		rc = -errno ? -errno : -EIO;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && no_replace && link(tmp, path))
		rc = -errno;
	else if (!rc && !no_replace && rename(tmp, path))
		rc = -errno;
	if (rc || no_replace)
		unlink(tmp);
	if (rc == -EEXIST)
		return lodge_fail(err, rc, "%s exists already", path);
	return rc ? lodge_fail(err, rc, "cannot write %s: %s", path, strerror(-rc)) : 0;
}

int lodge_config_update(const struct lodge *lg, const char *name, const char *from, char *const *overrides,
			unsigned n, struct lodge_err *err)
{
	static struct domain_config dc;
	char path[CFG_PATH_MAX + 80], msg[LODGE_ERR_MAX];
	size_t len;
	char *text;
	int rc;

	if ((rc = config_path(lg, name, path, sizeof(path), err)))
		return rc;
	if (!from && access(path, F_OK))
		return lodge_fail(err, -ENOENT, "domain %s has no config in %s", name, lg->hc.domains_dir);
	/* Checked as a file for this host, but not for a start now: its
	 * memory may be taken by itself, running. */
	rc = domain_config_load_overrides(from ? from : path, overrides, n, &lg->hc, false, &dc, &text, &len, msg,
					  sizeof(msg));
	if (rc)
		return lodge_fail(err, rc < 0 ? rc : -EINVAL, "%s", msg);
	if (strcmp(dc.name, name)) {
		free(text);
		return lodge_fail(err, -EINVAL, "the config names domain '%s', not %s (lodge rename renames)",
				  dc.name, name);
	}
	rc = write_whole(path, text, len, false, err);
	free(text);
	return rc;
}

int lodge_rename(const struct lodge *lg, const char *old, const char *new_name, struct lodge_err *err)
{
	static struct domain_config dc;
	char path[CFG_PATH_MAX + 80], new_path[CFG_PATH_MAX + 80], msg[LODGE_ERR_MAX], over[DOMAIN_NAME_MAX + 16];
	char *overrides[1] = { over }, *text;
	struct lodge_status st;
	size_t len;
	int rc;

	if ((rc = config_path(lg, old, path, sizeof(path), err)) ||
	    (rc = config_path(lg, new_name, new_path, sizeof(new_path), err)))
		return rc;
	/* A running domain's name is its runtime directory's, its control
	 * socket's, its cgroup's and its locks': lodge-hyp does not move
	 * them while it runs. */
	if (lodge_status_of(lg, old, &st) == 0)
		return lodge_fail(err, -EBUSY, "domain %s is running: shut it down first (a running domain keeps "
				  "its name)", old);
	if (lodge_status_of(lg, new_name, &st) == 0)
		return lodge_fail(err, -EEXIST, "a domain named %s is running", new_name);
	if (access(path, F_OK))
		return lodge_fail(err, -ENOENT, "domain %s has no config in %s", old, lg->hc.domains_dir);
	snprintf(over, sizeof(over), "name = \"%s\"", new_name);
	rc = domain_config_load_overrides(path, overrides, 1, &lg->hc, false, &dc, &text, &len, msg, sizeof(msg));
	if (rc)
		return lodge_fail(err, rc < 0 ? rc : -EINVAL, "%s", msg);
	/* The new file first (never over another's), then the old one goes. */
	rc = write_whole(new_path, text, len, true, err);
	free(text);
	if (rc)
		return rc;
	if (unlink(path)) {
		rc = -errno;
		unlink(new_path);
		return lodge_fail(err, rc, "cannot remove %s: %s", path, strerror(-rc));
	}
	return 0;
}
