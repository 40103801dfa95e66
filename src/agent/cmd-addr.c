/* lodge addr [-t] NAME: each vif's addresses, as the domain's watcher
 * learned them from the guest's own frames (ARP, DHCP ACK, neighbour
 * discovery), with how long ago each was last seen, and any other domain
 * on the same bridge that claims the same address; -t adds the traffic
 * view: each vif's packets and bytes a second over the watcher's last
 * interval, the frames its capture ring dropped, and its top peers. */
#include "agent.h"
#include "log.h"
#include "netview.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct collect {
	const struct host_config *hc;
	struct addr_claims *claims;
};

static void collect_claims(const struct dom_status *st, void *arg)
{
	struct collect *c = arg;

	netview_claims_add(c->claims, c->hc->runtime_dir, c->hc, st);
}

static void print_traffic(const struct net_view *nv, unsigned i)
{
	const struct vif_view *v = &nv->vifs[i];
	unsigned k;

	if (strcmp(v->watch, "on") != 0)
		return;
	printf("%-3u %-15s %lu pkt/s %lu B/s, %lu dropped by the watcher, over %lu ms\n", i, v->name,
	       (unsigned long)v->pps, (unsigned long)v->bps, (unsigned long)v->drops, nv->interval_ms);
	if (!v->npeers) {
		printf("    no peers in the last interval\n");
		return;
	}
	printf("    %-39s %10s %12s\n", "Peer", "Packets", "Bytes");
	for (k = 0; k < v->npeers; k++)
		printf("    %-39s %10lu %12lu\n", v->peers[k].addr, (unsigned long)v->peers[k].packets,
		       (unsigned long)v->peers[k].bytes);
}

int cmd_addr(int argc, char **argv)
{
	static struct running r;
	static struct net_view nv;
	static struct addr_claims claims;
	struct collect col = { &r.hc, &claims };
	char err[512] = "";
	unsigned i, k;
	int rc, c, traffic = 0;

	optind = 1;
	while ((c = getopt(argc, argv, "t")) != -1) {
		if (c == 't') traffic = 1;
		else return EXIT_USAGE;
	}
	if (optind != argc - 1)
		return EXIT_USAGE;
	argv += optind - 1;
	if ((rc = running_load(argv[1], &r)))
		return rc;
	if (r.dc.nvifs == 0) {
		log_err("domain %s has no vifs", argv[1]);
		return 1;
	}
	rc = netview_fetch(r.hc.runtime_dir, argv[1], &nv, err, sizeof(err));
	if (rc) {
		log_err("%s: %s", argv[1], rc == -EPROTO ? err : rc == -ENOENT ? "no longer running" : strerror(-rc));
		return 1;
	}
	domains_scan(r.hc.runtime_dir, collect_claims, &col);
	printf("%-3s %-15s %-17s %-39s %-4s %6s\n", "Idx", "Vif", "MAC", "Address", "From", "Age(s)");
	for (i = 0; i < nv.nvifs && i < r.dc.nvifs; i++) {
		const struct vif_view *v = &nv.vifs[i];
		const char *br = r.dc.vifs[i].bridge[0] ? r.dc.vifs[i].bridge : r.hc.default_bridge;
		char mac[18], others[512];
		uint8_t m[6];

		domain_vif_mac(&r.dc, i, m);
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
		if (strcmp(v->watch, "on") != 0)
			printf("%-3u %-15s %-17s (not watched: %s)\n", i, v->name, mac, v->watch);
		else if (v->naddrs == 0)
			printf("%-3u %-15s %-17s %-39s %-4s %6s\n", i, v->name, mac, "-", "-", "-");
		for (k = 0; k < v->naddrs; k++) {
			printf("%-3u %-15s %-17s %-39s %-4s %6lu", i, v->name, mac, v->addrs[k].addr, v->addrs[k].how,
			       v->addrs[k].age_s);
			if (netview_claims_others(&claims, argv[1], br, v->addrs[k].addr, others, sizeof(others)))
				printf("  CONFLICT: also claimed by %s", others);
			printf("\n");
		}
	}
	if (traffic) {
		printf("\n");
		for (i = 0; i < nv.nvifs && i < r.dc.nvifs; i++)
			print_traffic(&nv, i);
	}
	return 0;
}
