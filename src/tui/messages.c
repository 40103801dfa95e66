/* The message history (m): the status line's last TUI_MESSAGES messages,
 * each whole, wrapped at the screen's width, the newest at the bottom.
 * The status line shows the newest as far as it fits; here is the rest
 * of it, and of the ones before it. */
#include "tui.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

/* One screen line of the history. */
struct message_row {
	const char *text;
	size_t len;
	bool first;             /* a message's first line: its time before it */
	const struct tui_message *m;
};

#define MESSAGE_INDENT 9        /* "HH:MM:SS " */
#define MESSAGE_ROWS_MAX (TUI_MESSAGES * 128)   /* a message is at most 1 KiB, a row at least 16 wide */

/* Every message wrapped, oldest first: how many rows. */
static unsigned message_rows(const struct tui *t, struct message_row *rows, size_t width)
{
	unsigned first = t->nmessages > TUI_MESSAGES ? t->nmessages - TUI_MESSAGES : 0, i, n = 0;

	for (i = first; i < t->nmessages; i++) {
		const struct tui_message *m = &t->messages[i % TUI_MESSAGES];
		const char *p = m->text;
		bool head = true;

		do {
			size_t k;

			while (*p == ' ')
				p++;
			/* The first line has "error: " before the text. */
			k = wrap_next(p, head && m->error ? width - 7 : width);
			rows[n++] = (struct message_row){ p, k, head, m };
			p += k;
			head = false;
		} while (*p && n < MESSAGE_ROWS_MAX);
	}
	return n;
}

void messages_scroll(struct tui *t, int lines)
{
	if (lines < 0 && (unsigned)-lines > t->messages_back)
		t->messages_back = 0;
	else
		t->messages_back += lines;
}

void draw_messages(struct tui *t)
{
	static struct message_row rows[MESSAGE_ROWS_MAX];
	int top = 2, bottom = LINES - bars_rows(t), shown = bottom - top, y;
	size_t width = COLS > MESSAGE_INDENT + 16 ? (size_t)COLS - 1 - MESSAGE_INDENT : 16;
	unsigned n = message_rows(t, rows, width), first, i;

	erase();
	attron(A_BOLD);
	mvprintw(0, 0, "%.*s", COLS - 1, "Messages, the newest last (m or Esc returns, Up/Down/PgUp/PgDn scroll)");
	attroff(A_BOLD);
	if (!n)
		mvprintw(top, 0, "none yet");
	if (shown < 1)
		shown = 1;
	/* The last screenful, or as far back as scrolled. */
	if (t->messages_back > (n > (unsigned)shown ? n - shown : 0))
		t->messages_back = n > (unsigned)shown ? n - shown : 0;
	first = n > (unsigned)shown + t->messages_back ? n - shown - t->messages_back : 0;
	if (first)
		mvprintw(1, 0, "(%u lines before, Up scrolls back)", first);
	for (y = top, i = first; i < n && y < bottom; i++, y++) {
		const struct message_row *r = &rows[i];

		move(y, 0);
		if (r->first) {
			char when[16];

			strftime(when, sizeof(when), "%H:%M:%S", localtime(&r->m->when));
			printw("%-*s", MESSAGE_INDENT, when);
		} else {
			printw("%*s", MESSAGE_INDENT, "");
		}
		if (r->m->error)
			attron(A_BOLD);
		printw("%s%.*s", r->first && r->m->error ? "error: " : "", (int)r->len, r->text);
		attroff(A_BOLD);
	}
	draw_bars(t);
}
