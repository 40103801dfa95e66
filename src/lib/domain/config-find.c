/* Which config a command means: a domain's name (DOMAINS_DIR/NAME.cfg,
 * as xl create has it) or a file, with KEY=VALUE overrides; and the
 * config a running domain was started with (its runtime copy). */
#include "internal.h"
#include "runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int load_config(const struct lodge *lg, const char *path, bool check_bridges, struct domain_config *dc,
		       struct lodge_err *err)
{
	char msg[LODGE_ERR_MAX];
	int rc = domain_config_load(path, &lg->hc, check_bridges, dc, msg, sizeof(msg));

	return rc ? lodge_fail(err, rc < 0 ? rc : -EINVAL, "%s", msg) : 0;
}

int lodge_config_find(const struct lodge *lg, const char *arg, struct domain_config *dc, struct lodge_err *err)
{
	return lodge_config_find_with(lg, arg, NULL, 0, dc, err);
}

int lodge_config_find_with(const struct lodge *lg, const char *arg, char *const *overrides, unsigned n,
			   struct domain_config *dc, struct lodge_err *err)
{
	char path[CFG_PATH_MAX + 80], msg[LODGE_ERR_MAX];
	struct stat st;
	int rc;

	/* A name means DOMAINS_DIR/NAME.cfg, as xl create has it; a word that
	 * is also a directory here (./web) is still the name. */
	if (strchr(arg, '/') || (stat(arg, &st) == 0 && !S_ISDIR(st.st_mode)))
		snprintf(path, sizeof(path), "%s", arg);
	else
		snprintf(path, sizeof(path), "%s/%s.cfg", lg->hc.domains_dir, arg);
	if (!n)
		return load_config(lg, path, true, dc, err);
	rc = domain_config_load_overrides(path, overrides, n, &lg->hc, true, dc, NULL, NULL, msg, sizeof(msg));
	return rc ? lodge_fail(err, rc < 0 ? rc : -EINVAL, "%s", msg) : 0;
}

int lodge_runtime_config(const struct lodge *lg, const char *name, struct domain_config *dc, struct lodge_err *err)
{
	char path[CFG_PATH_MAX + DOMAIN_NAME_MAX + 16];

	if (runtime_path(path, sizeof(path), lg->hc.runtime_dir, name, RT_CONFIG))
		return lodge_fail(err, -ENAMETOOLONG, "%s/%s: path too long", lg->hc.runtime_dir, name);
	return load_config(lg, path, false, dc, err);
}

int lodge_running_config(const struct lodge *lg, const char *domain, struct domain_config *dc, struct lodge_err *err)
{
	char name[DOMAIN_NAME_MAX];
	struct lodge_status st;
	int rc;

	if ((rc = lodge_resolve(lg, domain, name, err)))
		return rc;
	if ((rc = lodge_status_of(lg, name, &st)) == -ENOENT)
		return lodge_not_running(err, name);
	if (rc)
		return lodge_fail(err, rc, "%s: cannot read its status: %s", name, strerror(-rc));
	return lodge_runtime_config(lg, name, dc, err);
}

int lodge_running_config_text(const struct lodge *lg, const char *domain, char **text, struct lodge_err *err)
{
	char name[DOMAIN_NAME_MAX], path[CFG_PATH_MAX + DOMAIN_NAME_MAX + 16];
	size_t len = 0, cap = 4096;
	char *buf;
	FILE *f;
	int rc;

	*text = NULL;
	if ((rc = lodge_resolve(lg, domain, name, err)))
		return rc;
	if (runtime_path(path, sizeof(path), lg->hc.runtime_dir, name, RT_CONFIG) || !(f = fopen(path, "r")))
		return lodge_not_running(err, name);
	if (!(buf = malloc(cap))) {
		fclose(f);
		return lodge_fail(err, -ENOMEM, "%s", strerror(ENOMEM));
	}
	for (;;) {
		size_t n = fread(buf + len, 1, cap - 1 - len, f);

		len += n;
		if (len + 1 < cap)
			break;
		/* The loader refuses a config over 1 MiB: so does this. */
		if (cap >= (2u << 20) || !(*text = realloc(buf, cap * 2))) {
			free(buf);
			fclose(f);
			return lodge_fail(err, -EFBIG, "%s: larger than 2 MiB", path);
		}
		buf = *text;
		cap *= 2;
	}
	fclose(f);
	buf[len] = '\0';
	*text = buf;
	return 0;
}
