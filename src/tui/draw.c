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

/* The status line, and the newest message of the history (m). */
void tui_status(struct tui *t, bool error, const char *fmt, ...)
{
	char text[sizeof(t->status)];
	struct tui_message *m = &t->messages[t->nmessages++ % TUI_MESSAGES];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* It may quote a reply: curses would move the cursor on \n, \t, \b. */
	lodge_text_shown(t->status, sizeof(t->status), text);
	t->status_error = error;
	m->when = time(NULL);
	m->error = error;
	memcpy(m->text, t->status, sizeof(m->text));
	t->messages_back = 0;
}

size_t wrap_next(const char *s, size_t width)
{
	size_t n = strlen(s), cut;

	if (!width)
		width = 1;
	if (n <= width)
		return n;
	for (cut = width; cut > 0 && s[cut] != ' '; cut--)
		;
	return cut ? cut : width;      /* a word longer than the line is broken */
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
	/* the table's short words; a state without one is "shut": ended, or
	 * not yet a domain (installing) */
	static const struct {
		const char *word;
		attr_t attr;
	} shown[DOMAIN_STATE_COUNT] = {
		[DOMAIN_STATE_RUNNING] = { "run", A_NORMAL },
		[DOMAIN_STATE_PAUSED] = { "PAUSE", A_BOLD },
		[DOMAIN_STATE_CRASHED] = { "CRASH", A_BOLD | A_UNDERLINE },
		[DOMAIN_STATE_UNKNOWN] = { "?", A_BOLD },   /* it would not say: the detail view has why */
	};
	const char *job = lodge_save_word(st);

	*attr = A_NORMAL;
	if (stale) {
		*attr = A_BOLD;
		return "late";
	}
	if (job)
		return job;
	if ((unsigned)st->state >= DOMAIN_STATE_COUNT || !shown[st->state].word)
		return "shut";
	*attr = shown[st->state].attr;
	return shown[st->state].word;
}

int put_wrapped(int y, int x, int indent, int bottom, const char *text)
{
	int width = COLS - 1 - x;
	const char *p = text;
	bool first = true;

	while (*p && y < bottom) {
		int w = first ? width : width - indent;
		size_t k;

		while (*p == ' ')
			p++;
		k = wrap_next(p, w > 8 ? (size_t)w : 8);
		mvprintw(y++, first ? x : x + indent, "%.*s", (int)k, p);
		p += k;
		first = false;
	}
	return y;
}

/* The first of the candidate texts (the same figures, ever shorter)
 * that fits in width, else the last. */
static const char *first_fitting(const char *const *candidates, unsigned n, size_t width)
{
	unsigned i;

	for (i = 0; i + 1 < n && strlen(candidates[i]) > width; i++)
		;
	return candidates[i];
}

/* The header: the host, then the domains by state and the marks of what
 * the table shows (its sort, its filter, FROZEN).  The marks always
 * show whole; the counts and the host's figures take a shorter form
 * where the line is narrow. */
static void draw_header(struct tui *t)
{
	unsigned counts[4] = { 0 }, i;
	char clock[16], host[3][160], doms[5][160], marks[96];
	const char *const hostv[] = { host[0], host[1], host[2] };
	const char *const domv[] = { doms[0], doms[1], doms[2], doms[3], doms[4] };
	size_t width = COLS > 1 ? (size_t)COLS - 1 : 1, room;
	time_t now = time(NULL);
	const char *c;

	strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&now));
	for (i = 0; i < t->ndoms; i++) {
		if (t->doms[i].install && t->doms[i].install->state != INSTALL_DONE)
			continue;           /* not yet a domain: the installing count */
		switch (t->doms[i].st.state) {
		case DOMAIN_STATE_RUNNING: counts[0]++; break;
		case DOMAIN_STATE_PAUSED: counts[1]++; break;
		case DOMAIN_STATE_CRASHED: counts[3]++; break;
		default: counts[2]++; break;
		}
	}
	snprintf(host[0], sizeof(host[0]), "lodge %s  %u CPUs  load %.2f %.2f %.2f  free for guests %lu of %lu MiB",
		 clock, t->host.ncpus, t->host.load1, t->host.load5, t->host.load15, t->host.mem_avail_mib,
		 t->host.mem_total_mib);
	snprintf(host[1], sizeof(host[1]), "lodge %s  %u CPUs  load %.2f %.2f %.2f  free %lu/%lu MiB", clock,
		 t->host.ncpus, t->host.load1, t->host.load5, t->host.load15, t->host.mem_avail_mib,
		 t->host.mem_total_mib);
	snprintf(host[2], sizeof(host[2]), "lodge %s  %u CPUs  load %.2f  free %lu/%lu MiB", clock, t->host.ncpus,
		 t->host.load1, t->host.mem_avail_mib, t->host.mem_total_mib);
	mvprintw(0, 0, "%.*s", (int)width, first_fitting(hostv, 3, width));
	clrtoeol();

	snprintf(doms[0], sizeof(doms[0]), "domains %u: %u running, %u paused, %u shutdown, %u crashed", t->ndoms,
		 counts[0], counts[1], counts[2], counts[3]);
	if (installs_running(t))
		snprintf(doms[0] + strlen(doms[0]), sizeof(doms[0]) - strlen(doms[0]), ", %u installing",
			 installs_running(t));
	snprintf(doms[1], sizeof(doms[1]), "%u domains: %u run, %u paused, %u shut, %u crashed", t->ndoms, counts[0],
		 counts[1], counts[2], counts[3]);
	snprintf(doms[2], sizeof(doms[2]), "%u dom: %u run %u pause %u shut %u crash", t->ndoms, counts[0], counts[1],
		 counts[2], counts[3]);
	snprintf(doms[3], sizeof(doms[3]), "%u domains", t->ndoms);
	snprintf(doms[4], sizeof(doms[4]), "%u dom", t->ndoms);
	snprintf(marks, sizeof(marks), "sort %s%s", sort_name(t->sort), t->sort_reverse ? " (rev)" : "");
	room = strlen(marks) + (t->filter[0] ? 10 + strlen(t->filter) : 0) + (t->frozen ? 8 : 0) + 3;
	c = first_fitting(domv, 5, width > room ? width - room : 0);
	move(1, 0);
	if (strlen(c) + room <= width)
		printw("%s   ", c);
	printw("%s", marks);
	if (t->filter[0]) {
		printw("  filter ");
		attron(A_BOLD);
		printw("/%s", t->filter);
		attroff(A_BOLD);
	}
	if (t->frozen) {
		printw("  ");
		attron(A_BOLD | A_REVERSE);
		printw("FROZEN");
		attroff(A_BOLD | A_REVERSE);
	}
	clrtoeol();
}

#define MORE_MARK " ... m: all of it"

/* The status line's text wrapped at the screen's width: each row's
 * start and length, at most TUI_STATUS_ROWS (one on a short screen);
 * true if even they do not hold it all (the last then ends in
 * MORE_MARK).  text holds "error: " and the message. */
static unsigned status_wrap(const struct tui *t, char *text, size_t len, const char **row, size_t *rowlen,
			    bool *cut)
{
	size_t width = COLS > 1 ? (size_t)COLS - 1 : 1;
	unsigned n = 0, max = LINES >= 12 ? TUI_STATUS_ROWS : 1;
	const char *p = text;

	snprintf(text, len, "%s%s", t->status_error ? "error: " : "", t->status);
	*cut = false;
	while (*p) {
		size_t k;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (n == max) {
			*cut = true;
			/* Room for the mark at the end of the last row. */
			n--;
			p = row[n];
			k = width > strlen(MORE_MARK) ? wrap_next(p, width - strlen(MORE_MARK)) : 0;
			rowlen[n++] = k;
			break;
		}
		k = wrap_next(p, width);
		row[n] = p;
		rowlen[n++] = k;
		p += k;
	}
	return n;
}

int bars_rows(const struct tui *t)
{
	char text[TUI_MESSAGE_MAX + 16];
	const char *row[TUI_STATUS_ROWS];
	size_t rowlen[TUI_STATUS_ROWS];
	bool cut;
	unsigned n = status_wrap(t, text, sizeof(text), row, rowlen, &cut);

	return (n ? (int)n : 1) + 1;
}

/* The status line and, beneath it, the key bar (keys.c). */
void draw_bars(struct tui *t)
{
	char text[TUI_MESSAGE_MAX + 16];
	const char *row[TUI_STATUS_ROWS];
	size_t rowlen[TUI_STATUS_ROWS];
	bool cut;
	unsigned n = status_wrap(t, text, sizeof(text), row, rowlen, &cut), i;
	int y = LINES - 1 - (n ? (int)n : 1);

	for (i = 0; i < n; i++) {
		move(y + (int)i, 0);
		if (t->status_error)
			attron(A_BOLD);
		printw("%.*s", (int)rowlen[i], row[i]);
		attroff(A_BOLD);
		if (cut && i + 1 == n)
			printw("%s", MORE_MARK);
		clrtoeol();
	}
	if (!n) {
		move(y, 0);
		clrtoeol();
	}
	draw_key_bar();
}

/* The table's columns, as data.  Each has its least width; those with a
 * share get that share of what the screen has spare, up to what they can
 * use (NAME: the longest name; the CPU sparkline: 60).  Rates: at 80
 * columns one each for network and disk; where the wide set fits, the
 * guest's own free memory (FREE(M), once its balloon driver reports it)
 * and rx/tx and read/write apart.  Then, where room is left, an address
 * and the CPU sparkline. */
enum column_id {
	COL_ID, COL_NAME, COL_HOST, COL_STATE, COL_CPU, COL_MEM, COL_RSS, COL_VCPUS, COL_UPTIME, COL_FREE, COL_NETRX,
	COL_NETTX, COL_DSKRD, COL_DSKWR, COL_NET, COL_DISK, COL_ADDR, COL_SPARK, NCOLUMNS
};
enum column_when { ALWAYS, WIDE, NARROW, ROOM, POOL };

struct column {
	const char *head;
	unsigned min, max;      /* width; max 0: what the column needs (the names) */
	unsigned share;         /* of the spare width; 0: none */
	unsigned gap;           /* spaces before it */
	bool left;              /* left-aligned */
	enum column_when when;
};

static const struct column columns[NCOLUMNS] = {
	[COL_ID] = { "ID", 4, 4, 0, 0, false, ALWAYS },
	[COL_NAME] = { "NAME", 16, 0, 1, 1, true, ALWAYS },
	[COL_HOST] = { "HOST", 8, 16, 0, 1, true, POOL },         /* a host in a pool: where each runs */
	[COL_STATE] = { "ST", 5, 5, 0, 1, true, ALWAYS },
	[COL_CPU] = { "%CPU", 6, 6, 0, 1, false, ALWAYS },
	[COL_MEM] = { "MEM(M)", 7, 7, 0, 1, false, ALWAYS },
	[COL_RSS] = { "RSS(M)", 7, 7, 0, 1, false, ALWAYS },
	[COL_VCPUS] = { "VC", 2, 2, 0, 1, false, ALWAYS },
	[COL_UPTIME] = { "UPTIME", 8, 8, 0, 1, false, ALWAYS },
	[COL_FREE] = { "FREE(M)", 7, 7, 0, 1, false, WIDE },
	[COL_NETRX] = { "NETRX", 6, 6, 0, 1, false, WIDE },
	[COL_NETTX] = { "NETTX", 6, 6, 0, 1, false, WIDE },
	[COL_DSKRD] = { "DSKRD", 6, 6, 0, 1, false, WIDE },
	[COL_DSKWR] = { "DSKWR", 6, 6, 0, 1, false, WIDE },
	[COL_NET] = { "NET/s", 6, 6, 0, 1, false, NARROW },
	[COL_DISK] = { "DISK/s", 6, 6, 0, 1, false, NARROW },
	[COL_ADDR] = { "ADDRESS", 15, 15, 0, 1, true, ROOM },      /* an IPv4 address; the detail view has all */
	[COL_SPARK] = { "CPU HISTORY", 8, 60, 3, 2, true, ROOM },
};

struct table_layout {
	unsigned width[NCOLUMNS];       /* 0: not shown */
};

/* A name of up to this many characters is shown whole before the wide
 * rates, the address or the sparkline take the room: telling the
 * domains apart comes first. */
#define NAME_FIRST 32
#define NAME_LEAST_POOL 10

/* name_need: the longest name to show.  The screen's last column is
 * left empty: curses moves the cursor to the next line after it. */
static void table_layout(struct table_layout *l, unsigned name_need, bool pool)
{
	unsigned min[NCOLUMNS], max[NCOLUMNS], used = 0, wide = 0, shares, c;
	int room = COLS - 1;
	bool split;

	for (c = 0; c < NCOLUMNS; c++) {
		min[c] = columns[c].min;
		max[c] = columns[c].max ? columns[c].max : name_need > min[c] ? name_need : min[c];
	}
	min[COL_NAME] = name_need < min[COL_NAME] ? min[COL_NAME] : name_need > NAME_FIRST ? NAME_FIRST : name_need;
	for (c = 0; c < NCOLUMNS; c++) {
		if (columns[c].when == ALWAYS || (columns[c].when == POOL && pool))
			used += columns[c].gap + min[c];
		if (columns[c].when == WIDE)
			wide += columns[c].gap + columns[c].min;
	}
	split = (int)(used + wide) <= room;
	used = 0;
	for (c = 0; c < NCOLUMNS; c++) {
		enum column_when w = columns[c].when;
		bool on = w == ALWAYS || (w == WIDE && split) || (w == NARROW && !split) || (w == POOL && pool);

		l->width[c] = on ? min[c] : 0;
		if (on)
			used += columns[c].gap + min[c];
	}
	/* Too narrow for the names whole: they give way, down to the least
	 * (less on a pool host, so that its HOST column fits 80 columns). */
	if ((int)used > room) {
		unsigned least = pool ? NAME_LEAST_POOL : columns[COL_NAME].min;
		unsigned over = used - room, give = l->width[COL_NAME] > least ? l->width[COL_NAME] - least : 0;

		give = give < over ? give : over;
		l->width[COL_NAME] -= give;
		used -= give;
	}
	for (c = 0; c < NCOLUMNS; c++)
		if (columns[c].when == ROOM && (int)(used + columns[c].gap + min[c]) <= room) {
			l->width[c] = min[c];
			used += columns[c].gap + min[c];
		}
	/* The spare width, by shares, to the columns that can use more. */
	while ((int)used < room) {
		unsigned spare = room - used, given = 0;

		for (shares = 0, c = 0; c < NCOLUMNS; c++)
			if (l->width[c] && l->width[c] < max[c])
				shares += columns[c].share;
		if (!shares)
			break;
		for (c = 0; c < NCOLUMNS && (int)used < room; c++) {
			unsigned add;

			if (!l->width[c] || l->width[c] >= max[c] || !columns[c].share)
				continue;
			add = spare * columns[c].share / shares;
			if (!add)
				add = 1;
			if (add > max[c] - l->width[c])
				add = max[c] - l->width[c];
			if (add > room - used)
				add = room - used;
			l->width[c] += add;
			used += add;
			given += add;
		}
		if (!given)
			break;
	}
}

/* A name in width characters: whole if it fits, else its start and its
 * end about a '~' (no name has one), so that web-prod-01 and web-prod-02
 * stay apart however narrow. */
static void fit_name(char *out, size_t len, const char *name, unsigned width)
{
	size_t n = strlen(name), head;

	if (n <= width || width < 3) {
		snprintf(out, len, "%.*s", (int)width, name);
		return;
	}
	head = (width - 1) / 2;
	snprintf(out, len, "%.*s~%s", (int)head, name, name + n - (width - 1 - head));
}

static void put_cell(const struct table_layout *l, enum column_id c, const char *text)
{
	printw("%*s", (int)columns[c].gap, "");
	if (columns[c].left)
		printw("%-*.*s", (int)l->width[c], (int)l->width[c], text);
	else
		printw("%*s", (int)l->width[c], text);       /* a figure is never cut */
}

/* Rates of a row: Domain-0 has none of its own ("-"). */
struct row_rates {
	bool known;
	bool stale;             /* the domain has not answered for a while */
	double net_rx, net_tx, disk_rd, disk_wr;
};

static void draw_row(const struct table_layout *l, int y, const struct lodge_status *st, const char *host,
		     double cpu, const struct row_rates *r, const char *spk, bool selected)
{
	char cell[NCOLUMNS][DOMAIN_NAME_MAX + 16];
	char addrs[LODGE_MAX_ADDRS * 48];
	attr_t attr;
	unsigned c;

	for (c = 0; c < NCOLUMNS; c++)
		snprintf(cell[c], sizeof(cell[c]), "-");
	snprintf(cell[COL_ID], sizeof(cell[0]), "%u", st->id);
	fit_name(cell[COL_NAME], sizeof(cell[0]), st->name, l->width[COL_NAME]);
	snprintf(cell[COL_HOST], sizeof(cell[0]), "%s", host && host[0] ? host : "-");
	snprintf(cell[COL_STATE], sizeof(cell[0]), "%s", state_word(st, r->stale, &attr));
	snprintf(cell[COL_CPU], sizeof(cell[0]), "%.1f", cpu);
	snprintf(cell[COL_MEM], sizeof(cell[0]), "%lu", st->target_mib);
	snprintf(cell[COL_RSS], sizeof(cell[0]), "%lu", st->rss_kib / 1024);
	snprintf(cell[COL_VCPUS], sizeof(cell[0]), "%u", st->vcpus);
	fmt_uptime(cell[COL_UPTIME], sizeof(cell[0]), st->uptime_s);
	if (st->guest_stats)
		snprintf(cell[COL_FREE], sizeof(cell[0]), "%lu", st->guest_free_kib / 1024);
	if (r->known) {
		fmt_rate(cell[COL_NETRX], sizeof(cell[0]), r->net_rx);
		fmt_rate(cell[COL_NETTX], sizeof(cell[0]), r->net_tx);
		fmt_rate(cell[COL_DSKRD], sizeof(cell[0]), r->disk_rd);
		fmt_rate(cell[COL_DSKWR], sizeof(cell[0]), r->disk_wr);
		fmt_rate(cell[COL_NET], sizeof(cell[0]), r->net_rx + r->net_tx);
		fmt_rate(cell[COL_DISK], sizeof(cell[0]), r->disk_rd + r->disk_wr);
	}
	if (l->width[COL_ADDR]) {
		lodge_addrs_join(st, addrs, sizeof(addrs));
		snprintf(cell[COL_ADDR], sizeof(cell[0]), "%s", addrs[0] ? strtok(addrs, ",") : "-");
	}
	move(y, 0);
	if (selected)
		attron(A_REVERSE);
	for (c = 0; c < NCOLUMNS; c++) {
		if (!l->width[c])
			continue;
		if (c == COL_STATE)
			attron(attr);
		put_cell(l, c, c == COL_SPARK ? spk : cell[c]);
		if (c == COL_STATE) {
			attroff(attr);
			if (selected)
				attron(A_REVERSE);
		}
	}
	clrtoeol();
	attroff(A_REVERSE);
}

/* A row of the form's install: while it runs its state and phase in
 * words across the figures' columns (it has none yet); once done, a
 * stopped domain's row. */
static void draw_install_row(const struct table_layout *l, int y, const struct dom_sample *d, bool selected)
{
	const struct tui_install *in = d->install;
	char name[DOMAIN_NAME_MAX + 16], words[64], cell[32];
	unsigned c;

	fit_name(name, sizeof(name), d->st.name, l->width[COL_NAME]);
	move(y, 0);
	if (selected)
		attron(A_REVERSE);
	put_cell(l, COL_ID, "-");
	put_cell(l, COL_NAME, name);
	if (l->width[COL_HOST])
		put_cell(l, COL_HOST, "-");       /* this host's, not yet the pool's */
	if (in->state == INSTALL_DONE) {
		for (c = COL_STATE; c < NCOLUMNS; c++) {
			if (!l->width[c])
				continue;
			if (c == COL_MEM)
				snprintf(cell, sizeof(cell), "%u", in->memory_mib);
			else if (c == COL_VCPUS)
				snprintf(cell, sizeof(cell), "%u", in->vcpus);
			else
				snprintf(cell, sizeof(cell), "%s", c == COL_STATE ? "shut" : c == COL_SPARK ? "" : "-");
			put_cell(l, c, cell);
		}
	} else {
		int room = COLS - 2 - getcurx(stdscr);
		char text[160];

		snprintf(text, sizeof(text), "%s  %s", install_state_words(in, words, sizeof(words)),
			 in->state == INSTALL_RUNNING ? lodge_phase_words(in->phase) : "");
		attron(A_BOLD);
		printw(" %.*s", room > 0 ? room : 0, text);
		attroff(A_BOLD);
		if (selected)
			attron(A_REVERSE);
	}
	clrtoeol();
	attroff(A_REVERSE);
}

/* A domain of the pool that another host runs: its host and the pool's
 * word for it; the figures are that host's to show.  A defined domain
 * that is not running (off) alike: its config's memory and vCPUs. */
static void draw_remote_row(const struct table_layout *l, int y, const struct dom_sample *d, const char *host,
			    bool selected)
{
	char name[DOMAIN_NAME_MAX + 16], cell[DOMAIN_NAME_MAX + 16];
	unsigned c;

	fit_name(name, sizeof(name), d->st.name, l->width[COL_NAME]);
	move(y, 0);
	if (selected)
		attron(A_REVERSE);
	for (c = 0; c < NCOLUMNS; c++) {
		if (!l->width[c])
			continue;
		if (c == COL_HOST)
			snprintf(cell, sizeof(cell), "%s", host && host[0] ? host : "-");
		else if (c == COL_STATE && d->off)   /* defined here, not running; * autostarts */
			snprintf(cell, sizeof(cell), "%s%s", domain_state_name(DOMAIN_STATE_OFF), d->autostart ? "*" : "");
		else if (c == COL_STATE)   /* running elsewhere; lost, stopped, failed... as the pool says */
			snprintf(cell, sizeof(cell), "%.5s", d->st.state == DOMAIN_STATE_RUNNING ? "run" : domain_state_name(d->st.state));
		else if (c == COL_MEM && d->off && !d->loads)
			snprintf(cell, sizeof(cell), "?");
		else if (c == COL_MEM)
			snprintf(cell, sizeof(cell), "%lu", d->st.target_mib);
		else if (c == COL_VCPUS && d->off && d->loads)
			snprintf(cell, sizeof(cell), "%u", d->st.vcpus);
		else
			snprintf(cell, sizeof(cell), "%s", c == COL_SPARK ? "" : "-");
		put_cell(l, c, c == COL_NAME ? name : cell);
	}
	clrtoeol();
	attroff(A_REVERSE);
}

/* The host a row's domain is on in the pool's last sample ("" none). */
static const char *host_of(const struct tui *t, const char *name)
{
	const struct tui_pool_row *r = pool_row(t, name);

	return r ? r->host : "";
}

/* The pool's sample, when it is old: how old and why, on a line of its
 * own above the status line (bold: no colour needed to see it). */
static void draw_pool_stale(const struct tui *t, const char *text)
{
	size_t width = COLS > 1 ? (size_t)COLS - 1 : 1;

	move(LINES - 1 - bars_rows(t), 0);
	attron(A_BOLD);
	printw("%.*s", (int)width, text);
	attroff(A_BOLD);
	clrtoeol();
}

void draw_table(struct tui *t)
{
	uint64_t now = tui_now_ns();
	char stale[sizeof(t->pool.why) + 96];
	bool old = pool_stale(t, now, stale, sizeof(stale));
	int rows = LINES - 3 - bars_rows(t) - (old ? 1 : 0), y = 3, i;
	struct table_layout l;
	char spk[256];
	struct lodge_status dom0;
	static const struct row_rates no_rates;
	unsigned c, name_need = 8;         /* Domain-0 */

	for (c = 0; c < t->ndoms; c++)
		if (strlen(t->doms[c].st.name) > name_need)
			name_need = strlen(t->doms[c].st.name);
	table_layout(&l, name_need, pool_in_use(t));
	draw_header(t);
	move(2, 0);
	attron(A_REVERSE);
	for (c = 0; c < NCOLUMNS; c++)
		if (l.width[c])
			put_cell(&l, c, columns[c].head);
	hline(' ', COLS);
	attroff(A_REVERSE);

	/* Keep the selection on screen. */
	if (rows < 1)
		rows = 1;
	if (t->selected < t->top)
		t->top = t->selected;
	if ((int)t->selected >= (int)t->top + rows)
		t->top = t->selected - rows + 1;
	for (i = 0; i < rows; i++, y++) {
		unsigned row = t->top + i;

		if (row == 0) {
			memset(&dom0, 0, sizeof(dom0));
			snprintf(dom0.name, sizeof(dom0.name), "%s", DOMAIN_HOST_NAME);
			dom0.state = DOMAIN_STATE_RUNNING;
			dom0.vcpus = t->host.ncpus;
			dom0.memory_mib = dom0.target_mib = t->host.mem_total_mib;
			dom0.rss_kib = (t->host.mem_total_mib - t->host.mem_avail_mib) * 1024;
			dom0.uptime_s = t->host.uptime_s;
			dom0.guest_stats = true;
			dom0.guest_free_kib = t->host.mem_avail_mib * 1024;
			draw_row(&l, y, &dom0, t->hc.pool_host, t->host.cpu_pct, &no_rates, "", t->selected == 0);
		} else if (row <= t->nshown && (t->doms[t->order[row - 1]].remote || t->doms[t->order[row - 1]].off)) {
			const struct dom_sample *d = &t->doms[t->order[row - 1]];

			draw_remote_row(&l, y, d, host_of(t, d->st.name), t->selected == row);
		} else if (row <= t->nshown && t->doms[t->order[row - 1]].install) {
			draw_install_row(&l, y, &t->doms[t->order[row - 1]], t->selected == row);
		} else if (row <= t->nshown) {
			struct dom_sample *d = &t->doms[t->order[row - 1]];
			struct row_rates r = { true, sample_stale(t, d, now), d->net_rx_bps, d->net_tx_bps,
					       d->disk_rd_bps, d->disk_wr_bps };

			spk[0] = '\0';
			if (l.width[COL_SPARK])
				spark(spk, d->cpu_hist, d->hist_len, l.width[COL_SPARK],
				      100.0f * (d->st.vcpus ? d->st.vcpus : 1));
			draw_row(&l, y, &d->st, host_of(t, d->st.name), d->cpu_pct, &r, spk, t->selected == row);
		} else {
			move(y, 0);
			clrtoeol();
		}
	}
	if (old)
		draw_pool_stale(t, stale);
	draw_bars(t);
}
