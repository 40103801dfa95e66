/* A domain's config in the domains directory changed in place, as xl
 * config-update (and xl rename, domain/rename.c): the file's own
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

int lodge_config_path(const struct lodge *lg, const char *name, char *path, size_t len, struct lodge_err *err)
{
	if (domain_name_is_host(name))
		return lodge_fail(err, -EINVAL, "%s is the host's own name, never a domain's", name);
	if (!domain_name_valid(name))
		return lodge_fail(err, -EINVAL, "'%s' is not a domain name (letters, digits, . _ -; up to %d)", name,
				  DOMAIN_NAME_MAX - 1);
	if (snprintf(path, len, "%s/%s.cfg", lg->hc.domains_dir, name) >= (int)len)
		return lodge_fail(err, -ENAMETOOLONG, "%s/%s.cfg: path too long", lg->hc.domains_dir, name);
	return 0;
}

int lodge_config_write(const char *path, const char *text, size_t len, bool no_replace, struct lodge_err *err)
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

	if ((rc = lodge_config_path(lg, name, path, sizeof(path), err)))
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
	rc = lodge_config_write(path, text, len, false, err);
	free(text);
	return rc;
}
