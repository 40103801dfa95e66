/* Live migration in a pool (README.md, "Migration's hand-over"): the
 * command asks for it (domains/D/migrate = HOST), the owner's agent moves
 * the guest with lodge_migrate from a child of its own and, once the
 * guest runs there, moves ownership in one transaction; every agent takes
 * migrations with a receiver of lodge.conf's, run in a child. */
#include "pool.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "log.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- the command's side ------------------------------------------------------------------ */

int pool_domain_migrate(struct pool *p, const char *name, const char *to, char from[DOMAIN_NAME_MAX], char *why,
			size_t whylen)
{
	char kowner[POOL_KEY_MAX], kplace[POOL_KEY_MAX], kmigrate[POOL_KEY_MAX];
	const struct pool_domain *d = NULL;
	const struct pool_host *h;
	struct pool_view v;
	unsigned i;
	bool ok;
	int rc;

	if (!domain_name_valid(name))
		return -ENOENT;
	if ((rc = pool_view_read(p, &v, why, whylen)))
		return rc;
	for (i = 0; i < v.ndomains && !d; i++)
		if (strcmp(v.domain[i].name, name) == 0 && v.domain[i].desired != POOL_DESIRED_NONE)
			d = &v.domain[i];
	rc = 0;
	if (!d) {
		rc = -ENOENT;                  /* not the pool's: a local domain */
	} else if (!d->owner[0] || d->desired != POOL_DESIRED_RUNNING) {
		snprintf(why, whylen, "%s does not run in the pool (%s)", name, pool_desired_name(d->desired));
		rc = -EINVAL;
	} else if (strcmp(d->owner, to) == 0) {
		snprintf(why, whylen, "%s runs on %s already", name, to);
		rc = -EALREADY;
	} else if (d->migrate[0]) {
		snprintf(why, whylen, "%s is being migrated to %s", name, d->migrate);
		rc = -EBUSY;
	} else if (!(h = pool_choose(&v, d->memory_mib, to, NULL, why, whylen))) {
		rc = -EHOSTUNREACH;            /* not up, or no room: why says which */
	} else if (!h->migrate[0]) {
		snprintf(why, whylen, "host %s takes no migrations (its lodge.conf has no migration_secret_file)", to);
		rc = -EHOSTUNREACH;
	}
	if (rc == 0)
		snprintf(from, DOMAIN_NAME_MAX, "%s", d->owner);
	if (rc || !d) {
		pool_view_free(&v);
		return rc;
	}
	pool_key(p, kowner, "domains/%s/owner", name);
	pool_key(p, kplace, "domains/%s/placement", name);
	pool_key(p, kmigrate, "domains/%s/migrate", name);
	{
		/* still owned and placed as seen, no migration asked meanwhile */
		struct etcd_cmp cmp[3] = { ETCD_VALUE_IS(kowner, from), ETCD_VALUE_IS(kplace, d->placement),
					   ETCD_ABSENT(kmigrate) };
		struct etcd_op put = ETCD_PUT_OP(kmigrate, to, 0);

		rc = etcd_txn(p->etcd, cmp, 3, &put, 1, NULL, 0, &ok, why, whylen);
	}
	pool_view_free(&v);
	if (rc == 0 && !ok) {
		snprintf(why, whylen, "%s changed in the pool meanwhile; try again", name);
		rc = -EAGAIN;
	}
	return rc;
}

int pool_migrate_wait(struct pool *p, const char *name, const char *to, unsigned timeout_ms, char *why,
		      size_t whylen)
{
	uint64_t end = now_ms() + timeout_ms;
	char prefix[POOL_KEY_MAX];
	struct etcd_kvs kvs;
	int rc;

	pool_key(p, prefix, "domains/%s/", name);
	char last_owner[DOMAIN_NAME_MAX] = "";

	for (;;) {
		const struct etcd_kv *owner, *migrate, *state;
		const char *s_host, *came, *w;
		enum domain_state s_state;
		char key[POOL_KEY_MAX];
		json_t *o;

		if ((rc = etcd_range(p->etcd, prefix, true, &kvs, why, whylen)))
			return rc;
		owner = etcd_kvs_find(&kvs, pool_key(p, key, "domains/%s/owner", name));
		migrate = etcd_kvs_find(&kvs, pool_key(p, key, "domains/%s/migrate", name));
		state = etcd_kvs_find(&kvs, pool_key(p, key, "domains/%s/state", name));
		o = state ? json_loads(state->value, 0, NULL) : NULL;
		s_host = json_string_value(json_object_get(o, "host"));
		s_state = pool_reported_state(o, DOMAIN_STATE_UNKNOWN);
		came = json_string_value(json_object_get(o, "came"));
		w = json_string_value(json_object_get(o, "why"));
		/* Migrated: owned by TO, its running copy there handed over
		 * or claimed; never a fresh boot of an HA restart. */
		if (owner && strcmp(owner->value, to) == 0 && s_host && strcmp(s_host, to) == 0 &&
		    (s_state == DOMAIN_STATE_RUNNING || s_state == DOMAIN_STATE_PAUSED)) {
			if (came && strcmp(came, POOL_CAME_MIGRATION) == 0)
				rc = 0;
			else
				rc = -EIO, snprintf(why, whylen, "%s was not migrated to %s: its source was lost "
						    "mid-migration and %s booted it anew (HA restart)", name, to, to);
			json_decref(o);
			etcd_kvs_free(&kvs);
			return rc;
		}
		if (!migrate && !(owner && strcmp(owner->value, to) == 0)) {
			/* given up: the source says why in the domain's state */
			if (came && strcmp(came, POOL_CAME_HA_RESTART) == 0 && owner)
				snprintf(why, whylen, "%s was not migrated to %s: its source was lost mid-migration and "
					 "%s booted it anew (HA restart)", name, to, owner->value);
			else
				snprintf(why, whylen, "%s was not migrated to %s%s%s", name, to, w ? ": " : "",
					 w ? w : "");
			json_decref(o);
			etcd_kvs_free(&kvs);
			return -EIO;
		}
		snprintf(last_owner, sizeof(last_owner), "%s", owner ? owner->value : "");
		json_decref(o);
		etcd_kvs_free(&kvs);
		if (now_ms() >= end) {
			if (!last_owner[0])
				snprintf(why, whylen, "%s: the migration to %s has not ended after %u s: the pool's "
					 "record names no owner yet", name, to, timeout_ms / 1000);
			else if (strcmp(last_owner, to))
				snprintf(why, whylen, "%s: the migration to %s has not ended after %u s: the pool's "
					 "record still names %s", name, to, timeout_ms / 1000, last_owner);
			else
				snprintf(why, whylen, "%s: the pool names %s its owner, but %s has not reported it "
					 "running after %u s", name, to, to, timeout_ms / 1000);
			return -ETIMEDOUT;
		}
		usleep(100000);
	}
}

/* ---- the agent's side -------------------------------------------------------------------- */

void pool_test_die_at(const char *point, const char *name, pid_t agent)
{
	const char *at = getenv("LODGE_POOL_TEST_DIE_AT");

	if (!at || strcmp(at, point) || !cfg_root()[0])
		return;
	if (agent <= 1 || (agent != getpid() && agent != getppid()))
		return;
	log_warn("%s: LODGE_POOL_TEST_DIE_AT=%s: this agent dies here", name, point);
	kill(agent, SIGKILL);
}

pid_t pool_migrate_start(const struct lodge *lg, const char *name, const char *dest, int *why_fd)
{
	struct lodge_migrate_opts o = { .secret_file = NULL };
	struct lodge_migrate_result res;
	struct lodge_err err;
	pid_t pid, agent = getpid();
	int fds[2];

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	if ((pid = fork())) {
		close(fds[1]);
		if (pid < 0)
			close(fds[0]);
		else
			*why_fd = fds[0];
		return pid;                    /* the agent, or -1 */
	}
	/* The child: the guest, nothing of the agent's etcd connections (it
	 * keeps the why pipe alone, as fd 3).  It ends with the agent: a
	 * migration nobody will hand over is aborted, and the guest runs on
	 * here. */
	if (dup2(fds[1], 3) != 3)
		_exit(2);
	close_range(4, ~0U, 0);
	fds[1] = 3;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	if (lodge_migrate(lg, name, dest, &o, &res, &err)) {
		log_warn("%s: migration to %s failed: %s", name, dest, err.msg);
		/* the agent's record of it, for lodge migrate to print */
		if (write(fds[1], err.msg, strlen(err.msg)) < 0)
			_exit(2);
		_exit(1);
	}
	/* The guest runs there now; its agent not told yet (tests only). */
	pool_test_die_at("before-claim", name, agent);
	log_info("%s: migrated to %s in %ld ms, downtime %.2f ms", name, res.peer, res.ms, res.downtime_us / 1000.0);
	_exit(0);
}

int pool_migrate_end(struct pool *p, const char *name, const char *to, bool moved, const char *failed,
		     int64_t my_lease, char *why, size_t whylen)
{
	char kowner[POOL_KEY_MAX], kplace[POOL_KEY_MAX], kmigrate[POOL_KEY_MAX], kstate[POOL_KEY_MAX];
	char khost[POOL_KEY_MAX];
	struct etcd_kvs kvs;
	int64_t lease = 0;
	bool ok;
	int rc;

	pool_key(p, kowner, "domains/%s/owner", name);
	pool_key(p, kplace, "domains/%s/placement", name);
	pool_key(p, kmigrate, "domains/%s/migrate", name);
	pool_key(p, kstate, "domains/%s/state", name);
	if (!moved) {
		struct etcd_cmp mine = ETCD_VALUE_IS(kowner, p->host);
		struct etcd_op ops[2] = { ETCD_DEL_OP(kmigrate) };
		json_t *o = json_pack("{s:s, s:s, s:s}", "state", domain_state_name(DOMAIN_STATE_RUNNING), "host", p->host, "why",
				      failed && failed[0] ? failed : "the migration failed");
		char *state = o ? json_dumps(o, JSON_COMPACT) : NULL;

		json_decref(o);
		if (!state)
			return -ENOMEM;
		ops[1] = (struct etcd_op)ETCD_PUT_OP(kstate, state, my_lease);
		rc = etcd_txn(p->etcd, &mine, 1, ops, 2, NULL, 0, &ok, why, whylen);
		free(state);
		return rc;
	}
	/* The guest runs there now: ownership goes with it, under the
	 * receiving host's lease, in one transaction (README.md). */
	pool_key(p, khost, "hosts/%s", to);
	if ((rc = etcd_range(p->etcd, khost, false, &kvs, why, whylen)))
		return rc;
	if (kvs.n == 1)
		lease = kvs.kv[0].lease;
	etcd_kvs_free(&kvs);
	{
		struct etcd_cmp cmp[2] = { ETCD_VALUE_IS(kowner, p->host), ETCD_VALUE_IS(kmigrate, to) };
		struct etcd_op ops[4] = { ETCD_PUT_OP(kowner, to, lease), ETCD_PUT_OP(kplace, to, 0),
					  ETCD_DEL_OP(kmigrate), ETCD_DEL_OP(kstate) };
		/* Its host gone meanwhile (no lease): owner left absent, placed
		 * there, so that host claims it if it comes back, and the
		 * domain is shown lost (or restarted, HA) if not. */
		struct etcd_op lost[3] = { ETCD_DEL_OP(kowner), ETCD_PUT_OP(kplace, to, 0), ETCD_DEL_OP(kmigrate) };

		rc = lease ? etcd_txn(p->etcd, cmp, 2, ops, 4, NULL, 0, &ok, why, whylen)
			   : etcd_txn(p->etcd, cmp, 2, lost, 3, NULL, 0, &ok, why, whylen);
	}
	if (rc == 0 && !ok) {
		snprintf(why, whylen, "%s: moved to %s, but its keys changed meanwhile", name, to);
		rc = -EAGAIN;
	}
	return rc;
}

static void received(enum lodge_recv_event e, const char *name, const char *peer, const char *text, void *arg)
{
	if (e == LODGE_RECV_RECEIVED)
		log_info("%s: received from %s", name, peer);
	else if (text)
		log_warn("migration receiver: %s", text);
}

pid_t pool_receiver_start(const struct lodge *lg)
{
	struct lodge_receiver_opts o = { .listen = NULL, .event = received };
	struct lodge_receiver *r;
	struct lodge_err err;
	char where[256];
	pid_t pid;

	if (!lg->hc.migration_secret_file[0])
		return 0;                      /* no secret: no TCP listener (the library's rule) */
	if ((pid = fork()))
		return pid;
	close_range(3, ~0U, 0);            /* the agent's etcd connections stay its own */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	if (lodge_receiver_open(lg, &o, &r, where, sizeof(where), &err)) {
		log_warn("this host takes no migrations: %s", err.msg);
		_exit(1);
	}
	log_info("taking migrations on %s", where);
	for (;;)
		if (lodge_receiver_run(r, &err)) {
			log_warn("migration receiver: %s", err.msg);
			sleep(1);
		}
}
