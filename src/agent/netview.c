#include "netview.h"
#include "client.h"

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
