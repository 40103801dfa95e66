/* Drawing: the header, the domain table, the detail view, the help
 * overlay, the status line and the key bar.  Only curses' own diffing
 * decides what reaches the terminal: nothing here clears the screen. */
#include "tui.h"
#include "log.h"
#include "netlink.h"

#include <curses.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char spark_levels[] = " .:-=+*#%@";

void tui_status(struct tui *t, bool error, const char *fmt, ...)
{
	char text[sizeof(t->status)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* It may quote a reply: curses would move the cursor on \n, \t, \b. */
	text_escape(t->status, sizeof(t->status), text);
	t->status_error = error;
}

static void spark(char *out, const float *hist, unsigned len, unsigned width, float max)
{
	unsigned i;

	for (i = 0; i < width; i++) {
		/* Newest on the right. */
		unsigned age = width - 1 - i;
		float v = age < len ? hist[age] : -1;
		int lvl;

		if (v < 0) {
			out[i] = ' ';
			continue;
		}
		lvl = max > 0 ? (int)(v / max * (sizeof(spark_levels) - 2) + 0.999f) : 0;
		if (lvl < 0) lvl = 0;
		if (lvl > (int)sizeof(spark_levels) - 2) lvl = sizeof(spark_levels) - 2;
		out[i] = spark_levels[lvl];
	}
	out[width] = '\0';
}

/* Bytes a second in at most 6 characters: 0, 812, 12.3K, 456K, 1.2M, 3.4G. */
void fmt_rate(char *buf, size_t len, double v)
{
	static const char units[] = "KMGT";
	unsigned u = 0;

	if (v < 999.5) {
		snprintf(buf, len, "%.0f", v);
		return;
	}
	v /= 1024;
	while (v >= 999.5 && u < sizeof(units) - 2) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, v < 9.95 ? "%.1f%c" : "%.0f%c", v, units[u]);
}

static void fmt_uptime(char *buf, size_t len, unsigned long s)
{
	if (s >= 86400)
		snprintf(buf, len, "%lud%02luh", s / 86400, s / 3600 % 24);
	else
		snprintf(buf, len, "%02lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
}

/* State in words and attributes, never by colour alone; a save or
 * migration under way shows instead of the state it runs in. */
static const char *state_word(const struct lodge_status *st, attr_t *attr)
{
	const char *state = st->state, *job = lodge_save_word(st);

	*attr = A_NORMAL;
	if (job)
		return job;
	if (strcmp(state, "running") == 0)
		return "run";
	if (strcmp(state, "paused") == 0) {
		*attr = A_BOLD;
		return "PAUSE";
	}
	if (strcmp(state, "crashed") == 0) {
		*attr = A_BOLD | A_UNDERLINE;
		return "CRASH";
	}
	if (strcmp(state, "?") == 0) {
		*attr = A_BOLD;
		return "?";              /* it would not say: the detail view has why */
	}
	return "shut";
}

static void draw_header(struct tui *t)
{
	unsigned counts[4] = { 0 }, i;
	char clock[16];
	time_t now = time(NULL);

	strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&now));
	for (i = 0; i < t->ndoms; i++) {
		const char *s = t->doms[i].st.state;

		counts[strcmp(s, "running") == 0 ? 0 : strcmp(s, "paused") == 0 ? 1 :
		       strcmp(s, "crashed") == 0 ? 3 : 2]++;
	}
	mvprintw(0, 0, "lodge %s  %u CPUs  load %.2f %.2f %.2f  free for guests %lu of %lu MiB",
		 clock, t->host.ncpus, t->host.load1, t->host.load5, t->host.load15,
		 t->host.mem_avail_mib, t->host.mem_total_mib);
	clrtoeol();
	mvprintw(1, 0, "domains %u: %u running, %u paused, %u shutdown, %u crashed   sort %s%s%s%s%s",
		 t->ndoms, counts[0], counts[1], counts[3 - 1], counts[3], sort_name(t->sort),
		 t->sort_reverse ? " (rev)" : "", t->filter[0] ? "  filter /" : "", t->filter,
		 t->frozen ? "  FROZEN" : "");
	clrtoeol();
}

static void draw_bars(struct tui *t)
{
	static const char *const keys[][2] = {
		{ "?", "Help" }, { "/", "Filter" }, { "<>", "Sort" }, { "n", "New" }, { "c", "Console" },
		{ "p", "Pause" }, { "s", "Shutdown" }, { "r", "Reboot" }, { "k", "Kill" }, { "q", "Quit" },
	};
	unsigned i;

	move(LINES - 2, 0);
	if (t->status[0]) {
		if (t->status_error)
			attron(A_BOLD);
		printw("%s%.*s", t->status_error ? "error: " : "", COLS - 8, t->status);
		attroff(A_BOLD);
	}
	clrtoeol();
	move(LINES - 1, 0);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (getcurx(stdscr) + (int)(strlen(keys[i][0]) + strlen(keys[i][1])) + 1 >= COLS)
			break;
		attron(A_BOLD);
		printw("%s", keys[i][0]);
		attroff(A_BOLD);
		attron(A_REVERSE);
		printw("%s", keys[i][1]);
		attroff(A_REVERSE);
		printw(" ");
	}
	clrtoeol();
}

/* The table's columns after UPTIME: I/O rates, then the CPU sparkline in
 * what is left.  80 columns have room for one rate each for network and
 * disk; 100 and more add the guest's own free memory (FREE(M), once its
 * balloon driver reports it) and split the rates into rx/tx and
 * read/write. */
struct table_layout {
	bool split;             /* FREE(M); rx, tx, read, write in their own columns */
	unsigned addr_w;        /* 0: no address column */
	unsigned spark_w;       /* 0: no sparkline */
};

#define TABLE_FIXED 62      /* ID .. UPTIME */
#define TABLE_ADDR_W 15     /* an IPv4 address; the detail view has them all */

/* The address column comes before the sparkline: at 80 columns neither
 * fits, from 108 the address does, from 116 both. */
static struct table_layout table_layout(void)
{
	struct table_layout l = { .split = COLS >= 100 };
	int left = COLS - TABLE_FIXED - (l.split ? 8 + 28 : 14);

	if (left >= TABLE_ADDR_W + 1) {
		l.addr_w = TABLE_ADDR_W;
		left -= TABLE_ADDR_W + 1;
	}
	left -= 2;
	l.spark_w = left >= 8 ? (left > 60 ? 60 : left) : 0;
	return l;
}

/* Rates of a row: Domain-0 has none of its own ("-"). */
struct row_rates {
	bool known;
	double net_rx, net_tx, disk_rd, disk_wr;
};

static void draw_row(const struct table_layout *l, int y, const struct lodge_status *st, double cpu,
		     const struct row_rates *r, const char *spk, bool selected)
{
	char up[32], id[16], a[16] = "-", b[16] = "-", c[16] = "-", d[16] = "-", free_mib[24] = "-";
	attr_t attr;
	const char *word = state_word(st, &attr);

	fmt_uptime(up, sizeof(up), st->uptime_s);
	snprintf(id, sizeof(id), "%u", st->id);
	if (st->guest_stats)
		snprintf(free_mib, sizeof(free_mib), "%lu", st->guest_free_kib / 1024);
	if (r->known && l->split) {
		fmt_rate(a, sizeof(a), r->net_rx);
		fmt_rate(b, sizeof(b), r->net_tx);
		fmt_rate(c, sizeof(c), r->disk_rd);
		fmt_rate(d, sizeof(d), r->disk_wr);
	} else if (r->known) {
		fmt_rate(a, sizeof(a), r->net_rx + r->net_tx);
		fmt_rate(b, sizeof(b), r->disk_rd + r->disk_wr);
	}
	move(y, 0);
	if (selected)
		attron(A_REVERSE);
	printw("%4s %-16.16s ", id, st->name);
	attron(attr);
	printw("%-5s", word);
	attroff(attr);
	if (selected)
		attron(A_REVERSE);
	printw(" %6.1f %7lu %7lu %2u %8s", cpu, st->target_mib, st->rss_kib / 1024, st->vcpus, up);
	if (l->split)
		printw(" %7s %6s %6s %6s %6s", free_mib, a, b, c, d);
	else
		printw(" %6s %6s", a, b);
	if (l->addr_w) {
		char addrs[LODGE_MAX_ADDRS * 48];

		lodge_addrs_join(st, addrs, sizeof(addrs));
		printw(" %-*.*s", (int)l->addr_w, (int)l->addr_w, strtok(addrs, ","));
	}
	if (l->spark_w)
		printw("  %-*s", (int)l->spark_w, spk);
	clrtoeol();
	attroff(A_REVERSE);
}

void draw_table(struct tui *t)
{
	int rows = LINES - 5, y = 3, i;
	struct table_layout l = table_layout();
	char spk[256];
	struct lodge_status dom0;
	static const struct row_rates no_rates;

	draw_header(t);
	move(2, 0);
	attron(A_REVERSE);
	printw("%4s %-16s %-5s %6s %7s %7s %2s %8s", "ID", "NAME", "ST", "%CPU", "MEM(M)", "RSS(M)", "VC",
	       "UPTIME");
	if (l.split)
		printw(" %7s %6s %6s %6s %6s", "FREE(M)", "NETRX", "NETTX", "DSKRD", "DSKWR");
	else
		printw(" %6s %6s", "NET/s", "DISK/s");
	if (l.addr_w)
		printw(" %-*s", (int)l.addr_w, "ADDRESS");
	if (l.spark_w)
		printw("  %-*s", (int)l.spark_w, "CPU HISTORY");
	hline(' ', COLS);
	attroff(A_REVERSE);

	/* Keep the selection on screen. */
	if (t->selected < t->top)
		t->top = t->selected;
	if ((int)t->selected >= (int)t->top + rows)
		t->top = t->selected - rows + 1;
	for (i = 0; i < rows; i++, y++) {
		unsigned row = t->top + i;

		if (row == 0) {
			memset(&dom0, 0, sizeof(dom0));
			snprintf(dom0.name, sizeof(dom0.name), "Domain-0");
			snprintf(dom0.state, sizeof(dom0.state), "running");
			dom0.vcpus = t->host.ncpus;
			dom0.memory_mib = dom0.target_mib = t->host.mem_total_mib;
			dom0.rss_kib = (t->host.mem_total_mib - t->host.mem_avail_mib) * 1024;
			dom0.uptime_s = t->host.uptime_s;
			dom0.guest_stats = true;
			dom0.guest_free_kib = t->host.mem_avail_mib * 1024;
			draw_row(&l, y, &dom0, t->host.cpu_pct, &no_rates, "", t->selected == 0);
		} else if (row <= t->nshown) {
			struct dom_sample *d = &t->doms[t->order[row - 1]];
			struct row_rates r = { true, d->net_rx_bps, d->net_tx_bps, d->disk_rd_bps, d->disk_wr_bps };

			spk[0] = '\0';
			if (l.spark_w)
				spark(spk, d->cpu_hist, d->hist_len, l.spark_w,
				      100.0f * (d->st.vcpus ? d->st.vcpus : 1));
			draw_row(&l, y, &d->st, d->cpu_pct, &r, spk, t->selected == row);
		} else {
			move(y, 0);
			clrtoeol();
		}
	}
	draw_bars(t);
}

/* A disk's size for the detail view: "12G", "512M", "?" if unreadable. */
static void disk_size(const char *path, char *buf, size_t len)
{
	struct stat sb;
	uint64_t bytes = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	snprintf(buf, len, "?");
	if (fd < 0)
		return;
	if (fstat(fd, &sb) == 0) {
		if (S_ISBLK(sb.st_mode)) {
			if (ioctl(fd, BLKGETSIZE64, &bytes) != 0)
				bytes = 0;
		} else {
			bytes = sb.st_size;
		}
	}
	close(fd);
	if (bytes >= (1ULL << 30))
		snprintf(buf, len, "%.1fG", bytes / (double)(1ULL << 30));
	else if (bytes)
		snprintf(buf, len, "%lluM", (unsigned long long)(bytes >> 20));
}

/* The console's last lines, through the control socket. */
static void console_tail(struct tui *t, const char *name, char *buf, size_t len)
{
	size_t n = 0;
	char *text;

	buf[0] = '\0';
	if (lodge_console_log(t->lg, name, 2048, 300, &text, &n, NULL))
		return;
	if (n >= len)
		n = len - 1;
	memcpy(buf, text, n);
	buf[n] = '\0';
	free(text);
}

/* A vif's addresses, its watcher's rates and the last interval's top
 * peers, as room allows (the console keeps at least four lines). */
static int draw_vif_view(const struct lodge_net *nv, unsigned i, int y)
{
	const struct lodge_vif_net *v = &nv->vifs[i];
	char line[1024], pps[16], bps[16], rate[16];
	size_t n = 0;
	unsigned k;

	if (strcmp(v->watch, "on") != 0) {
		mvprintw(y++, 2, "not watched: %.*s", COLS > 16 ? COLS - 16 : 0, v->watch);
		return y;
	}
	n += snprintf(line, sizeof(line), "addresses");
	for (k = 0; k < v->naddrs && n < sizeof(line); k++)
		n += snprintf(line + n, sizeof(line) - n, "%s %s (%s, %lus ago)", k ? "," : "", v->addrs[k].a.addr,
			      v->addrs[k].a.how, v->addrs[k].a.age_s);
	if (!v->naddrs)
		snprintf(line + n, sizeof(line) - n, " none seen yet");
	mvprintw(y++, 2, "%.*s", COLS > 3 ? COLS - 3 : 0, line);
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

void draw_detail(struct tui *t)
{
	struct dom_sample *d = tui_selected(t);
	static struct domain_config dc;
	static struct lodge_devices dev;
	static struct lodge_net nv;
	bool have_view = false;
	char err[512], spk[128], tail[2048 + 1], up[32];
	unsigned i, w = COLS > 20 ? COLS - 20 : 1;
	int y = 0, lines_left;

	if (w > 100)
		w = 100;
	erase();
	if (!d) {
		mvprintw(0, 0, "Domain-0: the host. %u CPUs, %lu MiB, %lu MiB free for guests.", t->host.ncpus,
			 t->host.mem_total_mib, t->host.mem_avail_mib);
		mvprintw(2, 0, "Esc returns to the table.");
		draw_bars(t);
		return;
	}
	fmt_uptime(up, sizeof(up), d->st.uptime_s);
	{
		char line[512];

		snprintf(line, sizeof(line), "%s (id %u, pid %d): %s, up %s, %u vCPUs, %lu MiB, %lu MiB resident",
			 d->st.name, d->st.id, d->st.pid, d->st.state, up, d->st.vcpus, d->st.target_mib,
			 d->st.rss_kib / 1024);
		mvprintw(y++, 0, "%.*s", COLS, line);
		if (strcmp(d->st.state, "?") == 0) {
			snprintf(line, sizeof(line), "state ?  cannot ask its status: %s (figures: the "
				 "last it gave, if any)", d->st.end_reason);
			mvprintw(y++, 0, "%.*s", COLS, line);
		}
		/* The balloon, and the guest's own view once its driver reports. */
		if (d->st.guest_stats)
			snprintf(line, sizeof(line), "memory   target %lu MiB of maxmem %lu, balloon %lu MiB   "
				 "guest: FREE(M) %lu  AVAIL(M) %lu  TOTAL(M) %lu", d->st.target_mib,
				 d->st.maxmem_mib, d->st.balloon_mib, d->st.guest_free_kib / 1024,
				 d->st.guest_avail_kib / 1024, d->st.guest_total_kib / 1024);
		else
			snprintf(line, sizeof(line), "memory   target %lu MiB of maxmem %lu, balloon %lu MiB   "
				 "guest: FREE(M) - (no balloon stats yet)", d->st.target_mib, d->st.maxmem_mib,
				 d->st.balloon_mib);
		mvprintw(y++, 0, "%.*s", COLS, line);
		/* What the host holds: the resident figure leaves out what KSM
		 * merged (shared with other pages, here or in other domains);
		 * THP, how much of it huge pages back. */
		snprintf(line, sizeof(line), "host     resident %lu MiB + KSM shared %lu MiB, THP %lu MiB",
			 d->st.rss_kib / 1024, d->st.ksm_shared_kib / 1024, d->st.thp_kib / 1024);
		mvprintw(y++, 0, "%.*s", COLS, line);
		/* A save or migration: its progress while it runs, how it
		 * ended once it has (a failed migration leaves it running). */
		if (d->st.save_kind != LODGE_SAVE_NONE) {
			lodge_save_describe(&d->st, line, sizeof(line));
			mvprintw(y++, 0, "%.*s", COLS, line);
		}
	}
	y++;
	for (i = 0; i < d->st.vcpus && i < 8; i++) {
		int bar = (int)(d->vcpu_pct[i] / 100.0 * 40 + 0.5);

		if (bar > 40) bar = 40;
		mvprintw(y++, 0, "vcpu%-2u [%-40.*s] %5.1f%%  wait %5.1f%%", i, bar,
			 "########################################", d->vcpu_pct[i], d->vcpu_wait_pct[i]);
	}
	/* Wait: runnable but not running (the guest's steal); what weight and
	 * cap are there to share. */
	{
		char cap[16] = "none";

		if (d->st.cpu_cap)
			snprintf(cap, sizeof(cap), "%u%%", d->st.cpu_cap);
		mvprintw(y++, 0, "weight %u, cap %s, wait %.1f%% of a CPU", d->st.cpu_weight, cap, d->wait_pct);
	}
	spark(spk, d->cpu_hist, d->hist_len, w, 100.0f * (d->st.vcpus ? d->st.vcpus : 1));
	mvprintw(y++, 0, "CPU      |%s|", spk);
	spark(spk, d->rss_hist, d->hist_len, w, d->st.maxmem_mib ? (float)d->st.maxmem_mib : 1);
	mvprintw(y++, 0, "resident |%s|", spk);
	y++;
	if (lodge_running_config(t->lg, d->st.name, &dc, NULL) == 0 && lodge_devices(t->lg, d->st.name, &dev, NULL) == 0) {
		mvprintw(y++, 0, "kernel %.*s", COLS - 8, dc.kernel);
		for (i = 0; i < dev.ndisks; i++) {
			const struct lodge_disk *k = &dev.disk[i];
			char rd[16] = "-", wr[16] = "-", size[16];

			if (i < d->st.ndisks) {
				fmt_rate(rd, sizeof(rd), d->disk_rd_dev_bps[i]);
				fmt_rate(wr, sizeof(wr), d->disk_wr_dev_bps[i]);
			}
			disk_size(k->path, size, sizeof(size));
			mvprintw(y++, 0, "disk %-4s %s %-4s %6s read %6s/s write %6s/s  %.*s", k->vdev,
				 k->readonly ? "ro" : "rw", k->is_phy ? "phy" : "file", size, rd,
				 wr, COLS > 56 ? COLS - 56 : 0, k->path);
		}
		have_view = dev.nvifs && lodge_net(t->lg, d->st.name, &nv, NULL) == 0;
		for (i = 0; i < dev.nvifs; i++) {
			const struct lodge_vif *v = &dev.vif[i];
			struct link_stats ls;

			if (nl_link_stats(v->ifname, &ls, err, sizeof(err)) == 0)
				/* The tap's rx is what the guest sent. */
				mvprintw(y++, 0, "vif %s on %s: guest tx %llu pkts %llu B, rx %llu pkts %llu B, drops %llu",
					 v->ifname, v->bridge,
					 (unsigned long long)ls.rx_packets, (unsigned long long)ls.rx_bytes,
					 (unsigned long long)ls.tx_packets, (unsigned long long)ls.tx_bytes,
					 (unsigned long long)(ls.rx_dropped + ls.tx_dropped));
			else
				mvprintw(y++, 0, "vif %s: %s", v->ifname, err);
			if (have_view && i < nv.nvifs)
				y = draw_vif_view(&nv, i, y);
		}
	}
	y++;
	mvprintw(y++, 0, "console (last lines):");
	console_tail(t, d->st.name, tail, sizeof(tail));
	lines_left = LINES - 3 - y;
	if (lines_left > 0) {
		/* Show the last lines_left lines of the tail. */
		char *p = tail + strlen(tail), *lines[64];
		int n = 0, k;

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
			/* The guest's text: curses shows ESC as ^[ but moves
			 * the cursor on a tab or a backspace. */
			mvprintw(y++, 2, "%.*s", COLS - 3, text_escape(shown, sizeof(shown), lines[k]));
		}
	}
	draw_bars(t);
}

void draw_help(struct tui *t)
{
	static const char *const help[] = {
		"Lodge dashboard keys (F-keys have letter twins for serial consoles)",
		"",
		"  Up/Down PgUp/PgDn Home/End   move         Enter/F5   domain details",
		"  ? h F1    this help                       Esc        back to the table",
		"  / F3      filter by name (Esc clears)     < > F6     sort column",
		"  I         invert the sort                 P M        sort by CPU / memory",
		"  n F7      create a domain                 c          console (Ctrl-] returns)",
		"  p         pause / unpause                 s          shutdown (power button)",
		"  r         reboot                          k F9       destroy (kill)",
		"  d         refresh interval                Z          freeze updates",
		"  Ctrl-L    redraw                          q F10      quit (domains keep running)",
		"",
		"States: run, PAUSE (bold), shut, CRASH (bold underlined); migr, save while",
		"a migration or save of the domain runs (its detail view shows the progress).",
		"Press any key to return.",
	};
	int w = 78, h = sizeof(help) / sizeof(help[0]) + 2, y0 = (LINES - h) / 2, x0 = (COLS - w) / 2, i;

	if (x0 < 0) x0 = 0;
	if (y0 < 0) y0 = 0;
	for (i = 0; i < h; i++) {
		move(y0 + i, x0);
		hline(' ', w);
	}
	attron(A_BOLD);
	mvhline(y0, x0, ACS_HLINE, w);
	mvhline(y0 + h - 1, x0, ACS_HLINE, w);
	mvvline(y0, x0, ACS_VLINE, h);
	mvvline(y0, x0 + w - 1, ACS_VLINE, h);
	mvaddch(y0, x0, ACS_ULCORNER);
	mvaddch(y0, x0 + w - 1, ACS_URCORNER);
	mvaddch(y0 + h - 1, x0, ACS_LLCORNER);
	mvaddch(y0 + h - 1, x0 + w - 1, ACS_LRCORNER);
	attroff(A_BOLD);
	for (i = 0; i < (int)(sizeof(help) / sizeof(help[0])); i++)
		mvprintw(y0 + 1 + i, x0 + 2, "%.*s", w - 4, help[i]);
}

void draw_init(struct tui *t)
{
	(void)t;
}
