/* The host's settings: lodge.conf, read with the key table's host keys
 * (config-keys.c) through config.c's reader; what it leaves unset takes
 * the defaults below, under --root where they are paths. */
#include "config.h"
#include "cgroup.h"
#include "config-keys.h"
#include "paths.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- the host: lodge.conf ------------------------------------------------- */

static int host_path(struct load_ctx *ctx, cfg_t *cfg, const char *key, char *out, size_t len)
{
	const struct cfg_key *k = cfg_find_key(host_keys, key);
	int rc;

	if (cfg_key_site(ctx, key, 0) >= 0)
		rc = cfg_resolve(ctx, cfg_getstr(cfg, key), out, len);
	else
		rc = path_printf(out, len, "%s%s", cfg_root(), k->def);   /* --root prefixes defaults only */
	if (rc)
		cfg_fail(ctx, cfg_key_line(ctx, key, 0), key, "path too long");
	return rc;
}

/* The default cgroup parent is "lodge"; under --root DIR it is
 * lodge/DIR-with-dashes, as default paths get the root prefix: trees with
 * different roots (tests side by side) never share a domain's cgroup. */
static void default_cgroup(char *out, size_t len)
{
	const char *ok = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-";
	size_t n, i;

	n = (size_t)snprintf(out, len, "%s", cfg_find_key(host_keys, "cgroup")->def);
	if (!cfg_root()[0] || n + 2 >= len)
		return;
	out[n++] = '/';
	for (i = cfg_root()[0] == '/'; cfg_root()[i] && n + 1 < len; i++, n++)
		out[n] = cfg_root()[i] == '/' ? '-' : strchr(ok, cfg_root()[i]) ? cfg_root()[i] : '_';
	out[n] = '\0';
	if (strstr(out, ".."))                  /* a root with ".." in it: keep it a plain name */
		for (i = 0; out[i]; i++)
			out[i] = out[i] == '.' ? '_' : out[i];
}

static void list_add(struct cfg_list *l, const char *item)
{
	if (l->n < HOST_LIST_MAX && strlen(item) < HOST_LIST_ITEM_MAX)
		snprintf(l->item[l->n++], HOST_LIST_ITEM_MAX, "%s", item);
}

/* A list key as written (checked already), or nothing if not set. */
static bool host_list(struct load_ctx *ctx, cfg_t *cfg, const char *key, struct cfg_list *l)
{
	unsigned i;

	l->n = 0;
	if (cfg_key_site(ctx, key, 0) < 0)
		return false;
	for (i = 0; i < cfg_size(cfg, key); i++)
		list_add(l, cfg_getnstr(cfg, key, i));
	return true;
}

/* Where Lodge's own kernels are: PREFIX/share/lodge beside this program
 * (an installed lodge is PREFIX/sbin/lodge), and the usual prefixes. */
static void default_kernel_dirs(struct cfg_list *l)
{
	char exe[CFG_PATH_MAX], dir[CFG_PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	list_add(l, "/usr/local/share/lodge");
	list_add(l, "/usr/share/lodge");
	if (n <= 0)
		return;
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')))
		*slash = '\0';
	if ((slash = strrchr(exe, '/')) && slash != exe) {
		*slash = '\0';
		snprintf(dir, sizeof(dir), "%s/share/lodge", exe);
		if (strcmp(dir, l->item[0]) && strcmp(dir, l->item[1]))
			list_add(l, dir);
	}
}

int host_config_load(struct host_config *hc, char *err, size_t errlen)
{
	char file[CFG_PATH_MAX];
	struct load_ctx ctx;
	cfg_t *cfg;
	int rc;

	memset(hc, 0, sizeof(*hc));
	if (path_printf(file, sizeof(file), "%s/etc/lodge/lodge.conf", cfg_root())) {
		snprintf(err, errlen, "--root %s: path too long", cfg_root());
		return -ENAMETOOLONG;
	}
	if ((rc = cfg_ctx_init(&ctx, file, err, errlen)))
		return rc;
	/* No lodge.conf: every key at its default, as in an empty one. */
	cfg = access(file, F_OK) == 0 ? cfg_parse_file(&ctx, host_keys) : cfg_parse_text(&ctx, host_keys, "", 0);
	if (!cfg)
		return -EINVAL;
	if ((rc = host_path(&ctx, cfg, "runtime_dir", hc->runtime_dir, sizeof(hc->runtime_dir))) ||
	    (rc = host_path(&ctx, cfg, "domains_dir", hc->domains_dir, sizeof(hc->domains_dir))) ||
	    (rc = host_path(&ctx, cfg, "image_dir", hc->image_dir, sizeof(hc->image_dir))) ||
	    (rc = host_path(&ctx, cfg, "crash_dir", hc->crash_dir, sizeof(hc->crash_dir))) ||
	    (rc = host_path(&ctx, cfg, "save_dir", hc->save_dir, sizeof(hc->save_dir)))) {
		cfg_free(cfg);
		return rc;
	}
	snprintf(hc->default_bridge, sizeof(hc->default_bridge), "%s", cfg_getstr(cfg, "default_bridge"));
	hc->console_log_kib = (unsigned)cfg_getint(cfg, "console_log_size");
	if (cfg_key_site(&ctx, "cgroup", 0) >= 0)
		snprintf(hc->cgroup, sizeof(hc->cgroup), "%s", cfg_getstr(cfg, "cgroup"));
	else
		default_cgroup(hc->cgroup, sizeof(hc->cgroup));
	hc->control_gid = cfg_group_id(cfg_getstr(cfg, "control_group"));
	hc->stats_gid = cfg_group_id(cfg_getstr(cfg, "stats_group"));
	snprintf(hc->migration_listen, sizeof(hc->migration_listen), "%s", cfg_getstr(cfg, "migration_listen"));
	snprintf(hc->migration_secret_file, sizeof(hc->migration_secret_file), "%s",
		 cfg_getstr(cfg, "migration_secret_file"));
	if (!host_list(&ctx, cfg, "storage_dirs", &hc->storage_dirs))
		list_add(&hc->storage_dirs, hc->image_dir);
	host_list(&ctx, cfg, "storage_devices", &hc->storage_devices);
	if (!host_list(&ctx, cfg, "kernel_dirs", &hc->kernel_dirs))
		default_kernel_dirs(&hc->kernel_dirs);
	host_list(&ctx, cfg, "bridges", &hc->bridges);
	hc->host_shutdown_saves = strcmp(cfg_getstr(cfg, "on_host_shutdown"), "save") == 0;
	hc->shutdown_timeout_s = (unsigned)cfg_getint(cfg, "shutdown_timeout");
	snprintf(hc->pool_etcd, sizeof(hc->pool_etcd), "%s", cfg_getstr(cfg, "pool_etcd"));
	snprintf(hc->pool_host, sizeof(hc->pool_host), "%s", cfg_getstr(cfg, "pool_host"));
	snprintf(hc->pool_prefix, sizeof(hc->pool_prefix), "%s", cfg_getstr(cfg, "pool_prefix"));
	snprintf(hc->pool_cacert, sizeof(hc->pool_cacert), "%s", cfg_getstr(cfg, "pool_cacert"));
	snprintf(hc->pool_cert, sizeof(hc->pool_cert), "%s", cfg_getstr(cfg, "pool_cert"));
	snprintf(hc->pool_key, sizeof(hc->pool_key), "%s", cfg_getstr(cfg, "pool_key"));
	snprintf(hc->pool_user, sizeof(hc->pool_user), "%s", cfg_getstr(cfg, "pool_user"));
	snprintf(hc->pool_password_file, sizeof(hc->pool_password_file), "%s", cfg_getstr(cfg, "pool_password_file"));
	hc->pool_lease_ttl_s = (unsigned)cfg_getint(cfg, "pool_lease_ttl");
	hc->pool_fence_deadline_s = (unsigned)cfg_getint(cfg, "pool_fence_deadline");
	hc->pool_restart_delay_s = (unsigned)cfg_getint(cfg, "pool_restart_delay");
	snprintf(hc->template_mirror, sizeof(hc->template_mirror), "%s", cfg_getstr(cfg, "template_mirror"));
	cfg_free(cfg);
	return 0;
}
