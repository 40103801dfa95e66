/* lodge addr [-t] DOMAIN: each vif's addresses, as the domain's watcher
 * learned them from the guest's own frames (ARP, DHCP ACK, neighbour
 * discovery) and, on a Lodge network, dnsmasq's lease for its MAC, with how long ago each was last seen, and any other domain
 * on the same bridge that claims the same address; -t adds the traffic
 * view: each vif's packets and bytes a second over the watcher's last
 * interval, the frames its capture ring dropped, and its top peers. */
#include "agent.h"
#include "output.h"

#include <stdio.h>
#include <string.h>

static void print_traffic(const struct lodge_net *n, unsigned i)
{
	const struct lodge_vif_net *v = &n->vifs[i];
	unsigned k;

	if (strcmp(v->watch, "on") != 0)
		return;
	printf("%-3u %-15s %lu pkt/s %lu B/s, %lu dropped by the watcher, over %lu ms\n", i, v->vif.ifname,
	       (unsigned long)v->pps, (unsigned long)v->bps, (unsigned long)v->drops, n->interval_ms);
	if (!v->npeers) {
		printf("    no peers in the last interval\n");
		return;
	}
	printf("    %-39s %10s %12s\n", "Peer", "Packets", "Bytes");
	for (k = 0; k < v->npeers; k++)
		printf("    %-39s %10lu %12lu\n", v->peers[k].addr, (unsigned long)v->peers[k].packets,
		       (unsigned long)v->peers[k].bytes);
}

/* A row: an address of vif i (k), or the vif alone (k < 0: none seen,
 * or not watched). */
struct addr_row {
	const struct lodge_net *n;
	unsigned i;
	int k;
	char mac[18], note[320];
};

#define VIF(r) (&(r)->n->vifs[(r)->i])
#define ADDR(fn, call) OUT_GETTER(fn, struct addr_row, if (r->k >= 0) { const struct lodge_addr *a = &VIF(r)->addrs[r->k].a; (void)a; call; } else out_null(v))
OUT_GETTER(get_idx, struct addr_row, out_uint(v, r->i))
OUT_GETTER(get_vif, struct addr_row, out_str(v, VIF(r)->vif.ifname))
OUT_GETTER(get_mac, struct addr_row, out_str(v, r->mac))
ADDR(get_address, out_str(v, a->addr))
OUT_GETTER(get_address_text, struct addr_row, if (r->k >= 0) out_str(v, VIF(r)->addrs[r->k].a.addr); else if (r->note[0]) out_str(v, r->note); else out_null(v))
ADDR(get_from, out_str(v, a->how))
ADDR(get_age, out_uint(v, a->age_s))
OUT_GETTER(get_conflict, struct addr_row, out_str(v, r->k >= 0 ? r->note : ""))
OUT_GETTER(get_claimed, struct addr_row, out_list(v, r->k >= 0 && VIF(r)->addrs[r->k].others[0] ? VIF(r)->addrs[r->k].others : "-"))
OUT_GETTER(get_watch, struct addr_row, out_str(v, VIF(r)->watch))

static const struct out_col addr_cols[] = {
	{ "Idx", "idx", -3, 0, 0, get_idx, NULL },
	{ "Vif", "vif", -15, 0, 0, get_vif, NULL },
	{ "MAC", "mac", -17, 0, 0, get_mac, NULL },
	{ "Address", "address", -39, 0, OUT_TEXT_ONLY, get_address_text, NULL },
	{ "Address", "address", 0, 0, OUT_DATA_ONLY, get_address, NULL },
	{ "From", "from", -5, 0, 0, get_from, NULL },
	{ "Age(s)", "age_s", 6, 0, 0, get_age, NULL },
	{ "", "conflict", -1, 0, OUT_TEXT_ONLY | OUT_GAP2, get_conflict, NULL },
	{ "", "claimed_by", 0, 0, OUT_DATA_ONLY, get_claimed, NULL },
	{ "", "watch", 0, 0, OUT_DATA_ONLY, get_watch, NULL },
};

int cmd_addr(struct cli *c)
{
	static struct lodge_net n;
	struct lodge_err err;
	struct out o;
	unsigned i;
	int k, rc;

	if (c->set['t'] && c->set['o'])
		return cli_usage_error(c->cmd, "--traffic is text only; -o gives the addresses");
	if (lodge_net(&c->lg, c->argv[0], &n, &err))
		return cli_fail(&err);
	lodge_net_conflicts(&c->lg, &n);
	lodge_net_leases(&c->lg, &n);
	if ((rc = out_begin(&o, c, addr_cols, OUT_NCOLS(addr_cols))))
		return rc;
	for (i = 0; i < n.nvifs; i++) {
		const struct lodge_vif_net *v = &n.vifs[i];
		const uint8_t *m = v->vif.mac;
		struct addr_row r = { .n = &n, .i = i, .k = -1 };

		snprintf(r.mac, sizeof(r.mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
		if (strcmp(v->watch, "on") != 0) {
			snprintf(r.note, sizeof(r.note), "(not watched: %s)", v->watch);
			out_row(&o, &r);
			continue;
		}
		if (v->naddrs == 0)
			out_row(&o, &r);
		for (k = 0; k < (int)v->naddrs; k++) {
			r.k = k;
			r.note[0] = '\0';
			if (v->addrs[k].others[0])
				snprintf(r.note, sizeof(r.note), "CONFLICT: also claimed by %s", v->addrs[k].others);
			out_row(&o, &r);
		}
	}
	out_end(&o);
	if (c->set['t']) {
		printf("\n");
		for (i = 0; i < n.nvifs; i++)
			print_traffic(&n, i);
	}
	return 0;
}
