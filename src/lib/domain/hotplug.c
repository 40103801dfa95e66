/* Hot-plug of a running domain's disks (lodge.h): the caller's side.
 * The disk is opened here, with the caller's own rights, and passed to
 * lodge-hyp, whose sandbox opens nothing by path; lodge-hyp locks it as it
 * locks the disks it starts with.  The runtime config follows. */
#include "config-keys.h"
#include "disknames.h"
#include "internal.h"
#include "network.h"
#include "proto.h"
#include "runtime.h"
#include "netlink.h"
#include "tapdev.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A path as one word of a request line: %XX for what would split it. */
static int escape(const char *in, char *out, size_t len)
{
	size_t n = 0;

	for (; *in; in++) {
		unsigned char ch = (unsigned char)*in;

		if (n + 4 > len)
			return -ENAMETOOLONG;
		if (ch <= ' ' || ch == '%' || ch >= 0x7f)
			n += (size_t)snprintf(out + n, len - n, "%%%02X", ch);
		else
			out[n++] = (char)ch;
	}
	out[n] = '\0';
	return 0;
}

static int save_runtime_config(const struct lodge *lg, const char *name, const struct domain_config *dc,
			       char *why, size_t whylen)
{
	char path[CFG_PATH_MAX + DOMAIN_NAME_MAX + 16];

	if (runtime_path(path, sizeof(path), lg->hc.runtime_dir, name, RT_CONFIG))
		return -ENAMETOOLONG;
	return lodge_keep_config(lg, path, dc, why, whylen);
}

/* Each device's PCI slot into dc, from lodge-hyp's status (disk_slots,
 * vif_slots: in config order), so that the runtime config a restore or
 * migration starts from rebuilds the same bus.  0 or -errno. */
static int note_slots(const struct lodge *lg, const char *name, struct domain_config *dc, struct lodge_err *err)
{
	static struct reply r;
	const char *d, *v;
	unsigned i;
	int rc;

	if ((rc = lodge_ask_name(lg, name, "status", true, &r, err)))
		return rc;
	if (!(d = reply_get(&r, proto_status_key(PROTO_KEY_DISK_SLOTS))) ||
	    !(v = reply_get(&r, proto_status_key(PROTO_KEY_VIF_SLOTS))))
		return lodge_fail(err, -EPROTO, "domain %s's lodge-hyp does not say where its devices are", name);
	for (i = 0; i < dc->ndisks; i++, d = strchr(d, ' ') ? strchr(d, ' ') + 1 : d + strlen(d))
		dc->disks[i].slot = (unsigned)strtoul(d, NULL, 10);
	for (i = 0; i < dc->nvifs; i++, v = strchr(v, ' ') ? strchr(v, ' ') + 1 : v + strlen(v))
		dc->vifs[i].slot = (unsigned)strtoul(v, NULL, 10);
	return 0;
}

/* The runtime config must follow the device: a caller who may drive the
 * domain but not rewrite that file (a control-group member; it is
 * root's) is refused before anything changes. */
static int may_keep_config(const struct lodge *lg, const char *name, struct lodge_err *err)
{
	char path[CFG_PATH_MAX + DOMAIN_NAME_MAX + 16];

	if (runtime_path(path, sizeof(path), lg->hc.runtime_dir, name, RT_CONFIG))
		return lodge_fail(err, -ENAMETOOLONG, "%s/%s: path too long", lg->hc.runtime_dir, name);
	if (access(path, W_OK) < 0)
		return lodge_fail(err, -EACCES, "cannot change domain %s's devices: its runtime config %s is not "
				  "yours to rewrite (%s)", name, path, strerror(errno));
	return 0;
}

/* Read the reply to a request whose keys follow "ok": r, or -errno. */
static int read_reply(int fd, struct reply *r, int timeout_ms)
{
	char buf[4096], line[1024];
	size_t n = 0;
	int len;

	r->error[0] = '\0';
	r->nkeys = 0;
	for (;;) {
		if ((len = client_read_line(fd, line, sizeof(line), timeout_ms)) < 0)
			return len;
		if (n + (size_t)len + 2 >= sizeof(buf))
			return -EPROTO;
		memcpy(buf + n, line, (size_t)len);
		n += (size_t)len;
		buf[n++] = '\n';
		buf[n] = '\0';
		if (!strncmp(buf, "error", 5) || len == 0)
			break;
	}
	return client_parse_reply(buf, r);
}

int lodge_block_attach(const struct lodge *lg, const char *domain, const char *spec, bool lent_only, char vdev[16],
		       struct lodge_err *err)
{
	static struct domain_config dc;
	struct load_ctx ctx = { .file = "block-attach" };
	struct disk_names dn = { .n = 0 };
	char name[DOMAIN_NAME_MAX], why[1024], path[3 * CFG_PATH_MAX], cmd[PROTO_LINE_MAX], real[4096];
	struct cfg_disk d;
	struct reply r;
	uint32_t shared = 0;
	int rc, fd = -1, ctl = -1, fds[DISK_NAMES_MAX];
	unsigned i;

	if ((rc = lodge_resolve(lg, domain, name, err)) || (rc = lodge_running_config(lg, name, &dc, err)))
		return rc;
	if (!getcwd(ctx.dir, sizeof(ctx.dir)))
		return lodge_fail(err, -errno, "cannot read the working directory: %s", strerror(errno));
	if ((rc = cfg_parse_disk(&ctx, spec, &d, why, sizeof(why))))
		return lodge_fail(err, rc, "disk '%s': %s", spec, why);
	for (i = 0; i < dc.ndisks; i++)
		if (!strcmp(dc.disks[i].vdev, d.vdev))
			return lodge_fail(err, -EEXIST, "domain %s has a disk %s already (%s)", name, d.vdev,
					  dc.disks[i].path);
	if (dc.ndisks == DOMAIN_DISKS_MAX)
		return lodge_fail(err, -ENOSPC, "domain %s has %d disks, the most it may have", name, DOMAIN_DISKS_MAX);

	/* The caller's rights decide (and lodge.conf's, for a caller who is
	 * not the host's root): lodge-hyp gets only what this opened, and
	 * the name is not looked up again; what was opened is what the
	 * runtime config and the messages name. */
	if ((fd = lodge_disk_open(lg, d.path, d.readonly, lent_only, real, err)) < 0)
		return fd;
	if (strlen(real) >= sizeof(d.path)) {
		close(fd);
		return lodge_fail(err, -ENAMETOOLONG, "disk %s: its real path %s is too long", d.path, real);
	}
	snprintf(d.path, sizeof(d.path), "%s", real);
	if (lodge_disk_taken(lg, d.path, why, sizeof(why))) {
		close(fd);
		return lodge_fail(err, -EBUSY, "disk %s: %s", d.path, why);
	}
	if ((rc = may_keep_config(lg, name, err))) {
		close(fd);
		return rc;
	}
	disk_names_collect(&dn, d.path, fd, d.readonly);
	if (dn.warn[0])
		lodge_warn(lg, "%s", dn.warn);
	for (i = 0; i < dn.n; i++) {
		fds[i] = dn.names[i].fd;
		if (dn.names[i].shared && !d.readonly)
			shared |= 1u << i;
	}
	if ((rc = escape(d.path, path, sizeof(path))) ||
	    snprintf(cmd, sizeof(cmd), "disk-attach %x %s%s,id=%s", shared, path, d.readonly ? ",ro" : "",
		     d.vdev) >= (int)sizeof(cmd) - 16) {
		rc = lodge_fail(err, -ENAMETOOLONG, "disk %s: the path is too long to attach", d.path);
		goto out;
	}
	if ((ctl = client_connect(lg->hc.runtime_dir, name)) < 0) {
		rc = ctl == -ENOENT || ctl == -ECONNREFUSED ? lodge_not_running(err, name)
			: lodge_fail(err, ctl, "domain %s: %s", name, strerror(-ctl));
		goto out;
	}
	if ((rc = client_request_fds(ctl, cmd, fds, dn.n)) || (rc = read_reply(ctl, &r, LODGE_REPLY_MS))) {
		rc = lodge_fail(err, rc, "domain %s: %s", name, strerror(-rc));
		goto out;
	}
	if (r.error[0]) {
		rc = lodge_fail(err, -EPROTO, "%s", r.error);
		goto out;
	}
	dc.disks[dc.ndisks++] = d;
	if ((rc = note_slots(lg, name, &dc, err)))
		snprintf(why, sizeof(why), "%.400s", err->msg);
	if (rc || (rc = save_runtime_config(lg, name, &dc, why, sizeof(why)))) {
		rc = lodge_fail(err, rc, "disk %s is attached to domain %s (PCI slot %s), but its runtime config "
				"cannot say so: %s", d.path, name, reply_get(&r, "slot") ? reply_get(&r, "slot") : "?", why);
		goto out;
	}
	if (vdev)
		snprintf(vdev, 16, "%s", d.vdev);
out:
	for (i = 0; i < dn.n; i++)
		close(dn.names[i].fd);
	if (!dn.n)
		close(fd);
	if (ctl >= 0)
		close(ctl);
	return rc;
}

/* lodge-hyp asked to eject the device in PCI slot SLOT, waiting up to
 * TIMEOUT_MS for the guest (FORCE: pulled after that); its refusal, or a
 * guest that did not let go in time (-ETIMEDOUT), as its one line. */
static int detach_slot(const struct lodge *lg, const char *name, unsigned slot, bool force, unsigned timeout_ms,
		       struct lodge_err *err)
{
	char cmd[64];
	struct reply r;
	int rc, ctl;

	snprintf(cmd, sizeof(cmd), "detach %u %u%s", slot, timeout_ms, force ? " force" : "");
	if ((ctl = client_connect(lg->hc.runtime_dir, name)) < 0)
		return ctl == -ENOENT || ctl == -ECONNREFUSED ? lodge_not_running(err, name)
			: lodge_fail(err, ctl, "domain %s: %s", name, strerror(-ctl));
	rc = client_request(ctl, cmd, 1, &r, (int)timeout_ms + LODGE_REPLY_MS);
	close(ctl);
	if (rc)
		return lodge_fail(err, rc, "domain %s: %s", name, strerror(-rc));
	if (r.error[0])
		return lodge_fail(err, strstr(r.error, "in time") ? -ETIMEDOUT : -EPROTO, "%s", r.error);
	return 0;
}

/* DC, a device (WHAT ID: "disk xvdb", "vif 1") just detached and taken out
 * of it, is the domain's runtime config from now on, with its slots. */
static int save_detached(const struct lodge *lg, const char *name, struct domain_config *dc, const char *what,
			 const char *id, struct lodge_err *err)
{
	char why[512];
	int rc;

	if ((rc = note_slots(lg, name, dc, err)))
		snprintf(why, sizeof(why), "%.400s", err->msg);
	if (rc || (rc = save_runtime_config(lg, name, dc, why, sizeof(why))))
		return lodge_fail(err, rc, "%s %s is detached from domain %s, but its runtime config cannot say so: %s",
				  what, id, name, why);
	return 0;
}

/* The slot of the i-th disk, from lodge-hyp's status ("disk_slots 1 4"). */
static int disk_slot(const struct lodge *lg, const char *name, unsigned i, unsigned *slot, struct lodge_err *err)
{
	static struct reply r;
	const char *v;
	char *end;
	int rc;

	if ((rc = lodge_ask_name(lg, name, "status", true, &r, err)))
		return rc;
	if (!(v = reply_get(&r, proto_status_key(PROTO_KEY_DISK_SLOTS))))
		return lodge_fail(err, -EPROTO, "domain %s's lodge-hyp does not say where its disks are "
				  "(an older lodge-hyp?)", name);
	for (; i > 0 && v; i--)
		if ((v = strchr(v, ' ')))
			v++;
	if (!v || (*slot = (unsigned)strtoul(v, &end, 10)) == 0)
		return lodge_fail(err, -EPROTO, "domain %s's lodge-hyp lists fewer disks than its config", name);
	return 0;
}

int lodge_block_detach(const struct lodge *lg, const char *domain, const char *vdev, bool force,
		       unsigned timeout_ms, struct lodge_err *err)
{
	static struct domain_config dc;
	char name[DOMAIN_NAME_MAX];
	unsigned i, slot;
	int rc;

	if ((rc = lodge_resolve(lg, domain, name, err)) || (rc = lodge_running_config(lg, name, &dc, err)) ||
	    (rc = may_keep_config(lg, name, err)))
		return rc;
	for (i = 0; i < dc.ndisks && strcmp(dc.disks[i].vdev, vdev); i++)
		;
	if (i == dc.ndisks)
		return lodge_fail(err, -ENOENT, "domain %s has no disk %s", name, vdev);
	if ((rc = disk_slot(lg, name, i, &slot, err)))
		return rc;
	if ((rc = detach_slot(lg, name, slot, force, timeout_ms, err)))
		return rc;
	memmove(&dc.disks[i], &dc.disks[i + 1], (dc.ndisks - i - 1) * sizeof(dc.disks[0]));
	dc.ndisks--;
	return save_detached(lg, name, &dc, "disk", vdev, err);
}

/* Every vif's tap name and MAC written out, so that they stay when the
 * indexes they were derived from shift (a vif before them detached). */
static void pin_vif_names(struct domain_config *dc, const char *name, unsigned id)
{
	unsigned i;

	for (i = 0; i < dc->nvifs; i++) {
		char ifname[IFNAMSIZ];

		lodge_vif_ifname(dc, name, id, i, ifname);
		lodge_vif_mac(dc, i, dc->vifs[i].mac);
		dc->vifs[i].mac_set = true;
		snprintf(dc->vifs[i].vifname, sizeof(dc->vifs[i].vifname), "%s", ifname);
	}
}

static bool mac_taken(const struct domain_config *dc, const uint8_t mac[6])
{
	unsigned i;

	for (i = 0; i < dc->nvifs; i++)
		if (!memcmp(dc->vifs[i].mac, mac, 6))
			return true;
	return false;
}

/* Another running domain's vif with this MAC: its name in who. */
struct mac_hunt {
	const struct lodge *lg;
	const char *self;
	const uint8_t *mac;
	char who[DOMAIN_NAME_MAX];
};

static void mac_hunt_one(const struct lodge_status *st, void *arg)
{
	static struct domain_config other;
	struct mac_hunt *h = arg;
	struct lodge_err err;
	unsigned i;

	if (h->who[0] || !strcmp(st->name, h->self) || lodge_runtime_config(h->lg, st->name, &other, &err))
		return;
	for (i = 0; i < other.nvifs; i++) {
		uint8_t m[6];

		lodge_vif_mac(&other, i, m);
		if (!memcmp(m, h->mac, 6))
			snprintf(h->who, sizeof(h->who), "%s", st->name);
	}
}

int lodge_network_attach(const struct lodge *lg, const char *domain, const char *spec, char ifname[16],
			 struct lodge_err *err)
{
	static struct domain_config dc;
	char name[DOMAIN_NAME_MAX], why[1024], escaped[600], cmd[PROTO_LINE_MAX];
	struct mac_hunt hunt = { .lg = lg };
	struct lodge_status st;
	struct cfg_vif v;
	struct reply r;
	unsigned i, k;
	int rc, fd, ctl;

	if ((rc = lodge_resolve(lg, domain, name, err)) || (rc = lodge_running_config(lg, name, &dc, err)) ||
	    (rc = may_keep_config(lg, name, err)))
		return rc;
	if ((rc = cfg_parse_vif(spec, &v, NULL, why, sizeof(why))))
		return lodge_fail(err, rc, "vif '%s': %s", spec, why);
	if (dc.nvifs == DOMAIN_VIFS_MAX)
		return lodge_fail(err, -ENOSPC, "domain %s has %d vifs, the most it may have", name, DOMAIN_VIFS_MAX);
	if ((rc = lodge_status_of(lg, name, &st)))
		return rc == -ENOENT ? lodge_not_running(err, name) : lodge_fail(err, rc, "%s: %s", name, strerror(-rc));
	pin_vif_names(&dc, name, st.id);
	if (!v.bridge[0] && !v.network[0])
		snprintf(v.bridge, sizeof(v.bridge), "%s", lg->hc.default_bridge);
	if (!v.vifname[0])              /* vif-NAME.N: the first N no vif of it has */
		for (k = dc.nvifs; ; k++) {
			lodge_vif_name(name, st.id, k, v.vifname);
			for (i = 0; i < dc.nvifs && strcmp(dc.vifs[i].vifname, v.vifname); i++)
				;
			if (i == dc.nvifs && !nl_link_exists(v.vifname))
				break;
		}
	if (!v.mac_set) {
		cfg_default_mac(name, dc.nvifs, v.mac);
		for (k = dc.nvifs + 1; mac_taken(&dc, v.mac) && k < 256; k++)
			cfg_default_mac(name, k, v.mac);
		v.mac_set = true;
	}
	if (mac_taken(&dc, v.mac))
		return lodge_fail(err, -EEXIST, "domain %s has a vif with MAC %02x:%02x:%02x:%02x:%02x:%02x already", name,
				  v.mac[0], v.mac[1], v.mac[2], v.mac[3], v.mac[4], v.mac[5]);
	hunt.self = name;
	hunt.mac = v.mac;
	lodge_scan(lg, mac_hunt_one, &hunt);
	if (hunt.who[0])
		return lodge_fail(err, -EEXIST, "MAC %02x:%02x:%02x:%02x:%02x:%02x is domain %s's already", v.mac[0],
				  v.mac[1], v.mac[2], v.mac[3], v.mac[4], v.mac[5], hunt.who);
	/* A vif on a Lodge network joins its bridge, its MAC given the
	 * network's fixed address, as at start (start.c). */
	if (v.network[0]) {
		char addr[16];

		if ((rc = net_vif_attach(lg, v.network, name, v.mac, v.bridge, addr, err)))
			return rc;
	}
	if ((fd = tapdev_open(v.vifname, v.bridge, why, sizeof(why))) < 0)
		return lodge_fail(err, fd, "vif %s: %s", v.vifname, why);
	snprintf(cmd, sizeof(cmd), "tap=%s,bridge=%s,mac=%02x:%02x:%02x:%02x:%02x:%02x", v.vifname, v.bridge,
		 v.mac[0], v.mac[1], v.mac[2], v.mac[3], v.mac[4], v.mac[5]);
	escape(cmd, escaped, sizeof(escaped));
	snprintf(cmd, sizeof(cmd), "vif-attach %s", escaped);
	if ((ctl = client_connect(lg->hc.runtime_dir, name)) < 0) {
		close(fd);
		return lodge_fail(err, ctl, "domain %s: %s", name, strerror(-ctl));
	}
	rc = client_request_fds(ctl, cmd, &fd, 1);
	close(fd);                      /* lodge-hyp's now: the tap lives as long as it holds it */
	if (!rc)
		rc = read_reply(ctl, &r, LODGE_REPLY_MS);
	close(ctl);
	if (rc)
		return lodge_fail(err, rc, "domain %s: %s", name, strerror(-rc));
	if (r.error[0])
		return lodge_fail(err, -EPROTO, "%s", r.error);
	dc.vifs[dc.nvifs++] = v;
	if ((rc = note_slots(lg, name, &dc, err)))
		snprintf(why, sizeof(why), "%.400s", err->msg);
	if (rc || (rc = save_runtime_config(lg, name, &dc, why, sizeof(why))))
		return lodge_fail(err, rc, "vif %s is attached to domain %s, but its runtime config cannot say so: %s",
				  v.vifname, name, why);
	if (ifname)
		snprintf(ifname, 16, "%s", v.vifname);
	return 0;
}

/* The vif slot of index i, from lodge-hyp's status. */
static int vif_slot(const struct lodge *lg, const char *name, unsigned i, unsigned *slot, struct lodge_err *err)
{
	static struct reply r;
	const char *v;
	int rc;

	if ((rc = lodge_ask_name(lg, name, "status", true, &r, err)))
		return rc;
	if (!(v = reply_get(&r, proto_status_key(PROTO_KEY_VIF_SLOTS))))
		return lodge_fail(err, -EPROTO, "domain %s's lodge-hyp does not say where its vifs are", name);
	for (; i > 0 && v; i--)
		if ((v = strchr(v, ' ')))
			v++;
	if (!v || (*slot = (unsigned)strtoul(v, NULL, 10)) == 0)
		return lodge_fail(err, -EPROTO, "domain %s's lodge-hyp lists fewer vifs than its config", name);
	return 0;
}

int lodge_network_detach(const struct lodge *lg, const char *domain, const char *which, bool force,
			 unsigned timeout_ms, struct lodge_err *err)
{
	static struct domain_config dc;
	char name[DOMAIN_NAME_MAX], why[512], *end;
	struct lodge_status st;
	uint8_t mac[6];
	unsigned i, slot;
	unsigned long devid;
	int rc;

	if ((rc = lodge_resolve(lg, domain, name, err)) || (rc = lodge_running_config(lg, name, &dc, err)) ||
	    (rc = may_keep_config(lg, name, err)))
		return rc;
	if ((rc = lodge_status_of(lg, name, &st)))
		return rc == -ENOENT ? lodge_not_running(err, name) : lodge_fail(err, rc, "%s: %s", name, strerror(-rc));
	pin_vif_names(&dc, name, st.id);
	devid = strtoul(which, &end, 10);
	if (*which && !*end) {
		i = (unsigned)devid;
		if (devid >= dc.nvifs)
			return lodge_fail(err, -ENOENT, "domain %s has no vif %s", name, which);
	} else if (cfg_parse_mac(which, mac, why, sizeof(why)) == 0) {
		for (i = 0; i < dc.nvifs && memcmp(dc.vifs[i].mac, mac, 6); i++)
			;
		if (i == dc.nvifs)
			return lodge_fail(err, -ENOENT, "domain %s has no vif with MAC %s", name, which);
	} else {
		return lodge_fail(err, -EINVAL, "'%s' is neither a vif index nor a MAC address", which);
	}
	if ((rc = vif_slot(lg, name, i, &slot, err)))
		return rc;
	if ((rc = detach_slot(lg, name, slot, force, timeout_ms, err)))
		return rc;
	memmove(&dc.vifs[i], &dc.vifs[i + 1], (dc.nvifs - i - 1) * sizeof(dc.vifs[0]));
	dc.nvifs--;
	return save_detached(lg, name, &dc, "vif", which, err);
}
