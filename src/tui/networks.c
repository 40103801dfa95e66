/* The networks view (N): Lodge's networks behind the host, each with its
 * mode, bridge, subnet, dnsmasq, leases, the vifs on it and the bridge's
 * traffic rates, and below them every lease dnsmasq has given.  Sampled
 * with the rest (networks_sample, from sample_start while the view is
 * open): reading files, netlink and the rules, no domain asked; drawing
 * shows what the last sample kept. */
#include "tui.h"

#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define NETS_MAX   64
#define LEASES_MAX 256

static struct {
	struct lodge_network nets[NETS_MAX];
	int n;                             /* how many there are (may exceed NETS_MAX); -1: not sampled */
	struct lodge_link link[NETS_MAX], prev[NETS_MAX];
	bool have_link[NETS_MAX], have_prev[NETS_MAX];
	char prev_name[NETS_MAX][LODGE_NETWORK_NAME_MAX];
	double rx_bps[NETS_MAX], tx_bps[NETS_MAX];
	uint64_t at_ns, prev_ns;
	struct lodge_lease leases[LEASES_MAX];
	unsigned nleases;
} nv = { .n = -1 };

void networks_sample(struct tui *t)
{
	struct lodge_err err;
	uint64_t now = tui_now_ns();
	double secs;
	int i, j, shown;

	/* The last sample's counters become the previous, by name. */
	for (i = 0; i < (nv.n < NETS_MAX ? nv.n : NETS_MAX); i++) {
		nv.prev[i] = nv.link[i];
		nv.have_prev[i] = nv.have_link[i];
		memcpy(nv.prev_name[i], nv.nets[i].name, sizeof(nv.prev_name[i]));
	}
	shown = nv.n < 0 ? 0 : nv.n < NETS_MAX ? nv.n : NETS_MAX;
	nv.prev_ns = nv.at_ns;
	nv.n = lodge_network_list(t->lg, nv.nets, NETS_MAX, &err);
	nv.at_ns = now;
	secs = nv.prev_ns ? (double)(now - nv.prev_ns) / 1e9 : 0;
	for (i = 0; i < (nv.n < NETS_MAX ? nv.n : NETS_MAX); i++) {
		const struct lodge_network *n = &nv.nets[i];

		nv.have_link[i] = n->bridge_up && lodge_link_stats(n->bridge, &nv.link[i], NULL) == 0;
		nv.rx_bps[i] = nv.tx_bps[i] = -1;
		for (j = 0; j < shown; j++) {
			if (strcmp(nv.prev_name[j], n->name) || !nv.have_prev[j] || !nv.have_link[i] || secs <= 0)
				continue;
			/* On the bridge, rx is what the guests sent out of the network. */
			nv.rx_bps[i] = (double)(nv.link[i].rx_bytes - nv.prev[j].rx_bytes) / secs;
			nv.tx_bps[i] = (double)(nv.link[i].tx_bytes - nv.prev[j].tx_bytes) / secs;
		}
	}
	nv.nleases = lodge_network_leases(t->lg, nv.leases, LEASES_MAX);
}

static const char *dnsmasq_word(const struct lodge_network *n)
{
	return n->dnsmasq_pid > 0 ? "running" : n->dnsmasq_died ? "DEAD" : "stopped";
}

/* A row cut at the screen's edge: curses would wrap its tail onto the
 * next line, where the rows below do not overwrite it all (a stray
 * "0 0", the rates' columns of an 80-column screen). */
static void put_row(int y, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put_row(int y, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	mvprintw(y, 0, "%.*s", COLS > 0 ? COLS - 1 : 0, line);
	clrtoeol();
}

void draw_networks(struct tui *t)
{
	int y = 2, bottom = LINES - bars_rows(t), i;
	char rx[16], tx[16];
	unsigned k;

	erase();
	attron(A_BOLD);
	mvprintw(0, 0, "%.*s", COLS - 1, "Networks (N or Esc returns; lodge network-create makes one)");
	if (nv.n < 0) {
		attroff(A_BOLD);
		mvprintw(y, 0, "sampling...");
		draw_bars(t);
		return;
	}
	put_row(y++, "%-12s %-8s %-15s %-18s %-8s %6s %4s %10s %10s", "Network", "Mode", "Bridge", "Subnet",
		 "dnsmasq", "Leases", "Vifs", "Out/s", "In/s");
	attroff(A_BOLD);
	if (nv.n == 0)
		mvprintw(y++, 0, "none");
	for (i = 0; i < nv.n && i < NETS_MAX && y < bottom; i++, y++) {
		const struct lodge_network *n = &nv.nets[i];

		if (nv.rx_bps[i] >= 0) {
			fmt_rate(rx, sizeof(rx), nv.rx_bps[i]);
			fmt_rate(tx, sizeof(tx), nv.tx_bps[i]);
		} else {
			snprintf(rx, sizeof(rx), "-");
			snprintf(tx, sizeof(tx), "-");
		}
		if (n->dnsmasq_died && !t->monochrome)
			attron(A_BOLD);
		put_row(y, "%-12.12s %-8s %-15s %-18s %-8s %6u %4d %10s %10s", n->name,
			 (int)n->mode < 0 ? "?" : lodge_net_mode_name(n->mode), n->bridge_up ? n->bridge : "(down)",
			 n->subnet[0] ? n->subnet : "?", dnsmasq_word(n), n->leases, n->ports, rx, tx);
		attroff(A_BOLD);
	}
	y++;
	if (y < bottom) {
		attron(A_BOLD);
		put_row(y++, "%-12s %-17s %-15s %s", "Leases", "MAC", "Address", "Host");
		attroff(A_BOLD);
	}
	for (k = 0; k < nv.nleases && y < bottom; k++, y++) {
		const struct lodge_lease *l = &nv.leases[k];

		put_row(y, "%-12.12s %02x:%02x:%02x:%02x:%02x:%02x %-15s %s", l->network, l->mac[0], l->mac[1],
			 l->mac[2], l->mac[3], l->mac[4], l->mac[5], l->addr, l->hostname[0] ? l->hostname : "-");
	}
	draw_bars(t);
}
