/* The schema of lodge.conf: its keys' rows (host_keys, read by
 * config-host.c through config-keys.c's generic checks) and the checks of
 * their values that a row's type and range do not say: paths, groups,
 * the migration listener, the pool's etcd and files.  A domain file's are
 * config-keys.c's. */
#include "config-keys.h"
#include "host.h"
#include "netlink.h"

#include <errno.h>
#include <grp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the checks of lodge.conf's values --------------------------------------- */

static int check_dir(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	if (!v->s[0]) {
		snprintf(why, whylen, "empty path");
		return -EINVAL;
	}
	return 0;
}


static int check_ifname(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	return netif_name_check(v->s, why, whylen);
}


/* cgroup = "lodge": a relative path under the CPU controller's mount. */
static int check_cgroup(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *s = v->s;
	size_t len = strlen(s);

	if (!len || len >= HOST_CGROUP_MAX || s[0] == '/' || s[len - 1] == '/' || strstr(s, "//") ||
	    strstr(s, "..") || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-/") != len) {
		snprintf(why, whylen, "'%s' is not a relative cgroup path like lodge or lodge.slice/domains", s);
		return -EINVAL;
	}
	return 0;
}


/* The migration secret: a file only its owner may read (it lets a peer
 * put any guest on this host). */
static int check_secret_file(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *s = v->s;
	struct stat st;

	if (!*s)
		return 0;                 /* none: loopback only */
	if (stat(s, &st) < 0) {
		snprintf(why, whylen, "cannot read %s: %s", s, strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077)) {
		snprintf(why, whylen, "%s must be a regular file that only its owner can read (chmod 600)", s);
		return -EPERM;
	}
	return 0;
}


int cfg_root_only_file(const char *path, char *why, size_t whylen)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		snprintf(why, whylen, "cannot read %s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 077)) {
		snprintf(why, whylen, "%s must be a regular file owned by root that only root can read "
			 "(chown root %s; chmod 600 %s)", path, path, path);
		return -EPERM;
	}
	return 0;
}


/* pool_key, pool_password_file: what proves this host to etcd. */
static int check_root_only_file(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *s = v->s;

	return *s ? cfg_root_only_file(s, why, whylen) : 0;
}


/* pool_cacert, pool_cert: PEM files anyone may read ("": none). */
static int check_pem_file(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *s = v->s;
	struct stat st;

	if (!*s)
		return 0;
	if (*s != '/' || strlen(s) >= CFG_PATH_MAX) {
		snprintf(why, whylen, "'%.64s' is not an absolute path", s);
		return -EINVAL;
	}
	if (stat(s, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "%s: %s", s, errno ? strerror(errno) : "not a regular file");
		return -ENOENT;
	}
	return 0;
}


/* ADDR:PORT, with [v6]:PORT for IPv6. */
static int check_listen(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *s = v->s, *colon = strrchr(s, ':');
	char *end;
	long port;

	port = colon ? strtol(colon + 1, &end, 10) : -1;
	if (!colon || colon == s || *end || port < 1 || port > UINT16_MAX) {
		snprintf(why, whylen, "'%s' is not ADDRESS:PORT like 127.0.0.1:8002", s);
		return -EINVAL;
	}
	return 0;
}


/* template_mirror = "http://HOST[:PORT]/PATH" (or https): a Debian mirror,
 * one word of printable ASCII, as apt's sources take it ("": none). */
static int check_mirror(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *s = v->s, *host;
	size_t n;

	if (!*s)
		return 0;
	host = !strncmp(s, "http://", 7) ? s + 7 : !strncmp(s, "https://", 8) ? s + 8 : NULL;
	for (n = 0; s[n] && s[n] > ' ' && s[n] < 0x7f && !strchr("\\\"'[]", s[n]); n++)
		;
	if (!host || !*host || *host == '/' || s[n] || n >= HOST_MIRROR_MAX) {
		snprintf(why, whylen, "not a Debian mirror's URL like http://deb.debian.org/debian (http or https, "
			 "no spaces or quotes, under %d bytes)", HOST_MIRROR_MAX);
		return -EINVAL;
	}
	return 0;
}


/* control_group = "lodge" or "1234": a group that exists, or a number ("": none). */
static int check_group(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *s = v->s;

	if (!*s)
		return 0;                 /* none: root only */
	if (cfg_group_id(s) < 0) {
		snprintf(why, whylen, "no group '%s' on this host (a name from /etc/group or a number)", s);
		return -ENOENT;
	}
	return 0;
}


/* storage_dirs, kernel_dirs: absolute directories. */
static int check_abs_dir(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *s = v->s;

	if (s[0] != '/' || strlen(s) >= HOST_LIST_ITEM_MAX) {
		snprintf(why, whylen, "'%.64s' is not an absolute path of fewer than %d bytes", s, HOST_LIST_ITEM_MAX);
		return -EINVAL;
	}
	return 0;
}


/* storage_devices: absolute shell patterns under /dev ("/dev/vg0/\*"). */
static int check_dev_pattern(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *s = v->s;

	if (check_abs_dir(ctx, k, v, why, whylen))
		return -EINVAL;
	if (strncmp(s, "/dev/", 5) != 0 || strstr(s, "/../") || strstr(s, "/./")) {
		snprintf(why, whylen, "'%s' is not a pattern of block devices under /dev/, like /dev/vg0/*", s);
		return -EINVAL;
	}
	return 0;
}


/* on_host_shutdown = "save" or "shutdown". */
static int check_host_shutdown(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *s = v->s;

	if (strcmp(s, "save") && strcmp(s, "shutdown")) {
		snprintf(why, whylen, "'%.64s' is neither save nor shutdown", s);
		return -EINVAL;
	}
	return 0;
}


/* pool_etcd = "http://10.0.0.1:2379,http://10.0.0.2:2379": etcd's client
 * URLs ("": no pool), http or https (then pool_cacert: etcd.c). */
static int check_pool_etcd(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *s = v->s, *p = s;

	if (strlen(s) >= POOL_ETCD_MAX) {
		snprintf(why, whylen, "longer than %d bytes", POOL_ETCD_MAX - 1);
		return -E2BIG;
	}
	while (*p) {
		size_t n = strcspn(p, ",");

		size_t scheme = strncmp(p, "https://", 8) == 0 ? 8 : 7;

		if (n <= scheme || (scheme == 7 && strncmp(p, "http://", 7)) ||
		    strcspn(p + scheme, " ?#@/,") < n - scheme - (p[n - 1] == '/')) {
			snprintf(why, whylen, "'%.*s' is not an etcd client URL like http://10.0.0.1:2379", (int)n, p);
			return -EINVAL;
		}
		p += n + (p[n] == ',');
	}
	return 0;
}


/* pool_host = "NAME": this host's name in the pool ("": its hostname). */
static int check_pool_host(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *s = v->s;

	if (*s && !domain_name_valid(s)) {
		snprintf(why, whylen, "'%.64s' is not a host name: %s", s, domain_name_rule());
		return -EINVAL;
	}
	return 0;
}


/* pool_prefix = "/lodge/pool": where the pool's keys are in etcd. */
static int check_pool_prefix(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
			size_t whylen)
{
	const char *s = v->s;

	if (!pool_prefix_valid(s)) {
		snprintf(why, whylen, "'%.64s' is not a key prefix like /lodge/pool (%s)", s, pool_prefix_rule());
		return -EINVAL;
	}
	return 0;
}


long cfg_group_id(const char *name)
{
	struct group *g;
	char *end;
	long id;

	if (!*name)
		return -1;
	id = strtol(name, &end, 10);
	if (!*end)
		return id >= 0 && id < 0x7fffffff ? id : -1;
	g = getgrnam(name);
	return g ? (long)g->gr_gid : -1;
}


/* ---- the table ------------------------------------------------------------- */

/* Paths here: defaults get the --root prefix; values are used as written. */
const struct cfg_key host_keys[] = {
	KEY_STR("runtime_dir", "/run/lodge", check_dir, "control sockets and logs of running domains"),
	KEY_STR("domains_dir", "/etc/lodge/domains", check_dir, "NAME.cfg files for lodge create NAME"),
	KEY_STR("image_dir", "/var/lib/lodge/images", check_dir, "where disk images are kept"),
	KEY_STR("crash_dir", "/var/lib/lodge/crash", check_abs_dir, "evidence of each crash: NAME-TIME/, the newest 10 per domain"),
	KEY_STR("default_bridge", "lodgebr0", check_ifname, "bridge of a vif without bridge="),
	KEY_INT("console_log_size", HOST_CONSOLE_LOG_DEFAULT_KIB, HOST_CONSOLE_LOG_MIN_KIB, HOST_CONSOLE_LOG_MAX_KIB,
		" KiB", NULL, NULL, "console output kept per domain"),
	KEY_STR("cgroup", "lodge", check_cgroup, "parent of the domains' CPU cgroups, under the CPU controller"),
	KEY_STR("control_group", "", check_group, "group whose members may control every domain (root always may)"),
	KEY_STR("stats_group", "", check_group, "group whose members may read every domain's status"),
	KEY_STR("migration_listen", "127.0.0.1:8002", check_listen,
		"where lodge migrate-receive listens (Xen's relocation port)"),
	KEY_STR("migration_secret_file", "", check_secret_file, "shared secret both ends of a migration prove they know"),
	KEY_LIST("storage_dirs", HOST_LIST_MAX, "entries", check_abs_dir,
		 "disk images a restored or migrated domain may use: files under these (default image_dir)"),
	KEY_LIST("storage_devices", HOST_LIST_MAX, "entries", check_dev_pattern,
		 "block devices a restored or migrated domain may use (patterns like /dev/vg0/*)"),
	KEY_LIST("kernel_dirs", HOST_LIST_MAX, "entries", check_abs_dir,
		 "kernels and ramdisks a restored or migrated domain may boot from (default Lodge's share directories)"),
	KEY_LIST("bridges", HOST_LIST_MAX, "entries", check_ifname,
		 "bridges a restored or migrated domain may join besides default_bridge"),
	KEY_STR("on_host_shutdown", "save", check_host_shutdown,
		"what lodge host-stop does with each running domain: save or shutdown"),
	KEY_INT("shutdown_timeout", HOST_SHUTDOWN_TIMEOUT_DEFAULT_S, HOST_SHUTDOWN_TIMEOUT_MIN_S,
		HOST_SHUTDOWN_TIMEOUT_MAX_S, " s", NULL, NULL,
		"how long lodge host-stop waits for the saves or shutdowns before it destroys what still runs "
		"(and a pool agent for a pool domain's shutdown)"),
	KEY_STR("save_dir", "/var/lib/lodge/save", check_dir,
		"where lodge host-stop saves the domains and lodge host-start restores them from"),
	KEY_STR("pool_etcd", "", check_pool_etcd, "the pool's etcd client URLs, comma-separated (lodge pool-join)"),
	KEY_STR("pool_host", "", check_pool_host, "this host's name in the pool (default its hostname)"),
	KEY_STR("pool_prefix", "/lodge/pool", check_pool_prefix, "where the pool's keys are in etcd"),
	KEY_STR("pool_cacert", "", check_pem_file, "the CA that signed etcd's certificate (PEM; required with https)"),
	KEY_STR("pool_cert", "", check_pem_file, "this host's client certificate for etcd (PEM, with pool_key)"),
	KEY_STR("pool_key", "", check_root_only_file, "the private key of pool_cert (PEM, root-only: chmod 600)"),
	KEY_STR("pool_user", "", check_pool_host, "this host's user in etcd's own authentication (with pool_password_file)"),
	KEY_STR("pool_password_file", "", check_root_only_file, "pool_user's password, the file's first line (root-only)"),
	KEY_INT("pool_lease_ttl", POOL_LEASE_TTL_DEFAULT_S, POOL_LEASE_TTL_MIN_S, POOL_LEASE_TTL_MAX_S, " s", NULL, NULL,
		"the host's lease in the pool: its domains are another host's this long after it lost etcd"),
	KEY_INT("pool_fence_deadline", POOL_FENCE_DEADLINE_DEFAULT_S, POOL_FENCE_DEADLINE_MIN_S, POOL_LEASE_TTL_MAX_S,
		" s", NULL, NULL, "a host cut off from etcd has ended its HA domains this long after its last renewal"),
	KEY_INT("pool_restart_delay", POOL_RESTART_DELAY_DEFAULT_S, 0, POOL_RESTART_DELAY_MAX_S, " s", NULL, NULL,
		"how long after a host's lease expired the others restart its HA domains"),
	KEY_STR("template_mirror", "", check_mirror,
		"the Debian mirror templates are built from (its DIST and DIST-updates suites; security updates "
		"from Debian's security archive); empty: the host's own apt sources"),
	{ .name = NULL }
};
_Static_assert(sizeof(host_keys) / sizeof(host_keys[0]) <= MAX_KEYS + 1, "MAX_KEYS holds every host key");

