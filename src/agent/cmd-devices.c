/* lodge block-list, lodge network-list: a running domain's disks and vifs
 * with their I/O counters, as xl block-list and network-list show them
 * (and as xentop's VBD and NET columns count them: from the guest's side,
 * so a vif's rx is what the guest received). */
#include "agent.h"
#include "domains.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int running_load(const char *name, struct running *r)
{
	char err[1024];
	int rc;

	if (agent_host_config(&r->hc))
		return 1;
	rc = domain_status(r->hc.runtime_dir, name, &r->st);
	if (rc == -ENOENT) {
		log_err("no domain '%s' is running", name);
		return 1;
	}
	if (rc) {
		log_err("%s: cannot read its status: %s", name, strerror(-rc));
		return 1;
	}
	if (domain_runtime_config(&r->hc, name, &r->dc, err, sizeof(err))) {
		log_err("%s", err);
		return 1;
	}
	return 0;
}

static void print_disks(const struct running *rp)
{
	const struct domain_config *dc = &rp->dc;
	unsigned i;

	printf("%-5s %-4s %-4s %10s %14s %10s %14s %6s  %s\n", "Vdev", "Mode", "Kind", "RD_REQ", "RD_BYTES",
	       "WR_REQ", "WR_BYTES", "ERRORS", "Backend");
	for (i = 0; i < dc->ndisks; i++) {
		const struct dev_io *io = i < rp->st.ndisks ? &rp->st.disk[i] : &(struct dev_io){ 0 };

		printf("%-5s %-4s %-4s %10lu %14lu %10lu %14lu %6lu  %s\n", dc->disks[i].vdev,
		       dc->disks[i].readonly ? "ro" : "rw", dc->disks[i].is_phy ? "phy" : "file", io->in_ops,
		       io->in_bytes, io->out_ops, io->out_bytes, io->errors, dc->disks[i].path);
	}
}

static void print_vifs(const struct running *rp)
{
	const struct domain_config *dc = &rp->dc;
	unsigned i;

	printf("%-3s %-15s %-17s %-15s %10s %14s %10s %14s %6s\n", "Idx", "Vif", "MAC", "Bridge", "RX_PKTS",
	       "RX_BYTES", "TX_PKTS", "TX_BYTES", "ERRORS");
	for (i = 0; i < dc->nvifs; i++) {
		const struct cfg_vif *v = &dc->vifs[i];
		const struct dev_io *io = i < rp->st.nvifs ? &rp->st.vif[i] : &(struct dev_io){ 0 };
		char vif[16], mac[18];
		uint8_t m[6];

		domain_vif_ifname(dc, &rp->st, i, vif);
		domain_vif_mac(dc, i, m);     /* a vif without mac= has the generated one, not zeros */
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
		printf("%-3u %-15s %-17s %-15s %10lu %14lu %10lu %14lu %6lu\n", i, vif, mac,
		       v->bridge[0] ? v->bridge : rp->hc.default_bridge, io->in_ops, io->in_bytes, io->out_ops,
		       io->out_bytes, io->errors);
	}
}

static int list_devices(int argc, char **argv, void (*print)(const struct running *))
{
	static struct running r;
	int rc = argc == 2 ? running_load(argv[1], &r) : EXIT_USAGE;

	if (rc == 0)
		print(&r);
	return rc;
}

int cmd_block_list(int argc, char **argv) { return list_devices(argc, argv, print_disks); }
int cmd_network_list(int argc, char **argv) { return list_devices(argc, argv, print_vifs); }
