/* Full-screen choosers: a block device (the create form's Ctrl-B and the
 * detail view's disk attach) and a bridge or network (the detail view's
 * vif attach).  One list loop serves both: rows with a reason are shown
 * marked and refused, with the reason, as the form's picker rules say. */
#include "tui.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PICK_MAX 64                    /* rows a chooser lists */

struct pick_row {
	char text[160];                /* what the row shows */
	char value[300];               /* what picking it gives */
	char taken[128];               /* why it is refused; "" if it may be picked */
};

/* The list, Up/Down, Enter picks, Esc cancels: the index picked, or -1. */
static int choose(struct tui *t, const char *title, const struct pick_row *rows, unsigned n)
{
	char refused[sizeof(rows[0].value) + sizeof(rows[0].taken) + 16] = "";
	int c, picked = -1, lines = LINES - 4 > 1 ? LINES - 4 : 1;
	unsigned sel = 0, top = 0, i;
	int was = tui_modal_begin();

	for (;;) {
		if (sel < top)
			top = sel;
		if (sel >= top + (unsigned)lines)
			top = sel - (unsigned)lines + 1;
		erase();
		mvprintw(0, 0, "%s (Enter picks, Esc cancels); marked ones are refused:", title);
		for (i = top; i < n && i < top + (unsigned)lines; i++) {
			if (i == sel)
				attron(A_REVERSE);
			mvprintw(1 + (int)(i - top), 2, "%.*s", COLS > 4 ? COLS - 4 : 0, rows[i].text);
			attroff(A_REVERSE);
		}
		if (refused[0])
			put_wrapped(LINES - 3, 0, 0, LINES, refused);
		refresh();
		c = getch();
		refused[0] = '\0';
		if (c == KEY_UP && sel)
			sel--;
		else if (c == KEY_DOWN && sel + 1 < n)
			sel++;
		else if (c == 27 || c == ERR)           /* ERR: a signal, or the terminal gone */
			break;
		else if ((c == '\n' || c == '\r' || c == KEY_ENTER) && rows[sel].taken[0])
			snprintf(refused, sizeof(refused), "refused: %s: %s", rows[sel].value, rows[sel].taken);
		else if (c == '\n' || c == '\r' || c == KEY_ENTER) {
			picked = (int)sel;
			break;
		}
	}
	tui_modal_end(was);
	erase();
	return picked;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct lodge_blockdev *)a)->path, ((const struct lodge_blockdev *)b)->path);
}

bool tui_pick_blockdev(struct tui *t, char *out, size_t len, uint64_t min_bytes, const char *for_what)
{
	static struct lodge_blockdev devs[PICK_MAX];
	static struct pick_row rows[PICK_MAX];
	unsigned n = lodge_host_blockdevs(t->lg, devs, PICK_MAX), i;
	int picked;

	if (!n) {
		tui_status(t, true, "no block devices found");
		return false;
	}
	if (n > PICK_MAX)
		n = PICK_MAX;
	qsort(devs, n, sizeof(devs[0]), by_path);
	for (i = 0; i < n; i++) {
		if (!devs[i].taken[0] && devs[i].bytes < min_bytes)
			snprintf(devs[i].taken, sizeof(devs[i].taken), "too small for %s", for_what);
		snprintf(rows[i].text, sizeof(rows[i].text), "%-20s %8llu MiB  %s", devs[i].path,
			 (unsigned long long)(devs[i].bytes >> 20), devs[i].taken);
		snprintf(rows[i].value, sizeof(rows[i].value), "%s", devs[i].path);
		snprintf(rows[i].taken, sizeof(rows[i].taken), "%s", devs[i].taken);
	}
	if ((picked = choose(t, "Block devices", rows, n)) < 0)
		return false;
	snprintf(out, len, "%s", rows[picked].value);
	return true;
}

struct link_rows {
	struct pick_row *rows;
	unsigned n;
	const struct lodge_network *nets;      /* a network's bridge is listed as the network */
	unsigned nnets;
};

static void add_bridge(const char *name, int ports, bool up, void *arg)
{
	struct link_rows *l = arg;
	struct pick_row *r;

	if (l->n == PICK_MAX)
		return;
	for (unsigned i = 0; i < l->nnets; i++)
		if (!strcmp(l->nets[i].bridge, name))
			return;
	r = &l->rows[l->n++];
	snprintf(r->text, sizeof(r->text), "bridge  %-16s %d port%s%s", name, ports, ports == 1 ? "" : "s",
		 up ? "" : ", down");
	snprintf(r->value, sizeof(r->value), "bridge=%s", name);
	r->taken[0] = '\0';
}

bool tui_pick_link(struct tui *t, char *out, size_t len)
{
	static struct pick_row rows[PICK_MAX];
	static struct lodge_network nets[PICK_MAX];
	struct link_rows l = { rows, 0, nets, 0 };
	struct lodge_err err;
	int nn = lodge_network_list(t->lg, nets, PICK_MAX, &err), picked;
	unsigned i;

	l.nnets = nn > 0 ? (nn < PICK_MAX ? (unsigned)nn : PICK_MAX) : 0;

	for (i = 0; nn > 0 && i < (unsigned)nn && i < PICK_MAX && l.n < PICK_MAX; i++) {
		struct pick_row *r = &rows[l.n++];

		snprintf(r->text, sizeof(r->text), "network %-16.*s %.19s on %.15s", (int)sizeof(nets[i].name) - 1,
			 nets[i].name, nets[i].subnet, nets[i].bridge);
		snprintf(r->value, sizeof(r->value), "network=%.*s", (int)sizeof(nets[i].name) - 1, nets[i].name);
		snprintf(r->taken, sizeof(r->taken), "%s", nets[i].bridge_up ? "" : "not started (network-start)");
	}
	lodge_bridge_list(add_bridge, &l, &err);
	if (!l.n) {
		tui_status(t, true, "no bridges or networks found");
		return false;
	}
	if ((picked = choose(t, "Networks and bridges", rows, l.n)) < 0)
		return false;
	snprintf(out, len, "%s", rows[picked].value);
	return true;
}
