/* The pool's keys and records (pool.h, src/pool/README.md). */
#include "pool.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

int pool_default_host(char name[DOMAIN_NAME_MAX], char *why, size_t whylen)
{
	char buf[256];

	if (gethostname(buf, sizeof(buf) - 1)) {
		snprintf(why, whylen, "cannot read this host's name: %s", strerror(errno));
		return -errno;
	}
	buf[sizeof(buf) - 1] = '\0';
	buf[strcspn(buf, ".")] = '\0';
	if (!domain_name_valid(buf)) {
		snprintf(why, whylen, "this host's name '%.64s' is not a pool host name (%s): give one with --host",
			 buf, domain_name_rule());
		return -EINVAL;
	}
	memcpy(name, buf, strlen(buf) + 1);   /* a valid name fits */
	return 0;
}

/* pool_password_file's first line, from a file only root reads (etcd.h's
 * etcd_password_fn: read again at each authentication). */
static int read_password(const char *path, char *out, size_t len, char *why, size_t whylen)
{
	FILE *f;
	int rc;

	if ((rc = cfg_root_only_file(path, why, whylen)))
		return rc;
	if (!(f = fopen(path, "re"))) {
		snprintf(why, whylen, "cannot read %s: %s", path, strerror(errno));
		return -errno;
	}
	if (!fgets(out, (int)len, f))
		out[0] = '\0';
	fclose(f);
	out[strcspn(out, "\r\n")] = '\0';
	if (!out[0]) {
		snprintf(why, whylen, "%s holds no password (its first line)", path);
		return -EINVAL;
	}
	return 0;
}

int pool_open(struct pool *p, const struct host_config *hc, const char *etcd, const char *host,
	      const char *prefix, char *why, size_t whylen)
{
	struct etcd_auth auth = { .cacert = hc->pool_cacert, .cert = hc->pool_cert, .key = hc->pool_key,
				  .user = hc->pool_user, .password_arg = hc->pool_password_file };
	char password[256] = "";
	int rc;

	memset(p, 0, sizeof(*p));
	if (!etcd)
		etcd = hc->pool_etcd;
	if (!*etcd) {
		snprintf(why, whylen, "this host is in no pool (lodge pool-join)");
		return -ENOENT;
	}
	snprintf(p->prefix, sizeof(p->prefix), "%s", prefix ? prefix : hc->pool_prefix);
	if (host) {
		if (!domain_name_valid(host)) {
			snprintf(why, whylen, "'%.64s' is not a pool host name: %s", host, domain_name_rule());
			return -EINVAL;
		}
		snprintf(p->host, sizeof(p->host), "%s", host);
	} else if (*hc->pool_host) {
		snprintf(p->host, sizeof(p->host), "%s", hc->pool_host);
	} else if ((rc = pool_default_host(p->host, why, whylen))) {
		return rc;
	}
	/* What proves this host to etcd is root's alone (lodge.conf's load
	 * checks it too; pool-join's options come here first). */
	if (*hc->pool_key && (rc = cfg_root_only_file(hc->pool_key, why, whylen)))
		return rc;
	if (*hc->pool_user && !*hc->pool_password_file) {
		snprintf(why, whylen, "etcd user %s has no password file (--password-file FILE, pool_password_file)",
			 hc->pool_user);
		return -EINVAL;
	}
	if (*hc->pool_password_file && !*hc->pool_user) {
		snprintf(why, whylen, "a password file without an etcd user (--user NAME, pool_user)");
		return -EINVAL;
	}
	if (*hc->pool_user && (rc = read_password(hc->pool_password_file, password, sizeof(password), why, whylen)))
		return rc;
	if (*hc->pool_user)
		auth.password = read_password;
	p->etcd = etcd_open(etcd, &auth, why, whylen);
	explicit_bzero(password, sizeof(password));
	return p->etcd ? 0 : -EINVAL;
}

void pool_close(struct pool *p)
{
	etcd_close(p->etcd);
	p->etcd = NULL;
}

const char *pool_key(const struct pool *p, char buf[POOL_KEY_MAX], const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(buf, POOL_KEY_MAX, "%s/", p->prefix);

	va_start(ap, fmt);
	vsnprintf(buf + n, POOL_KEY_MAX - (size_t)n, fmt, ap);
	va_end(ap);
	return buf;
}

/* ---- records -------------------------------------------------------------------------- */

static const char *const desired_words[POOL_DESIRED_COUNT] = {
	[POOL_DESIRED_NONE] = "",
	[POOL_DESIRED_RUNNING] = "running",
	[POOL_DESIRED_STOPPED] = "stopped",
	[POOL_DESIRED_UNKNOWN] = "?",
};

const char *pool_desired_name(enum pool_desired d)
{
	return (unsigned)d < POOL_DESIRED_COUNT ? desired_words[d] : desired_words[POOL_DESIRED_UNKNOWN];
}

/* domains/D/desired's word (from etcd: anyone's): running or stopped as
 * the commands write them, any other unknown. */
static enum pool_desired desired_of(const char *word)
{
	if (strcmp(word, desired_words[POOL_DESIRED_RUNNING]) == 0)
		return POOL_DESIRED_RUNNING;
	if (strcmp(word, desired_words[POOL_DESIRED_STOPPED]) == 0)
		return POOL_DESIRED_STOPPED;
	return POOL_DESIRED_UNKNOWN;
}

/* in_record: a word hosts/H may hold (its agent's, pool-leave's); lost
 * is the key gone, never a record's word. */
static const struct {
	const char *word;
	bool in_record;
} host_states[POOL_HOST_NSTATES] = {
	[POOL_HOST_UP] = { "up", true },
	[POOL_HOST_FENCED] = { "fenced", true },
	[POOL_HOST_LEAVING] = { "leaving", true },
	[POOL_HOST_LOST] = { "lost", false },
	[POOL_HOST_UNKNOWN] = { "?", false },
};

const char *pool_host_state_name(enum pool_host_state s)
{
	return (unsigned)s < POOL_HOST_NSTATES ? host_states[s].word : host_states[POOL_HOST_UNKNOWN].word;
}

/* hosts/H's word (from etcd: anyone's): one a record may hold, up if none
 * (as an agent's record before it said), else unknown. */
static enum pool_host_state host_state_of(const json_t *word)
{
	unsigned i;

	if (!json_is_string(word) || !json_string_value(word)[0])
		return POOL_HOST_UP;
	for (i = 0; i < POOL_HOST_NSTATES; i++)
		if (host_states[i].in_record && strcmp(json_string_value(word), host_states[i].word) == 0)
			return (enum pool_host_state)i;
	return POOL_HOST_UNKNOWN;
}

char *pool_host_json(const struct pool_host *h)
{
	json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:s, s:s}", "name", h->name, "state",
			      pool_host_state_name(h->state),
			      "cpus", (json_int_t)h->cpus, "mem_total_mib", (json_int_t)h->mem_total_mib,
			      "mem_avail_mib", (json_int_t)h->mem_avail_mib, "migrate", h->migrate,
			      "version", h->version);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	return s;
}

static void copy_str(json_t *o, const char *name, char *out, size_t len)
{
	json_t *v = json_object_get(o, name);

	snprintf(out, len, "%s", json_is_string(v) ? json_string_value(v) : "");
}

static unsigned long get_ulong(json_t *o, const char *name)
{
	json_t *v = json_object_get(o, name);

	return json_is_integer(v) && json_integer_value(v) > 0 ? (unsigned long)json_integer_value(v) : 0;
}

int pool_host_parse(const char *text, struct pool_host *h)
{
	json_t *o = json_loads(text, 0, NULL);

	if (!json_is_object(o)) {
		json_decref(o);
		return -EPROTO;
	}
	copy_str(o, "name", h->name, sizeof(h->name));
	h->state = host_state_of(json_object_get(o, "state"));
	copy_str(o, "migrate", h->migrate, sizeof(h->migrate));
	copy_str(o, "version", h->version, sizeof(h->version));
	h->cpus = (unsigned)get_ulong(o, "cpus");
	h->mem_total_mib = get_ulong(o, "mem_total_mib");
	h->mem_avail_mib = get_ulong(o, "mem_avail_mib");
	json_decref(o);
	return 0;
}

enum domain_state pool_reported_state(const json_t *report, enum domain_state none)
{
	const json_t *s = json_object_get(report, "state");

	return json_is_string(s) ? domain_state_of(json_string_value(s), DOMAIN_STATE_FROM_AGENT) : none;
}

enum domain_state pool_domain_state(struct pool_view *v, const struct pool_domain *d)
{
	json_t *report = json_loads(d->state, 0, NULL);
	enum domain_state s = pool_reported_state(report, DOMAIN_STATE_STARTING);
	const struct pool_host *h;

	json_decref(report);
	if (d->owner[0])
		return s;
	if (d->desired != POOL_DESIRED_RUNNING)
		return DOMAIN_STATE_STOPPED;
	h = pool_view_host(v, d->placement);
	if (!h || !h->live)
		return DOMAIN_STATE_LOST;
	/* its last owner could not start it, and let go */
	return s == DOMAIN_STATE_FAILED ? DOMAIN_STATE_FAILED : DOMAIN_STATE_PLACED;
}

const char *pool_domain_note(const struct pool_domain *d, char *buf, size_t len)
{
	json_t *o = json_loads(d->state, 0, NULL), *w = json_object_get(o, "why"), *e = json_object_get(o, "ended");

	buf[0] = '\0';
	if (json_is_string(w))
		snprintf(buf, len, "%s", json_string_value(w));
	else if (json_is_string(e))
		snprintf(buf, len, "last end: %s", json_string_value(e));
	json_decref(o);
	return buf;
}

#define POOL_CUT_OFF_FILE "pool-cut-off"

void pool_cut_off_note(const struct host_config *hc, time_t since)
{
	char path[CFG_PATH_MAX + 32], tmp[CFG_PATH_MAX + 40];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", hc->runtime_dir, POOL_CUT_OFF_FILE);
	if (!since) {
		unlink(path);
		return;
	}
	/* whole or not at all: written aside, renamed over */
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	if (!(f = fopen(tmp, "we")))
		return;
	fprintf(f, "%lld\n", (long long)since);
	if (fclose(f) || rename(tmp, path))
		unlink(tmp);
}

bool pool_cut_off_since(const struct host_config *hc, time_t *since)
{
	char path[CFG_PATH_MAX + 32];
	long long t = 0;
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "%s/%s", hc->runtime_dir, POOL_CUT_OFF_FILE);
	if (!(f = fopen(path, "re")))
		return false;
	ok = fscanf(f, "%lld", &t) == 1 && t > 0;
	fclose(f);
	*since = (time_t)t;
	return ok;
}

void pool_unanswered(struct pool *p, const struct host_config *hc, char *why, size_t whylen)
{
	char since[64] = "";
	time_t t;
	bool alone;

	etcd_set_deadline(p->etcd, 2000, 700);
	alone = etcd_answers_alone(p->etcd);
	if (pool_cut_off_since(hc, &t)) {
		struct tm tm;

		strftime(since, sizeof(since), " since %H:%M:%S (this host's last lease renewal)", localtime_r(&t, &tm));
	}
	snprintf(why, whylen, "the pool's etcd %s%s: its records may be stale and are not shown; nothing can be "
		 "placed, moved or stopped through it; every host pauses its HA domains and destroys them %u s after "
		 "its last renewal (fenced), other domains run on",
		 alone ? "has lost its quorum (its members answer, none can lead)" : "cannot be reached", since,
		 hc->pool_fence_deadline_s);
}

enum pool_host_state pool_host_state(const struct pool_host *h)
{
	return h->live ? h->state : POOL_HOST_LOST;
}

/* hosts/H's state rewritten by another process than H's agent (pool-leave),
 * under the record's own lease, if the record is unchanged meanwhile (the
 * agent republishes it): tried a few times. */
int pool_host_set_state(struct pool *p, enum pool_host_state state, bool *live, char *why, size_t whylen)
{
	char key[POOL_KEY_MAX];
	unsigned tries;
	int rc = 0;

	pool_key(p, key, "hosts/%s", p->host);
	*live = false;
	for (tries = 0; tries < 5; tries++) {
		struct etcd_kvs kvs;
		struct pool_host h = { .state = POOL_HOST_UP };
		struct etcd_cmp same = { .key = key, .target = ETCD_MOD };
		struct etcd_op put;
		char *json;
		bool ok;

		if ((rc = etcd_range(p->etcd, key, false, &kvs, why, whylen)))
			return rc;
		if (kvs.n != 1) {
			etcd_kvs_free(&kvs);
			return 0;                  /* no agent speaks for the host: nothing to say */
		}
		*live = true;
		if (pool_host_parse(kvs.kv[0].value, &h)) {
			etcd_kvs_free(&kvs);
			snprintf(why, whylen, "%s is not a host record", key);
			return -EPROTO;
		}
		h.state = state;
		same.number = kvs.kv[0].mod_revision;
		json = pool_host_json(&h);
		put = ETCD_PUT_OP(key, json, kvs.kv[0].lease);
		rc = json ? etcd_txn(p->etcd, &same, 1, &put, 1, NULL, 0, &ok, why, whylen) : -ENOMEM;
		free(json);
		etcd_kvs_free(&kvs);
		if (rc || ok)
			return rc;
	}
	snprintf(why, whylen, "%s keeps changing", key);
	return -EAGAIN;
}

/* ---- the whole pool at one revision ----------------------------------------------------- */

struct pool_host *pool_view_host(struct pool_view *v, const char *name)
{
	unsigned i;

	for (i = 0; i < v->nhosts; i++)
		if (strcmp(v->host[i].name, name) == 0)
			return &v->host[i];
	return NULL;
}

static struct pool_host *view_host_add(struct pool_view *v, const char *name)
{
	struct pool_host *h = pool_view_host(v, name);

	if (h || v->nhosts == POOL_HOSTS_MAX || !domain_name_valid(name))
		return h;
	h = &v->host[v->nhosts++];
	memset(h, 0, sizeof(*h));
	snprintf(h->name, sizeof(h->name), "%s", name);
	return h;
}

static struct pool_domain *view_domain(struct pool_view *v, const char *name)
{
	struct pool_domain *d;
	unsigned i;

	if (!domain_name_valid(name))
		return NULL;
	for (i = 0; i < v->ndomains; i++)
		if (strcmp(v->domain[i].name, name) == 0)
			return &v->domain[i];
	if (v->ndomains == POOL_DOMAINS_MAX)
		return NULL;
	if (!(d = realloc(v->domain, (v->ndomains + 1) * sizeof(*d))))
		return NULL;
	v->domain = d;
	d = &v->domain[v->ndomains++];
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	return d;
}

/* domains/D/config: {"text": the config, "memory_mib": N, "ha": bool} */
static void domain_spec(struct pool_domain *d, const char *value)
{
	json_t *o = json_loads(value, 0, NULL), *ha;

	d->memory_mib = get_ulong(o, "memory_mib");
	ha = json_object_get(o, "ha");
	d->ha = json_is_true(ha);
	json_decref(o);
}

/* domains/D/stop-by: {"host": H, "via": FACE}, from etcd: each kept only
 * if it is a host's name, a face's word. */
static void domain_stop_by(struct pool_domain *d, const char *value)
{
	json_t *o = json_loads(value, 0, NULL);
	const char *host = json_string_value(json_object_get(o, "host"));
	const char *via = json_string_value(json_object_get(o, "via"));

	if (host && domain_name_valid(host))
		snprintf(d->stop_host, sizeof(d->stop_host), "%s", host);
	if (via && strlen(via) <= PROTO_FACE_MAX && strspn(via, PROTO_FACE_CHARS) == strlen(via))
		snprintf(d->stop_via, sizeof(d->stop_via), "%s", via);
	json_decref(o);
}

static void view_add(struct pool_view *v, const char *rel, const struct etcd_kv *kv)
{
	char name[DOMAIN_NAME_MAX];
	const char *what;
	size_t n;

	if (strcmp(rel, "version") == 0) {
		snprintf(v->version, sizeof(v->version), "%s", kv->value);
	} else if (strncmp(rel, "members/", 8) == 0) {
		struct pool_host *h = view_host_add(v, rel + 8);

		if (h)
			h->member = true;
	} else if (strncmp(rel, "hosts/", 6) == 0) {
		struct pool_host *h = view_host_add(v, rel + 6);
		bool member = h && h->member;

		if (h && pool_host_parse(kv->value, h) == 0) {
			snprintf(h->name, sizeof(h->name), "%s", rel + 6);
			h->member = member;
			h->live = true;
			h->lease = kv->lease;
		}
	} else if (strncmp(rel, "domains/", 8) == 0 && (what = strchr(rel + 8, '/'))) {
		struct pool_domain *d;

		n = (size_t)(what - (rel + 8));
		if (n >= sizeof(name))
			return;
		memcpy(name, rel + 8, n);
		name[n] = '\0';
		if (!(d = view_domain(v, name)))
			return;
		what++;
		if (strcmp(what, "config") == 0)
			domain_spec(d, kv->value);
		else if (strcmp(what, "desired") == 0)
			d->desired = desired_of(kv->value);
		else if (strcmp(what, "placement") == 0)
			snprintf(d->placement, sizeof(d->placement), "%s", kv->value);
		else if (strcmp(what, "owner") == 0)
			snprintf(d->owner, sizeof(d->owner), "%s", kv->value);
		else if (strcmp(what, "migrate") == 0)
			snprintf(d->migrate, sizeof(d->migrate), "%s", kv->value);
		else if (strcmp(what, "stop") == 0)
			snprintf(d->stop, sizeof(d->stop), "%s", kv->value);
		else if (strcmp(what, "stop-by") == 0)
			domain_stop_by(d, kv->value);
		else if (strcmp(what, "state") == 0)
			snprintf(d->state, sizeof(d->state), "%s", kv->value);
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct pool_domain *)a)->name, ((const struct pool_domain *)b)->name);
}

static int host_by_name(const void *a, const void *b)
{
	return strcmp(((const struct pool_host *)a)->name, ((const struct pool_host *)b)->name);
}

int pool_view_read(struct pool *p, struct pool_view *v, char *why, size_t whylen)
{
	struct etcd_kvs kvs;
	char prefix[POOL_KEY_MAX];
	size_t plen;
	unsigned i, k;
	int rc;

	memset(v, 0, sizeof(*v));
	pool_key(p, prefix, "%s", "");
	plen = strlen(prefix);
	if ((rc = etcd_range(p->etcd, prefix, true, &kvs, why, whylen)))
		return rc;
	v->revision = kvs.revision;
	/* members first: a host's record keeps what members/ said */
	for (i = 0; i < kvs.n; i++)
		if (strncmp(kvs.kv[i].key + plen, "members/", 8) == 0)
			view_add(v, kvs.kv[i].key + plen, &kvs.kv[i]);
	for (i = 0; i < kvs.n; i++)
		if (strncmp(kvs.kv[i].key + plen, "members/", 8))
			view_add(v, kvs.kv[i].key + plen, &kvs.kv[i]);
	etcd_kvs_free(&kvs);
	for (i = 0; i < v->ndomains; i++)
		for (k = 0; k < v->nhosts; k++)
			if (strcmp(v->domain[i].placement, v->host[k].name) == 0 && v->domain[i].desired != POOL_DESIRED_STOPPED)
				v->host[k].committed_mib += v->domain[i].memory_mib;
	qsort(v->domain, v->ndomains, sizeof(*v->domain), by_name);
	qsort(v->host, v->nhosts, sizeof(*v->host), host_by_name);
	return 0;
}

void pool_view_free(struct pool_view *v)
{
	free(v->domain);
	memset(v, 0, sizeof(*v));
}

/* The best host for mib: up, room left, the most of it (ties by name). */
const struct pool_host *pool_choose(const struct pool_view *v, unsigned long mib, const char *on,
				    const char *except, char *why, size_t whylen)
{
	const struct pool_host *best = NULL;
	unsigned long best_free = 0;
	unsigned i;

	for (i = 0; i < v->nhosts; i++) {
		const struct pool_host *h = &v->host[i];
		unsigned long room = h->mem_total_mib > h->committed_mib ? h->mem_total_mib - h->committed_mib : 0;

		if ((on && strcmp(h->name, on)) || (except && strcmp(h->name, except) == 0))
			continue;
		if (pool_host_state(h) != POOL_HOST_UP) {
			if (on) {
				snprintf(why, whylen, "host %s is not up in the pool (%s)", on,
					 pool_host_state_name(pool_host_state(h)));
				return NULL;
			}
			continue;
		}
		if (room < mib || h->mem_avail_mib < mib) {
			if (on) {
				snprintf(why, whylen, "%lu MiB does not fit on host %s: %lu MiB left of %lu (%lu free now)",
					 mib, on, room, h->mem_total_mib, h->mem_avail_mib);
				return NULL;
			}
			continue;
		}
		if (!best || room > best_free) {
			best = h;
			best_free = room;
		}
	}
	if (!best) {
		if (on)
			snprintf(why, whylen, "no host %s in the pool", on);
		else
			snprintf(why, whylen, "%lu MiB fits on no host that is up in the pool", mib);
	}
	return best;
}

/* ---- lodge.conf --------------------------------------------------------------------------- */

int pool_timing_check(const struct host_config *hc, char *why, size_t whylen)
{
	unsigned t = hc->pool_lease_ttl_s, f = hc->pool_fence_deadline_s;

	/* One keepalive in three that is slow must not fence a healthy host. */
	if (3 * f < t + 3) {
		snprintf(why, whylen,
			 "lodge.conf: pool_fence_deadline (%u s) must be at least pool_lease_ttl / 3 + 1 (%.1f s): "
			 "one late renewal would fence a healthy host", f, t / 3.0 + 1);
		return -EINVAL;
	}
	/* The HA guests here end a second before the lease can end there. */
	if (f + 1 > t) {
		snprintf(why, whylen,
			 "lodge.conf: pool_fence_deadline (%u s) must be at most pool_lease_ttl - 1 (%u s): "
			 "another host could start an HA domain before this one has ended it", f, t - 1);
		return -EINVAL;
	}
	return 0;
}

static const char *const pool_conf_keys[] = { "pool_etcd", "pool_host", "pool_prefix", "pool_cacert", "pool_cert",
					     "pool_key", "pool_user", "pool_password_file" };

/* line sets one of the keys above (an active line, not a comment). */
static bool pool_conf_line(const char *line, size_t n)
{
	size_t i, k;

	while (n && (*line == ' ' || *line == '\t'))
		line++, n--;
	for (k = 0; k < sizeof(pool_conf_keys) / sizeof(pool_conf_keys[0]); k++) {
		size_t kl = strlen(pool_conf_keys[k]);

		if (n > kl && strncmp(line, pool_conf_keys[k], kl) == 0) {
			for (i = kl; i < n && (line[i] == ' ' || line[i] == '\t'); i++)
				;
			if (i < n && line[i] == '=')
				return true;
		}
	}
	return false;
}

static int write_whole(const char *path, const char *text, size_t n, mode_t mode, char *why, size_t whylen)
{
	char tmp[CFG_PATH_MAX + 16];
	FILE *f;
	int rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	if (!(f = fopen(tmp, "wx"))) {
		rc = -errno;
		snprintf(why, whylen, "%s: %s", tmp, strerror(errno));
		return rc;
	}
	if (fwrite(text, 1, n, f) != n || fchmod(fileno(f), mode) || fflush(f) || fsync(fileno(f)))
		rc = -errno;
	if (fclose(f) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc) {
		snprintf(why, whylen, "%s: %s", path, strerror(-rc));
		unlink(tmp);
	}
	return rc;
}

int pool_conf_write(const char *etcd, const char *host, const char *prefix, const struct host_config *access,
		    char *why, size_t whylen)
{
	char path[CFG_PATH_MAX + 16], dir[CFG_PATH_MAX], err[1024];
	char *old = NULL, *text = NULL, *p;
	size_t oldn = 0, n = 0, cap;
	struct stat st;
	mode_t mode = 0644;
	struct host_config *hc;
	FILE *f;
	int rc;

	if (snprintf(dir, sizeof(dir), "%s/etc/lodge", cfg_root()) >= (int)sizeof(dir) - 16) {
		snprintf(why, whylen, "--root %s: path too long", cfg_root());
		return -ENAMETOOLONG;
	}
	snprintf(path, sizeof(path), "%s/lodge.conf", dir);
	if ((f = fopen(path, "r"))) {
		char buf[4096];
		size_t got;

		if (fstat(fileno(f), &st) == 0)
			mode = st.st_mode & 07777;
		while ((got = fread(buf, 1, sizeof(buf), f)) > 0) {
			char *q = realloc(old, oldn + got + 1);

			if (!q) {
				fclose(f);
				free(old);
				return -ENOMEM;
			}
			old = q;
			memcpy(old + oldn, buf, got);
			oldn += got;
		}
		fclose(f);
	} else if (errno != ENOENT) {
		rc = -errno;
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return rc;
	} else {
		/* a fresh --root: its etc/lodge made as make install does */
		char *slash;

		for (slash = strchr(dir + 1, '/');; slash = strchr(slash + 1, '/')) {
			if (slash)
				*slash = '\0';
			if (mkdir(dir, 0755) && errno != EEXIST) {
				rc = -errno;
				snprintf(why, whylen, "%s: %s", dir, strerror(errno));
				return rc;
			}
			if (!slash)
				break;
			*slash = '/';
		}
	}
	cap = oldn + POOL_ETCD_MAX + POOL_PREFIX_MAX + 2 * DOMAIN_NAME_MAX + 4 * CFG_PATH_MAX + 512;
	if (!(text = malloc(cap))) {
		free(old);
		return -ENOMEM;
	}
	/* every line but the pool's own */
	for (p = old; p && p < old + oldn;) {
		char *eol = memchr(p, '\n', (size_t)(old + oldn - p));
		size_t len = eol ? (size_t)(eol - p) + 1 : (size_t)(old + oldn - p);

		if (!pool_conf_line(p, len)) {
			memcpy(text + n, p, len);
			n += len;
		}
		p += len;
	}
	if (n && text[n - 1] != '\n')
		text[n++] = '\n';
	if (etcd) {
		n += (size_t)snprintf(text + n, cap - n, "pool_etcd = \"%s\"\npool_host = \"%s\"\n", etcd, host);
		if (prefix)
			n += (size_t)snprintf(text + n, cap - n, "pool_prefix = \"%s\"\n", prefix);
	}
	if (etcd && access) {
		const struct { const char *key, *value; } lines[] = {
			{ "pool_cacert", access->pool_cacert }, { "pool_cert", access->pool_cert },
			{ "pool_key", access->pool_key }, { "pool_user", access->pool_user },
			{ "pool_password_file", access->pool_password_file },
		};
		size_t k;

		for (k = 0; k < sizeof(lines) / sizeof(lines[0]); k++)
			if (*lines[k].value)
				n += (size_t)snprintf(text + n, cap - n, "%s = \"%s\"\n", lines[k].key, lines[k].value);
	}
	if ((rc = write_whole(path, text, n, mode, why, whylen)))
		goto out;
	/* Read back as every command will: a file that does not load goes back. */
	if (!(hc = malloc(sizeof(*hc)))) {
		rc = -ENOMEM;
	} else if ((rc = host_config_load(hc, err, sizeof(err)))) {
		snprintf(why, whylen, "%s", err);
		if (old)
			write_whole(path, old, oldn, mode, err, sizeof(err));
		else
			unlink(path);
	}
	free(hc);
out:
	free(old);
	free(text);
	return rc;
}
