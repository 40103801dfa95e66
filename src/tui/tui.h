/* The dashboard: `lodge` with no arguments.  It reaches the domains and
 * the host only through the library (lodge.h).  Sampling asks and takes
 * in without waiting and keeps what came, with its age; drawing shows
 * only what sampling kept and never waits; actions return what to redraw
 * and never draw. */
#ifndef LODGE_TUI_H
#define LODGE_TUI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct pollfd;

#include "lodge.h"

#define TUI_MAX_DOMAINS 256
/* Destroy (and cancel an install): a shifted letter besides F9, as htop,
 * so that vi's j/k move and a slip of the finger ends nothing; it asks
 * first all the same. */
#define TUI_KEY_DESTROY 'D'
#define TUI_HISTORY     120        /* samples kept for sparklines */
/* A sample's replies are gathered this long (at most half the refresh
 * interval) before the screen shows them: one redraw a refresh, not one a
 * reply.  A reply later than that is shown when it comes. */
#define TUI_SETTLE_MS   100
/* Figures older than the refresh interval by this much are stale, and a
 * detail query out this long is overdue: the domain has not answered
 * (its lodge-hyp stopped, or the host is swamped).  The screen says so
 * rather than wait. */
#define TUI_STALE_MS    2000
#define TUI_TAIL_BYTES  2048       /* of the console, for the detail view */
#define TUI_POLL_MAX    (1024 + 2 * TUI_MAX_DOMAINS)   /* sockets sampling waits on at once */
/* A message (the status line's): room for a reply's whole reason with
 * the paths it names.  The status line wraps one onto at most
 * TUI_STATUS_ROWS lines; the message history (m) keeps the last
 * TUI_MESSAGES whole. */
#define TUI_MESSAGE_MAX (LODGE_ERR_MAX + 256)   /* a library error whole, with what it was about */
#define TUI_MESSAGES    32
#define TUI_STATUS_ROWS 3

/* One piece of the detail view, fetched in sampling: when it was last
 * asked for and last had, and why not if it failed. */
struct fetch {
	uint64_t asked_ns, got_ns;     /* 0: never */
	int rc;                        /* the last attempt's: 0 ok, else -errno with err */
	char err[256];
};

/* What the detail view shows beyond the status.  The config, devices and
 * disk sizes are read once per start of the domain (its id and pid);
 * the taps' counters, the watcher's view and the console's tail each
 * refresh while the view is open. */
struct dom_detail {
	unsigned id;
	int pid;
	struct fetch config;
	char kernel[CFG_PATH_MAX];
	struct lodge_devices dev;
	uint64_t disk_bytes[DOMAIN_DISKS_MAX];      /* 0: unknown */
	struct lodge_link link[DOMAIN_VIFS_MAX];
	char link_err[DOMAIN_VIFS_MAX][128];        /* "" if link[i] was read */
	struct fetch net;
	struct lodge_query netq;
	struct lodge_net view;
	struct fetch console;
	struct lodge_query conq;
	char tail[TUI_TAIL_BYTES + 1];
};

struct dom_sample {
	struct lodge_status st;
	uint64_t answered_ns;          /* its last status reply; 0: none yet */
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
	struct dom_detail *detail;     /* NULL until its detail view is first opened */
	struct tui_install *install;   /* a Debian guest the form is installing, or installed and
					* not yet started: not a running domain (install.c) */
	bool remote;                   /* a domain of the pool that runs on another host (pool.c):
					* st has its name, the pool's state and memory only */
	/* A domain defined in domains_dir that is not running (defined.c):
	 * st has its name, state DOMAIN_STATE_OFF, its config's memory and vCPUs. */
	bool off, autostart, loads;
	char why[512];                 /* its config does not load: why */
};

/* The pool's domains as pool_domains() gave them last (pool.c). */
#define TUI_POOL_MAX 256
struct tui_pool_row {
	char name[DOMAIN_NAME_MAX];
	char host[DOMAIN_NAME_MAX];        /* "": none (a stopped domain) */
	enum domain_state state;           /* the pool's: running, lost, stopped, ... */
	unsigned long memory_mib;
};
struct tui_pool {
	bool out;                          /* a job asking (one at a time) */
	struct lodge_job job;              /* its child: one result record a row */
	struct tui_pool_row row[TUI_POOL_MAX];  /* the last whole sample */
	unsigned n;
	struct tui_pool_row next[TUI_POOL_MAX]; /* the one coming in */
	unsigned next_n;
	uint64_t asked_ns, got_ns;         /* got_ns 0: no sample yet */
	bool failed;                       /* the last job failed (etcd not answering, ...) */
	char why[512];                     /* ... and why, as its end said (escaped) */
};
/* A job out longer than this, the shown sample is said to be old. */
#define TUI_POOL_SLOW_MS 2000

/* An install from the create form (install.c): lodge_install in a child
 * process whose progress hook writes records to a pipe the main loop
 * reads without waiting.  Its row is in the table from the start, as
 * `installing 42%`, then as a stopped domain until it is started. */
#define TUI_MAX_INSTALLS 8
enum install_state { INSTALL_RUNNING, INSTALL_CANCELLING, INSTALL_DONE };
struct tui_install {
	bool used;
	enum install_state state;
	struct lodge_job job;              /* lodge_install in a child */
	char name[DOMAIN_NAME_MAX];
	char dist[LODGE_DIST_MAX];
	char disk[CFG_PATH_MAX];           /* the partition given, or once done the disk made */
	unsigned memory_mib, vcpus;
	enum lodge_phase phase;
	int pct;                           /* of the whole install */
	char note[256];                    /* mmdebstrap's last warning, as it said it */
	uint64_t started_ns;
	char result[CFG_PATH_MAX + 256];   /* once done: what was made */
};

enum sort_key { SORT_ID, SORT_NAME, SORT_STATE, SORT_CPU, SORT_MEM, SORT_RSS, SORT_VCPUS, SORT_UPTIME, SORT_NET,
		SORT_DISK, SORT_NKEYS };

/* An action on a domain whose answer the main loop collects, so a
 * domain slow to answer never holds the screen: a request to its
 * lodge-hyp (call), or a library call that waits run as a job (a
 * hot-plug, a pool's stop), killed and reaped at its deadline. */
#define TUI_MAX_PENDING   8
#define TUI_ACTION_WAIT_MS 5000
struct pending_action {
	bool used;                         /* false: a free slot */
	bool is_job;                       /* job, else call */
	struct lodge_call call;
	struct lodge_job job;
	char name[DOMAIN_NAME_MAX];
	char cmd[16];
	uint64_t deadline_ns;
	unsigned wait_ms;                  /* the deadline, from the start: what the message says */
};

struct tui_message {
	time_t when;
	bool error;
	char text[TUI_MESSAGE_MAX];
};

struct tui {
	const struct lodge *lg;
	struct host_config hc;             /* lg's */
	struct lodge_host host;
	struct dom_sample doms[TUI_MAX_DOMAINS];
	unsigned ndoms;
	unsigned order[TUI_MAX_DOMAINS];   /* doms[] indexes, sorted and filtered */
	unsigned nshown;
	unsigned selected, top;            /* row in order[] (0: Domain-0), first row drawn */
	char selected_name[DOMAIN_NAME_MAX];   /* the selection follows its domain through a re-sort */
	enum sort_key sort;
	bool sort_reverse;
	char filter[32];
	int delay_ms;
	bool frozen, monochrome, quit;
	enum { VIEW_TABLE, VIEW_DETAIL, VIEW_MESSAGES, VIEW_NETWORKS } view;
	bool help;                         /* the help overlay is over the view */
	unsigned help_top;                 /* its first line shown, when it is taller than the screen */
	char status[TUI_MESSAGE_MAX];      /* the status line: last result or error ("": none) */
	bool status_error;
	struct tui_message messages[TUI_MESSAGES];   /* a ring, the newest at (nmessages - 1) % TUI_MESSAGES */
	unsigned nmessages;                /* ever shown */
	unsigned messages_back;            /* the history view scrolled back this many lines */
	struct lodge_poller *poller;       /* control connections kept between samples */
	unsigned npoller_fds;              /* the poller's, first of sample_pollfds' */
	bool gathering;                    /* a sample's replies are coming in ... */
	uint64_t gather_until_ns;          /* ... until all are in, or until then */
	unsigned replies;                  /* status replies taken in since the last sort */
	char detail_name[DOMAIN_NAME_MAX]; /* whose detail sampling last fetched */
	struct pending_action pending[TUI_MAX_PENDING];
	struct lodge_query console;        /* the console asked for, its answer due */
	uint64_t console_deadline_ns;
	bool resample;                     /* an action finished: sample before the next draw */
	struct tui_install installs[TUI_MAX_INSTALLS];
	struct tui_pool pool;              /* lodge.conf has pool_etcd: the pool's view (pool.c) */
};

/* defined.c: the domains of domains_dir that are not running, as rows */
/* Add (with add: sample.c's find_or_add) a row for each one not running. */
void defined_sample(struct tui *t, struct dom_sample *(*add)(struct tui *t, const char *name));
/* S, D on an off row: false if d is none (the key acts as on any row). */
bool defined_start(struct tui *t, struct dom_sample *d);
bool defined_delete(struct tui *t, struct dom_sample *d);
/* e, A on a defined domain's row, running or not. */
void defined_edit(struct tui *t, struct dom_sample *d);
void defined_autostart(struct tui *t, struct dom_sample *d);
/* The detail view of an off row, from line y: the next free line. */
int defined_detail(struct tui *t, const struct dom_sample *d, int y);

/* sample.c */
/* Ask: the host, every domain's status, and the detail view's domain. */
void sample_start(struct tui *t);
/* The detail view's domain alone (the view opened, or its selection moved). */
void sample_detail(struct tui *t);
/* Fill fds (at most max) with the sockets whose replies are due. */
unsigned sample_pollfds(struct tui *t, struct pollfd *fds, unsigned max);
/* Take in what has arrived, never waiting (fds: sample_pollfds' as poll()
 * returned them): true if the screen should show it. */
bool sample_collect(struct tui *t, uint64_t now_ns, const struct pollfd *fds);
/* Milliseconds until the gathered replies must be shown (INT_MAX: none due). */
int sample_wait_ms(struct tui *t, uint64_t now_ns);
/* Ask and wait for the replies (at most TUI_SETTLE_MS): lodge top -b. */
void sample_all(struct tui *t);
void sample_sort(struct tui *t);
void sample_free(struct tui *t);
const char *sort_name(enum sort_key k);
/* The figures are older than they should be: the domain has not answered. */
bool sample_stale(const struct tui *t, const struct dom_sample *d, uint64_t now_ns);
/* A query of the detail view out longer than it should be. */
bool fetch_overdue(const struct fetch *f, bool out, uint64_t now_ns);

/* pool.c: the pool's domains and their hosts, sampled without waiting. */
bool pool_in_use(const struct tui *t);
/* A row's detail (sample.c), freed with its queries. */
void detail_free(struct dom_detail *x);
void pool_sample_start(struct tui *t);
unsigned pool_pollfds(const struct tui *t, struct pollfd *fds, unsigned max);
/* Take in what the child wrote: true once a sample came whole (or failed). */
bool pool_collect(struct tui *t);
bool pool_waiting(const struct tui *t);
/* The shown sample is old (the last job failed, or one has been out
 * TUI_POOL_SLOW_MS): true with a line saying how old and why ("pool as
 * of 14 s ago: ..."); false when it is fresh or there is no pool. */
bool pool_stale(const struct tui *t, uint64_t now, char *out, size_t len);
/* name's row in the last sample, NULL if the pool has no such domain. */
const struct tui_pool_row *pool_row(const struct tui *t, const char *name);
void pool_free(struct tui *t);

/* draw.c */
void fmt_rate(char *buf, size_t len, double bytes_per_s);
void fmt_uptime(char *buf, size_t len, unsigned long s);
/* A sparkline of hist (newest first) in width characters, newest on the right. */
void spark(char *out, const float *hist, unsigned len, unsigned width, float max);
void draw_table(struct tui *t);
/* The status line (wrapped onto at most TUI_STATUS_ROWS lines) and the
 * key bar, at the bottom. */
void draw_bars(struct tui *t);
/* How many lines draw_bars takes at this width. */
int bars_rows(const struct tui *t);
/* How many bytes of s (after its leading spaces) the next line of text
 * wrapped at width takes: up to its last space that fits, or width
 * bytes of a word longer than the line. */
size_t wrap_next(const char *s, size_t width);
/* text from line y, column x on, wrapped at the screen's width rather
 * than cut, its further lines indented by indent, above line bottom:
 * the next free line. */
int put_wrapped(int y, int x, int indent, int bottom, const char *text);

/* messages.c: the message history, a view of its own (m). */
void draw_messages(struct tui *t);
/* Scroll it by lines (negative: towards the newest). */
void messages_scroll(struct tui *t, int lines);

/* networks.c: Lodge's networks and their leases, a view of its own (N). */
void networks_sample(struct tui *t);
void draw_networks(struct tui *t);

/* detail.c */
void draw_detail(struct tui *t);
void tui_status(struct tui *t, bool error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* keys.c: the one table of keys, the help overlay and the key bar drawn from it. */
/* Act on key c; false if no key does anything in this view. */
bool keys_dispatch(struct tui *t, int c);
void draw_help(struct tui *t);
void draw_key_bar(void);

/* actions.c */
bool tui_confirm(struct tui *t, const char *question);
/* A modal's own keys wait (no timeout) until it ends: begin returns the
 * wait it found, end puts that back.  A modal opened from another (the
 * create form's picker, a confirmation in it) so gives its caller back
 * a blocking getch, not the table's refresh timeout: one that timed out
 * read as Esc and closed the form, every field lost. */
int tui_modal_begin(void);
void tui_modal_end(int was);
void action_request(struct tui *t, enum lodge_verb v);
void actions_init(struct tui *t);
/* Fill FDS (at most MAX) with the pending actions' sockets (the console's
 * too); returns how many. */
unsigned actions_pollfds(struct tui *t, struct pollfd *fds, unsigned max);
/* Milliseconds until the nearest pending action's deadline (INT_MAX: none). */
int actions_wait_ms(struct tui *t, uint64_t now_ns);
/* Take in whatever replies have arrived, and time out the late ones:
 * true if the status line changed. */
bool actions_collect(struct tui *t, uint64_t now_ns);
void actions_close(struct tui *t);
void action_console(struct tui *t);
void action_filter(struct tui *t);
void action_delay(struct tui *t);
/* A line of input in the status line (buf holds its start); false on Esc. */
bool tui_prompt(struct tui *t, const char *label, char *buf, size_t len);
/* picker.c: pick a block device (one mounted, used, or smaller than
 * min_bytes is marked and refused) into out: false if none was picked. */
bool tui_pick_blockdev(struct tui *t, char *out, size_t len, uint64_t min_bytes, const char *for_what);
/* Pick a Lodge network or a bridge: "network=NAME" or "bridge=NAME". */
bool tui_pick_link(struct tui *t, char *out, size_t len);
/* A free pending slot for domain name, NULL with the status line saying why. */
struct pending_action *action_slot(struct tui *t, const char *name, const char *cmd);
/* work(arg) as a job on a free slot of domain name, its end collected
 * as a request's answer, killed past wait_ms: false with the status line
 * saying why (nothing started).  arg is the child's copy: it may be on
 * the caller's stack. */
bool action_job(struct tui *t, const char *name, const char *cmd, lodge_job_work *work, void *arg,
		unsigned wait_ms);

/* devices.c: hot-plug from the detail view.  Each runs as a job whose
 * end comes in on a pending slot, as a request's answer (a detach waits
 * up to LODGE_DETACH_TIMEOUT_MS for the guest). */
void devices_attach_disk(struct tui *t);
void devices_attach_vif(struct tui *t);
void devices_detach(struct tui *t);

/* create.c */
void view_create(struct tui *t);

/* install.c: Debian installs from the form, run by child processes. */
struct lodge_install_opts;
/* Start lodge_install(o) in a child process (o checked by a dry run
 * first): 0, its row in the table; else -errno with why in err. */
int install_start(struct tui *t, const struct lodge_install_opts *o, struct lodge_err *err);
/* How many installs are running (or undoing a cancel). */
unsigned installs_running(const struct tui *t);
unsigned installs_pollfds(struct tui *t, struct pollfd *fds, unsigned max);
/* Take in the children's records without waiting: true if a row changed. */
bool installs_collect(struct tui *t);
/* Cancel each running install and wait for it to undo what it made. */
void installs_stop_all(struct tui *t);
/* The key k on a selected install row (false: not one, the key acts as
 * on any domain).  k: TUI_KEY_DESTROY cancels, 'S' starts an installed one. */
bool install_key(struct tui *t, struct dom_sample *d, int k);
/* An install row's state in a few words: "installing 42%", "cancelling". */
const char *install_state_words(const struct tui_install *in, char *buf, size_t len);
/* Its lines of the detail view from line y: the next free line. */
int install_detail(struct tui *t, const struct tui_install *in, int y);
/* Forget an install whose domain now runs (sampling found it). */
void install_forget(struct tui *t, struct dom_sample *d);

/* tui.c: lodge top's options, as the command line gave them. */
struct tui_options {
	bool batch;                        /* the table as text, for scripts */
	int iterations;                    /* tables printed in batch mode; 0: no end */
	int delay_ms;
	bool monochrome;
};
int tui_main(const struct lodge *lg, const struct tui_options *o);
struct dom_sample *tui_selected(struct tui *t);
/* Move the selection to row (0: Domain-0), clamped to the rows shown. */
void tui_select(struct tui *t, unsigned row);
uint64_t tui_now_ns(void);
/* SIGTERM, SIGHUP or SIGINT arrived: prompts and forms return at once. */
bool tui_interrupted(void);

#endif
