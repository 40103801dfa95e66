/* The agent makes its host match the pool (README.md, "The agent"),
 * level-triggered: every pass reads the whole pool and this host's
 * running domains and acts on the difference, so a lost watch event or
 * a restart of the agent costs nothing but a pass. */
#include "pool.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#include <jansson.h>

#include "log.h"

/* A domain whose start failed here is tried again after this long. */
#define RETRY_MS 30000
/* An HA domain that ended by a crash or a death is started again at
 * once; again within STABLE_MS of that start, after a delay that doubles
 * from BACKOFF_MIN_MS up to BACKOFF_MAX_MS (one that dies at every start
 * costs the host little); a boot that lasted STABLE_MS starts it over. */
#define RESTART_STABLE_MS      60000
#define RESTART_BACKOFF_MIN_MS 1000
#define RESTART_BACKOFF_MAX_MS 60000

struct seen {
	char name[DOMAIN_NAME_MAX];
	bool started;                      /* this agent started it and saw it run */
	uint64_t retry_at;                 /* its start failed: not before then */
	bool reported;                     /* a state was written to etcd under this boot's watch: */
	enum domain_state reported_state;  /* the last */
	int64_t reported_lease;            /* ... under this lease (a new one: written again) */
	uint64_t lost_since;               /* HA, its host lost: when this agent saw it */
	bool ha;                           /* as its config in the pool says */
	bool fence_paused;                 /* paused by the fence, to unpause if etcd comes back in time */
	pid_t migrating;                   /* its migration's child (migrate.c), 0: none */
	char migrate_to[DOMAIN_NAME_MAX];  /* where that one goes; kept until handed over */
	bool moved;                        /* it went there: the hand-over is still to write */
	bool told_gone;                    /* said: asked to move, not running here */
	uint64_t shutdown_at;              /* asked to power off then (desired stopped), 0: not */
	int shutdown_pid;                  /* the boot asked (its lodge-hyp child: another is a new boot) */
	int why_fd;                        /* the child's why, if it failed */
	char failed[LODGE_ERR_MAX];
	uint64_t boot_at;                  /* when this agent saw its boot begin */
	uint64_t restart_at;               /* HA, ended: started again then, 0: not waiting */
	unsigned restarts;                 /* HA restarts in a row, each boot shorter than RESTART_STABLE_MS */
	char ended[192];                   /* how its last boot here ended, for lodge list --pool */
	char reported_ended[192];          /* ... as last written */
	bool expecting;                    /* asked to move here (domains/D/migrate), another's */
	bool incoming;                     /* ... and its copy runs here: fed until it is ours */
	char came[16];                     /* how this host came to own it (POOL_CAME_*) */
	char reported_came[16];
};

struct pool_reconciler {
	uint64_t wake_at;                  /* a pass is due then (an HA restart's delay), 0: none */
	unsigned n;
	struct seen s[POOL_DOMAINS_MAX];
};

struct pool_reconciler *pool_reconciler_new(void)
{
	return calloc(1, sizeof(struct pool_reconciler));
}

void pool_reconciler_free(struct pool_reconciler *r)
{
	free(r);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct seen *seen_of(struct pool_reconciler *r, const char *name)
{
	unsigned i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->s[i].name, name) == 0)
			return &r->s[i];
	if (r->n == POOL_DOMAINS_MAX)
		return NULL;
	memset(&r->s[r->n], 0, sizeof(r->s[r->n]));
	snprintf(r->s[r->n].name, sizeof(r->s[r->n].name), "%s", name);
	return &r->s[r->n++];
}

static const struct lodge_status *running_here(const struct lodge_list *l, const char *name)
{
	unsigned i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->dom[i].name, name) == 0)
			return &l->dom[i];
	return NULL;
}

/* domains/D/state under the lease: {"state": word, "host": H[, "why": ...]} */
static void report(struct pool *p, struct seen *s, int64_t lease, enum domain_state state, const char *why_text)
{
	char key[POOL_KEY_MAX], why[ETCD_WHY_MAX], *text;
	json_t *o;

	if (!why_text && s->reported && s->reported_state == state && s->reported_lease == lease &&
	    strcmp(s->reported_ended, s->ended) == 0 && strcmp(s->reported_came, s->came) == 0)
		return;
	o = json_pack("{s:s, s:s}", "state", domain_state_name(state), "host", p->host);
	if (o && why_text)
		json_object_set_new(o, "why", json_string(why_text));
	if (o && s->ended[0])
		json_object_set_new(o, "ended", json_string(s->ended));
	if (o && s->came[0])
		json_object_set_new(o, "came", json_string(s->came));
	text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!text)
		return;
	pool_key(p, key, "domains/%s/state", s->name);
	if (etcd_put(p->etcd, key, text, lease, why, sizeof(why)))
		log_warn("%s: cannot report it %s: %s", s->name, domain_state_name(state), why);
	else {
		s->reported = true;
		s->reported_state = state;
		snprintf(s->reported_ended, sizeof(s->reported_ended), "%s", s->ended);
		snprintf(s->reported_came, sizeof(s->reported_came), "%s", s->came);
		s->reported_lease = lease;
	}
	free(text);
}

/* Owner no more: the owner key (if still ours), the state unless kept
 * (a failure for lodge create to read) and desired if given, at once. */
static void release(struct pool *p, const char *name, enum pool_desired desired, bool keep_state)
{
	char kowner[POOL_KEY_MAX], kstate[POOL_KEY_MAX], kdesired[POOL_KEY_MAX], why[ETCD_WHY_MAX];
	struct etcd_cmp mine;
	struct etcd_op ops[3];
	unsigned n = 0;
	bool ok;

	pool_key(p, kowner, "domains/%s/owner", name);
	pool_key(p, kstate, "domains/%s/state", name);
	pool_key(p, kdesired, "domains/%s/desired", name);
	mine = (struct etcd_cmp)ETCD_VALUE_IS(kowner, p->host);
	ops[n++] = (struct etcd_op)ETCD_DEL_OP(kowner);
	if (!keep_state)
		ops[n++] = (struct etcd_op)ETCD_DEL_OP(kstate);
	if (desired != POOL_DESIRED_NONE)
		ops[n++] = (struct etcd_op)ETCD_PUT_OP(kdesired, pool_desired_name(desired), 0);
	if (etcd_txn(p->etcd, &mine, 1, ops, n, NULL, 0, &ok, why, sizeof(why)))
		log_warn("%s: cannot give up its ownership: %s", name, why);
}

/* Claim D: only if nobody owns it, it is placed here and is to run. */
static bool claim(struct pool *p, const struct pool_domain *d, int64_t lease)
{
	char kowner[POOL_KEY_MAX], kplace[POOL_KEY_MAX], kdesired[POOL_KEY_MAX], why[ETCD_WHY_MAX];
	struct etcd_cmp cmp[3];
	struct etcd_op put;
	struct etcd_kvs kvs;
	bool ok = false;

	pool_key(p, kowner, "domains/%s/owner", d->name);
	pool_key(p, kplace, "domains/%s/placement", d->name);
	pool_key(p, kdesired, "domains/%s/desired", d->name);
	cmp[0] = (struct etcd_cmp)ETCD_ABSENT(kowner);
	cmp[1] = (struct etcd_cmp)ETCD_VALUE_IS(kplace, p->host);
	cmp[2] = (struct etcd_cmp)ETCD_VALUE_IS(kdesired, pool_desired_name(POOL_DESIRED_RUNNING));
	put = (struct etcd_op)ETCD_PUT_OP(kowner, p->host, lease);
	if (etcd_txn(p->etcd, cmp, 3, &put, 1, NULL, 0, &ok, why, sizeof(why))) {
		log_warn("%s: cannot claim it: %s", d->name, why);
		return false;
	}
	if (!ok && etcd_range(p->etcd, kowner, false, &kvs, why, sizeof(why)) == 0) {
		/* ours already: the answer to the first try was lost */
		ok = kvs.n == 1 && strcmp(kvs.kv[0].value, p->host) == 0 && kvs.kv[0].lease == lease;
		etcd_kvs_free(&kvs);
	}
	return ok;
}

/* An HA domain of a lost host becomes this one's: only if nobody owns
 * it and it is still placed where it was (another host took it first). */
static bool take_over(struct pool *p, const struct pool_domain *d, int64_t lease)
{
	char kowner[POOL_KEY_MAX], kplace[POOL_KEY_MAX], kdesired[POOL_KEY_MAX], kmigrate[POOL_KEY_MAX];
	char why[ETCD_WHY_MAX];
	struct etcd_cmp cmp[3];
	struct etcd_op put[3];
	bool ok = false;

	pool_key(p, kowner, "domains/%s/owner", d->name);
	pool_key(p, kplace, "domains/%s/placement", d->name);
	pool_key(p, kdesired, "domains/%s/desired", d->name);
	pool_key(p, kmigrate, "domains/%s/migrate", d->name);
	cmp[0] = (struct etcd_cmp)ETCD_ABSENT(kowner);
	cmp[1] = (struct etcd_cmp)ETCD_VALUE_IS(kplace, d->placement);
	cmp[2] = (struct etcd_cmp)ETCD_VALUE_IS(kdesired, pool_desired_name(POOL_DESIRED_RUNNING));
	put[0] = (struct etcd_op)ETCD_PUT_OP(kplace, p->host, 0);
	put[1] = (struct etcd_op)ETCD_PUT_OP(kowner, p->host, lease);
	put[2] = (struct etcd_op)ETCD_DEL_OP(kmigrate);     /* a migration its old host never ended */
	if (etcd_txn(p->etcd, cmp, 3, put, 3, NULL, 0, &ok, why, sizeof(why)))
		log_warn("%s: cannot take it over: %s", d->name, why);
	else if (ok)
		log_info("%s: HA: host %s is lost; %s takes the domain over", d->name, d->placement, p->host);
	return ok;
}

/* A guest that came here by migration while its source could not hand
 * it over (its lease ended first): this host's, if nobody owns it and
 * the request still names this host. */
static bool claim_incoming(struct pool *p, const struct pool_domain *d, int64_t lease)
{
	char kowner[POOL_KEY_MAX], kplace[POOL_KEY_MAX], kmigrate[POOL_KEY_MAX], why[ETCD_WHY_MAX];
	struct etcd_cmp cmp[2];
	struct etcd_op put[3];
	bool ok = false;

	pool_key(p, kowner, "domains/%s/owner", d->name);
	pool_key(p, kplace, "domains/%s/placement", d->name);
	pool_key(p, kmigrate, "domains/%s/migrate", d->name);
	cmp[0] = (struct etcd_cmp)ETCD_ABSENT(kowner);
	cmp[1] = (struct etcd_cmp)ETCD_VALUE_IS(kmigrate, p->host);
	put[0] = (struct etcd_op)ETCD_PUT_OP(kowner, p->host, lease);
	put[1] = (struct etcd_op)ETCD_PUT_OP(kplace, p->host, 0);
	put[2] = (struct etcd_op)ETCD_DEL_OP(kmigrate);
	if (etcd_txn(p->etcd, cmp, 2, put, 3, NULL, 0, &ok, why, sizeof(why)))
		log_warn("%s: cannot claim it: %s", d->name, why);
	else if (ok)
		log_info("%s: migrated here, its source gone before the hand-over: %s's now", d->name, p->host);
	return ok;
}

/* The owner's side of lodge migrate: the child started (or the request
 * given up: its host not up, or no fork). */
static void migrate_out(struct pool_view *v, const struct lodge *lg, struct pool *p, const struct pool_domain *d,
			struct seen *s, int64_t lease)
{
	const struct pool_host *h = pool_view_host(v, d->migrate);
	char why[ETCD_WHY_MAX];

	if (h && pool_host_state(h) == POOL_HOST_UP && h->migrate[0] &&
	    (s->migrating = pool_migrate_start(lg, d->name, h->migrate, &s->why_fd)) > 0) {
		log_info("%s: migrating to %s at %s", d->name, d->migrate, h->migrate);
		snprintf(s->migrate_to, sizeof(s->migrate_to), "%s", d->migrate);
		return;
	}
	s->migrating = 0;
	log_warn("%s: cannot migrate it to %s: %s", d->name, d->migrate,
		 !h || !h->live ? "that host is not up" : "it takes no migrations");
	if (pool_migrate_end(p, d->name, d->migrate, false, !h || !h->live ? "that host is not up" :
			     "it takes no migrations", lease, why, sizeof(why)))
		log_warn("%s", why);
}

bool pool_migrating(const struct pool_reconciler *r)
{
	unsigned i;

	for (i = 0; i < r->n; i++)
		if (r->s[i].migrating > 0 || r->s[i].migrate_to[0])
			return true;
	return false;
}

bool pool_migrations_poll(struct pool_reconciler *r, struct pool *p, int64_t lease)
{
	char why[ETCD_WHY_MAX];
	bool any = false;
	unsigned i;
	int status;

	for (i = 0; i < r->n; i++) {
		struct seen *s = &r->s[i];

		if (s->migrating > 0) {
			if (waitpid(s->migrating, &status, WNOHANG) != s->migrating)
				continue;
			s->migrating = 0;
			s->moved = WIFEXITED(status) && WEXITSTATUS(status) == 0;
			s->failed[0] = '\0';
			if (s->why_fd > 0) {
				ssize_t n = read(s->why_fd, s->failed, sizeof(s->failed) - 1);

				s->failed[n > 0 ? n : 0] = '\0';
				close(s->why_fd);
				s->why_fd = 0;
			}
			if (WIFSIGNALED(status))
				log_warn("%s: its migration's process ended by signal %d", s->name, WTERMSIG(status));
			if (s->moved) {
				/* gone from here: neither fed nor reported as ended */
				s->started = false;
				s->fence_paused = false;
				s->reported = false;
			}
		} else if (!s->migrate_to[0]) {
			continue;
		}
		any = true;
		if (s->moved)
			pool_test_die_at("before-handover", s->name, getpid());
		/* a hand-over etcd did not take is tried again at the next poll */
		if (pool_migrate_end(p, s->name, s->migrate_to, s->moved, s->failed, lease, why, sizeof(why))) {
			log_warn("%s: %s", s->name, why);
			if (s->moved)
				continue;
		} else if (s->moved) {
			log_info("%s: handed over to %s", s->name, s->migrate_to);
			pool_test_die_at("after-handover", s->name, getpid());
		}
		s->migrate_to[0] = '\0';
		s->moved = false;
	}
	return any;
}

/* An HA domain whose host is lost (README.md, "HA"): the host the
 * placement rule picks takes it pool_restart_delay after this agent saw
 * it lost; any other host a lease TTL later still, if nobody has (the
 * chosen one may be dead too). */
static bool ha_restart(struct pool_reconciler *r, struct pool_view *v, const struct lodge *lg, struct pool *p,
		       const struct pool_domain *d, struct seen *s, int64_t lease)
{
	const struct host_config *hc = &lg->hc;
	const struct pool_host *h = pool_view_host(v, d->placement), *to;
	char why[ETCD_WHY_MAX];
	uint64_t now = now_ms(), due;

	if (!d->ha || d->owner[0] || d->desired != POOL_DESIRED_RUNNING || !d->placement[0] ||
	    strcmp(d->placement, p->host) == 0 || (h && h->live)) {
		s->lost_since = 0;
		return false;
	}
	if (!s->lost_since) {
		s->lost_since = now;
		log_info("%s: its host %s is lost; HA restart in %u s", d->name, d->placement,
			 hc->pool_restart_delay_s);
	}
	to = pool_choose(v, d->memory_mib, NULL, d->placement, why, sizeof(why));
	due = s->lost_since + hc->pool_restart_delay_s * 1000ull;
	if (!to || strcmp(to->name, p->host))
		due += hc->pool_lease_ttl_s * 1000ull;
	if (now < due || now < s->retry_at) {
		uint64_t at = due > s->retry_at ? due : s->retry_at;

		if (!r->wake_at || at < r->wake_at)
			r->wake_at = at;
		return false;
	}
	return take_over(p, d, lease);
}

static void start(struct pool *p, const struct lodge *lg, struct seen *s, int64_t lease)
{
	static struct domain_config dc;
	char file[CFG_PATH_MAX], err[LODGE_ERR_MAX + 64], why[ETCD_WHY_MAX];
	struct lodge_err lerr;
	char *text;
	int rc;

	if ((rc = pool_domain_spec(p, s->name, &text, file, sizeof(file), why, sizeof(why)))) {
		snprintf(err, sizeof(err), "%s", why);
	} else {
		rc = pool_config_admit(lg, s->name, file, text, &dc, err, sizeof(err));
		free(text);
		if (rc == 0 && (rc = lodge_create(lg, &dc, 0, &lerr)))
			snprintf(err, sizeof(err), "%s", lerr.msg);
	}
	if (rc) {
		log_warn("%s: cannot start it here: %s", s->name, err);
		report(p, s, lease, DOMAIN_STATE_FAILED, err);
		release(p, s->name, POOL_DESIRED_NONE, true);
		s->retry_at = now_ms() + RETRY_MS;
		return;
	}
	log_info("%s: started on %s", s->name, p->host);
	s->started = true;
	s->boot_at = now_ms();
	s->restart_at = 0;
	report(p, s, lease, DOMAIN_STATE_RUNNING, NULL);
}

/* The HA domain ended by a crash or death: started again now, or after
 * the backoff if its last boot was short: when. */
static uint64_t restart_due(struct seen *s)
{
	uint64_t now = now_ms(), delay = 0;

	if (s->boot_at && now - s->boot_at < RESTART_STABLE_MS) {
		if (s->restarts) {
			delay = RESTART_BACKOFF_MIN_MS;
			for (unsigned i = 1; i < s->restarts && delay < RESTART_BACKOFF_MAX_MS; i++)
				delay *= 2;
			if (delay > RESTART_BACKOFF_MAX_MS)
				delay = RESTART_BACKOFF_MAX_MS;
		}
		s->restarts++;
	} else {
		s->restarts = 1;
	}
	return now + delay;
}

/* Owned, to run, not running here: started, unless an HA restart's
 * backoff still runs (reported "restarting", a pass due at its end). */
static void start_when_due(struct pool_reconciler *r, struct pool *p, const struct lodge *lg, struct seen *s,
			   int64_t lease)
{
	if (s->restart_at > now_ms()) {
		if (!r->wake_at || s->restart_at < r->wake_at)
			r->wake_at = s->restart_at;
		report(p, s, lease, DOMAIN_STATE_RESTARTING, NULL);
		return;
	}
	start(p, lg, s, lease);
}

/* Who asked for D's stop (domains/D/stop-by), for this agent's log line. */
static const char *asked_by(const struct pool_domain *d, char *out, size_t len)
{
	if (!d->stop_host[0])
		return "asked";
	snprintf(out, len, "asked on host %s%s%s", d->stop_host, d->stop_via[0] ? " via " : "", d->stop_via);
	return out;
}

/* Desired stopped, the guest still here (README.md, "Stopping"): asked
 * to power off once (lodge shutdown), destroyed when the stop says so
 * (lodge destroy), when it came back after its power-off (on_poweroff
 * restart: the admin's stop wins) or shutdown_timeout after the asking.
 * True while it is left to end by itself: the pass after its end lets
 * it go.  Its lodge-hyp is told the asker's face (the event log's via=),
 * as if the asker had stopped it here. */
static bool stopping(struct pool_reconciler *r, const struct lodge *lg, struct pool *p, const struct pool_domain *d,
		     const struct lodge_status *st, struct seen *s, int64_t lease)
{
	bool destroy = strcmp(d->stop, POOL_STOP_DESTROY) == 0;
	uint64_t now = now_ms(), end;
	struct lodge_err err;
	char by[DOMAIN_NAME_MAX + PROTO_FACE_MAX + 32];
	int rc;

	if (!destroy && !s->shutdown_at) {
		s->shutdown_at = now;
		s->shutdown_pid = st->pid;
		lodge_set_face(d->stop_via);
		rc = lodge_shutdown(lg, d->name, 0, &err);
		lodge_set_face("");
		if (rc) {
			log_warn("%s: cannot ask it to power off: %s; destroyed", d->name, err.msg);
			destroy = true;
		} else {
			log_info("%s: asked to power off on %s (%s; destroyed in %u s if it has not)", d->name, p->host,
				 asked_by(d, by, sizeof(by)), lg->hc.shutdown_timeout_s);
			s->started = true;         /* its end wakes the loop (pool_reconcile_needed) */
			report(p, s, lease, DOMAIN_STATE_STOPPING, NULL);
		}
	}
	end = s->shutdown_at + lg->hc.shutdown_timeout_s * 1000ull;
	if (!destroy && st->pid != s->shutdown_pid) {
		log_info("%s: powered off and started again (its on_poweroff); stopped as asked: destroyed",
			 d->name);
		destroy = true;
	} else if (!destroy && now >= end) {
		log_warn("%s: still running %u s after it was asked to power off: destroyed", d->name,
			 lg->hc.shutdown_timeout_s);
		destroy = true;
	}
	if (!destroy) {
		if (!r->wake_at || end < r->wake_at)
			r->wake_at = end;
		return true;
	}
	lodge_set_face(d->stop_via);
	rc = lodge_destroy(lg, d->name, &err);
	lodge_set_face("");
	if (rc)
		log_warn("%s", err.msg);
	else if (strcmp(d->stop, POOL_STOP_DESTROY) == 0)
		log_info("%s: destroyed on %s (%s)", d->name, p->host, asked_by(d, by, sizeof(by)));
	return false;
}

void pool_fence(struct pool_reconciler *r, const struct lodge *lg, enum pool_fence_step step)
{
	struct lodge_err err;
	unsigned i;

	for (i = 0; i < r->n; i++) {
		struct seen *s = &r->s[i];

		if (!s->ha || (!s->started && !s->incoming))
			continue;
		switch (step) {
		case POOL_FENCE_PAUSE:
			if (s->fence_paused)
				break;
			if (lodge_pause(lg, s->name, &err)) {
				struct lodge_status st;

				if (lodge_status(lg, s->name, &st, &err) != -ENOENT) {
					log_warn("fence: %s: %s", s->name, err.msg);
					break;
				}
				/* the agent came back from a stall: its watchdog was first */
				log_warn("fence: %s had already ended by its watchdog (this agent had not fed it "
					 "in time); nothing left to fence here", s->name);
				s->started = false;
				s->incoming = false;
				s->reported = false;
				break;
			} else
				log_warn("fence: %s paused: this host cannot renew its lease", s->name);
			s->fence_paused = true;
			break;
		case POOL_FENCE_DESTROY:
			if (lodge_destroy(lg, s->name, &err)) {
				struct lodge_status st;

				/* its watchdog, fed the same deadline, may have been first */
				if (lodge_status(lg, s->name, &st, &err) == -ENOENT)
					log_warn("fence: %s ended by its own watchdog at the fence deadline, as this "
						 "agent would have destroyed it: its lease may end before this host "
						 "reaches etcd again", s->name);
				else
					log_warn("fence: %s: %s", s->name, err.msg);
			} else
				log_warn("fence: %s destroyed: its lease may end before this host reaches etcd again",
					 s->name);
			s->started = false;
			s->incoming = false;
			s->fence_paused = false;
			s->reported = false;
			break;
		case POOL_FENCE_RESUME:
			if (!s->fence_paused)
				break;
			if (lodge_unpause(lg, s->name, &err))
				log_warn("fence: %s", err.msg);
			else
				log_info("fence: %s runs again: the lease was renewed in time", s->name);
			s->fence_paused = false;
			break;
		}
	}
}

void pool_feed(struct pool_reconciler *r, const struct lodge *lg, uint64_t deadline_ms)
{
	struct lodge_err err;
	unsigned i;
	int rc;

	/* one that ended meanwhile (-ENOENT) is the next pass's */
	for (i = 0; i < r->n; i++)
		if (r->s[i].ha && (r->s[i].started || r->s[i].incoming) && !r->s[i].fence_paused &&
		    (rc = lodge_watchdog(lg, r->s[i].name, deadline_ms, &err)) && rc != -ENOENT)
			log_warn("%s", err.msg);
}

bool pool_reconcile_due(const struct pool_reconciler *r)
{
	return r->wake_at && now_ms() >= r->wake_at;
}

bool pool_reconcile_needed(struct pool_reconciler *r, const struct lodge *lg)
{
	struct lodge_list l;
	struct lodge_err err;
	bool changed = false;
	unsigned i;

	if (r->wake_at && now_ms() >= r->wake_at)
		return true;
	if (lodge_list(lg, &l, &err))
		return true;
	for (i = 0; i < r->n && !changed; i++) {
		const struct lodge_status *st = running_here(&l, r->s[i].name);

		/* ended; or asked to power off, and a new boot (stopping());
		 * or a copy coming in by migration that no pass has seen yet
		 * (its watchdog is to be fed from now on) */
		changed = (r->s[i].started && !st) || (r->s[i].shutdown_at && st && st->pid != r->s[i].shutdown_pid) ||
			  (r->s[i].expecting && !r->s[i].incoming && st);
	}
	lodge_list_free(&l);
	return changed;
}

int pool_reconcile(struct pool_reconciler *r, const struct lodge *lg, struct pool *p, int64_t lease, char *why,
		   size_t whylen)
{
	struct lodge_list l;
	struct lodge_err err;
	struct pool_view v;
	unsigned i;
	int rc;

	r->wake_at = 0;
	if ((rc = pool_view_read(p, &v, why, whylen)))
		return rc;
	if ((rc = lodge_list(lg, &l, &err))) {
		snprintf(why, whylen, "%s", err.msg);
		pool_view_free(&v);
		return rc;
	}
	for (i = 0; i < v.ndomains; i++) {
		const struct pool_domain *d = &v.domain[i];
		const struct lodge_status *st = running_here(&l, d->name);
		struct seen *s = seen_of(r, d->name);
		bool mine = strcmp(d->owner, p->host) == 0, was_coming;

		/* keys without a desired state are no domain of Lodge's (half
		 * written, or another tool's): left alone */
		if (!s || d->desired == POOL_DESIRED_NONE)
			continue;
		s->ha = d->ha;
		/* A migration under way, or its hand-over still to write:
		 * pool_migrations_poll's. */
		if (s->migrating || s->migrate_to[0])
			continue;
		/* A copy coming in by migration: its source owns it until the
		 * hand-over, its own transaction.  Until then this agent feeds
		 * its watchdog (the copy is the only one: lodge_migrate ends
		 * the source before the receiver runs it), so that a source
		 * that dies before its hand-over leaves it running for this
		 * host to claim when the source's lease ends. */
		was_coming = s->expecting || s->incoming;
		s->expecting = strcmp(d->migrate, p->host) == 0 && !mine;
		if (st && s->expecting) {
			if (!s->incoming)
				log_info("%s: its copy runs here, coming in from %s; fed until it is handed over",
					 d->name, d->owner[0] ? d->owner : "a host that is gone");
			s->incoming = true;
			if (!d->owner[0] && claim_incoming(p, d, lease))
				snprintf(s->came, sizeof(s->came), "%s", POOL_CAME_MIGRATION);
			continue;
		}
		if (mine && st && was_coming && !s->started)
			snprintf(s->came, sizeof(s->came), "%s", POOL_CAME_MIGRATION);
		s->incoming = false;
		/* Never beside another host's copy. */
		if (st && d->owner[0] && !mine) {
			log_warn("%s: owned by %s: destroyed here", d->name, d->owner);
			if (lodge_destroy(lg, d->name, &err))
				log_warn("%s", err.msg);
			s->started = false;
			continue;
		}
		if (!mine && !d->owner[0] && d->desired == POOL_DESIRED_RUNNING &&
		    strcmp(d->placement, p->host) == 0 && now_ms() >= s->retry_at &&
		    (mine = claim(p, d, lease)))
			snprintf(s->came, sizeof(s->came), "%s", POOL_CAME_START);
		if (!mine && (mine = ha_restart(r, &v, lg, p, d, s, lease)))
			snprintf(s->came, sizeof(s->came), "%s", POOL_CAME_HA_RESTART);
		/* Only the owner runs a domain: a copy here that the pool has
		 * placed elsewhere or wants stopped goes (a claim that failed
		 * for want of an answer is no reason: it is tried again). */
		if (!mine && st && ((d->placement[0] && strcmp(d->placement, p->host)) ||
				    d->desired != POOL_DESIRED_RUNNING)) {
			log_warn("%s: %s, not owned here: destroyed here", d->name,
				 d->desired != POOL_DESIRED_RUNNING ? "to be stopped" : "placed on another host");
			if (lodge_destroy(lg, d->name, &err))
				log_warn("%s", err.msg);
			s->started = false;
			continue;
		}
		if (!mine)
			continue;
		if (d->migrate[0] && d->desired == POOL_DESIRED_RUNNING) {
			if (st)
				migrate_out(&v, lg, p, d, s, lease);
			else if (!s->told_gone)   /* moved or not: never started again here */
				log_warn("%s: asked to move to %s, but it does not run here", d->name, d->migrate);
			s->told_gone = !st;
			continue;
		}
		if (d->desired != POOL_DESIRED_RUNNING) {
			if (st && stopping(r, lg, p, d, st, s, lease))
				continue;
			log_info("%s: stopped on %s", d->name, p->host);
			release(p, d->name, POOL_DESIRED_NONE, false);
			s->started = false;
			s->shutdown_at = 0;
			s->reported = false;
			s->ended[0] = '\0';
			s->restart_at = 0;
			s->restarts = 0;
		} else if (!st && s->started) {
			/* It ended by itself here: an HA one that crashed or died
			 * runs again (README.md, "Stopping"), else it is stopped. */
			const struct pool_boot_end *e = pool_boot_ended(lg, d->name);
			char when[16];
			time_t t = time(NULL);

			strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
			s->started = false;
			if (d->ha && e->restart) {
				s->restart_at = restart_due(s);
				snprintf(s->ended, sizeof(s->ended), "%s at %s; restarted by %s (%u in a row)", e->says,
					 when, p->host, s->restarts);
				if (s->restart_at > now_ms())
					log_warn("%s: HA: ended on %s: %s; started again in %llu s (restart %u in a row)",
						 d->name, p->host, e->says,
						 (unsigned long long)(s->restart_at - now_ms() + 999) / 1000, s->restarts);
				else
					log_info("%s: HA: ended on %s: %s; started again", d->name, p->host, e->says);
				start_when_due(r, p, lg, s, lease);
				continue;
			}
			snprintf(s->ended, sizeof(s->ended), "%s at %s", e->says, when);
			log_info("%s: ended on %s: %s; %s", d->name, p->host, e->says,
				 d->ha ? "recorded stopped (HA restarts follow crashes, not stops)" : "recorded stopped");
			release(p, d->name, POOL_DESIRED_STOPPED, false);
			s->reported = false;
			s->restarts = 0;
		} else if (!st) {
			start_when_due(r, p, lg, s, lease);
		} else {
			if (!s->started)
				s->boot_at = now_ms();
			s->started = true;
			report(p, s, lease, st->state, NULL);
		}
	}
	log_debug("reconciled: %u domains in the pool, %u here", v.ndomains, l.n);
	lodge_list_free(&l);
	pool_view_free(&v);
	return 0;
}
