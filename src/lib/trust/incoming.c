/* What a domain from a stream may use on this host (incoming.h). */
#include "incoming.h"
#include "network.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct admit {
	const struct host_config *hc;
	const char *name;
	struct domain_config *local;       /* this host's config of the domain, or NULL */
	char local_file[CFG_PATH_MAX + DOMAIN_NAME_MAX + 8];
	char local_err[512];               /* why it did not load, if it exists */
};

/* realpath into a buffer of ours; 0 or -errno. */
static int real_path(const char *path, char out[PATH_MAX])
{
	return realpath(path, out) ? 0 : -errno;
}

static bool same_file(const char *a_real, const char *b)
{
	char real[PATH_MAX];

	return b[0] && real_path(b, real) == 0 && strcmp(a_real, real) == 0;
}

/* real lies inside one of dirs (each resolved the same way). */
static bool under_dir(const char *real, const struct cfg_list *dirs)
{
	char d[PATH_MAX];
	unsigned i;

	for (i = 0; i < dirs->n; i++) {
		size_t len;

		if (real_path(dirs->item[i], d))
			continue;
		len = strlen(d);
		if (strcmp(d, "/") == 0 || (strncmp(real, d, len) == 0 && real[len] == '/'))
			return true;
	}
	return false;
}

/* A path with no "." or ".." component and no empty one: a pattern's
 * "*" then cannot reach out of the directory the pattern names. */
static bool plain_path(const char *p)
{
	const char *c = p, *end;

	if (*p != '/')
		return false;
	for (; *c; c = end) {
		size_t len;

		c++;                              /* past the '/' */
		end = strchrnul(c, '/');
		len = (size_t)(end - c);
		if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
	}
	return true;
}

static bool device_allowed(const char *given, const char *real, const struct cfg_list *patterns)
{
	unsigned i;

	for (i = 0; i < patterns->n; i++)
		if ((plain_path(given) && fnmatch(patterns->item[i], given, FNM_PATHNAME) == 0) ||
		    fnmatch(patterns->item[i], real, FNM_PATHNAME) == 0)
			return true;
	return false;
}

static bool in_list(const char *s, const struct cfg_list *l)
{
	unsigned i;

	for (i = 0; i < l->n; i++)
		if (strcmp(s, l->item[i]) == 0)
			return true;
	return false;
}

/* What this host's own config says, for the message: "web.cfg names no
 * such disk" / "this host has no config of domain web". */
static void local_says(const struct admit *a, const char *what, char *out, size_t len)
{
	if (a->local)
		snprintf(out, len, "%s %s", a->local_file, what);
	else if (a->local_err[0])
		snprintf(out, len, "this host's config of domain %s does not load (%s)", a->name, a->local_err);
	else
		snprintf(out, len, "this host has no config of domain %s (%s)", a->name, a->local_file);
}

static int admit_disk(struct admit *a, struct cfg_disk *d, char *why, size_t whylen)
{
	char real[PATH_MAX], local[CFG_PATH_MAX + 1200];
	bool local_ro = false;
	struct stat st;
	unsigned i;
	int rc;

	if ((rc = real_path(d->path, real)) || stat(real, &st) < 0) {
		snprintf(why, whylen, "its disk %s (%s): %s", d->path, d->vdev, strerror(rc ? -rc : errno));
		return rc ? rc : -errno;
	}
	for (i = 0; a->local && i < a->local->ndisks; i++) {
		if (!same_file(real, a->local->disks[i].path))
			continue;
		if (d->readonly || !a->local->disks[i].readonly)
			goto admitted;
		local_ro = true;
	}
	if (S_ISREG(st.st_mode) && under_dir(real, &a->hc->storage_dirs))
		goto admitted;
	if (S_ISBLK(st.st_mode) && device_allowed(d->path, real, &a->hc->storage_devices))
		goto admitted;
	local_says(a, local_ro ? "names it read-only" : "names no such disk", local, sizeof(local));
	snprintf(why, whylen, "its disk %s (%s) is not this host's to give: %s, and it is not %s in lodge.conf",
		 d->path, d->vdev, local,
		 S_ISBLK(st.st_mode) ? "a block device matching storage_devices" : "a file under storage_dirs");
	return -EACCES;
admitted:
	snprintf(d->path, sizeof(d->path), "%s", real);
	d->checked = true;
	return 0;
}

/* kernel or ramdisk: what the guest's memory is filled with at each boot. */
static int admit_boot_file(struct admit *a, const char *what, char *path, size_t pathlen, const char *local_path,
			   char *why, size_t whylen)
{
	char real[PATH_MAX], local[CFG_PATH_MAX + 1200], differs[64];
	int rc;

	if (!path[0])
		return 0;
	if ((rc = real_path(path, real))) {
		snprintf(why, whylen, "its %s %s: %s", what, path, strerror(-rc));
		return rc;
	}
	if (!(a->local && same_file(real, local_path)) && !under_dir(real, &a->hc->kernel_dirs)) {
		snprintf(differs, sizeof(differs), "names another %s", what);
		local_says(a, differs, local, sizeof(local));
		snprintf(why, whylen, "its %s %s is not this host's to give: %s, and it is not under kernel_dirs "
			 "in lodge.conf", what, path, local);
		return -EACCES;
	}
	snprintf(path, pathlen, "%s", real);
	return 0;
}

static int admit_vif(struct admit *a, unsigned n, const struct cfg_vif *v, char *why, size_t whylen)
{
	const char *bridge = v->bridge[0] ? v->bridge : a->hc->default_bridge;
	char local[CFG_PATH_MAX + 1200], netbr_own[IFNAMSIZ], on_net[IFNAMSIZ + 64] = "";
	bool bridge_ok, name_ok = !v->vifname[0];
	unsigned i;

	/* A vif on a Lodge network joins the network's bridge: the same rule. */
	if (!v->bridge[0] && v->network[0]) {
		if (net_bridge_of(v->network, netbr_own)) {
			snprintf(why, whylen, "its vif %u is on network %s, which this host does not have", n + 1,
				 v->network);
			return -ENOENT;
		}
		bridge = netbr_own;
		snprintf(on_net, sizeof(on_net), " (network %s's)", v->network);
	}
	bridge_ok = strcmp(bridge, a->hc->default_bridge) == 0 || in_list(bridge, &a->hc->bridges);

	for (i = 0; a->local && i < a->local->nvifs; i++) {
		const struct cfg_vif *l = &a->local->vifs[i];

		const char *lb = l->bridge[0] ? l->bridge : a->hc->default_bridge;
		char netbr[IFNAMSIZ];

		/* A vif on a Lodge network: its bridge is the network's. */
		if (!l->bridge[0] && l->network[0] && net_bridge_of(l->network, netbr) == 0)
			lb = netbr;
		bridge_ok |= strcmp(bridge, lb) == 0;
		name_ok |= strcmp(v->vifname, l->vifname) == 0;
	}
	if (!bridge_ok) {
		local_says(a, "names no vif on it", local, sizeof(local));
		snprintf(why, whylen, "its vif %u joins bridge %s%s, which is not this host's to give: it is not "
			 "default_bridge (%s) nor in bridges in lodge.conf, and %s", n + 1, bridge, on_net,
			 a->hc->default_bridge, local);
		return -EACCES;
	}
	if (!name_ok) {
		local_says(a, "names no vif so", local, sizeof(local));
		snprintf(why, whylen, "its vif %u is named %s (vifname=), a host interface only this host's "
			 "config may name: %s", n + 1, v->vifname, local);
		return -EACCES;
	}
	return 0;
}

int incoming_admit_part(struct domain_config *dc, const struct host_config *hc, enum incoming_part *part, char *why,
			size_t whylen)
{
	struct admit a = { .hc = hc, .name = dc->name };
	unsigned i;
	int rc = 0;

	snprintf(a.local_file, sizeof(a.local_file), "%s/%s.cfg", hc->domains_dir, dc->name);
	if (access(a.local_file, F_OK) == 0) {
		if (!(a.local = malloc(sizeof(*a.local))))
			return -ENOMEM;
		if (domain_config_load(a.local_file, hc, false, a.local, a.local_err, sizeof(a.local_err)) ||
		    strcmp(a.local->name, dc->name) != 0) {
			if (!a.local_err[0])
				snprintf(a.local_err, sizeof(a.local_err), "it names domain %s", a.local->name);
			free(a.local);
			a.local = NULL;
		}
	}
	*part = INCOMING_DISK;
	for (i = 0; !rc && i < dc->ndisks; i++)
		rc = admit_disk(&a, &dc->disks[i], why, whylen);
	if (!rc && (*part = INCOMING_KERNEL))
		rc = admit_boot_file(&a, "kernel", dc->kernel, sizeof(dc->kernel), a.local ? a.local->kernel : "",
				     why, whylen);
	if (!rc && (*part = INCOMING_RAMDISK))
		rc = admit_boot_file(&a, "ramdisk", dc->ramdisk, sizeof(dc->ramdisk),
				     a.local ? a.local->ramdisk : "", why, whylen);
	if (!rc)
		*part = INCOMING_VIF;
	for (i = 0; !rc && i < dc->nvifs; i++)
		rc = admit_vif(&a, i, &dc->vifs[i], why, whylen);
	free(a.local);
	if (!rc)
		*part = INCOMING_NONE;
	return rc;
}

int incoming_admit(struct domain_config *dc, const struct host_config *hc, char *why, size_t whylen)
{
	enum incoming_part part;

	return incoming_admit_part(dc, hc, &part, why, whylen);
}

bool incoming_lends(const char *given, const char *real, mode_t type, const struct host_config *hc)
{
	return (S_ISREG(type) && under_dir(real, &hc->storage_dirs)) ||
	       (S_ISBLK(type) && device_allowed(given, real, &hc->storage_devices));
}

int incoming_admit_new_file(const char *dir, const struct host_config *hc, char *why, size_t whylen)
{
	char real[PATH_MAX];
	size_t len;
	int rc;

	if ((rc = real_path(dir, real))) {
		snprintf(why, whylen, "%s: %s", dir, strerror(-rc));
		return rc;
	}
	/* dir itself may be a storage_dirs entry: a file in it is under it. */
	len = strlen(real);
	if (len + 2 > sizeof(real) || !under_dir(strcat(real, "/"), &hc->storage_dirs)) {
		snprintf(why, whylen, "a new disk in %s is not this host's to give: it is not under storage_dirs in "
			 "lodge.conf", dir);
		return -EACCES;
	}
	return 0;
}
