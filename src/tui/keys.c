/* The keys: one table holds each action once, every key that reaches it
 * (F-keys have letter twins: serial consoles and TERM=vt100 often lack
 * F-keys), what it does in words and its word on the key bar.  The help
 * overlay and the key bar are drawn from it; there is no other list. */
#include "tui.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

typedef void key_fn(struct tui *t, int key);

#define KEYS_MAX 11

struct key_binding {
	int keys[KEYS_MAX];        /* 0-ended */
	key_fn *fn;
	const char *help;          /* for the help overlay */
	const char *bar;           /* its word on the key bar; NULL: not there */
	unsigned bar_keys;         /* how many of its first keys the bar shows */
};

/* Installs under way would be cancelled: ask first. */
static void k_quit(struct tui *t, int c)
{
	char q[160];

	if (installs_running(t)) {
		if (installs_running(t) == 1)
			snprintf(q, sizeof(q), "an install is under way: quit and cancel it (nothing of it is left)?");
		else
			snprintf(q, sizeof(q), "%u installs are under way: quit and cancel them (nothing of them is "
				 "left)?", installs_running(t));
		if (!tui_confirm(t, q)) {
			if (!tui_interrupted())
				tui_status(t, false, "quit cancelled: the installs go on");
			return;
		}
	}
	t->quit = true;
}
static void k_help(struct tui *t, int c) { t->help = true; t->help_top = 0; }
static void k_detail(struct tui *t, int c) { t->view = t->view == VIEW_DETAIL ? VIEW_TABLE : VIEW_DETAIL; }
/* The message stays in the history (m). */
static void k_back(struct tui *t, int c) { t->view = VIEW_TABLE; t->status[0] = '\0'; }
static void k_messages(struct tui *t, int c)
{
	t->view = t->view == VIEW_MESSAGES ? VIEW_TABLE : VIEW_MESSAGES;
	t->messages_back = 0;
}
static void k_networks(struct tui *t, int c)
{
	t->view = t->view == VIEW_NETWORKS ? VIEW_TABLE : VIEW_NETWORKS;
	if (t->view == VIEW_NETWORKS)
		networks_sample(t);        /* at once, not at the next refresh */
}
static void k_invert(struct tui *t, int c) { t->sort_reverse = !t->sort_reverse; sample_sort(t); }
static void k_sort_cpu(struct tui *t, int c) { t->sort = SORT_CPU; sample_sort(t); }
static void k_sort_mem(struct tui *t, int c) { t->sort = SORT_RSS; sample_sort(t); }
static void k_freeze(struct tui *t, int c) { t->frozen = !t->frozen; }
static void k_redraw(struct tui *t, int c) { clearok(stdscr, TRUE); }
static void k_console(struct tui *t, int c) { action_console(t); }
static void k_filter(struct tui *t, int c) { action_filter(t); }
static void k_delay(struct tui *t, int c) { action_delay(t); }
static void k_create(struct tui *t, int c) { view_create(t); t->resample = true; }

static void k_move(struct tui *t, int c)
{
	unsigned page = LINES > 7 ? LINES - 6 : 1, row = t->selected;

	if (t->view == VIEW_MESSAGES) {            /* the keys scroll it, Up back in time */
		switch (c) {
		case KEY_UP: case 'k': case 'K': messages_scroll(t, 1); break;
		case KEY_DOWN: case 'j': case 'J': messages_scroll(t, -1); break;
		case KEY_PPAGE: messages_scroll(t, (int)page); break;
		case KEY_NPAGE: messages_scroll(t, -(int)page); break;
		case KEY_HOME: messages_scroll(t, TUI_MESSAGES * TUI_MESSAGE_MAX); break;
		case KEY_END: t->messages_back = 0; break;
		}
		return;
	}
	switch (c) {
	case KEY_UP: case 'k': case 'K': row = row ? row - 1 : 0; break;
	case KEY_DOWN: case 'j': case 'J': row++; break;
	case KEY_PPAGE: row = row > page ? row - page : 0; break;
	case KEY_NPAGE: row += page; break;
	case KEY_HOME: row = 0; break;
	case KEY_END: row = t->nshown; break;
	}
	tui_select(t, row);
}

static void k_sort(struct tui *t, int c)
{
	bool back = c == '<' || c == ',';

	t->sort = (t->sort + (back ? SORT_NKEYS - 1 : 1)) % SORT_NKEYS;
	sample_sort(t);
}

static void k_pause(struct tui *t, int c)
{
	struct dom_sample *d = tui_selected(t);

	if (install_key(t, d, c))
		return;
	action_request(t, d && d->st.state == DOMAIN_STATE_PAUSED ? LODGE_UNPAUSE : LODGE_PAUSE);
}

static void confirm_then(struct tui *t, const char *what, enum lodge_verb v)
{
	struct dom_sample *d = tui_selected(t);
	char q[160];

	if (!d) {
		tui_status(t, true, "Domain-0 is the host: select a domain");
		return;
	}
	if (install_key(t, d, v == LODGE_DESTROY ? TUI_KEY_DESTROY : 0))
		return;           /* an install's row: destroy's key cancels it */
	if (v == LODGE_DESTROY && defined_delete(t, d))
		return;           /* not running: destroy's key deletes it */
	if (d->off) {
		tui_status(t, true, "%s is not running: S starts it", d->st.name);
		return;
	}
	snprintf(q, sizeof(q), "%s %s?", what, d->st.name);
	if (tui_confirm(t, q))
		action_request(t, v);
	else if (!tui_interrupted())
		tui_status(t, false, "%s cancelled", what);
}

static void k_shutdown(struct tui *t, int c) { confirm_then(t, "Shut down", LODGE_SHUTDOWN); }
static void k_reboot(struct tui *t, int c) { confirm_then(t, "Reboot", LODGE_REBOOT); }
static void k_destroy(struct tui *t, int c) { confirm_then(t, "Destroy", LODGE_DESTROY); }
static void k_start(struct tui *t, int c)
{
	if (!install_key(t, tui_selected(t), 'S') && !defined_start(t, tui_selected(t)))
		tui_status(t, true, "S starts a domain that is not running (off); select one");
}
static void k_edit(struct tui *t, int c) { defined_edit(t, tui_selected(t)); }
static void k_autostart(struct tui *t, int c) { defined_autostart(t, tui_selected(t)); }

static void k_devices(struct tui *t, int c)
{
	if (c == 'a')
		devices_attach_disk(t);
	else if (c == 'v')
		devices_attach_vif(t);
	else
		devices_detach(t);
}

/* In the order the help lists them; two short ones share a line. */
static const struct key_binding bindings[] = {
	{ { KEY_UP, 'k', KEY_DOWN, 'j', KEY_PPAGE, KEY_NPAGE, KEY_HOME, KEY_END, 'K', 'J' }, k_move,
	  "move the selection (Domain-0 is the host)", NULL, 0 },
	{ { '\n', '\r', KEY_ENTER, KEY_F(5) }, k_detail, "domain details", NULL, 0 },
	{ { 27 }, k_back, "back to the table, clear the status line", NULL, 0 },
	{ { '?', 'h', KEY_F(1) }, k_help, "this help", "Help", 1 },
	{ { 'm', KEY_F(2) }, k_messages, "message history, whole", "Msgs", 1 },
	{ { 'N', KEY_F(8) }, k_networks, "networks: bridge, subnet, dnsmasq, leases, rates", NULL, 0 },
	{ { '/', '\\', KEY_F(3), KEY_F(4) }, k_filter, "filter names (Esc clears)", "Filter", 1 },
	{ { '<', '>', ',', '.', KEY_F(6) }, k_sort, "sort column", "Sort", 2 },
	{ { 'I' }, k_invert, "invert the sort", NULL, 0 },
	{ { 'P' }, k_sort_cpu, "sort by CPU", NULL, 0 },
	{ { 'M' }, k_sort_mem, "sort by memory", NULL, 0 },
	{ { 'n', KEY_F(7) }, k_create, "create a domain", "New", 1 },
	{ { 'c' }, k_console, "console (Ctrl-] returns)", "Console", 1 },
	{ { 'p' }, k_pause, "pause / unpause", "Pause", 1 },
	{ { 's' }, k_shutdown, "shutdown (power button)", "Shutdown", 1 },
	{ { 'r' }, k_reboot, "reboot", "Reboot", 1 },
	{ { TUI_KEY_DESTROY, KEY_F(9) }, k_destroy, "destroy (delete if off)", "Kill", 1 },
	{ { 'S' }, k_start, "start one that is off", NULL, 0 },
	{ { 'e' }, k_edit, "edit its config", NULL, 0 },
	{ { 'A' }, k_autostart, "autostart on / off", NULL, 0 },
	{ { 'a', 'v', 'x' }, k_devices, "details: attach a disk, a vif; detach one", NULL, 0 },
	{ { 'd' }, k_delay, "refresh interval", NULL, 0 },
	{ { 'Z', 'z' }, k_freeze, "freeze updates", NULL, 0 },
	{ { 12 }, k_redraw, "redraw", NULL, 0 },
	{ { 'q', KEY_F(10) }, k_quit, "quit (domains run on)", "Quit", 1 },
};
#define NBINDINGS (sizeof(bindings) / sizeof(bindings[0]))

static bool help_key(struct tui *t, int c);

bool keys_dispatch(struct tui *t, int c)
{
	unsigned i, k;

	if (t->help)
		return help_key(t, c);
	for (i = 0; i < NBINDINGS; i++)
		for (k = 0; k < KEYS_MAX && bindings[i].keys[k]; k++)
			if (bindings[i].keys[k] == c) {
				bindings[i].fn(t, c);
				return true;
			}
	return false;
}

/* A key as the help and the bar name it; NULL for a twin not worth
 * naming (Enter's other codes). */
static const char *key_label(int c, char *buf, size_t len)
{
	static const struct { int key; const char *label; } named[] = {
		{ KEY_UP, "Up" }, { KEY_DOWN, "Down" }, { KEY_PPAGE, "PgUp" }, { KEY_NPAGE, "PgDn" },
		{ KEY_HOME, "Home" }, { KEY_END, "End" }, { '\n', "Enter" }, { 27, "Esc" }, { 12, "Ctrl-L" },
		{ '\r', NULL }, { KEY_ENTER, NULL },
	};
	unsigned i;

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (named[i].key == c)
			return named[i].label;
	if (c >= KEY_F(1) && c <= KEY_F(63))
		snprintf(buf, len, "F%d", c - KEY_F(0));
	else if (c > ' ' && c < 127)
		snprintf(buf, len, "%c", c);
	else
		return NULL;
	return buf;
}

/* The first n keys of b named, joined by sep. */
static void keys_named(const struct key_binding *b, unsigned n, const char *sep, char *out, size_t len)
{
	size_t o = 0;
	unsigned k;

	out[0] = '\0';
	for (k = 0; k < n && k < KEYS_MAX && b->keys[k] && o + 1 < len; k++) {
		char buf[8];
		const char *l = key_label(b->keys[k], buf, sizeof(buf));

		if (l)
			o += snprintf(out + o, len - o, "%s%s", o ? sep : "", l);
	}
}

#define HELP_KEYS_W 10             /* "< > , . F6" */
#define HELP_ROWS   96             /* room for every row of the help at 20 columns */
#define HELP_ROW    160

static const char *const help_head = "Lodge dashboard keys (F-keys have letter twins for serial consoles)";
static const char *const help_foot =
	"States: run, PAUSE (bold), shut, CRASH (bold underlined), off (off*: autostarts); migr, save while a "
	"migration or save runs; ? cannot be asked, late: no answer, figures stale "
	"(the detail view says why and since when).  Press any key to return.";

/* Text wrapped into rows of width, each further row indented. */
static unsigned add_wrapped(char rows[][HELP_ROW], unsigned n, const char *text, int width, int indent)
{
	const char *p = text;
	bool first = true;

	while (*p && n < HELP_ROWS) {
		int w = first ? width : width - indent;
		size_t k;

		while (*p == ' ')
			p++;
		k = wrap_next(p, w > 8 ? (size_t)w : 8);
		snprintf(rows[n++], HELP_ROW, "%*s%.*s", first ? 0 : indent, "", (int)k, p);
		p += k;
		first = false;
	}
	return n;
}

/* The help's rows at inner width: the keys, two to a row where both fit
 * in half of it, a blank row, the states.  Nothing is cut: what is too
 * long wraps. */
static unsigned help_rows(char rows[][HELP_ROW], int inner)
{
	char cell[NBINDINGS][HELP_ROW];
	int half = (inner - 2) / 2;
	unsigned i, n = 0, pending = NBINDINGS;

	for (i = 0; i < NBINDINGS; i++) {
		char keys[64];

		keys_named(&bindings[i], KEYS_MAX, " ", keys, sizeof(keys));
		snprintf(cell[i], sizeof(cell[i]), "%-*s %s", HELP_KEYS_W, keys, bindings[i].help);
		if ((int)strlen(cell[i]) > half) {
			if (pending < NBINDINGS)
				n = add_wrapped(rows, n, cell[pending], inner, HELP_KEYS_W + 1);
			n = add_wrapped(rows, n, cell[i], inner, HELP_KEYS_W + 1);
			pending = NBINDINGS;
		} else if (pending < NBINDINGS) {
			snprintf(rows[n++], HELP_ROW, "%-*s  %s", half, cell[pending], cell[i]);
			pending = NBINDINGS;
		} else {
			pending = i;
		}
	}
	if (pending < NBINDINGS)
		n = add_wrapped(rows, n, cell[pending], inner, HELP_KEYS_W + 1);
	if (n < HELP_ROWS)
		rows[n++][0] = '\0';
	return add_wrapped(rows, n, help_foot, inner, 0);
}

/* The overlay's geometry: its width, and how many of its rows show. */
static int help_width(void) { return COLS < 80 ? COLS : 80; }
static int help_shown(unsigned n) { return LINES - 4 < (int)n ? (LINES > 5 ? LINES - 4 : 1) : (int)n; }

/* Up and Down scroll a help taller than the screen; any other key closes it. */
static bool help_key(struct tui *t, int c)
{
	static char rows[HELP_ROWS][HELP_ROW];
	unsigned n = help_rows(rows, help_width() - 4), shown = (unsigned)help_shown(n);

	if (n > shown && (c == KEY_DOWN || c == 'j' || c == 'J' || c == KEY_NPAGE || c == ' ')) {
		t->help_top += c == KEY_NPAGE || c == ' ' ? shown : 1;
		if (t->help_top > n - shown)
			t->help_top = n - shown;
		return true;
	}
	if (n > shown && (c == KEY_UP || c == 'k' || c == 'K' || c == KEY_PPAGE)) {
		unsigned by = c == KEY_PPAGE ? shown : 1;

		t->help_top = t->help_top > by ? t->help_top - by : 0;
		return true;
	}
	t->help = false;
	return true;
}

void draw_help(struct tui *t)
{
	static char rows[HELP_ROWS][HELP_ROW];
	int w = help_width(), inner = w - 4;
	unsigned n = help_rows(rows, inner), i;
	int shown = help_shown(n), h = shown + 4, y0, x0, y;     /* borders, the head and a blank row */

	if (t->help_top + shown > n)
		t->help_top = n - shown;
	y0 = LINES > h ? (LINES - h) / 2 : 0;
	x0 = COLS > w ? (COLS - w) / 2 : 0;
	for (y = 0; y < h; y++) {
		move(y0 + y, x0);
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
	if ((unsigned)shown < n)
		mvprintw(y0 + 1, x0 + 2, "%.*s", inner, "Keys: Up and Down scroll, any other key returns");
	else
		mvprintw(y0 + 1, x0 + 2, "%.*s", inner, help_head);
	attroff(A_BOLD);
	for (i = 0, y = y0 + 3; (int)i < shown; i++)
		mvprintw(y++, x0 + 2, "%.*s", inner, rows[t->help_top + i]);
}

void draw_key_bar(void)
{
	unsigned i;

	move(LINES - 1, 0);
	for (i = 0; i < NBINDINGS; i++) {
		char keys[32];

		if (!bindings[i].bar)
			continue;
		keys_named(&bindings[i], bindings[i].bar_keys, "", keys, sizeof(keys));
		if (getcurx(stdscr) + (int)(strlen(keys) + strlen(bindings[i].bar)) + 1 >= COLS)
			break;
		attron(A_BOLD);
		printw("%s", keys);
		attroff(A_BOLD);
		attron(A_REVERSE);
		printw("%s", bindings[i].bar);
		attroff(A_REVERSE);
		printw(" ");
	}
	clrtoeol();
}
