/* The dashboard's loop: ask on a timer (sample.c), take in each reply as
 * it comes with the keys and the actions' answers in one poll, redraw
 * when something changed, keys through the one table (keys.c).  Nothing
 * in it waits on a domain.  The terminal is restored on every exit path. */
#include "tui.h"
#include "exit-status.h"

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

void tui_select(struct tui *t, unsigned row)
{
	if (row > t->nshown)
		row = t->nshown;
	t->selected = row;
	snprintf(t->selected_name, sizeof(t->selected_name), "%s",
		 row ? t->doms[t->order[row - 1]].st.name : "");
}

static void draw(struct tui *t)
{
	if (t->view == VIEW_DETAIL)
		draw_detail(t);
	else if (t->view == VIEW_MESSAGES)
		draw_messages(t);
	else if (t->view == VIEW_NETWORKS)
		draw_networks(t);
	else
		draw_table(t);
	if (t->help)
		draw_help(t);
	refresh();
}

/* The detail view opened, or its selection moved: ask for its domain now
 * rather than at the next sample. */
static void follow_detail(struct tui *t)
{
	struct dom_sample *d = t->view == VIEW_DETAIL ? tui_selected(t) : NULL;

	if (strcmp(d ? d->st.name : "", t->detail_name))
		sample_detail(t);
}

/* The first table's rates are over this much (or the delay, if
 * shorter): a rate needs two samples, and -n1 must not print zeros. */
#define BATCH_FIRST_MS 250

/* xentop -b's header: the time, the domains by state, the host; on a
 * pool host whose sample is old, how old and why. */
static void batch_header(const struct tui *t)
{
	unsigned k, running = 0, paused = 0, shutdown = 0, crashed = 0;
	const struct lodge_host *h = &t->host;
	time_t now = time(NULL);
	char when[64], pool_line[sizeof(t->pool.why) + 96];

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
	for (k = 0; k < t->nshown; k++) {
		enum domain_state state = t->doms[t->order[k]].st.state;

		running += state == DOMAIN_STATE_RUNNING;
		paused += state == DOMAIN_STATE_PAUSED;
		shutdown += state == DOMAIN_STATE_SHUTDOWN;
		crashed += state == DOMAIN_STATE_CRASHED;
	}
	printf("lodge top - %s\n", when);
	printf("%u domains: %u running, %u paused, %u shutdown, %u crashed\n", t->nshown, running, paused,
	       shutdown, crashed);
	printf("Mem: %lu MiB total, %lu MiB used, %lu MiB free   CPUs: %u, %.1f%% busy   Load: %.2f %.2f %.2f\n",
	       h->mem_total_mib, h->mem_total_mib - h->mem_avail_mib, h->mem_avail_mib, h->ncpus, h->cpu_pct,
	       h->load1, h->load5, h->load15);
	if (pool_stale(t, tui_now_ns(), pool_line, sizeof(pool_line)))
		printf("%s\n", pool_line);
}

/* lodge top -b [-n N] [-d SECONDS]: the table as text, for scripts. */
static int batch(struct tui *t, int iterations)
{
	bool pool = pool_in_use(t);
	int i;
	unsigned k;

	for (i = 0; iterations <= 0 || i < iterations; i++) {
		if (i)
			usleep(t->delay_ms * 1000);
		sample_all(t);
		if (i == 0) {
			usleep((t->delay_ms < BATCH_FIRST_MS ? t->delay_ms : BATCH_FIRST_MS) * 1000);
			sample_all(t);
		}
		batch_header(t);
		/* Rates in bytes a second, as the guest sees them, for scripts. */
		/* A host in a pool: the HOST column, and a row for each domain of
		 * the pool another host runs (its figures are that host's: "-"). */
		printf("%4s %-16s ", "ID", "NAME");
		if (pool)
			printf("%-16s ", "HOST");
		printf("%-8s %6s %7s %7s %5s %9s %10s %10s %10s %10s\n", "STATE", "%CPU", "MEM(M)", "RSS(M)", "VCPUS",
		       "UPTIME(s)", "NETRX(B/s)", "NETTX(B/s)", "DSKRD(B/s)", "DSKWR(B/s)");
		printf("%4u %-16s ", 0, DOMAIN_HOST_NAME);
		if (pool)
			printf("%-16s ", t->hc.pool_host[0] ? t->hc.pool_host : "-");
		printf("%-8s %6.1f %7lu %7lu %5u %9s %10s %10s %10s %10s\n",
		       domain_state_name(DOMAIN_STATE_RUNNING), t->host.cpu_pct,
		       t->host.mem_total_mib, t->host.mem_total_mib - t->host.mem_avail_mib, t->host.ncpus, "-", "-",
		       "-", "-", "-");
		for (k = 0; k < t->nshown; k++) {
			struct dom_sample *d = &t->doms[t->order[k]];
			const struct tui_pool_row *r = pool ? pool_row(t, d->st.name) : NULL;

			if (d->remote) {
				printf("%4s %-16s %-16s %-8s %6s %7lu %7s %5s %9s %10s %10s %10s %10s\n", "-", d->st.name,
				       r && r->host[0] ? r->host : "-", domain_state_name(d->st.state), "-", d->st.target_mib, "-", "-", "-",
				       "-", "-", "-", "-");
				continue;
			}
			printf("%4u %-16s ", d->st.id, d->st.name);
			if (pool)
				printf("%-16s ", r && r->host[0] ? r->host : "-");
			printf("%-8s %6.1f %7lu %7lu %5u %9lu %10.0f %10.0f %10.0f %10.0f\n", domain_state_name(d->st.state), d->cpu_pct,
			       d->st.target_mib, d->st.rss_kib / 1024, d->st.vcpus, d->st.uptime_s, d->net_rx_bps,
			       d->net_tx_bps, d->disk_rd_bps, d->disk_wr_bps);
		}
		printf("\n");
		fflush(stdout);
	}
	sample_free(t);
	return 0;
}

int tui_main(const struct lodge *lg, const struct tui_options *o)
{
	struct tui *t = &the_tui;
	static const int crash[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
	int i, c;
	bool key_ready = false, redraw = true;
	uint64_t next;

	lodge_set_face("dashboard");      /* the event log says who asked */
	t->lg = lg;
	t->hc = lg->hc;
	t->delay_ms = o->delay_ms;
	t->monochrome = o->monochrome;
	t->sort = SORT_ID;
	if (o->batch)
		return batch(t, o->iterations);
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "lodge: the dashboard needs a terminal (lodge top -b prints text)\n");
		return EXIT_FAILED;
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

	actions_init(t);
	sample_start(t);
	next = tui_now_ns() + (uint64_t)t->delay_ms * 1000000;
	while (!t->quit && !got_signal) {
		static struct pollfd fds[2 + TUI_MAX_PENDING + TUI_MAX_INSTALLS + TUI_POLL_MAX];
		unsigned nfds, sampled;
		uint64_t now;
		int wait;

		if (got_winch) {
			follow_resize();
			redraw = true;
		}
		if (redraw)
			draw(t);
		redraw = false;
		/* Sleep until a key, a reply, the next sample, the moment a
		 * sample's replies are shown or an action's deadline, whichever
		 * comes first.  A key just read may have left more in curses'
		 * own buffer: look again at once. */
		now = tui_now_ns();
		wait = next > now ? (int)((next - now) / 1000000) + 1 : 0;
		if (actions_wait_ms(t, now) < wait)
			wait = actions_wait_ms(t, now);
		if (sample_wait_ms(t, now) < wait)
			wait = sample_wait_ms(t, now);
		if (key_ready)
			wait = 0;
		fds[0] = (struct pollfd){ STDIN_FILENO, POLLIN, 0 };
		nfds = 1 + actions_pollfds(t, fds + 1, TUI_MAX_PENDING + 1);
		nfds = sampled = nfds + installs_pollfds(t, fds + nfds, TUI_MAX_INSTALLS);
		nfds += sample_pollfds(t, fds + sampled, TUI_POLL_MAX);
		if (poll(fds, nfds, wait) < 0 && errno != EINTR)
			break;
		if (got_signal)
			break;
		/* The terminal is gone (a hung-up line without SIGHUP): nothing to show. */
		if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL))
			break;
		now = tui_now_ns();
		if (actions_collect(t, now))
			redraw = true;
		if (installs_collect(t))
			redraw = true;
		if (sample_collect(t, now, fds + sampled))
			redraw = true;
		/* curses looks (a poll of its own) only when there is something
		 * to read: most wakes are replies. */
		c = ERR;
		if (key_ready || (fds[0].revents & POLLIN)) {
			timeout(0);
			c = getch();
		}
		key_ready = c != ERR;
		if (c != ERR && c != KEY_RESIZE) {
			keys_dispatch(t, c);
			follow_detail(t);
			redraw = true;
		}
		now = tui_now_ns();
		if (now >= next || t->resample) {
			if (!t->frozen || t->resample)
				sample_start(t);
			else
				redraw = true;     /* the clock moves on */
			t->resample = false;
			if (now >= next)
				next = now + (uint64_t)t->delay_ms * 1000000;
		}
	}
	if (installs_running(t)) {
		/* Quit was confirmed, or a signal: each install undoes what it
		 * made before the dashboard is gone. */
		erase();
		mvprintw(0, 0, "cancelling %u installs: each removes what it made...", installs_running(t));
		refresh();
	}
	installs_stop_all(t);
	actions_close(t);
	restore_terminal();
	sample_free(t);
	if (got_signal) {
		/* Ended by a signal, as the shell should see it. */
		signal(got_signal, SIG_DFL);
		raise(got_signal);
	}
	return 0;
}
