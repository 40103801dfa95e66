/* The pool agent (README.md, "The agent"): this host's record in the
 * pool under a lease it keeps alive, and a watch on the pool's keys.
 *
 * This layer registers, renews and republishes, notices when the lease
 * is gone (registers anew) and when the host has left (pool-leave: ends).
 * Claiming and starting domains, fencing and the watchdog are the next
 * layers (README.md, "Layers and status"). */
#include "pool.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "version.h"

/* Republish the host's record (its free memory) every this many renewals. */
#define PUBLISH_EVERY 10

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct agent {
	const struct lodge *lg;
	struct pool *p;
	const struct host_config *hc;
	int64_t lease;
	unsigned ttl_ms;                   /* the lease's TTL */
	uint64_t renewed_at;               /* when the last renewal that etcd granted was sent */
	bool cut_off;                      /* renewals fail: said once */
	bool fenced;                       /* the deadline passed while cut off: HA domains destroyed */
	bool left;                         /* members/H is gone: pool-leave */
	/* What hosts/H says besides up (README.md, "Keys"): fenced from the
	 * fence deadline until the first reconcile once back; leaving once
	 * pool-leave said so in the record (kept by every republish). */
	bool rejoining, leaving;
	pid_t receiver;                    /* lodge.conf's migration receiver (migrate.c), 0: none */
	bool dirty;                        /* the pool changed: reconcile */
	struct pool_reconciler *rec;
	unsigned renewals;
	struct etcd_watch *watch;
	int64_t watch_from;
	char key_host[POOL_KEY_MAX], key_member[POOL_KEY_MAX];
};

static void host_record(const struct agent *a, struct pool_host *h)
{
	struct lodge_host_info hi;

	memset(h, 0, sizeof(*h));
	lodge_host_info(&hi);
	snprintf(h->name, sizeof(h->name), "%s", a->p->host);
	h->state = a->rejoining ? POOL_HOST_FENCED : a->leaving ? POOL_HOST_LEAVING : POOL_HOST_UP;
	h->cpus = hi.ncpus;
	h->mem_total_mib = hi.mem_total_mib;
	h->mem_avail_mib = hi.mem_avail_mib;
	/* where the others send migrations: lodge.conf's listener, which
	 * must be an address they reach */
	if (a->receiver > 0)
		snprintf(h->migrate, sizeof(h->migrate), "%s", a->hc->migration_listen);
	snprintf(h->version, sizeof(h->version), "%s", LODGE_VERSION);
}

static int publish(struct agent *a, char *why, size_t whylen)
{
	struct pool_host h;
	char *json;
	int rc;

	host_record(a, &h);
	if (!(json = pool_host_json(&h)))
		return -ENOMEM;
	rc = etcd_put(a->p->etcd, a->key_host, json, a->lease, why, whylen);
	free(json);
	return rc;
}

/* A lease, and hosts/H bound to it; while another agent's record holds
 * the name (this host's agent killed and started again within a TTL),
 * wait for its lease to end: two agents never speak for one host. */
static int enroll_once(struct agent *a, bool *said, char *why, size_t whylen);

/* etcd not answering is no reason to end: tried again, said once. */
static int enroll(struct agent *a, char *why, size_t whylen)
{
	bool said = false, told = false;
	int rc;

	while ((rc = enroll_once(a, &said, why, whylen)) && rc != -ENOENT && rc != -EINTR && rc != -ENOMEM) {
		if (!told)
			log_warn("host %s cannot join the pool yet: %s; trying again", a->p->host, why);
		told = true;
		if (stop_signal)
			return -EINTR;
		sleep(1);
	}
	return rc;
}

static int enroll_once(struct agent *a, bool *said_waiting, char *why, size_t whylen)
{
	struct etcd_kvs kvs;
	bool ok;
	int rc;

	for (;;) {
		struct pool_host h;
		char *json;
		struct etcd_cmp cmp[2] = { ETCD_ABSENT(a->key_host), ETCD_PRESENT(a->key_member) };
		struct etcd_op put;

		if (stop_signal)
			return -EINTR;
		if ((rc = etcd_range(a->p->etcd, a->key_member, false, &kvs, why, whylen)))
			return rc;
		ok = kvs.n == 1;
		etcd_kvs_free(&kvs);
		if (!ok) {
			snprintf(why, whylen, "host %s is not in the pool at %s (lodge pool-join)", a->p->host,
				 etcd_endpoint(a->p->etcd));
			return -ENOENT;
		}
		if (!a->lease && (rc = etcd_lease_grant(a->p->etcd, a->hc->pool_lease_ttl_s, &a->lease, why, whylen)))
			return rc;
		a->renewed_at = now_ms();
		host_record(a, &h);
		if (!(json = pool_host_json(&h)))
			return -ENOMEM;
		put = ETCD_PUT_OP(a->key_host, json, a->lease);
		rc = etcd_txn(a->p->etcd, cmp, 2, &put, 1, NULL, 0, &ok, why, whylen);
		free(json);
		if (rc)
			return rc;
		if (!ok && (rc = etcd_range(a->p->etcd, a->key_host, false, &kvs, why, whylen)) == 0) {
			/* ours already: an answer lost and the txn sent again */
			ok = kvs.n == 1 && kvs.kv[0].lease == a->lease;
			etcd_kvs_free(&kvs);
		}
		if (ok) {
			log_info("host %s is up in the pool at %s (lease %" PRIx64 ", %u s)", a->p->host,
				 etcd_endpoint(a->p->etcd), (uint64_t)a->lease, a->hc->pool_lease_ttl_s);
			return 0;
		}
		if (!*said_waiting)
			log_info("host %s: another agent's record is in the pool; waiting for its lease to end",
				 a->p->host);
		*said_waiting = true;
		sleep(1);
	}
}

static void on_event(const struct etcd_event *ev, void *arg)
{
	struct agent *a = arg;

	if (ev->deleted && strcmp(ev->key, a->key_member) == 0)
		a->left = true;
	/* pool-leave's word in our record, or its taking it back */
	if (!ev->deleted && strcmp(ev->key, a->key_host) == 0 && ev->lease == a->lease) {
		struct pool_host h;

		if (pool_host_parse(ev->value, &h) == 0 && !a->rejoining)
			a->leaving = h.state == POOL_HOST_LEAVING;
	}
	a->dirty = true;
}

/* The watch on the pool's keys, opened (again) where it stopped. */
static void watch(struct agent *a, int timeout_ms)
{
	char why[ETCD_WHY_MAX], prefix[POOL_KEY_MAX];
	int rc;

	if (!a->watch && a->cut_off) {
		/* opening one could take seconds: not while the deadline runs */
		usleep((useconds_t)timeout_ms * 1000);
		return;
	}
	if (!a->watch) {
		pool_key(a->p, prefix, "%s", "");
		if (!(a->watch = etcd_watch_open(a->p->etcd, prefix, a->watch_from, why, sizeof(why)))) {
			if (!a->cut_off)
				log_warn("%s", why);
			usleep((useconds_t)timeout_ms * 1000);
			return;
		}
	}
	rc = etcd_watch_poll(a->watch, timeout_ms, on_event, a, why, sizeof(why));
	a->watch_from = etcd_watch_next(a->watch);
	if (rc) {
		if (!a->cut_off)
			log_warn("%s; watching again from revision %" PRId64, why, a->watch_from);
		etcd_watch_close(a->watch);
		a->watch = NULL;
	}
}

/* One renewal: its time recorded when etcd granted it (README.md,
 * "Fencing": the lease lasts at least TTL from the moment it was sent). */
static int renew(struct agent *a, char *why, size_t whylen)
{
	uint64_t sent = now_ms(), fence_at = a->renewed_at + a->hc->pool_fence_deadline_s * 1000ull;
	unsigned ms = a->ttl_ms / 3;
	int64_t ttl = 0;
	int rc;

	/* Never past the fence deadline: the loop must be there to keep it. */
	if (!a->fenced && fence_at > sent && fence_at - sent < ms)
		ms = (unsigned)(fence_at - sent);
	if (ms < 100)
		ms = 100;
	etcd_set_deadline(a->p->etcd, ms, ms / 2 ? ms / 2 : 1);
	rc = etcd_lease_keepalive(a->p->etcd, a->lease, &ttl, why, whylen);
	etcd_set_deadline(a->p->etcd, 5000, 2000);
	if (rc) {
		if (!a->cut_off) {
			log_warn("host %s cannot renew its lease: %s", a->p->host, why);
			pool_cut_off_note(a->hc, time(NULL) - (time_t)((now_ms() - a->renewed_at) / 1000));
		}
		a->cut_off = true;
		pool_fence(a->rec, a->lg, POOL_FENCE_PAUSE);
		return 0;
	}
	if (a->cut_off) {
		log_info("host %s reaches etcd again at %s", a->p->host, etcd_endpoint(a->p->etcd));
		pool_cut_off_note(a->hc, 0);
	}
	if (a->cut_off && ttl > 0 && !a->fenced)
		pool_fence(a->rec, a->lg, POOL_FENCE_RESUME);
	/* Fenced: shown so until it has reconciled (the loop says up then). */
	if (a->fenced) {
		a->rejoining = true;
		a->dirty = true;
	}
	a->cut_off = false;
	a->fenced = false;
	if (ttl == 0) {
		log_warn("host %s: its lease has expired; joining anew", a->p->host);
		a->lease = 0;
		a->dirty = true;
		return enroll(a, why, whylen);
	}
	a->renewed_at = sent;
	pool_feed(a->rec, a->lg, sent + a->hc->pool_fence_deadline_s * 1000ull);
	if (a->rejoining || ++a->renewals % PUBLISH_EVERY == 0) {
		if ((rc = publish(a, why, whylen)))
			log_warn("host %s cannot publish its record: %s", a->p->host, why);
		/* what no event tells: a guest that ended here */
		a->dirty = true;
	}
	return 0;
}

int pool_agent_run(const struct lodge *lg, struct pool *p, char *why, size_t whylen)
{
	struct agent a = { .lg = lg, .p = p, .hc = &lg->hc };
	struct sigaction sa = { .sa_handler = on_stop };
	char reason[ETCD_WHY_MAX];
	uint64_t next, wait_ms;
	int rc;

	if ((rc = pool_timing_check(a.hc, why, whylen)))
		return rc;
	a.ttl_ms = a.hc->pool_lease_ttl_s * 1000;
	pool_key(p, a.key_host, "hosts/%s", p->host);
	pool_key(p, a.key_member, "members/%s", p->host);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (!(a.rec = pool_reconciler_new())) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	if ((rc = enroll(&a, why, whylen))) {
		pool_reconciler_free(a.rec);
		return rc == -EINTR ? 0 : rc;
	}
	pool_cut_off_note(a.hc, 0);        /* an older agent's, if it was cut off */
	a.dirty = true;
	next = a.renewed_at + a.ttl_ms / 3;
	if ((a.receiver = pool_receiver_start(lg)) < 0) {
		log_warn("host %s takes no migrations: %s", p->host, strerror(errno));
		a.receiver = 0;
	}
	if (a.receiver && (rc = publish(&a, reason, sizeof(reason))))
		log_warn("host %s cannot publish its record: %s", p->host, reason);
	rc = 0;
	while (!stop_signal && !a.left) {
		uint64_t now = now_ms();

		/* Whatever the loop asks etcd, it is back in time to keep the
		 * fence deadline (README.md, "Fencing"). */
		etcd_set_hard_end(p->etcd, a.fenced ? 0 : a.renewed_at + a.hc->pool_fence_deadline_s * 1000ull - 200);
		/* The deadline: fence_deadline after the last renewal etcd granted. */
		if (a.cut_off && !a.fenced && now >= a.renewed_at + a.hc->pool_fence_deadline_s * 1000ull) {
			pool_fence(a.rec, lg, POOL_FENCE_DESTROY);
			a.fenced = true;
		}
		if (now >= next) {
			if ((rc = renew(&a, why, whylen)))
				break;
			if (!a.dirty && pool_reconcile_needed(a.rec, lg))
				a.dirty = true;
			next = now + a.ttl_ms / 3;
			continue;
		}
		if (!a.dirty && pool_reconcile_due(a.rec))
			a.dirty = true;
		if (!a.cut_off && pool_migrations_poll(a.rec, p, a.lease))
			a.dirty = true;
		if (a.receiver && waitpid(a.receiver, NULL, WNOHANG) == a.receiver) {
			a.receiver = 0;            /* said why in the log; the record says no more */
			if (publish(&a, reason, sizeof(reason)))
				log_warn("host %s cannot publish its record: %s", p->host, reason);
		}
		if (a.dirty && !a.cut_off) {
			a.dirty = false;
			if (pool_reconcile(a.rec, lg, p, a.lease, reason, sizeof(reason))) {
				log_warn("%s", reason);
				a.dirty = true;
			} else if (a.rejoining) {
				/* what runs elsewhere now is gone from here: up again */
				a.rejoining = false;
				if (publish(&a, reason, sizeof(reason)))
					log_warn("host %s cannot publish its record: %s", p->host, reason);
				else
					log_info("host %s: fenced, reconciled, up again in the pool", p->host);
			}
			/* what it started is held to the same deadline at once */
			pool_feed(a.rec, lg, a.renewed_at + a.hc->pool_fence_deadline_s * 1000ull);
			continue;
		}
		/* a migration's end is looked for often: its hand-over closes it */
		wait_ms = pool_migrating(a.rec) ? 50 : 500;
		watch(&a, (int)(next - now < wait_ms ? next - now : wait_ms));
	}
	etcd_watch_close(a.watch);
	pool_reconciler_free(a.rec);
	if (a.receiver > 0) {
		kill(a.receiver, SIGTERM);
		waitpid(a.receiver, NULL, 0);
	}
	if (rc)
		return rc == -EINTR ? 0 : rc;
	if (a.left) {
		/* Its record goes now, not a TTL later. */
		if (etcd_lease_revoke(p->etcd, a.lease, reason, sizeof(reason)))
			log_warn("%s", reason);
		log_info("host %s has left the pool", p->host);
	} else {
		log_info("host %s: stopped by signal %d; its lease ends in %u s", p->host, (int)stop_signal,
			 a.hc->pool_lease_ttl_s);
	}
	return 0;
}
