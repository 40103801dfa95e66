/* The pool's keys and records (src/pool/README.md), shared by the
 * commands (src/agent/cmd-pool.c) and the pool agent (agent.c). */
#ifndef LODGE_POOL_H
#define LODGE_POOL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <jansson.h>

#include "etcd.h"
#include "lodge.h"

/* The version of the keys and records below: hosts of one pool agree on
 * it (pool-join refuses a pool whose version differs). */
#define POOL_PROTOCOL "1"
#define POOL_KEY_MAX 512
#define POOL_HOSTS_MAX 64
#define POOL_DOMAINS_MAX 1024

struct pool {
	struct etcd *etcd;
	char prefix[POOL_PREFIX_MAX];
	char host[DOMAIN_NAME_MAX];        /* this host's name in the pool */
};

/* This host's default name in the pool: its hostname up to the first
 * dot; -EINVAL with why if that is not a name Lodge takes. */
int pool_default_host(char name[DOMAIN_NAME_MAX], char *why, size_t whylen);
/* The pool of lodge.conf (hc), each of etcd, host, prefix replaced when
 * not NULL: 0, or -errno with why (-ENOENT: this host is in no pool). */
int pool_open(struct pool *p, const struct host_config *hc, const char *etcd, const char *host,
	      const char *prefix, char *why, size_t whylen);
void pool_close(struct pool *p);
/* prefix/what: what a printf format. */
const char *pool_key(const struct pool *p, char buf[POOL_KEY_MAX], const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A host's state in the pool, a table of its own (pool.c), apart from
 * its domains' (proto.h): what hosts/H says (up, fenced, leaving), lost
 * when that key is gone (its lease ended), unknown ("?") for a word no
 * agent writes.  Only an up host takes domains and migrations. */
enum pool_host_state {
	POOL_HOST_UP,
	POOL_HOST_FENCED,                  /* back from a cut-off, its HA domains still fenced */
	POOL_HOST_LEAVING,                 /* pool-leave migrates its domains away */
	POOL_HOST_LOST,
	POOL_HOST_UNKNOWN,
	POOL_HOST_NSTATES
};
const char *pool_host_state_name(enum pool_host_state s);

/* A host as hosts/H says (live: the key exists, bound to its lease) and
 * members/H (member: it joined and has not left). */
struct pool_host {
	char name[DOMAIN_NAME_MAX];
	enum pool_host_state state;        /* as hosts/H says: up (no word too), fenced, leaving, unknown */
	bool live, member;
	unsigned cpus;
	unsigned long mem_total_mib;       /* what the host has for guests */
	unsigned long mem_avail_mib;       /* free now, as the host saw it */
	unsigned long committed_mib;       /* memory of the pool's domains placed there */
	char migrate[128];                 /* where its agent takes migrations, "" none */
	char version[32];                  /* Lodge's */
	int64_t lease;
};
/* hosts/H's value for h (malloc'd). */
char *pool_host_json(const struct pool_host *h);
/* The other way: 0, or -EPROTO if text is not such a record. */
int pool_host_parse(const char *text, struct pool_host *h);

/* domains/D/desired: what the pool wants of a domain, a table of its
 * own (pool.c).  NONE: no such key (half written, or another tool's
 * keys: no domain of Lodge's); UNKNOWN: a word no command writes, held
 * as not running. */
enum pool_desired { POOL_DESIRED_NONE, POOL_DESIRED_RUNNING, POOL_DESIRED_STOPPED, POOL_DESIRED_UNKNOWN,
		    POOL_DESIRED_COUNT };
/* Its word, as etcd holds it: running, stopped ("" none, "?" unknown). */
const char *pool_desired_name(enum pool_desired d);

/* A domain of the pool as its keys say. */
struct pool_domain {
	char name[DOMAIN_NAME_MAX];
	enum pool_desired desired;
	char placement[DOMAIN_NAME_MAX];   /* "" none */
	char owner[DOMAIN_NAME_MAX];       /* "" none: nobody may run it now */
	char migrate[DOMAIN_NAME_MAX];     /* lodge migrate asked for it to move there, "" none */
	char stop[16];                     /* how desired stopped is reached: "destroy" at once,
					      else the guest shut down (POOL_STOP_*) */
	char stop_host[DOMAIN_NAME_MAX];   /* domains/D/stop-by: the host the stop was asked on, */
	char stop_via[PROTO_FACE_MAX + 1]; /* and the asker's face ("web-vera"), "" none said */
	char state[512];                   /* the owner's report (JSON), "" none */
	unsigned long memory_mib;          /* from its config, 0 if unreadable */
	bool ha;
};

/* Everything under the prefix at one revision. */
struct pool_view {
	unsigned nhosts, ndomains;
	struct pool_host host[POOL_HOSTS_MAX];
	struct pool_domain *domain;        /* ndomains of them, sorted by name */
	char version[32];                  /* the pool's protocol, "" if none yet */
	int64_t revision;
};
int pool_view_read(struct pool *p, struct pool_view *v, char *why, size_t whylen);
void pool_view_free(struct pool_view *v);
struct pool_host *pool_view_host(struct pool_view *v, const char *name);
/* The owner's word in a domains/D/state record (report, parsed; from
 * etcd, so anyone's): the state if a pool agent may say that word
 * (proto.h's table), DOMAIN_STATE_UNKNOWN for any other, none if the
 * record has no word.  The one place a reported word is read. */
enum domain_state pool_reported_state(const json_t *report, enum domain_state none);
/* A domain's state, as lodge list --pool shows it: the owner's report
 * (running, paused, restarting, stopping, failed, ...), starting (owned,
 * not reported yet), stopped, lost (placed on a host that is not up,
 * nobody owns it), failed or placed (waiting for its host's agent). */
enum domain_state pool_domain_state(struct pool_view *v, const struct pool_domain *d);
/* Its owner's note beside the word: why it failed, or how its last boot
 * ended ("last end: ..."), from etcd, not yet fit for a terminal; "" none. */
const char *pool_domain_note(const struct pool_domain *d, char *buf, size_t len);
/* Where mib goes (README.md, "Placement"): the host up with the most
 * memory not yet placed that has room (and mib free now), ties by name;
 * on: that host or none; except: never that one.  NULL with why. */
const struct pool_host *pool_choose(const struct pool_view *v, unsigned long mib, const char *on,
				    const char *except, char *why, size_t whylen);
/* This host's hosts/H record given state (up, leaving) by another process
 * than its agent, under the record's lease; *live false: no record (no
 * agent runs), nothing written. */
int pool_host_set_state(struct pool *p, enum pool_host_state state, bool *live, char *why, size_t whylen);
/* Its state now: lost when not live, else what its record says. */
enum pool_host_state pool_host_state(const struct pool_host *h);

/* Since when this host's agent cannot renew its lease (the time of the
 * last renewal etcd granted), in the runtime directory's pool-cut-off
 * for lodge list --pool to say: noted (since > 0) or cleared (0).
 * pool_cut_off_since: true with the time if noted. */
void pool_cut_off_note(const struct host_config *hc, time_t since);
bool pool_cut_off_since(const struct host_config *hc, time_t *since);
/* The commands' one line when the pool's etcd did not answer, into why
 * (its error before): lost its quorum or out of reach, since when, what
 * that means for the domains. */
void pool_unanswered(struct pool *p, const struct host_config *hc, char *why, size_t whylen);

/* ---- the pool's domains (domains.c) ----------------------------------------------------- */

/* lodge create in a pool: the config (a name in domains_dir or a file)
 * read and checked by the schema, the host chosen (on, or the one up with
 * the most memory not yet placed: README.md, "Placement"), and its keys
 * written in one transaction.  0 with name and host; -ENOSPC no host
 * fits, -EEXIST the name is taken in the pool; why says so. */
int pool_domain_place(struct pool *p, const struct host_config *hc, const char *arg, const char *on,
		      char name[DOMAIN_NAME_MAX], char host[DOMAIN_NAME_MAX], char *why, size_t whylen);
/* Until its owner reports it running or paused (0), failed (-EIO, why
 * its reason) or timeout_ms passed (-ETIMEDOUT); state its last word. */
int pool_domain_wait(struct pool *p, const char *name, unsigned timeout_ms, char *state, size_t statelen,
		     char *why, size_t whylen);
/* domains/D/stop: how its owner's agent reaches desired stopped;
 * domains/D/stop-by, {"host": H, "via": FACE}: who asked, for the owner's
 * logs (its event log's via=, as if the asker had stopped it there). */
#define POOL_STOP_SHUTDOWN "shutdown"      /* the guest powers off; destroyed after shutdown_timeout */
#define POOL_STOP_DESTROY  "destroy"       /* at once */
/* Stop a pool domain wherever it runs: desired stopped and how (a
 * POOL_STOP_*) recorded first, then, if timeout_ms, wait that long for
 * its owner to let go.  0; -ENOENT if the pool has no such domain (a
 * local one, then); -EALREADY (shutdown only) it is stopped already;
 * -ENOTCONN the pool did not answer (nothing recorded). */
int pool_domain_stop(struct pool *p, const char *name, const char *how, unsigned timeout_ms, char *why,
		     size_t whylen);
/* lodge shutdown and destroy of NAME from any face (the command line,
 * the dashboard, the web page) on this host (lg): the pool's stop first,
 * as pool_domain_stop, when this host is in a pool.  0 recorded (its
 * owner's agent stops it); -ENOENT no pool, or not the pool's domain:
 * the caller's local verb; POOL_STOP_HERE the pool did not answer and
 * NAME runs here: why is the warning to show, then the local verb; else
 * -errno with why. */
#define POOL_STOP_HERE 1
int pool_stop_domain(const struct lodge *lg, const char *name, const char *how, unsigned timeout_ms, char *why,
		     size_t whylen);
/* Every key of the domain deleted (a create whose start failed). */
int pool_domain_forget(struct pool *p, const char *name, char *why, size_t whylen);
/* lodge pool-forget: the keys of a stopped domain that no host owns
 * deleted in one transaction; refused (-EBUSY, why says where it runs
 * or is to run) otherwise, -ENOENT not in the pool. */
int pool_domain_drop(struct pool *p, const char *name, char *why, size_t whylen);
/* Whether the pool has a domain of that name: 1, 0, or -errno with why. */
int pool_domain_known(struct pool *p, const char *name, char *why, size_t whylen);
/* A domain's config as read from etcd (file its label, text its text),
 * made fit to start here (admit.c): loaded with this host's checks and
 * held to what this host lends a stream (incoming.h), nothing it names
 * opened before it is admitted.  0, or -errno with err the one line to
 * log and report. */
int pool_config_admit(const struct lodge *lg, const char *name, const char *file, const char *text,
		      struct domain_config *dc, char *err, size_t errlen);
/* Its config's text (malloc'd) and the file it was read from (relative
 * paths in it are relative to that file's directory). */
int pool_domain_spec(struct pool *p, const char *name, char **text, char *file, size_t filelen, char *why,
		     size_t whylen);

/* How a domain's last boot on this host ended (boot-end.c): the event its
 * supervisor wrote in the event log after the boot's own start (enum
 * evlog_event; EV_COUNT for none: it died with its supervisor), whether
 * an HA domain that ended so is started again, and what happened in an
 * operator's words. */
struct pool_boot_end {
	unsigned event;
	bool restart;
	const char *says;
};
const struct pool_boot_end *pool_boot_ended(const struct lodge *lg, const char *name);

/* How its owner came to own a domain (domains/D/state's "came"): lodge
 * migrate waits for a migration's, never an HA restart's cold boot. */
#define POOL_CAME_START       "start"       /* claimed where it was placed, started there */
#define POOL_CAME_MIGRATION   "migration"   /* its running copy handed over or claimed */
#define POOL_CAME_HA_RESTART  "ha-restart"  /* taken over from a lost host, booted anew */

/* ---- live migration (migrate.c, README.md "Migration's hand-over") ------------------------- */

/* lodge migrate NAME TO in a pool: refused (one line in why) unless NAME
 * runs in the pool, TO is up with room for it and takes migrations;
 * then domains/NAME/migrate = TO for its owner's agent, from the host in
 * from.  -ENOENT: no pool domain of that name (a local one, then). */
int pool_domain_migrate(struct pool *p, const char *name, const char *to, char from[DOMAIN_NAME_MAX], char *why,
			size_t whylen);
/* Until TO owns NAME (0), the source gave up (-EIO, why its words) or
 * timeout_ms passed. */
int pool_migrate_wait(struct pool *p, const char *name, const char *to, unsigned timeout_ms, char *why,
		      size_t whylen);
/* The agent: lodge_migrate of name to dest in a child (its pid, -1), so
 * that the loop keeps renewing and feeding meanwhile; *why_fd: where the
 * child writes why it failed, read once it ended. */
pid_t pool_migrate_start(const struct lodge *lg, const char *name, const char *dest, int *why_fd);
/* A test fault point of the hand-over (tests/integ/pool-migrate-kill.sh):
 * when LODGE_POOL_TEST_DIE_AT names point, the agent (pid agent: this
 * process, or its parent from the migration's child) is killed there by
 * SIGKILL, as kill -9 would end it, rather than by the clock.  Compiled
 * in, but read only by an agent under --root (a test's tree: an agent
 * that runs a host's own domains has none) whose environment, root's own,
 * sets it; and it ends no process but that agent.  The points, in order:
 * before-claim (the child: the guest runs on the receiver, the agent
 * never learns it), before-handover (the agent knows, etcd not told),
 * after-handover. */
void pool_test_die_at(const char *point, const char *name, pid_t agent);
/* The child ended: moved, ownership and placement to TO under TO's lease
 * in one transaction (compare: still ours, still asked); not moved, the
 * request dropped and the state says why (failed). */
int pool_migrate_end(struct pool *p, const char *name, const char *to, bool moved, const char *failed,
		     int64_t my_lease, char *why, size_t whylen);
/* lodge.conf's migration receiver in a child of the agent (its pid), 0
 * without migration_secret_file (no TCP listener without one). */
pid_t pool_receiver_start(const struct lodge *lg);

/* ---- the agent's side (reconcile.c) -------------------------------------------------------- */

struct pool_reconciler;
struct pool_reconciler *pool_reconciler_new(void);
void pool_reconciler_free(struct pool_reconciler *r);
/* Make this host match the pool: claim and start what is placed here,
 * stop what is to stop, destroy what another host owns, report states
 * under the lease (README.md, "The agent").  0, or -errno with why when
 * the pool could not be read. */
int pool_reconcile(struct pool_reconciler *r, const struct lodge *lg, struct pool *p, int64_t lease, char *why,
		   size_t whylen);

/* Fencing (README.md, "Fencing"): this host's HA domains paused when a
 * renewal fails, destroyed at the deadline, unpaused if a renewal came in
 * time. */
enum pool_fence_step { POOL_FENCE_PAUSE, POOL_FENCE_DESTROY, POOL_FENCE_RESUME };
void pool_fence(struct pool_reconciler *r, const struct lodge *lg, enum pool_fence_step step);
/* Feed the watchdog of every HA domain this agent runs: each ends at
 * deadline_ms unless fed again (lodge_watchdog). */
void pool_feed(struct pool_reconciler *r, const struct lodge *lg, uint64_t deadline_ms);
/* Migrations whose child ended, handed over (or given up): true if any. */
bool pool_migrations_poll(struct pool_reconciler *r, struct pool *p, int64_t lease);
/* A migration's child runs or its hand-over is still to write. */
bool pool_migrating(const struct pool_reconciler *r);
/* A pass is due by the clock (an HA restart's delay has passed). */
bool pool_reconcile_due(const struct pool_reconciler *r);
/* Without asking etcd: a domain this agent started has ended here. */
bool pool_reconcile_needed(struct pool_reconciler *r, const struct lodge *lg);

/* The rule between lodge.conf's pool timings (README.md, "Fencing"):
 * 0, or -EINVAL with why naming the keys. */
int pool_timing_check(const struct host_config *hc, char *why, size_t whylen);

/* lodge.conf under the root with its pool_* lines (etcd, host, prefix
 * and access's pool_cacert, pool_cert, pool_key, pool_user,
 * pool_password_file where set) replaced by these (etcd NULL: removed,
 * the host leaves; prefix NULL: left at its default), written whole
 * under a new name and renamed over it: 0 or -errno with why.  The
 * result is read back as lodge.conf is; if it does not load, the old
 * file stays. */
int pool_conf_write(const char *etcd, const char *host, const char *prefix, const struct host_config *access,
		    char *why, size_t whylen);

/* ---- the pool agent (agent.c) ------------------------------------------------------------- */

/* Run this host's agent until it leaves the pool (0) or a signal ends it
 * (0: its lease is left to expire, see README.md), or it cannot go on
 * (-errno with why).  lg: this host's Lodge. */
int pool_agent_run(const struct lodge *lg, struct pool *p, char *why, size_t whylen);

#endif
