/* lodge addr [-t] DOMAIN: each vif's addresses, as the domain's watcher
 * learned them from the guest's own frames (ARP, DHCP ACK, neighbour
 * discovery), with how long ago each was last seen, and any other domain
 * on the same bridge that claims the same address; -t adds the traffic
 * view: each vif's packets and bytes a second over the watcher's last
 * interval, the frames its capture ring dropped, and its top peers. */
#include "agent.h"

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

int cmd_addr(struct cli *c)
{
	static struct lodge_net n;
	struct lodge_err err;
	unsigned i, k;

	if (lodge_net(&c->lg, c->argv[0], &n, &err))
		return cli_fail(&err);
	lodge_net_conflicts(&c->lg, &n);
	printf("%-3s %-15s %-17s %-39s %-4s %6s\n", "Idx", "Vif", "MAC", "Address", "From", "Age(s)");
	for (i = 0; i < n.nvifs; i++) {
		const struct lodge_vif_net *v = &n.vifs[i];
		const uint8_t *m = v->vif.mac;
		char mac[18];

		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
		if (strcmp(v->watch, "on") != 0)
			printf("%-3u %-15s %-17s (not watched: %s)\n", i, v->vif.ifname, mac, v->watch);
		else if (v->naddrs == 0)
			printf("%-3u %-15s %-17s %-39s %-4s %6s\n", i, v->vif.ifname, mac, "-", "-", "-");
		for (k = 0; k < v->naddrs; k++) {
			const struct lodge_addr *a = &v->addrs[k].a;

			printf("%-3u %-15s %-17s %-39s %-4s %6lu", i, v->vif.ifname, mac, a->addr, a->how, a->age_s);
			if (v->addrs[k].others[0])
				printf("  CONFLICT: also claimed by %s", v->addrs[k].others);
			printf("\n");
		}
	}
	if (c->set['t']) {
		printf("\n");
		for (i = 0; i < n.nvifs; i++)
			print_traffic(&n, i);
	}
	return 0;
}
