/* lodge block-list, lodge network-list: a running domain's disks and vifs
 * with their I/O counters, as xl block-list and network-list show them
 * (and as xentop's VBD and NET columns count them: from the guest's side,
 * so a vif's rx is what the guest received); lodge block-attach and
 * block-detach, as xl's. */
#include "agent.h"
#include "output.h"

#include <stdio.h>

OUT_GETTER(disk_vdev, struct lodge_disk, out_str(v, r->vdev))
OUT_GETTER(disk_mode, struct lodge_disk, out_str(v, r->readonly ? "ro" : "rw"))
OUT_GETTER(disk_kind, struct lodge_disk, out_str(v, r->is_phy ? "phy" : "file"))
OUT_GETTER(disk_rd_req, struct lodge_disk, out_uint(v, r->io.in_ops))
OUT_GETTER(disk_rd_bytes, struct lodge_disk, out_uint(v, r->io.in_bytes))
OUT_GETTER(disk_wr_req, struct lodge_disk, out_uint(v, r->io.out_ops))
OUT_GETTER(disk_wr_bytes, struct lodge_disk, out_uint(v, r->io.out_bytes))
OUT_GETTER(disk_errors, struct lodge_disk, out_uint(v, r->io.errors))
OUT_GETTER(disk_backend, struct lodge_disk, out_str(v, r->path))

static const struct out_col disk_cols[] = {
	{ "Vdev", "vdev", -5, 0, 0, disk_vdev, NULL },
	{ "Mode", "mode", -4, 0, 0, disk_mode, NULL },
	{ "Kind", "kind", -4, 0, 0, disk_kind, NULL },
	{ "RD_REQ", "rd_req", 10, 0, 0, disk_rd_req, NULL },
	{ "RD_BYTES", "rd_bytes", 14, 0, 0, disk_rd_bytes, NULL },
	{ "WR_REQ", "wr_req", 10, 0, 0, disk_wr_req, NULL },
	{ "WR_BYTES", "wr_bytes", 14, 0, 0, disk_wr_bytes, NULL },
	{ "ERRORS", "errors", 6, 0, 0, disk_errors, NULL },
	{ "Backend", "backend", -1, 0, OUT_GAP2, disk_backend, NULL },
};

/* A vif and its index (its devid, as xl network-list numbers them). */
struct vif_row {
	unsigned idx;
	const struct lodge_vif *v;
	char mac[18];
};

OUT_GETTER(vif_idx, struct vif_row, out_uint(v, r->idx))
OUT_GETTER(vif_name, struct vif_row, out_str(v, r->v->ifname))
OUT_GETTER(vif_mac, struct vif_row, out_str(v, r->mac))
OUT_GETTER(vif_bridge, struct vif_row, out_str(v, r->v->bridge))
OUT_GETTER(vif_rx_pkts, struct vif_row, out_uint(v, r->v->io.in_ops))
OUT_GETTER(vif_rx_bytes, struct vif_row, out_uint(v, r->v->io.in_bytes))
OUT_GETTER(vif_tx_pkts, struct vif_row, out_uint(v, r->v->io.out_ops))
OUT_GETTER(vif_tx_bytes, struct vif_row, out_uint(v, r->v->io.out_bytes))
OUT_GETTER(vif_errors, struct vif_row, out_uint(v, r->v->io.errors))

static const struct out_col vif_cols[] = {
	{ "Idx", "idx", -3, 0, 0, vif_idx, NULL },
	{ "Vif", "vif", -15, 0, 0, vif_name, NULL },
	{ "MAC", "mac", -17, 0, 0, vif_mac, NULL },
	{ "Bridge", "bridge", -15, 0, 0, vif_bridge, NULL },
	{ "RX_PKTS", "rx_packets", 10, 0, 0, vif_rx_pkts, NULL },
	{ "RX_BYTES", "rx_bytes", 14, 0, 0, vif_rx_bytes, NULL },
	{ "TX_PKTS", "tx_packets", 10, 0, 0, vif_tx_pkts, NULL },
	{ "TX_BYTES", "tx_bytes", 14, 0, 0, vif_tx_bytes, NULL },
	{ "ERRORS", "errors", 6, 0, 0, vif_errors, NULL },
};

int cmd_block_list(struct cli *c)
{
	static struct lodge_devices d;
	struct lodge_err err;
	struct out o;
	unsigned i;
	int rc;

	if (lodge_devices(&c->lg, c->argv[0], &d, &err))
		return cli_fail(&err);
	if ((rc = out_begin(&o, c, disk_cols, OUT_NCOLS(disk_cols))))
		return rc;
	for (i = 0; i < d.ndisks; i++)
		out_row(&o, &d.disk[i]);
	out_end(&o);
	return 0;
}

int cmd_network_list(struct cli *c)
{
	static struct lodge_devices d;
	struct lodge_err err;
	struct out o;
	unsigned i;
	int rc;

	if (c->argc == 0)
		return cmd_network_list_networks(c);
	if (lodge_devices(&c->lg, c->argv[0], &d, &err))
		return cli_fail(&err);
	if ((rc = out_begin(&o, c, vif_cols, OUT_NCOLS(vif_cols))))
		return rc;
	for (i = 0; i < d.nvifs; i++) {
		struct vif_row r = { .idx = i, .v = &d.vif[i] };
		const uint8_t *m = d.vif[i].mac;

		snprintf(r.mac, sizeof(r.mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
		out_row(&o, &r);
	}
	out_end(&o);
	return 0;
}

int cmd_block_attach(struct cli *c)
{
	struct lodge_err err;
	char vdev[16];

	if (lodge_block_attach(&c->lg, c->argv[0], c->argv[1], false, vdev, &err))
		return cli_fail(&err);
	printf("disk %s attached to %s\n", vdev, c->argv[0]);
	return 0;
}

int cmd_block_detach(struct cli *c)
{
	unsigned timeout_ms = c->set['t'] ? (unsigned)c->num['t'] * 1000u : LODGE_DETACH_TIMEOUT_MS;
	bool force = c->set['f'];
	struct lodge_err err;

	if (force)
		fprintf(stderr, "lodge: warning: --force: disk %s is taken from %s without the guest giving it up; "
			"what the guest had not written yet is lost, and a guest still using it sees I/O errors\n",
			c->argv[1], c->argv[0]);
	if (lodge_block_detach(&c->lg, c->argv[0], c->argv[1], force, timeout_ms, &err))
		return cli_fail(&err);
	printf("disk %s detached from %s\n", c->argv[1], c->argv[0]);
	return 0;
}

int cmd_network_attach(struct cli *c)
{
	struct lodge_err err;
	char ifname[16];

	if (lodge_network_attach(&c->lg, c->argv[0], c->argc > 1 ? c->argv[1] : "", ifname, &err))
		return cli_fail(&err);
	printf("vif %s attached to %s\n", ifname, c->argv[0]);
	return 0;
}

int cmd_network_detach(struct cli *c)
{
	unsigned timeout_ms = c->set['t'] ? (unsigned)c->num['t'] * 1000u : LODGE_DETACH_TIMEOUT_MS;
	bool force = c->set['f'];
	struct lodge_err err;

	if (force)
		fprintf(stderr, "lodge: warning: --force: vif %s is taken from %s without the guest giving it up\n",
			c->argv[1], c->argv[0]);
	if (lodge_network_detach(&c->lg, c->argv[0], c->argv[1], force, timeout_ms, &err))
		return cli_fail(&err);
	printf("vif %s detached from %s\n", c->argv[1], c->argv[0]);
	return 0;
}
