/* The detail view of one domain: its status, vCPUs and history, its
 * devices, taps and watcher, and its console's last lines.  Everything
 * here is what sampling kept (sample.c): nothing is asked or read while
 * drawing, and what is late says so, with its age, instead of waiting. */
#include "tui.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Seconds since then. */
static unsigned long age_s(uint64_t then_ns, uint64_t now_ns)
{
	return then_ns && now_ns > then_ns ? (unsigned long)((now_ns - then_ns) / 1000000000ULL) : 0;
}

/* A disk's size for the detail view: "12.0G", "512M", "?" if unknown. */
static void fmt_size(char *buf, size_t len, uint64_t bytes)
{
	if (bytes >= (1ULL << 30))
		snprintf(buf, len, "%.1fG", bytes / (double)(1ULL << 30));
	else if (bytes)
		snprintf(buf, len, "%lluM", (unsigned long long)(bytes >> 20));
	else
		snprintf(buf, len, "?");
}

/* How a piece of the detail view stands, for its heading: "" when it is
 * fresh, else in words why not ("awaited, asked 4 s ago", "stale: from
 * 12 s ago, its reply awaited", "failed: why"). */
static const char *fetch_state(const struct fetch *f, bool out, uint64_t now, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!f->got_ns && out)
		snprintf(buf, len, "awaited, asked %lu s ago", age_s(f->asked_ns, now));
	else if (!f->got_ns && f->rc)
		snprintf(buf, len, "%s", f->err);
	else if (!f->got_ns)
		snprintf(buf, len, "awaited");
	else if (fetch_overdue(f, out, now))
		snprintf(buf, len, "stale: from %lu s ago, its reply awaited", age_s(f->got_ns, now));
	else if (f->rc)
		snprintf(buf, len, "from %lu s ago; since: %s", age_s(f->got_ns, now), f->err);
	return buf;
}

/* A line of the view, wrapped above the status line. */
static int put_line(const struct tui *t, int y, int x, int indent, const char *line)
{
	return put_wrapped(y, x, indent, LINES - bars_rows(t), line);
}

/* Why a piece of the detail view has not been asked for yet. */
static const char *not_asked(const struct dom_sample *d)
{
	return d->answered_ns ? "awaited" : "not asked until its status is read";
}

#define DETAIL_INDENT 9            /* "memory   " */

static int draw_status(struct tui *t, const struct dom_sample *d, uint64_t now, int y)
{
	char line[512], guest[256], up[32];

	fmt_uptime(up, sizeof(up), d->st.uptime_s);
	snprintf(line, sizeof(line), "%s (id %u, pid %d): %s, up %s, %u vCPUs, %lu MiB, %lu MiB resident",
		 d->st.name, d->st.id, d->st.pid, domain_state_name(d->st.state), up, d->st.vcpus, d->st.target_mib,
		 d->st.rss_kib / 1024);
	y = put_line(t, y, 0, DETAIL_INDENT, line);
	if (sample_stale(t, d, now)) {
		/* Its lodge-hyp does not answer: what follows is what it last said. */
		snprintf(line, sizeof(line), "stale: %s has not answered for %lu s; these figures are that old",
			 d->st.name, age_s(d->answered_ns, now));
		attron(A_BOLD);
		y = put_line(t, y, 0, DETAIL_INDENT, line);
		attroff(A_BOLD);
	}
	if (d->st.state == DOMAIN_STATE_UNKNOWN) {
		snprintf(line, sizeof(line), "state ?  cannot ask its status: %s (figures: the last it gave, if any)",
			 d->st.end_reason);
		y = put_line(t, y, 0, DETAIL_INDENT, line);
	}
	/* The balloon, and the guest's own view once its driver reports: on
	 * one line where it fits, else the guest's on a line of its own. */
	snprintf(line, sizeof(line), "memory   target %lu MiB of maxmem %lu, balloon %lu MiB", d->st.target_mib,
		 d->st.maxmem_mib, d->st.balloon_mib);
	if (d->st.guest_stats)
		snprintf(guest, sizeof(guest), "guest: FREE(M) %lu  AVAIL(M) %lu  TOTAL(M) %lu",
			 d->st.guest_free_kib / 1024, d->st.guest_avail_kib / 1024, d->st.guest_total_kib / 1024);
	else
		snprintf(guest, sizeof(guest), "guest: FREE(M) - (no balloon stats yet)");
	if ((int)(strlen(line) + 3 + strlen(guest)) <= COLS - 1) {
		mvprintw(y++, 0, "%s   %s", line, guest);
	} else {
		y = put_line(t, y, 0, DETAIL_INDENT, line);
		y = put_line(t, y, DETAIL_INDENT, 0, guest);
	}
	/* What the host holds: the resident figure leaves out what KSM
	 * merged (shared with other pages, here or in other domains); THP,
	 * how much of it huge pages back. */
	snprintf(line, sizeof(line), "host     resident %lu MiB + KSM shared %lu MiB, THP %lu MiB",
		 d->st.rss_kib / 1024, d->st.ksm_shared_kib / 1024, d->st.thp_kib / 1024);
	y = put_line(t, y, 0, DETAIL_INDENT, line);
	/* A save or migration: its progress while it runs, how it ended once
	 * it has (a failed migration leaves it running). */
	if (d->st.save_kind != LODGE_SAVE_NONE) {
		lodge_save_describe(&d->st, line, sizeof(line));
		y = put_line(t, y, 0, DETAIL_INDENT, line);
	}
	return y;
}

static int draw_cpu(const struct dom_sample *d, int y)
{
	char spk[128], cap[16] = "none";
	unsigned i, w = COLS > 20 ? COLS - 20 : 1;

	if (w > 100)
		w = 100;
	for (i = 0; i < d->st.vcpus && i < 8; i++) {
		int bar = (int)(d->vcpu_pct[i] / 100.0 * 40 + 0.5);

		if (bar > 40)
			bar = 40;
		mvprintw(y++, 0, "vcpu%-2u [%-40.*s] %5.1f%%  wait %5.1f%%", i, bar,
			 "########################################", d->vcpu_pct[i], d->vcpu_wait_pct[i]);
	}
	/* Wait: runnable but not running (the guest's steal); what weight and
	 * cap are there to share. */
	if (d->st.cpu_cap)
		snprintf(cap, sizeof(cap), "%u%%", d->st.cpu_cap);
	mvprintw(y++, 0, "weight %u, cap %s, wait %.1f%% of a CPU", d->st.cpu_weight, cap, d->wait_pct);
	spark(spk, d->cpu_hist, d->hist_len, w, 100.0f * (d->st.vcpus ? d->st.vcpus : 1));
	mvprintw(y++, 0, "CPU      |%s|", spk);
	spark(spk, d->rss_hist, d->hist_len, w, d->st.maxmem_mib ? (float)d->st.maxmem_mib : 1);
	mvprintw(y++, 0, "resident |%s|", spk);
	return y;
}

/* A vif's addresses, its watcher's rates and the last interval's top
 * peers, as room allows (the console keeps at least four lines). */
static int draw_vif_view(const struct tui *t, const struct lodge_net *nv, unsigned i, int y)
{
	const struct lodge_vif_net *v = &nv->vifs[i];
	char line[1024], pps[16], bps[16], rate[16];
	size_t n = 0;
	unsigned k;

	if (strcmp(v->watch, "on") != 0) {
		snprintf(line, sizeof(line), "not watched: %s", v->watch);
		return put_line(t, y, 2, 2, line);
	}
	n += snprintf(line, sizeof(line), "addresses");
	for (k = 0; k < v->naddrs && n < sizeof(line); k++)
		n += snprintf(line + n, sizeof(line) - n, "%s %s (%s, %lus ago)", k ? "," : "", v->addrs[k].a.addr,
			      v->addrs[k].a.how, v->addrs[k].a.age_s);
	if (!v->naddrs)
		snprintf(line + n, sizeof(line) - n, " none seen yet");
	y = put_line(t, y, 2, 2, line);
	fmt_rate(pps, sizeof(pps), v->pps);
	fmt_rate(bps, sizeof(bps), v->bps);
	mvprintw(y++, 2, "traffic %s pkt/s %sB/s, %lu dropped by the watcher%s", pps, bps, (unsigned long)v->drops,
		 v->npeers ? "; top peers:" : "");
	for (k = 0; k < v->npeers && y < LINES - 8; k++) {
		fmt_rate(rate, sizeof(rate), nv->interval_ms ? v->peers[k].bytes * 1000.0 / nv->interval_ms : 0);
		fmt_rate(bps, sizeof(bps), v->peers[k].bytes);
		mvprintw(y++, 4, "%-39s %8lu pkts %6sB %6sB/s", v->peers[k].addr, (unsigned long)v->peers[k].packets,
			 bps, rate);
	}
	return y;
}

static int draw_devices(struct tui *t, const struct dom_sample *d, const struct dom_detail *x, uint64_t now, int y)
{
	char state[320];
	unsigned i;

	if (!x || !x->config.got_ns) {
		mvprintw(y++, 0, "devices  %.*s", COLS > 10 ? COLS - 10 : 0,
			 x ? fetch_state(&x->config, false, now, state, sizeof(state)) : not_asked(d));
		return y;
	}
	mvprintw(y++, 0, "kernel %.*s", COLS > 8 ? COLS - 8 : 0, x->kernel);
	for (i = 0; i < x->dev.ndisks; i++) {
		const struct lodge_disk *k = &x->dev.disk[i];
		char rd[16] = "-", wr[16] = "-", size[16];

		if (i < d->st.ndisks) {
			fmt_rate(rd, sizeof(rd), d->disk_rd_dev_bps[i]);
			fmt_rate(wr, sizeof(wr), d->disk_wr_dev_bps[i]);
		}
		fmt_size(size, sizeof(size), x->disk_bytes[i]);
		mvprintw(y++, 0, "disk %-4s %s %-4s %6s read %6s/s write %6s/s  %.*s", k->vdev, k->readonly ? "ro" : "rw",
			 k->is_phy ? "phy" : "file", size, rd, wr, COLS > 56 ? COLS - 56 : 0, k->path);
	}
	for (i = 0; i < x->dev.nvifs; i++) {
		const struct lodge_vif *v = &x->dev.vif[i];
		const struct lodge_link *ls = &x->link[i];
		bool out = x->netq.fd >= 0;

		char line[512];

		if (x->link_err[i][0])
			snprintf(line, sizeof(line), "vif %s: %s", v->ifname, x->link_err[i]);
		else
			/* The tap's rx is what the guest sent. */
			snprintf(line, sizeof(line), "vif %s on %s: guest tx %llu pkts %llu B, rx %llu pkts %llu B, "
				 "drops %llu", v->ifname, v->bridge, (unsigned long long)ls->rx_packets,
				 (unsigned long long)ls->rx_bytes, (unsigned long long)ls->tx_packets,
				 (unsigned long long)ls->tx_bytes, (unsigned long long)(ls->rx_dropped + ls->tx_dropped));
		y = put_line(t, y, 0, 4, line);
		if (fetch_state(&x->net, out, now, state, sizeof(state))[0])
			mvprintw(y++, 2, "watcher: %.*s", COLS > 12 ? COLS - 12 : 0, state);
		if (x->net.got_ns && i < x->view.nvifs)
			y = draw_vif_view(t, &x->view, i, y);
	}
	return y;
}

/* The console's last lines that fit between y and the status line. */
static void draw_console(const struct tui *t, const struct dom_sample *d, const struct dom_detail *x, uint64_t now,
			 int y)
{
	char state[320], tail[sizeof(x->tail)];
	char *p, *lines[64];
	int lines_left, n = 0, k;

	if (!x || !x->console.got_ns) {
		mvprintw(y++, 0, "console: %.*s", COLS > 10 ? COLS - 10 : 0,
			 x ? fetch_state(&x->console, x->conq.fd >= 0, now, state, sizeof(state)) : not_asked(d));
		return;
	}
	if (fetch_state(&x->console, x->conq.fd >= 0, now, state, sizeof(state))[0])
		mvprintw(y++, 0, "console (last lines, %.*s):", COLS > 26 ? COLS - 26 : 0, state);
	else
		mvprintw(y++, 0, "console (last lines):");
	lines_left = LINES - 1 - bars_rows(t) - y;
	memcpy(tail, x->tail, sizeof(tail));
	p = tail + strlen(tail);
	/* The last lines_left lines of the tail, oldest first. */
	while (p > tail && n < lines_left && n < 64) {
		char *e = p;

		while (p > tail && p[-1] != '\n')
			p--;
		if (e > p || n)
			lines[n++] = p;
		if (p > tail)
			*--p = '\0';
	}
	for (k = n - 1; k >= 0; k--) {
		char *cr = strchr(lines[k], '\r'), shown[1024];

		if (cr)
			*cr = '\0';
		/* The guest's text: curses shows ESC as ^[ but moves the
		 * cursor on a tab or a backspace. */
		mvprintw(y++, 2, "%.*s", COLS > 3 ? COLS - 3 : 0, lodge_text_shown(shown, sizeof(shown), lines[k]));
	}
}

void draw_detail(struct tui *t)
{
	struct dom_sample *d = tui_selected(t);
	uint64_t now = tui_now_ns();
	int y;

	erase();
	if (!d) {
		mvprintw(0, 0, "Domain-0: the host. %u CPUs, %lu MiB, %lu MiB free for guests.", t->host.ncpus,
			 t->host.mem_total_mib, t->host.mem_avail_mib);
		mvprintw(2, 0, "Esc returns to the table.");
		draw_bars(t);
		return;
	}
	if (d->off) {                /* defined, not running: its config */
		defined_detail(t, d, 0);
		draw_bars(t);
		return;
	}
	if (d->install) {            /* not a running domain yet: the install's state */
		install_detail(t, d->install, 0);
		draw_bars(t);
		return;
	}
	y = draw_status(t, d, now, 0);
	y = draw_cpu(d, y + 1);
	y = draw_devices(t, d, d->detail, now, y + 1);
	draw_console(t, d, d->detail, now, y + 1);
	draw_bars(t);
}
