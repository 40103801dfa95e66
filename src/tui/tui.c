/* The dashboard's loop: sample on a timer, redraw, dispatch keys through
 * one table.  The terminal is restored on every exit path. */
#include "tui.h"
#include "exit-status.h"
#include "log.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static struct tui the_tui;
static volatile sig_atomic_t got_signal;
static int saved_stderr = -1;

uint64_t tui_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct dom_sample *tui_selected(struct tui *t)
{
	if (t->selected == 0 || t->selected > t->nshown)
		return NULL;
	return &t->doms[t->order[t->selected - 1]];
}

static volatile sig_atomic_t got_winch;

static void on_signal(int sig) { got_signal = sig; }

bool tui_interrupted(void) { return got_signal != 0; }
static void on_winch(int sig) { (void)sig; got_winch = 1; }

/* Follow the terminal's size; done here rather than left to curses'
 * own handler so it works the same under every terminal and multiplexer. */
static void follow_resize(void)
{
	struct winsize ws;

	got_winch = 0;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		resizeterm(ws.ws_row, ws.ws_col);
		clearok(stdscr, TRUE);
	}
}

static void restore_terminal(void)
{
	if (!isendwin())
		endwin();
	if (saved_stderr >= 0) {
		dup2(saved_stderr, STDERR_FILENO);
		saved_stderr = -1;
	}
}

static void on_crash(int sig)
{
	restore_terminal();
	signal(sig, SIG_DFL);
	raise(sig);
}

typedef void (*key_fn)(struct tui *t);

static void k_quit(struct tui *t) { t->quit = true; }
static void k_help(struct tui *t) { t->view = VIEW_HELP; }
static void k_detail(struct tui *t) { t->view = t->view == VIEW_DETAIL ? VIEW_TABLE : VIEW_DETAIL; }
static void k_back(struct tui *t) { t->view = VIEW_TABLE; }
static void k_up(struct tui *t) { if (t->selected) t->selected--; }
static void k_down(struct tui *t) { if (t->selected < t->nshown) t->selected++; }
static void k_pgup(struct tui *t) { t->selected = t->selected > (unsigned)(LINES - 6) ? t->selected - (LINES - 6) : 0; }
static void k_pgdn(struct tui *t) { t->selected += LINES - 6; if (t->selected > t->nshown) t->selected = t->nshown; }
static void k_home(struct tui *t) { t->selected = 0; }
static void k_end(struct tui *t) { t->selected = t->nshown; }
static void k_sort_next(struct tui *t) { t->sort = (t->sort + 1) % SORT_NKEYS; sample_sort(t); }
static void k_sort_prev(struct tui *t) { t->sort = (t->sort + SORT_NKEYS - 1) % SORT_NKEYS; sample_sort(t); }
static void k_invert(struct tui *t) { t->sort_reverse = !t->sort_reverse; sample_sort(t); }
static void k_sort_cpu(struct tui *t) { t->sort = SORT_CPU; sample_sort(t); }
static void k_sort_mem(struct tui *t) { t->sort = SORT_RSS; sample_sort(t); }
static void k_freeze(struct tui *t) { t->frozen = !t->frozen; }
static void k_redraw(struct tui *t) { clearok(stdscr, TRUE); }
static void k_console(struct tui *t) { action_console(t); }
static void k_filter(struct tui *t) { action_filter(t); }
static void k_delay(struct tui *t) { action_delay(t); }
static void k_create(struct tui *t) { view_create(t); sample_all(t); }

static void k_pause(struct tui *t)
{
	struct dom_sample *d = tui_selected(t);

	action_request(t, d && strcmp(d->st.state, "paused") == 0 ? LODGE_UNPAUSE : LODGE_PAUSE);
}

static void confirm_then(struct tui *t, const char *what, enum lodge_verb v)
{
	struct dom_sample *d = tui_selected(t);
	char q[160];

	if (!d) {
		tui_status(t, true, "Domain-0 is the host: select a domain");
		return;
	}
	snprintf(q, sizeof(q), "%s %s?", what, d->st.name);
	if (tui_confirm(t, q))
		action_request(t, v);
	else if (!tui_interrupted())
		tui_status(t, false, "%s cancelled", what);
}

static void k_shutdown(struct tui *t) { confirm_then(t, "Shut down", LODGE_SHUTDOWN); }
static void k_reboot(struct tui *t) { confirm_then(t, "Reboot", LODGE_REBOOT); }
static void k_destroy(struct tui *t) { confirm_then(t, "Destroy", LODGE_DESTROY); }

/* One key table: each action once, with every key that reaches it
 * (F-keys have letter twins: serial consoles often lack F-keys). */
static const struct { int key; key_fn fn; } keys[] = {
	{ 'q', k_quit }, { KEY_F(10), k_quit },
	{ '?', k_help }, { 'h', k_help }, { KEY_F(1), k_help },
	{ '\n', k_detail }, { '\r', k_detail }, { KEY_ENTER, k_detail }, { KEY_F(5), k_detail },
	{ 27, k_back },
	{ KEY_UP, k_up }, { 'K', k_up }, { KEY_DOWN, k_down }, { 'J', k_down },
	{ KEY_PPAGE, k_pgup }, { KEY_NPAGE, k_pgdn }, { KEY_HOME, k_home }, { KEY_END, k_end },
	{ '>', k_sort_next }, { '.', k_sort_next }, { KEY_F(6), k_sort_next }, { '<', k_sort_prev }, { ',', k_sort_prev },
	{ 'I', k_invert }, { 'P', k_sort_cpu }, { 'M', k_sort_mem },
	{ '/', k_filter }, { KEY_F(3), k_filter }, { KEY_F(4), k_filter }, { '\\', k_filter },
	{ 'n', k_create }, { KEY_F(7), k_create },
	{ 'c', k_console },
	{ 'p', k_pause },
	{ 's', k_shutdown }, { 'r', k_reboot },
	{ 'k', k_destroy }, { KEY_F(9), k_destroy },
	{ 'd', k_delay }, { 'Z', k_freeze }, { 'z', k_freeze }, { 12, k_redraw },
};

static void dispatch(struct tui *t, int c)
{
	unsigned i;

	if (t->view == VIEW_HELP) {
		t->view = VIEW_TABLE;      /* any key closes the help */
		return;
	}
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (keys[i].key == c) {
			keys[i].fn(t);
			return;
		}
}

static void draw(struct tui *t)
{
	if (t->view == VIEW_DETAIL)
		draw_detail(t);
	else
		draw_table(t);
	if (t->view == VIEW_HELP)
		draw_help(t);
	refresh();
}

/* lodge top -b [-n N] [-d SECONDS]: the table as text, for scripts. */
static int batch(struct tui *t, int iterations)
{
	int i;
	unsigned k;

	for (i = 0; iterations <= 0 || i < iterations; i++) {
		if (i)
			usleep(t->delay_ms * 1000);
		sample_all(t);
		if (i == 0 && iterations != 1) {
			usleep(t->delay_ms * 1000);
			sample_all(t);
		}
		/* Rates in bytes a second, as the guest sees them, for scripts. */
		printf("%4s %-16s %-8s %6s %7s %7s %5s %9s %10s %10s %10s %10s\n", "ID", "NAME", "STATE", "%CPU",
		       "MEM(M)", "RSS(M)", "VCPUS", "UPTIME(s)", "NETRX(B/s)", "NETTX(B/s)", "DSKRD(B/s)",
		       "DSKWR(B/s)");
		printf("%4u %-16s %-8s %6.1f %7lu %7lu %5u %9s %10s %10s %10s %10s\n", 0, "Domain-0", "running",
		       t->host.cpu_pct, t->host.mem_total_mib, t->host.mem_total_mib - t->host.mem_avail_mib,
		       t->host.ncpus, "-", "-", "-", "-", "-");
		for (k = 0; k < t->nshown; k++) {
			struct dom_sample *d = &t->doms[t->order[k]];

			printf("%4u %-16s %-8s %6.1f %7lu %7lu %5u %9lu %10.0f %10.0f %10.0f %10.0f\n", d->st.id,
			       d->st.name, d->st.state, d->cpu_pct, d->st.target_mib, d->st.rss_kib / 1024, d->st.vcpus,
			       d->st.uptime_s, d->net_rx_bps, d->net_tx_bps, d->disk_rd_bps, d->disk_wr_bps);
		}
		printf("\n");
		fflush(stdout);
	}
	return 0;
}

int tui_main(const struct lodge *lg, const struct tui_options *o)
{
	struct tui *t = &the_tui;
	static const int crash[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
	int i, c;
	bool key_ready = false;
	uint64_t next;

	t->lg = lg;
	t->hc = lg->hc;
	t->delay_ms = o->delay_ms;
	t->monochrome = o->monochrome;
	t->sort = SORT_ID;
	if (o->batch)
		return batch(t, o->iterations);
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "lodge: the dashboard needs a terminal (lodge top -b prints text)\n");
		return 1;
	}

	/* Library messages (a failing lodge-hyp, say) must not scribble on
	 * the screen: stderr goes to a file, and failures show in the status
	 * line instead. */
	saved_stderr = dup(STDERR_FILENO);
	{
		char path[] = "/tmp/lodge-dashboard.XXXXXX";
		int fd = mkstemp(path);

		if (fd >= 0) {
			unlink(path);
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
	}
	atexit(restore_terminal);
	{
		/* No SA_RESTART: a blocking read in curses (a prompt, the form)
		 * returns, so the loop sees the signal and restores the terminal. */
		struct sigaction sa = { .sa_handler = on_signal };
		static const int quit[] = { SIGTERM, SIGINT, SIGHUP };

		sigemptyset(&sa.sa_mask);
		for (i = 0; i < (int)(sizeof(quit) / sizeof(quit[0])); i++)
			sigaction(quit[i], &sa, NULL);
	}
	for (i = 0; i < (int)(sizeof(crash) / sizeof(crash[0])); i++)
		signal(crash[i], on_crash);
	initscr();
	signal(SIGWINCH, on_winch);
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(50);
	timeout(t->delay_ms);
	draw_init(t);

	actions_init(t);
	sample_all(t);
	next = tui_now_ns() + (uint64_t)t->delay_ms * 1000000;
	while (!t->quit && !got_signal) {
		struct pollfd fds[1 + TUI_MAX_PENDING];
		unsigned nfds;
		uint64_t now;
		int wait;

		if (got_winch)
			follow_resize();
		draw(t);
		/* Sleep until a key, a reply to an action, the next sample or an
		 * action's deadline, whichever comes first.  A key just read may
		 * have left more in curses' own buffer: look again at once. */
		now = tui_now_ns();
		wait = next > now ? (int)((next - now) / 1000000) + 1 : 0;
		if (actions_wait_ms(t, now) < wait)
			wait = actions_wait_ms(t, now);
		if (key_ready)
			wait = 0;
		fds[0] = (struct pollfd){ STDIN_FILENO, POLLIN, 0 };
		nfds = 1 + actions_pollfds(t, fds + 1, TUI_MAX_PENDING);
		if (poll(fds, nfds, wait) < 0 && errno != EINTR)
			break;
		if (got_signal)
			break;
		/* The terminal is gone (a hung-up line without SIGHUP): nothing to show. */
		if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL))
			break;
		actions_collect(t, tui_now_ns());
		timeout(0);
		c = getch();
		key_ready = c != ERR;
		if (c != ERR && c != KEY_RESIZE)
			dispatch(t, c);
		now = tui_now_ns();
		if (now >= next || t->resample) {
			if (!t->frozen || t->resample)
				sample_all(t);
			t->resample = false;
			if (now >= next)
				next = now + (uint64_t)t->delay_ms * 1000000;
		}
	}
	for (i = 0; i < TUI_MAX_PENDING; i++)
		lodge_call_close(&t->pending[i].call);
	restore_terminal();
	lodge_poller_free(t->poller);
	if (got_signal) {
		/* Ended by a signal, as the shell should see it. */
		signal(got_signal, SIG_DFL);
		raise(got_signal);
	}
	return 0;
}
