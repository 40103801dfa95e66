/* A running domain's disks and vifs, and what each vif's watcher
 * (lodge-hyp's netwatch) saw: the addresses a guest claimed, rates, top
 * peers; and the addresses two domains on one bridge both claim. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CLAIMS 512

/* Every address claimed, with the domain and the bridge of its vif. */
struct claims {
	unsigned n;
	struct {
		char name[DOMAIN_NAME_MAX];
		char bridge[IFNAMSIZ];
		char addr[46];
	} c[MAX_CLAIMS];
	const struct lodge *lg;
};

/* Note st's addresses, each vif's bridge from its runtime config. */
static void claims_add(const struct lodge_status *st, void *arg)
{
	static struct domain_config dc;
	struct claims *c = arg;
	const struct host_config *hc = &c->lg->hc;
	bool have_dc;
	unsigned i;

	if (!st->naddrs)
		return;
	have_dc = lodge_runtime_config(c->lg, st->name, &dc, NULL) == 0;
	for (i = 0; i < st->naddrs && c->n < MAX_CLAIMS; i++) {
		const struct lodge_addr *a = &st->addrs[i];
		const char *br = have_dc && a->vif < dc.nvifs && dc.vifs[a->vif].bridge[0] ?
			dc.vifs[a->vif].bridge : hc->default_bridge;

		snprintf(c->c[c->n].name, sizeof(c->c[c->n].name), "%s", st->name);
		snprintf(c->c[c->n].bridge, sizeof(c->c[c->n].bridge), "%s", br);
		snprintf(c->c[c->n].addr, sizeof(c->c[c->n].addr), "%s", a->addr);
		c->n++;
	}
}

/* The other domains on bridge that claim addr, comma-separated, into
 * buf ("" if none); returns how many. */
static unsigned claims_others(const struct claims *c, const char *name, const char *bridge, const char *addr,
			      char *buf, size_t len)
{
	unsigned i, j, found = 0;
	size_t n = 0;

	buf[0] = '\0';
	for (i = 0; i < c->n; i++) {
		if (strcmp(c->c[i].addr, addr) || strcmp(c->c[i].bridge, bridge) || !strcmp(c->c[i].name, name))
			continue;
		for (j = 0; j < i; j++)           /* a domain with the address on two vifs: once */
			if (!strcmp(c->c[j].name, c->c[i].name) && !strcmp(c->c[j].addr, addr) &&
			    !strcmp(c->c[j].bridge, bridge))
				break;
		if (j < i)
			continue;
		if (n + 1 < len) {
			int r = snprintf(buf + n, len - n, "%s%s", found ? "," : "", c->c[i].name);

			n = r > 0 && n + r < len ? n + r : len - 1;
		}
		found++;
	}
	return found;
}

unsigned lodge_conflicts(const struct lodge *lg, const struct lodge_list *l, struct lodge_conflict *out,
			 unsigned max)
{
	struct claims *c = calloc(1, sizeof(*c));
	unsigned i, j, n = 0;

	if (!c)
		return 0;
	c->lg = lg;
	for (i = 0; i < l->n; i++)
		claims_add(&l->dom[i], c);
	for (i = 0; i < c->n && n < max; i++) {
		/* Once per address and bridge: at its first claimant. */
		for (j = 0; j < i; j++)
			if (!strcmp(c->c[j].addr, c->c[i].addr) && !strcmp(c->c[j].bridge, c->c[i].bridge))
				break;
		if (j < i || !claims_others(c, c->c[i].name, c->c[i].bridge, c->c[i].addr, out[n].others,
					    sizeof(out[n].others)))
			continue;
		snprintf(out[n].addr, sizeof(out[n].addr), "%s", c->c[i].addr);
		snprintf(out[n].bridge, sizeof(out[n].bridge), "%s", c->c[i].bridge);
		snprintf(out[n].first, sizeof(out[n].first), "%s", c->c[i].name);
		n++;
	}
	free(c);
	return n;
}

/* A running domain: its status and the resolved config it runs. */
static int running(const struct lodge *lg, const char *domain, struct lodge_status *st, struct domain_config *dc,
		   struct lodge_err *err)
{
	char name[DOMAIN_NAME_MAX];
	int rc;

	if ((rc = lodge_resolve(lg, domain, name, err)))
		return rc;
	if ((rc = lodge_status_of(lg, name, st)) == -ENOENT)
		return lodge_not_running(err, name);
	if (rc)
		return lodge_fail(err, rc, "%s: cannot read its status: %s", name, strerror(-rc));
	return lodge_runtime_config(lg, name, dc, err);
}

static void vif_of(const struct lodge *lg, const struct domain_config *dc, const struct lodge_status *st,
		   unsigned i, struct lodge_vif *v)
{
	lodge_vif_ifname(dc, st->name, st->id, i, v->ifname);
	lodge_vif_mac(dc, i, v->mac);     /* a vif without mac= has the generated one, not zeros */
	snprintf(v->bridge, sizeof(v->bridge), "%s", dc->vifs[i].bridge[0] ? dc->vifs[i].bridge : lg->hc.default_bridge);
	v->io = i < st->nvifs ? st->vif[i] : (struct lodge_io){ 0 };
}

/* out's disks and vifs from dc, their counters from out->st. */
static void devices_fill(const struct lodge *lg, const struct domain_config *dc, struct lodge_devices *out)
{
	unsigned i;

	out->ndisks = dc->ndisks;
	for (i = 0; i < dc->ndisks; i++) {
		struct lodge_disk *d = &out->disk[i];

		snprintf(d->vdev, sizeof(d->vdev), "%s", dc->disks[i].vdev);
		snprintf(d->path, sizeof(d->path), "%s", dc->disks[i].path);
		d->readonly = dc->disks[i].readonly;
		d->is_phy = dc->disks[i].is_phy;
		d->io = i < out->st.ndisks ? out->st.disk[i] : (struct lodge_io){ 0 };
	}
	out->nvifs = dc->nvifs;
	for (i = 0; i < dc->nvifs; i++)
		vif_of(lg, dc, &out->st, i, &out->vif[i]);
}

int lodge_devices(const struct lodge *lg, const char *domain, struct lodge_devices *out, struct lodge_err *err)
{
	static struct domain_config dc;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = running(lg, domain, &out->st, &dc, err)))
		return rc;
	devices_fill(lg, &dc, out);
	return 0;
}

int lodge_devices_of(const struct lodge *lg, const struct lodge_status *st, struct domain_config *dc,
		     struct lodge_devices *out, struct lodge_err *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	out->st = *st;
	if ((rc = lodge_runtime_config(lg, st->name, dc, err)))
		return rc == -ENOENT ? lodge_not_running(err, st->name) : rc;
	devices_fill(lg, dc, out);
	return 0;
}

/* The peers reply into out's per-vif views. */
void lodge_net_from_reply(const struct reply *r, struct lodge_net *out, unsigned nvifs)
{
	const char *v;
	unsigned i;

	if ((v = reply_get(r, "interval_ms")))
		out->interval_ms = strtoul(v, NULL, 10);
	for (i = 0; i < nvifs; i++) {
		struct lodge_vif_net *vn = &out->vifs[i];
		struct lodge_addr addrs[LODGE_MAX_ADDRS];
		unsigned k, naddrs = 0;
		char key[32];

		snprintf(key, sizeof(key), "vif%u_name", i);
		if (!(v = reply_get(r, key)))
			break;
		snprintf(vn->vif.ifname, sizeof(vn->vif.ifname), "%s", v);
		snprintf(key, sizeof(key), "vif%u_watch", i);
		snprintf(vn->watch, sizeof(vn->watch), "%s", (v = reply_get(r, key)) ? v : "?");
		snprintf(key, sizeof(key), "vif%u_addrs", i);
		if ((v = reply_get(r, key)))
			lodge_parse_addrs(v, i, addrs, LODGE_MAX_ADDRS, &naddrs);
		for (k = 0; k < naddrs; k++)
			vn->addrs[k].a = addrs[k];
		vn->naddrs = naddrs;
		snprintf(key, sizeof(key), "vif%u_rate", i);
		if ((v = reply_get(r, key)) && sscanf(v, "%lu %lu %lu", &vn->pps, &vn->bps, &vn->drops) != 3)
			vn->pps = vn->bps = vn->drops = 0;
		snprintf(key, sizeof(key), "vif%u_peers", i);
		for (v = reply_get(r, key); v && *v && vn->npeers < LODGE_MAX_PEERS; v += strcspn(v, " ")) {
			int used = 0;

			while (*v == ' ')
				v++;
			if (sscanf(v, "%45[^, ],%lu,%lu%n", vn->peers[vn->npeers].addr, &vn->peers[vn->npeers].packets,
				   &vn->peers[vn->npeers].bytes, &used) == 3 && used > 0)
				vn->npeers++;
		}
		out->nvifs++;
	}
}

int lodge_net(const struct lodge *lg, const char *domain, struct lodge_net *out, struct lodge_err *err)
{
	static struct domain_config dc;
	static struct reply r;
	struct lodge_status st;
	unsigned i;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = running(lg, domain, &st, &dc, err)))
		return rc;
	snprintf(out->name, sizeof(out->name), "%s", st.name);
	if (dc.nvifs == 0)
		return lodge_fail(err, -ENODEV, "domain %s has no vifs", st.name);
	rc = client_call(lg->hc.runtime_dir, st.name, "peers", 1, &r);
	if (rc == -ECONNREFUSED || rc == -ENOENT || rc == -ENOTDIR)
		return lodge_fail(err, -ENOENT, "%s: no longer running", st.name);
	if (rc)
		return lodge_fail(err, rc, "%s: %s", st.name, strerror(-rc));
	if (r.error[0])
		return lodge_fail(err, -EPROTO, "%s: %s", st.name, r.error);
	lodge_net_from_reply(&r, out, dc.nvifs);
	for (i = 0; i < out->nvifs; i++) {
		struct lodge_vif_net *vn = &out->vifs[i];
		char ifname[IFNAMSIZ];

		/* The watcher names the tap; the config, its MAC and bridge. */
		memcpy(ifname, vn->vif.ifname, sizeof(ifname));
		vif_of(lg, &dc, &st, i, &vn->vif);
		memcpy(vn->vif.ifname, ifname, sizeof(ifname));
	}
	return 0;
}

void lodge_net_conflicts(const struct lodge *lg, struct lodge_net *n)
{
	struct claims *c = calloc(1, sizeof(*c));
	unsigned i, k;

	if (!c)
		return;
	c->lg = lg;
	lodge_scan(lg, claims_add, c);
	for (i = 0; i < n->nvifs; i++)
		for (k = 0; k < n->vifs[i].naddrs; k++)
			claims_others(c, n->name, n->vifs[i].vif.bridge, n->vifs[i].addrs[k].a.addr,
				      n->vifs[i].addrs[k].others, sizeof(n->vifs[i].addrs[k].others));
	free(c);
}
