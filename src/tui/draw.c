/* Drawing: the header, the domain table and the status line, from what
 * sampling kept (the detail view is detail.c's, the help overlay and
 * the key bar keys.c's).  Only curses' own diffing decides what reaches
 * the terminal: nothing here clears the screen. */
#include "tui.h"

#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char spark_levels[] = " .:-=+*#%@";

void tui_status(struct tui *t, bool error, const char *fmt, ...)
{
	char text[sizeof(t->status)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* It may quote a reply: curses would move the cursor on \n, \t, \b. */
	lodge_text_shown(t->status, sizeof(t->status), text);
	t->status_error = error;
}

void spark(char *out, const float *hist, unsigned len, unsigned width, float max)
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

void fmt_uptime(char *buf, size_t len, unsigned long s)
{
	if (s >= 86400)
		snprintf(buf, len, "%lud%02luh", s / 86400, s / 3600 % 24);
	else
		snprintf(buf, len, "%02lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
}

/* State in words and attributes, never by colour alone; a save or
 * migration under way shows instead of the state it runs in, and a
 * domain that has not answered for a while instead of either: its
 * figures are stale (the detail view says since when). */
static const char *state_word(const struct lodge_status *st, bool stale, attr_t *attr)
{
	const char *state = st->state, *job = lodge_save_word(st);

	*attr = A_NORMAL;
	if (stale) {
		*attr = A_BOLD;
		return "late";
	}
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

/* The status line and, beneath it, the key bar (keys.c). */
void draw_bars(struct tui *t)
{
	move(LINES - 2, 0);
	if (t->status[0]) {
		if (t->status_error)
			attron(A_BOLD);
		printw("%s%.*s", t->status_error ? "error: " : "", COLS - 8, t->status);
		attroff(A_BOLD);
	}
	clrtoeol();
	draw_key_bar();
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
	bool stale;             /* the domain has not answered for a while */
	double net_rx, net_tx, disk_rd, disk_wr;
};

static void draw_row(const struct table_layout *l, int y, const struct lodge_status *st, double cpu,
		     const struct row_rates *r, const char *spk, bool selected)
{
	char up[32], id[16], a[16] = "-", b[16] = "-", c[16] = "-", d[16] = "-", free_mib[24] = "-";
	attr_t attr;
	const char *word = state_word(st, r->stale, &attr);

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
	uint64_t now = tui_now_ns();

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
			struct row_rates r = { true, sample_stale(t, d, now), d->net_rx_bps, d->net_tx_bps,
					       d->disk_rd_bps, d->disk_wr_bps };

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

