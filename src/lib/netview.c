#include "netview.h"
#include "client.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void netview_parse_addrs(const char *v, unsigned vif, struct dom_addr *out, unsigned max, unsigned *n)
{
	while (*v && *n < max) {
		struct dom_addr *a = &out[*n];
		int used = 0;

		while (*v == ' ')
			v++;
		/* ADDR,HOW,AGE: an address has no comma, a word no digit. */
		if (sscanf(v, "%45[^, ],%7[a-z],%lu%n", a->addr, a->how, &a->age_s, &used) == 3 && used > 0) {
			a->vif = vif;
			(*n)++;
		}
		v += strcspn(v, " ");
	}
}

void netview_join_addrs(const struct dom_status *st, char *buf, size_t len)
{
	size_t n = 0;
	unsigned pass, i;

	buf[0] = '\0';
	for (pass = 0; pass < 2; pass++)          /* IPv4 first: the one people look for */
		for (i = 0; i < st->naddrs; i++) {
			const char *a = st->addrs[i].addr;
			int r;

			if ((strchr(a, ':') != NULL) != pass || n + 1 >= len)
				continue;
			r = snprintf(buf + n, len - n, "%s%s", n ? "," : "", a);
			n = r > 0 && n + r < len ? n + r : len - 1;
		}
	if (!n)
		snprintf(buf, len, "-");
}

int netview_fetch(const char *rundir, const char *name, struct net_view *nv, char *err, size_t errlen)
{
	static struct reply r;
	const char *v;
	unsigned i;
	int rc = client_call(rundir, name, "peers", 1, &r);

	memset(nv, 0, sizeof(*nv));
	if (rc == -ECONNREFUSED || rc == -ENOENT || rc == -ENOTDIR)
		return -ENOENT;
	if (rc)
		return rc;
	if (r.error[0]) {
		snprintf(err, errlen, "%s", r.error);
		return -EPROTO;
	}
	if ((v = reply_get(&r, "interval_ms")))
		nv->interval_ms = strtoul(v, NULL, 10);
	for (i = 0; i < DOM_MAX_VIFS; i++) {
		struct vif_view *vv = &nv->vifs[i];
		char key[32];

		snprintf(key, sizeof(key), "vif%u_name", i);
		if (!(v = reply_get(&r, key)))
			break;
		snprintf(vv->name, sizeof(vv->name), "%s", v);
		snprintf(key, sizeof(key), "vif%u_watch", i);
		snprintf(vv->watch, sizeof(vv->watch), "%s", (v = reply_get(&r, key)) ? v : "?");
		snprintf(key, sizeof(key), "vif%u_addrs", i);
		if ((v = reply_get(&r, key)))
			netview_parse_addrs(v, i, vv->addrs, DOM_MAX_ADDRS, &vv->naddrs);
		snprintf(key, sizeof(key), "vif%u_rate", i);
		if ((v = reply_get(&r, key)) && sscanf(v, "%lu %lu %lu", &vv->pps, &vv->bps, &vv->drops) != 3)
			vv->pps = vv->bps = vv->drops = 0;
		snprintf(key, sizeof(key), "vif%u_peers", i);
		for (v = reply_get(&r, key); v && *v && vv->npeers < NETVIEW_MAX_PEERS; v += strcspn(v, " ")) {
			int used = 0;

			while (*v == ' ')
				v++;
			if (sscanf(v, "%45[^, ],%lu,%lu%n", vv->peers[vv->npeers].addr, &vv->peers[vv->npeers].packets,
				   &vv->peers[vv->npeers].bytes, &used) == 3 && used > 0)
				vv->npeers++;
		}
		nv->nvifs++;
	}
	return 0;
}

void netview_claims_add(struct addr_claims *c, const char *rundir, const struct host_config *hc,
			const struct dom_status *st)
{
	static struct domain_config dc;
	char err[512];
	bool have_dc;
	unsigned i;

	if (!st->naddrs)
		return;
	have_dc = domain_runtime_config(hc, st->name, &dc, err, sizeof(err)) == 0;
	for (i = 0; i < st->naddrs && c->n < NETVIEW_MAX_CLAIMS; i++) {
		const struct dom_addr *a = &st->addrs[i];
		const char *br = have_dc && a->vif < dc.nvifs && dc.vifs[a->vif].bridge[0] ?
			dc.vifs[a->vif].bridge : hc->default_bridge;

		snprintf(c->c[c->n].name, sizeof(c->c[c->n].name), "%s", st->name);
		snprintf(c->c[c->n].bridge, sizeof(c->c[c->n].bridge), "%s", br);
		snprintf(c->c[c->n].addr, sizeof(c->c[c->n].addr), "%s", a->addr);
		c->n++;
	}
}

unsigned netview_claims_others(const struct addr_claims *c, const char *name, const char *bridge,
			       const char *addr, char *buf, size_t len)
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

void netview_claims_warn(const struct addr_claims *c)
{
	char others[512];
	unsigned i, j;

	for (i = 0; i < c->n; i++) {
		/* Once per address and bridge: at its first claimant. */
		for (j = 0; j < i; j++)
			if (!strcmp(c->c[j].addr, c->c[i].addr) && !strcmp(c->c[j].bridge, c->c[i].bridge))
				break;
		if (j < i)
			continue;
		if (netview_claims_others(c, c->c[i].name, c->c[i].bridge, c->c[i].addr, others, sizeof(others)))
			log_warn("address %s on bridge %s is claimed by %s and %s", c->c[i].addr, c->c[i].bridge,
				 c->c[i].name, others);
	}
}
