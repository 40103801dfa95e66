/* lodge addr NAME: each vif's addresses, as the domain's watcher learned
 * them from the guest's own frames (ARP, DHCP ACK, neighbour discovery),
 * with how long ago each was last seen. */
#include "agent.h"
#include "log.h"
#include "netview.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int cmd_addr(int argc, char **argv)
{
	static struct running r;
	static struct net_view nv;
	char err[512] = "";
	unsigned i, k;
	int rc;

	if (argc != 2)
		return EXIT_USAGE;
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
	printf("%-3s %-15s %-17s %-39s %-4s %6s\n", "Idx", "Vif", "MAC", "Address", "From", "Age(s)");
	for (i = 0; i < nv.nvifs && i < r.dc.nvifs; i++) {
		const struct vif_view *v = &nv.vifs[i];
		char mac[18];
		uint8_t m[6];

		domain_vif_mac(&r.dc, i, m);
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
		if (strcmp(v->watch, "on") != 0)
			printf("%-3u %-15s %-17s (not watched: %s)\n", i, v->name, mac, v->watch);
		else if (v->naddrs == 0)
			printf("%-3u %-15s %-17s %-39s %-4s %6s\n", i, v->name, mac, "-", "-", "-");
		for (k = 0; k < v->naddrs; k++)
			printf("%-3u %-15s %-17s %-39s %-4s %6lu\n", i, v->name, mac, v->addrs[k].addr, v->addrs[k].how,
			       v->addrs[k].age_s);
	}
	return 0;
}
