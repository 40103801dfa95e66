/* Actions on the selected domain and the prompts they need.  Requests use
 * short timeouts so a slow domain never freezes the screen. */
#include "tui.h"
#include "agent.h"
#include "client.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

/* y/n in the status line. */
bool tui_confirm(struct tui *t, const char *question)
{
	int c;

	move(LINES - 2, 0);
	attron(A_BOLD);
	printw("%s (y/n) ", question);
	attroff(A_BOLD);
	clrtoeol();
	refresh();
	timeout(-1);
	c = getch();
	timeout(t->delay_ms);
	t->status[0] = '\0';
	return c == 'y' || c == 'Y';
}

void action_request(struct tui *t, const char *cmd)
{
	struct dom_sample *d = tui_selected(t);
	struct reply r;
	int rc;

	if (!d) {
		tui_status(t, true, "Domain-0 is the host: select a domain");
		return;
	}
	rc = client_call(t->hc.runtime_dir, d->st.name, cmd, 0, &r);
	if (rc)
		tui_status(t, true, "%s %s: %s", cmd, d->st.name, strerror(-rc));
	else if (r.error[0])
		tui_status(t, true, "%s %s: %s", cmd, d->st.name, r.error);
	else
		tui_status(t, false, "%s %s: done", cmd, d->st.name);
}

void action_console(struct tui *t)
{
	struct dom_sample *d = tui_selected(t);

	if (!d) {
		tui_status(t, true, "Domain-0 has no serial console here: select a domain");
		return;
	}
	def_prog_mode();
	endwin();
	printf("\r\n[lodge: console of %s; Ctrl-] returns to the dashboard]\r\n", d->st.name);
	fflush(stdout);
	console_attach(t->hc.runtime_dir, d->st.name, 0);
	reset_prog_mode();
	clearok(stdscr, TRUE);
	refresh();
	tui_status(t, false, "back from the console of %s", d->st.name);
}

/* A line of input in the status line; returns false on Esc. */
bool tui_prompt(struct tui *t, const char *label, char *buf, size_t len)
{
	size_t n = strlen(buf);
	int c;

	timeout(-1);
	for (;;) {
		move(LINES - 2, 0);
		attron(A_BOLD);
		printw("%s", label);
		attroff(A_BOLD);
		printw("%s", buf);
		clrtoeol();
		refresh();
		c = getch();
		if (c == '\n' || c == '\r' || c == KEY_ENTER)
			break;
		if (c == 27) {
			timeout(t->delay_ms);
			return false;
		}
		if ((c == KEY_BACKSPACE || c == 127 || c == 8) && n)
			buf[--n] = '\0';
		else if (c >= 32 && c < 127 && n + 1 < len) {
			buf[n++] = c;
			buf[n] = '\0';
		}
	}
	timeout(t->delay_ms);
	return true;
}

void action_filter(struct tui *t)
{
	char buf[sizeof(t->filter)];

	snprintf(buf, sizeof(buf), "%s", t->filter);
	if (tui_prompt(t, "filter: ", buf, sizeof(buf)))
		snprintf(t->filter, sizeof(t->filter), "%s", buf);
	else
		t->filter[0] = '\0';
	t->selected = 0;
	sample_sort(t);
}

void action_delay(struct tui *t)
{
	char buf[16] = "";
	double s;

	if (!tui_prompt(t, "refresh every (seconds, 0.2 to 60): ", buf, sizeof(buf)))
		return;
	if (sscanf(buf, "%lf", &s) != 1 || s < 0.2 || s > 60) {
		tui_status(t, true, "refresh interval must be 0.2 to 60 seconds, not '%s'", buf);
		return;
	}
	t->delay_ms = (int)(s * 1000);
	timeout(t->delay_ms);
	tui_status(t, false, "refreshing every %.1f s", s);
}
