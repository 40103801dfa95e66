/* The dashboard: `lodge` with no arguments.  Data comes only through the
 * agent's interfaces (control sockets, configs, netlink); views draw,
 * actions return what to redraw and never draw. */
#ifndef LODGE_TUI_H
#define LODGE_TUI_H

#include <stdbool.h>
#include <stdint.h>

struct pollfd;

#include "lodge.h"

#define TUI_MAX_DOMAINS 256
#define TUI_HISTORY     120        /* samples kept for sparklines */

struct dom_sample {
	struct lodge_status st;
	double cpu_pct;                /* of one CPU, summed over vCPUs */
	double vcpu_pct[DOMAIN_VCPUS_MAX];
	double wait_pct;               /* runnable but not running, of one CPU */
	double vcpu_wait_pct[DOMAIN_VCPUS_MAX];
	/* Bytes a second, as the guest sees them. */
	double net_rx_bps, net_tx_bps, disk_rd_bps, disk_wr_bps;
	double disk_rd_dev_bps[DOMAIN_DISKS_MAX], disk_wr_dev_bps[DOMAIN_DISKS_MAX];
	float cpu_hist[TUI_HISTORY];   /* for the sparklines */
	float rss_hist[TUI_HISTORY];
	unsigned hist_len;
	bool seen;
};

enum sort_key { SORT_ID, SORT_NAME, SORT_STATE, SORT_CPU, SORT_MEM, SORT_RSS, SORT_VCPUS, SORT_UPTIME, SORT_NET,
		SORT_DISK, SORT_NKEYS };

/* An action sent to a domain whose one-line reply the main loop collects,
 * so a domain slow to answer never holds the screen. */
#define TUI_MAX_PENDING   8
#define TUI_ACTION_WAIT_MS 5000
struct pending_action {
	struct lodge_call call;            /* call.fd -1: a free slot */
	char name[CFG_NAME_MAX];
	char cmd[16];
	uint64_t deadline_ns;
};

struct tui {
	const struct lodge *lg;
	struct host_config hc;             /* lg's */
	struct lodge_host host;
	struct dom_sample doms[TUI_MAX_DOMAINS];
	unsigned ndoms;
	unsigned order[TUI_MAX_DOMAINS];   /* doms[] indexes, sorted and filtered */
	unsigned nshown;
	unsigned selected, top;            /* row in order[], first row drawn */
	enum sort_key sort;
	bool sort_reverse;
	char filter[32];
	int delay_ms;
	bool frozen, monochrome, quit;
	enum { VIEW_TABLE, VIEW_DETAIL, VIEW_HELP, VIEW_CREATE } view;
	char status[160];                  /* the status line: last result or error */
	bool status_error;
	uint64_t last_sample_ns;
	struct lodge_poller *poller;       /* control connections kept between samples */
	struct pending_action pending[TUI_MAX_PENDING];
	bool resample;                     /* an action finished: sample before the next draw */
};

/* sample.c */
void sample_all(struct tui *t);
void sample_sort(struct tui *t);
const char *sort_name(enum sort_key k);

/* draw.c */
void fmt_rate(char *buf, size_t len, double bytes_per_s);
void draw_init(struct tui *t);
void draw_table(struct tui *t);
void draw_detail(struct tui *t);
void draw_help(struct tui *t);
void tui_status(struct tui *t, bool error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* actions.c */
bool tui_confirm(struct tui *t, const char *question);
void action_request(struct tui *t, enum lodge_verb v);
void actions_init(struct tui *t);
/* Fill FDS (at most MAX) with the pending actions' sockets; returns how many. */
unsigned actions_pollfds(struct tui *t, struct pollfd *fds, unsigned max);
/* Milliseconds until the nearest pending action's deadline (INT_MAX: none). */
int actions_wait_ms(struct tui *t, uint64_t now_ns);
/* Take in whatever replies have arrived, and time out the late ones. */
void actions_collect(struct tui *t, uint64_t now_ns);
void action_console(struct tui *t);
void action_filter(struct tui *t);
void action_delay(struct tui *t);

/* create.c */
void view_create(struct tui *t);

/* tui.c: lodge top's options, as the command line gave them. */
struct tui_options {
	bool batch;                        /* the table as text, for scripts */
	int iterations;                    /* tables printed in batch mode; 0: no end */
	int delay_ms;
	bool monochrome;
};
int tui_main(const struct lodge *lg, const struct tui_options *o);
struct dom_sample *tui_selected(struct tui *t);
uint64_t tui_now_ns(void);
/* SIGTERM, SIGHUP or SIGINT arrived: prompts and forms return at once. */
bool tui_interrupted(void);

#endif
