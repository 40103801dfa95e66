/* The keys of lodge.conf and of a domain file, with their checks, and the
 * parsers for the values that are small languages of their own (disk and
 * vif specs, MACs, actions).  One table row gives libconfuse the option
 * and the validate callback; lodge.conf(5) documents the same rows. */
#include "cgroup.h"

#include <grp.h>
#include <stdlib.h>
#include "config-keys.h"
#include "cpulist.h"
#include "netlink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define MEMORY_MIN_MIB  DOMAIN_MEMORY_MIN_MIB   /* schema.h */
#define MEMORY_MAX_MIB  DOMAIN_MEMORY_MAX_MIB
#define VCPUS_MAX       DOMAIN_VCPUS_MAX
#define LOG_MIN_KIB     4
#define LOG_MAX_KIB     (1u << 20)

/* ---- small parsers ---------------------------------------------------------- */

int cfg_parse_mac(const char *text, uint8_t mac[6], char *why, size_t whylen)
{
	unsigned i, hi, lo;

	for (i = 0; i < 6; i++) {
		const char *p = text + 3 * i;

		if (!strchr("0123456789abcdefABCDEF", p[0]) || !p[0] || !p[1] ||
		    !strchr("0123456789abcdefABCDEF", p[1]) || p[2] != (i == 5 ? '\0' : ':')) {
			snprintf(why, whylen, "mac '%s' is not six hex pairs like 02:4c:00:00:00:01", text);
			return -EINVAL;
		}
		hi = (unsigned)strtoul((char[]){ p[0], 0 }, NULL, 16);
		lo = (unsigned)strtoul((char[]){ p[1], 0 }, NULL, 16);
		mac[i] = (uint8_t)(hi << 4 | lo);
	}
	if (mac[0] & 1) {
		snprintf(why, whylen, "mac '%s' is a multicast address (first byte must be even)", text);
		return -EINVAL;
	}
	if (!(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5])) {
		snprintf(why, whylen, "mac '%s' is all zeros", text);
		return -EINVAL;
	}
	return 0;
}

int cfg_parse_action(const char *text, enum domain_action *act, char *why, size_t whylen)
{
	if (domain_action_parse(text, act) == 0)
		return 0;
	if (strcmp(text, "rename-restart") == 0 || strncmp(text, "coredump-", 9) == 0)
		snprintf(why, whylen, "'%s' is not supported by Lodge (%s)", text, domain_action_list());
	else
		snprintf(why, whylen, "unknown action '%s' (%s)", text, domain_action_list());
	return -EINVAL;
}

/* Split s in place at commas into at most max trimmed fields. */
static int split_fields(char *s, char **field, int max)
{
	int n = 0;
	char *end;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (n == max)
			return -1;
		field[n++] = s;
		end = strchr(s, ',');
		if (end)
			*end = '\0';
		for (char *t = s + strlen(s); t > s && (t[-1] == ' ' || t[-1] == '\t'); t--)
			t[-1] = '\0';
		if (!end)
			return n;
		s = end + 1;
	}
}

static bool is_access(const char *s)
{
	return !strcmp(s, "r") || !strcmp(s, "ro") || !strcmp(s, "w") || !strcmp(s, "rw");
}

/* xvda, vdb, hda1, sdc: a disk name as Xen users write them. */
static bool is_vdev(const char *s)
{
	static const char *const prefixes[] = { "xvd", "vd", "hd", "sd" };
	size_t i, p, letters = 0, digits = 0;

	for (i = 0; i < 4; i++)
		if (strncmp(s, prefixes[i], strlen(prefixes[i])) == 0)
			break;
	if (i == 4 || strlen(s) >= sizeof(((struct cfg_disk *)0)->vdev))
		return false;
	for (p = strlen(prefixes[i]); s[p] >= 'a' && s[p] <= 'z'; p++)
		letters++;
	for (; s[p] >= '0' && s[p] <= '9'; p++)
		digits++;
	return s[p] == '\0' && letters >= 1 && letters <= 3 && digits <= 3;
}

/* The 2005 form "file:/img,vda,w" / "phy:/dev/vg/x,vdb,r", xl's positional
 * "target,format,vdev,access" (shorter: "target,vdev[,access]" or
 * "target,format,vdev"), and xl's "vdev=..,access=..,target=..". */
int cfg_parse_disk(const struct load_ctx *ctx, const char *spec, struct cfg_disk *d, char *why, size_t whylen)
{
	char buf[CFG_PATH_MAX + 64], *f[8], *target = NULL, *format = NULL, *vdev = NULL, *access = NULL;
	char dev[CFG_PATH_MAX + 8], *colon;
	struct stat st;
	bool phy = false;
	int n, i;

	memset(d, 0, sizeof(*d));
	if (strlen(spec) >= sizeof(buf) - 1) {
		snprintf(why, whylen, "disk spec is too long");
		return -ENAMETOOLONG;
	}
	strcpy(buf, spec);
	n = split_fields(buf, f, 8);
	if (n > 0 && strchr(f[0], '=')) {
		for (i = 0; i < n; i++) {
			char *eq = strchr(f[i], '=');
			const char *k = f[i];

			if (!eq) {
				snprintf(why, whylen, "'%s' in disk '%s' is not KEY=VALUE", f[i], spec);
				return -EINVAL;
			}
			*eq = '\0';
			if (!strcmp(k, "target")) target = eq + 1;
			else if (!strcmp(k, "format")) format = eq + 1;
			else if (!strcmp(k, "vdev")) vdev = eq + 1;
			else if (!strcmp(k, "access")) access = eq + 1;
			else {
				snprintf(why, whylen, "unknown disk key '%s' (target, format, vdev, access)", k);
				return -EINVAL;
			}
		}
	} else if (n == 2) {
		target = f[0], vdev = f[1];
	} else if (n == 3 && (is_access(f[2]) || is_vdev(f[1]))) {
		target = f[0], vdev = f[1], access = f[2];
	} else if (n == 3) {
		target = f[0], format = f[1], vdev = f[2];
	} else if (n == 4) {
		target = f[0], format = f[1], vdev = f[2], access = f[3];
	} else {
		snprintf(why, whylen, "'%s' is not 'file:PATH,VDEV,ACCESS' or 'TARGET,FORMAT,VDEV,ACCESS'", spec);
		return -EINVAL;
	}
	if (!strncmp(target, "tap:aio:", 8) || !strncmp(target, "tap2:aio:", 9)) {
		target = strchr(target, ':') + 5;     /* blktap: a file to xl today */
	} else if (!strncmp(target, "file:", 5) || !strncmp(target, "aio:", 4)) {
		target = strchr(target, ':') + 1;
	} else if (!strncmp(target, "phy:", 4)) {
		target += 4;
		phy = true;
	} else if ((colon = strchr(target, ':')) && !memchr(target, '/', (size_t)(colon - target))) {
		snprintf(why, whylen, "'%.*s' disks are not supported (file: or phy:)", (int)(colon - target + 1), target);
		return -EINVAL;
	}
	if (!target[0]) {
		snprintf(why, whylen, "'%s' has no target (a file or block device)", spec);
		return -EINVAL;
	}
	if (format && format[0] && strcmp(format, "raw")) {
		snprintf(why, whylen, "format '%s' is not supported (raw only)", format);
		return -EINVAL;
	}
	if (!vdev || !is_vdev(vdev)) {
		snprintf(why, whylen, "'%s' is not a disk name like vda, xvdb or hdc", vdev ? vdev : "");
		return -EINVAL;
	}
	if (access && !is_access(access)) {
		snprintf(why, whylen, "access '%s' is not r, ro, w or rw", access);
		return -EINVAL;
	}
	if (phy && target[0] != '/') {           /* phy:hda1 meant /dev/hda1 */
		snprintf(dev, sizeof(dev), "/dev/%s", target);
		target = dev;
	}
	if (cfg_resolve(ctx, target, d->path, sizeof(d->path))) {
		snprintf(why, whylen, "path is too long");
		return -ENAMETOOLONG;
	}
	if (stat(d->path, &st) < 0) {
		snprintf(why, whylen, "%s: %s", d->path, strerror(errno));
		return -errno;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "%s is a directory", d->path);
		return -EISDIR;
	}
	snprintf(d->vdev, sizeof(d->vdev), "%s", vdev);
	d->readonly = access && access[0] == 'r' && (access[1] == '\0' || access[1] == 'o');
	d->is_phy = phy || S_ISBLK(st.st_mode);
	return 0;
}

/* "bridge=br0,mac=02:4c:..,vifname=web0"; every key optional. */
int cfg_parse_vif(const char *spec, struct cfg_vif *v, char *why, size_t whylen)
{
	char buf[256], *f[8], err[128];
	int n, i;

	memset(v, 0, sizeof(*v));
	if (strlen(spec) >= sizeof(buf) || (n = split_fields(strcpy(buf, spec), f, 8)) < 0) {
		snprintf(why, whylen, "vif '%.64s' is too long", spec);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		char *eq = strchr(f[i], '='), *val;

		if (!f[i][0] && n == 1)
			break;                  /* vif = [ '' ]: all defaults, as xl */
		if (!eq) {
			snprintf(why, whylen, "'%s' in vif '%s' is not KEY=VALUE", f[i], spec);
			return -EINVAL;
		}
		*eq = '\0';
		val = eq + 1;
		if (!strcmp(f[i], "mac")) {
			if (cfg_parse_mac(val, v->mac, why, whylen))
				return -EINVAL;
			v->mac_set = true;
			continue;
		}
		if (strcmp(f[i], "bridge") && strcmp(f[i], "vifname")) {
			snprintf(why, whylen, "unknown vif key '%s' (bridge, mac, vifname)", f[i]);
			return -EINVAL;
		}
		if (netif_name_check(val, err, sizeof(err))) {
			snprintf(why, whylen, "%s: %s", f[i], err);
			return -EINVAL;
		}
		snprintf(!strcmp(f[i], "bridge") ? v->bridge : v->vifname, 16, "%s", val);
	}
	return 0;
}

/* ---- checks, one value at a time --------------------------------------------- */

static int check_name(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	const char *s = cfg_opt_getnstr(opt, i);

	if (strcasecmp(s, "Domain-0") == 0) {
		snprintf(why, whylen, "'%s' is the host's name", s);
		return -EINVAL;
	}
	if (!domain_name_valid(s)) {
		snprintf(why, whylen, "'%s' is not a name: %s", s, domain_name_rule());
		return -EINVAL;
	}
	return 0;
}

static int check_memory(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	long mib = cfg_opt_getnint(opt, i);

	if (mib == 0 && strcmp(opt->name, "maxmem") == 0)
		return 0;                       /* maxmem 0: same as memory */
	if (mib < MEMORY_MIN_MIB || mib > (long)MEMORY_MAX_MIB) {
		snprintf(why, whylen, "%ld MiB is out of range (%d to %u)", mib, MEMORY_MIN_MIB, MEMORY_MAX_MIB);
		return -ERANGE;
	}
	return 0;
}

static int check_vcpus(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	long n = cfg_opt_getnint(opt, i);

	if (n < 1 || n > VCPUS_MAX) {
		snprintf(why, whylen, "%ld is out of range (1 to %d)", n, VCPUS_MAX);
		return -ERANGE;
	}
	return 0;
}

/* kernel, ramdisk: a readable file ("" for ramdisk: none). */
static int check_readable(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	const char *s = cfg_opt_getnstr(opt, i);
	char path[CFG_PATH_MAX];
	struct stat st;
	int fd, rc = 0;

	if (!s[0] && strcmp(opt->name, "kernel") != 0)
		return 0;
	if (cfg_resolve(ctx, s, path, sizeof(path))) {
		snprintf(why, whylen, "path is too long");
		return -ENAMETOOLONG;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whylen, "cannot read '%s': %s", path, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "'%s' is a directory", path);
		rc = -EISDIR;
	}
	close(fd);
	return rc;
}

static int check_text(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	const char *s = cfg_opt_getnstr(opt, i);

	if (strlen(s) >= sizeof(((struct domain_config *)0)->cmdline)) {
		snprintf(why, whylen, "longer than %zu bytes", sizeof(((struct domain_config *)0)->cmdline) - 1);
		return -E2BIG;
	}
	return 0;
}

static int check_disk(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	static struct cfg_disk disk, other;    /* 4 KiB paths: not on the stack */
	unsigned j;

	if (i >= CFG_MAX_DISKS) {
		snprintf(why, whylen, "more than %d disks", CFG_MAX_DISKS);
		return -E2BIG;
	}
	if (cfg_parse_disk(ctx, cfg_opt_getnstr(opt, i), &disk, why, whylen))
		return -EINVAL;
	for (j = 0; j < i; j++)
		if (cfg_parse_disk(ctx, cfg_opt_getnstr(opt, j), &other, why, whylen) == 0 &&
		    strcmp(other.vdev, disk.vdev) == 0) {
			snprintf(why, whylen, "two disks are %s (disks %u and %u)", disk.vdev, j + 1, i + 1);
			return -EEXIST;
		}
	return 0;
}

static int check_vif(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	struct cfg_vif vif, other;
	const char *bridge;
	unsigned j;

	if (i >= CFG_MAX_VIFS) {
		snprintf(why, whylen, "more than %d vifs", CFG_MAX_VIFS);
		return -E2BIG;
	}
	if (cfg_parse_vif(cfg_opt_getnstr(opt, i), &vif, why, whylen))
		return -EINVAL;
	for (j = 0; j < i; j++) {
		if (cfg_parse_vif(cfg_opt_getnstr(opt, j), &other, why, whylen))
			continue;
		if (vif.mac_set && other.mac_set && !memcmp(vif.mac, other.mac, 6)) {
			snprintf(why, whylen, "vifs %u and %u have the same mac", j + 1, i + 1);
			return -EEXIST;
		}
		if (vif.vifname[0] && !strcmp(vif.vifname, other.vifname)) {
			snprintf(why, whylen, "vifs %u and %u are both named %s", j + 1, i + 1, vif.vifname);
			return -EEXIST;
		}
	}
	bridge = vif.bridge[0] ? vif.bridge : ctx->hc ? ctx->hc->default_bridge : "";
	if (ctx->check_bridges && bridge[0] && !nl_link_exists(bridge)) {
		snprintf(why, whylen, "bridge '%s' does not exist (lodge bridge-create %s)", bridge, bridge);
		return -ENODEV;
	}
	return 0;
}

static int check_action(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	enum domain_action act;

	return cfg_parse_action(cfg_opt_getnstr(opt, i), &act, why, whylen);
}

static int check_dir(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	if (!cfg_opt_getnstr(opt, i)[0]) {
		snprintf(why, whylen, "empty path");
		return -EINVAL;
	}
	return 0;
}

static int check_ifname(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	return netif_name_check(cfg_opt_getnstr(opt, i), why, whylen);
}

static int check_log_size(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	long kib = cfg_opt_getnint(opt, i);

	if (kib < LOG_MIN_KIB || kib > (long)LOG_MAX_KIB) {
		snprintf(why, whylen, "%ld KiB is out of range (%d to %u)", kib, LOG_MIN_KIB, LOG_MAX_KIB);
		return -ERANGE;
	}
	return 0;
}

/* cpus = "0-1" or [ "0", "1" ]: every CPU named must be on this host. */
static int check_cpus(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	const char *s = cfg_opt_getnstr(opt, i);
	cpu_set_t host, set;

	if (i >= CFG_MAX_VCPUS) {
		snprintf(why, whylen, "more than %d CPU lists (one per vCPU at most)", CFG_MAX_VCPUS);
		return -E2BIG;
	}
	if (strlen(s) >= CFG_CPUS_MAX) {
		snprintf(why, whylen, "'%.32s...' is longer than %d bytes", s, CFG_CPUS_MAX - 1);
		return -E2BIG;
	}
	if (cpulist_host(&host)) {
		snprintf(why, whylen, "cannot read this host's CPUs");
		return -EIO;
	}
	return cpulist_parse(s, &host, &set, why, whylen);
}

static int check_weight(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	long w = cfg_opt_getnint(opt, i);

	if (w < CGROUP_WEIGHT_MIN || w > CGROUP_WEIGHT_MAX) {
		snprintf(why, whylen, "%ld is out of range (%d to %d, default %d)", w, CGROUP_WEIGHT_MIN,
			 CGROUP_WEIGHT_MAX, CGROUP_WEIGHT_DEFAULT);
		return -ERANGE;
	}
	return 0;
}

/* The bound that depends on vcpus is checked once both are known. */
static int check_cap(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	long cap = cfg_opt_getnint(opt, i);

	if (cap < 0 || cap > 100L * VCPUS_MAX) {
		snprintf(why, whylen, "%ld is out of range (0 to %d percent of one CPU, 0: no cap)", cap,
			 100 * VCPUS_MAX);
		return -ERANGE;
	}
	return 0;
}

/* cgroup = "lodge": a relative path under the CPU controller's mount. */
static int check_cgroup(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	const char *s = cfg_opt_getnstr(opt, i);
	size_t len = strlen(s);

	if (!len || len >= 256 || s[0] == '/' || s[len - 1] == '/' || strstr(s, "//") || strstr(s, "..") ||
	    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-/") != len) {
		snprintf(why, whylen, "'%s' is not a relative cgroup path like lodge or lodge.slice/domains", s);
		return -EINVAL;
	}
	return 0;
}

/* The migration secret: a file only its owner may read (it lets a peer
 * put any guest on this host). */
static int check_secret_file(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	const char *s = cfg_opt_getnstr(opt, i);
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

/* ADDR:PORT, with [v6]:PORT for IPv6. */
static int check_listen(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	const char *s = cfg_opt_getnstr(opt, i), *colon = strrchr(s, ':');
	char *end;
	long port;

	port = colon ? strtol(colon + 1, &end, 10) : -1;
	if (!colon || colon == s || *end || port < 1 || port > 65535) {
		snprintf(why, whylen, "'%s' is not ADDRESS:PORT like 127.0.0.1:8002", s);
		return -EINVAL;
	}
	return 0;
}

/* ---- the tables ------------------------------------------------------------- */

const struct cfg_key domain_keys[] = {
	{ "name",        KT_STR,  NULL,      check_name,     "the domain's name (required)" },
	{ "memory",      KT_INT,  "128",     check_memory,   "RAM in MiB" },
	{ "maxmem",      KT_INT,  "0",       check_memory,   "ceiling in MiB, >= memory (0: = memory)" },
	{ "vcpus",       KT_INT,  "1",       check_vcpus,    "virtual CPUs, 1 to 64" },
	{ "kernel",      KT_STR,  NULL,      check_readable, "ELF (PVH) or bzImage to boot (required)" },
	{ "ramdisk",     KT_STR,  NULL,      check_readable, "initrd loaded beside the kernel" },
	{ "cmdline",     KT_STR,  NULL,      check_text,     "kernel command line; overrides root and extra" },
	{ "root",        KT_STR,  NULL,      check_text,     "becomes root=ROOT on the command line" },
	{ "extra",       KT_STR,  NULL,      check_text,     "appended to the command line after root=" },
	{ "disk",        KT_LIST, NULL,      check_disk,     "disk specs: 'file:PATH,VDEV,ACCESS' or 'TARGET,FORMAT,VDEV,ACCESS'" },
	{ "vif",         KT_LIST, NULL,      check_vif,      "network interfaces: 'bridge=BR,mac=MAC,vifname=NAME'" },
	{ "on_poweroff", KT_STR,  "destroy", check_action,   "when the guest powers off: destroy, restart, preserve" },
	{ "on_reboot",   KT_STR,  "restart", check_action,   "when the guest reboots" },
	{ "on_crash",    KT_STR,  "destroy", check_action,   "when the guest crashes (triple fault)" },
	{ "autostart",   KT_BOOL, "false",   NULL,           "lodge autostart starts it at boot" },
	{ "cpus",        KT_LIST, NULL,      check_cpus,     "host CPUs the vCPUs may run on: '0-1', '0,2', 'all', or one list per vCPU" },
	{ "cpu_weight",  KT_INT,  "256",     check_weight,   "share of CPU time against other domains, 1 to 65535" },
	{ "cap",         KT_INT,  "0",       check_cap,      "most CPU it may use, percent of one CPU (0: no cap)" },
	{ "ksm",         KT_BOOL, "false",   NULL,           "let the host merge identical pages of guest RAM (KSM)" },
	{ "hugepages",   KT_BOOL, "false",   NULL,           "back guest RAM with transparent huge pages" },
	{ NULL, 0, NULL, NULL, NULL }
};

/* control_group = "lodge" or "1234": a group that exists, or a number ("": none). */
static int check_group(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	const char *s = cfg_opt_getnstr(opt, i);

	if (!*s)
		return 0;                 /* none: root only */
	if (cfg_group_id(s) < 0) {
		snprintf(why, whylen, "no group '%s' on this host (a name from /etc/group or a number)", s);
		return -1;
	}
	return 0;
}

/* storage_dirs, kernel_dirs: absolute directories. */
static int check_abs_dir(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	const char *s = cfg_opt_getnstr(opt, i);

	if (i >= CFG_LIST_MAX) {
		snprintf(why, whylen, "more than %d entries", CFG_LIST_MAX);
		return -E2BIG;
	}
	if (s[0] != '/' || strlen(s) >= CFG_LIST_ITEM_MAX) {
		snprintf(why, whylen, "'%.64s' is not an absolute path of fewer than %d bytes", s, CFG_LIST_ITEM_MAX);
		return -EINVAL;
	}
	return 0;
}

/* storage_devices: absolute shell patterns under /dev ("/dev/vg0/\*"). */
static int check_dev_pattern(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	const char *s = cfg_opt_getnstr(opt, i);

	if (check_abs_dir(ctx, opt, i, why, whylen))
		return -EINVAL;
	if (strncmp(s, "/dev/", 5) != 0 || strstr(s, "/../") || strstr(s, "/./")) {
		snprintf(why, whylen, "'%s' is not a pattern of block devices under /dev/, like /dev/vg0/*", s);
		return -EINVAL;
	}
	return 0;
}

static int check_ifname_list(const struct load_ctx *ctx, cfg_opt_t *opt, unsigned i, char *why, size_t whylen)
{
	if (i >= CFG_LIST_MAX) {
		snprintf(why, whylen, "more than %d entries", CFG_LIST_MAX);
		return -E2BIG;
	}
	return netif_name_check(cfg_opt_getnstr(opt, i), why, whylen);
}

/* Paths here: defaults get the --root prefix; values are used as written. */
const struct cfg_key host_keys[] = {
	{ "runtime_dir",      KT_STR, "/run/lodge",            check_dir,      "control sockets and logs of running domains" },
	{ "domains_dir",      KT_STR, "/etc/lodge/domains",    check_dir,      "NAME.cfg files for lodge create NAME" },
	{ "image_dir",        KT_STR, "/var/lib/lodge/images", check_dir,      "where disk images are kept" },
	{ "default_bridge",   KT_STR, "lodgebr0",              check_ifname,   "bridge of a vif without bridge=" },
	{ "console_log_size", KT_INT, "1024",                  check_log_size, "console log kept per domain, KiB" },
	{ "cgroup",           KT_STR, "lodge",                 check_cgroup,   "parent of the domains' CPU cgroups, under the CPU controller" },
	{ "control_group",    KT_STR, "",                      check_group,    "group whose members may control every domain (root always may)" },
	{ "stats_group",      KT_STR, "",                      check_group,    "group whose members may read every domain's status" },
	{ "migration_listen", KT_STR, "127.0.0.1:8002",        check_listen,   "where lodge migrate-receive listens (Xen's relocation port)" },
	{ "migration_secret_file", KT_STR, "",                 check_secret_file, "shared secret both ends of a migration prove they know" },
	{ "storage_dirs",     KT_LIST, NULL,                   check_abs_dir,  "disk images a restored or migrated domain may use: files under these (default image_dir)" },
	{ "storage_devices",  KT_LIST, NULL,                   check_dev_pattern, "block devices a restored or migrated domain may use (patterns like /dev/vg0/*)" },
	{ "kernel_dirs",      KT_LIST, NULL,                   check_abs_dir,  "kernels and ramdisks a restored or migrated domain may boot from (default Lodge's share directories)" },
	{ "bridges",          KT_LIST, NULL,                   check_ifname_list, "bridges a restored or migrated domain may join besides default_bridge" },
	{ NULL, 0, NULL, NULL, NULL }
};

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

const struct cfg_key *cfg_find_key(const struct cfg_key *keys, const char *name)
{
	for (; keys->name; keys++)
		if (strcmp(keys->name, name) == 0)
			return keys;
	return NULL;
}

/* xl writes 1 and 0; libconfuse knows only the words. */
static int parse_bool(cfg_t *cfg, cfg_opt_t *opt, const char *value, void *result)
{
	static const char *const yes[] = { "1", "true", "yes", "on" }, *const no[] = { "0", "false", "no", "off" };
	unsigned i;

	for (i = 0; i < 4; i++)
		if (strcasecmp(value, yes[i]) == 0 || strcasecmp(value, no[i]) == 0) {
			*(cfg_bool_t *)result = strcasecmp(value, yes[i]) == 0 ? cfg_true : cfg_false;
			return 0;
		}
	cfg_error(cfg, "'%s' is not true or false for option '%s'", value, opt->name);
	return -1;
}

unsigned cfg_build_opts(const struct cfg_key *keys, cfg_opt_t *opts)
{
	unsigned n;

	for (n = 0; keys[n].name && n < MAX_KEYS; n++) {
		const struct cfg_key *k = &keys[n];

		switch (k->type) {
		case KT_STR:
			opts[n] = (cfg_opt_t)CFG_STR(k->name, k->def, CFGF_NONE);
			break;
		case KT_INT:
			opts[n] = (cfg_opt_t)CFG_INT(k->name, k->def ? atol(k->def) : 0, CFGF_NONE);
			break;
		case KT_BOOL:
			opts[n] = (cfg_opt_t)CFG_BOOL_CB(k->name, k->def && !strcmp(k->def, "true") ? cfg_true : cfg_false,
							  CFGF_NONE, parse_bool);
			break;
		case KT_LIST:
			opts[n] = (cfg_opt_t)CFG_STR_LIST(k->name, NULL, CFGF_NONE);
			break;
		}
	}
	opts[n] = (cfg_opt_t)CFG_END();
	return n;
}
