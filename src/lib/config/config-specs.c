/* The values of a domain file that are small languages of their own:
 * disk and vif specs, MACs, actions (config-keys.h). */
#include "config-keys.h"
#include "netlink.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
	if (strcmp(text, "rename-restart") == 0 || strcmp(text, "soft-reset") == 0)
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

/* slot=N of a disk or vif: a PCI slot a device may have (schema.h). */
static int parse_pci_slot(const char *s, unsigned *slot, char *why, size_t whylen)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || v < DOMAIN_PCI_SLOT_MIN || v > DOMAIN_PCI_SLOT_MAX) {
		snprintf(why, whylen, "slot '%s' is not a PCI slot from %d to %d", s, DOMAIN_PCI_SLOT_MIN,
			 DOMAIN_PCI_SLOT_MAX);
		return -EINVAL;
	}
	*slot = (unsigned)v;
	return 0;
}

/* The 2005 form "file:/img,vda,w" / "phy:/dev/vg/x,vdb,r", xl's positional
 * "target,format,vdev,access" (shorter: "target,vdev[,access]" or
 * "target,format,vdev"), and xl's "vdev=..,access=..,target=..". */
int cfg_parse_disk(const struct load_ctx *ctx, const char *spec, struct cfg_disk *d, char *why, size_t whylen)
{
	char buf[CFG_PATH_MAX + 64], *f[8], *target = NULL, *format = NULL, *vdev = NULL, *access = NULL;
	char *slot = NULL;
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
			else if (!strcmp(k, "slot")) slot = eq + 1;
			else {
				snprintf(why, whylen, "unknown disk key '%s' (target, format, vdev, access, slot)", k);
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
	if (slot && parse_pci_slot(slot, &d->slot, why, whylen))
		return -EINVAL;
	snprintf(d->vdev, sizeof(d->vdev), "%s", vdev);
	d->readonly = access && access[0] == 'r' && (access[1] == '\0' || access[1] == 'o');
	d->is_phy = phy || S_ISBLK(st.st_mode);
	return 0;
}

/* A vif spec's keys, each with the part it is (enum vif_part). */
static const struct {
	const char *key;
	enum vif_part part;
} vif_keys[] = {
	{ "bridge", VIF_PART_BRIDGE }, { "network", VIF_PART_NETWORK }, { "mac", VIF_PART_MAC },
	{ "vifname", VIF_PART_VIFNAME }, { "slot", VIF_PART_SLOT },
};

static int vif_fail(enum vif_part *part, enum vif_part which)
{
	if (part)
		*part = which;
	return -EINVAL;
}

/* "bridge=br0,mac=02:4c:..,vifname=web0" or "network=NAT,..."; every key
 * optional, bridge and network not both. */
int cfg_parse_vif(const char *spec, struct cfg_vif *v, enum vif_part *part, char *why, size_t whylen)
{
	char buf[256], *f[8], err[128];
	unsigned k;
	int n, i;

	memset(v, 0, sizeof(*v));
	if (strlen(spec) >= sizeof(buf) || (n = split_fields(strcpy(buf, spec), f, 8)) < 0) {
		snprintf(why, whylen, "vif '%.64s' is too long", spec);
		return vif_fail(part, VIF_PART_SPEC);
	}
	for (i = 0; i < n; i++) {
		char *eq = strchr(f[i], '='), *val;

		if (!f[i][0] && n == 1)
			break;                  /* vif = [ '' ]: all defaults, as xl */
		if (!eq) {
			snprintf(why, whylen, "'%s' in vif '%s' is not KEY=VALUE", f[i], spec);
			return vif_fail(part, VIF_PART_SPEC);
		}
		*eq = '\0';
		val = eq + 1;
		for (k = 0; k < sizeof(vif_keys) / sizeof(vif_keys[0]) && strcmp(f[i], vif_keys[k].key); k++)
			;
		if (k == sizeof(vif_keys) / sizeof(vif_keys[0])) {
			snprintf(why, whylen, "unknown vif key '%s' (bridge, network, mac, vifname, slot)", f[i]);
			return vif_fail(part, VIF_PART_SPEC);
		}
		switch (vif_keys[k].part) {
		case VIF_PART_MAC:
			if (cfg_parse_mac(val, v->mac, why, whylen))
				return vif_fail(part, VIF_PART_MAC);
			v->mac_set = true;
			break;
		case VIF_PART_SLOT:
			if (parse_pci_slot(val, &v->slot, why, whylen))
				return vif_fail(part, VIF_PART_SLOT);
			break;
		case VIF_PART_NETWORK:
			if (network_name_check(val, err, sizeof(err))) {
				snprintf(why, whylen, "network: %s", err);
				return vif_fail(part, VIF_PART_NETWORK);
			}
			snprintf(v->network, sizeof(v->network), "%s", val);
			break;
		default:                        /* bridge, vifname: an interface's name */
			if (netif_name_check(val, err, sizeof(err))) {
				snprintf(why, whylen, "%s: %s", f[i], err);
				return vif_fail(part, vif_keys[k].part);
			}
			snprintf(vif_keys[k].part == VIF_PART_BRIDGE ? v->bridge : v->vifname, IFNAMSIZ, "%s", val);
		}
	}
	if (v->network[0] && v->bridge[0]) {
		snprintf(why, whylen, "vif '%.64s' names both a bridge and a network (one or the other)", spec);
		return vif_fail(part, VIF_PART_SPEC);
	}
	return 0;
}

/* The public face of cfg_parse_disk (config.h): a disk spec alone, as a
 * file named label would hold it, relative paths kept as written. */
int domain_disk_spec_parse(const char *label, const char *spec, struct cfg_disk *d, char *why, size_t whylen)
{
	struct load_ctx ctx = { .file = label, .dir = "." };

	return cfg_parse_disk(&ctx, spec, d, why, whylen);
}

int domain_mac_parse(const char *text, uint8_t mac[6], char *why, size_t whylen)
{
	return cfg_parse_mac(text, mac, why, whylen);
}
