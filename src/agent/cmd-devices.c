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

/* The running domain's config (written by `lodge create`) and status. */
static int load_running(const char *name, struct host_config *hc, struct domain_config *dc,
			struct dom_status *st)
{
	char path[CFG_PATH_MAX + 80], err[1024];
	int rc;

	if (agent_host_config(hc))
		return 1;
	rc = domain_status(hc->runtime_dir, name, st);
	if (rc == -ENOENT) {
		log_err("no domain '%s' is running", name);
		return 1;
	}
	if (rc) {
		log_err("%s: cannot read its status: %s", name, strerror(-rc));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%s/config", hc->runtime_dir, name);
	if (domain_config_load(path, hc, false, dc, err, sizeof(err))) {
		log_err("%s", err);
		return 1;
	}
	return 0;
}

int cmd_block_list(int argc, char **argv)
{
	static struct domain_config dc;
	struct host_config hc;
	struct dom_status st;
	unsigned i;

	if (argc != 2)
		return EXIT_USAGE;
	if (load_running(argv[1], &hc, &dc, &st))
		return 1;
	printf("%-5s %-4s %-4s %10s %14s %10s %14s %6s  %s\n", "Vdev", "Mode", "Kind", "RD_REQ", "RD_BYTES",
	       "WR_REQ", "WR_BYTES", "ERRORS", "Backend");
	for (i = 0; i < dc.ndisks; i++) {
		const struct dev_io *io = i < st.ndisks ? &st.disk[i] : &(struct dev_io){ 0 };

		printf("%-5s %-4s %-4s %10lu %14lu %10lu %14lu %6lu  %s\n", dc.disks[i].vdev,
		       dc.disks[i].readonly ? "ro" : "rw", dc.disks[i].is_phy ? "phy" : "file", io->in_ops,
		       io->in_bytes, io->out_ops, io->out_bytes, io->errors, dc.disks[i].path);
	}
	return 0;
}

int cmd_network_list(int argc, char **argv)
{
	static struct domain_config dc;
	struct host_config hc;
	struct dom_status st;
	unsigned i;

	if (argc != 2)
		return EXIT_USAGE;
	if (load_running(argv[1], &hc, &dc, &st))
		return 1;
	printf("%-3s %-15s %-17s %-15s %10s %14s %10s %14s %6s\n", "Idx", "Vif", "MAC", "Bridge", "RX_PKTS",
	       "RX_BYTES", "TX_PKTS", "TX_BYTES", "ERRORS");
	for (i = 0; i < dc.nvifs; i++) {
		const struct cfg_vif *v = &dc.vifs[i];
		const struct dev_io *io = i < st.nvifs ? &st.vif[i] : &(struct dev_io){ 0 };
		char vif[16], mac[18];

		if (v->vifname[0])
			snprintf(vif, sizeof(vif), "%s", v->vifname);
		else
			domain_vif_name(st.name, st.id, i, vif);
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", v->mac[0], v->mac[1], v->mac[2],
			 v->mac[3], v->mac[4], v->mac[5]);
		printf("%-3u %-15s %-17s %-15s %10lu %14lu %10lu %14lu %6lu\n", i, vif, mac,
		       v->bridge[0] ? v->bridge : hc.default_bridge, io->in_ops, io->in_bytes, io->out_ops,
		       io->out_bytes, io->errors);
	}
	return 0;
}
