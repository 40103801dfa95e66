/* lodge block-list, lodge network-list: a running domain's disks and vifs
 * with their I/O counters, as xl block-list and network-list show them
 * (and as xentop's VBD and NET columns count them: from the guest's side,
 * so a vif's rx is what the guest received). */
#include "agent.h"

#include <stdio.h>

static void print_disks(const struct lodge_devices *d)
{
	unsigned i;

	printf("%-5s %-4s %-4s %10s %14s %10s %14s %6s  %s\n", "Vdev", "Mode", "Kind", "RD_REQ", "RD_BYTES",
	       "WR_REQ", "WR_BYTES", "ERRORS", "Backend");
	for (i = 0; i < d->ndisks; i++) {
		const struct lodge_disk *k = &d->disk[i];

		printf("%-5s %-4s %-4s %10lu %14lu %10lu %14lu %6lu  %s\n", k->vdev, k->readonly ? "ro" : "rw",
		       k->is_phy ? "phy" : "file", k->io.in_ops, k->io.in_bytes, k->io.out_ops, k->io.out_bytes,
		       k->io.errors, k->path);
	}
}

static void print_vifs(const struct lodge_devices *d)
{
	unsigned i;

	printf("%-3s %-15s %-17s %-15s %10s %14s %10s %14s %6s\n", "Idx", "Vif", "MAC", "Bridge", "RX_PKTS",
	       "RX_BYTES", "TX_PKTS", "TX_BYTES", "ERRORS");
	for (i = 0; i < d->nvifs; i++) {
		const struct lodge_vif *v = &d->vif[i];
		const uint8_t *m = v->mac;

		printf("%-3u %-15s %02x:%02x:%02x:%02x:%02x:%02x %-15s %10lu %14lu %10lu %14lu %6lu\n", i, v->ifname,
		       m[0], m[1], m[2], m[3], m[4], m[5], v->bridge, v->io.in_ops, v->io.in_bytes, v->io.out_ops,
		       v->io.out_bytes, v->io.errors);
	}
}

static int list_devices(struct cli *c, void (*print)(const struct lodge_devices *))
{
	static struct lodge_devices d;
	struct lodge_err err;

	if (lodge_devices(&c->lg, c->argv[0], &d, &err))
		return cli_fail(&err);
	print(&d);
	return 0;
}

int cmd_block_list(struct cli *c) { return list_devices(c, print_disks); }
int cmd_network_list(struct cli *c) { return list_devices(c, print_vifs); }
