/* The pool's domains from the commands' side: placing one (README.md,
 * "Placement"), waiting for its owner to report it, forgetting it. */
#include "pool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

/* The file a name or path means, as lodge create reads it (start.c). */
static void config_path(const struct host_config *hc, const char *arg, char *path, size_t len)
{
	struct stat st;

	if (strchr(arg, '/') || (stat(arg, &st) == 0 && !S_ISDIR(st.st_mode)))
		snprintf(path, len, "%s", arg);
	else
		snprintf(path, len, "%s/%s.cfg", hc->domains_dir, arg);
}

static char *read_text(const char *path, size_t *len, char *why, size_t whylen)
{
	FILE *f = fopen(path, "r");
	char *text;
	long n;

	if (!f) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || n > (1 << 20) || fseek(f, 0, SEEK_SET)) {
		snprintf(why, whylen, "%s: not a config file (over 1 MiB or unreadable)", path);
		fclose(f);
		return NULL;
	}
	if (!(text = malloc((size_t)n + 1)) || fread(text, 1, (size_t)n, f) != (size_t)n) {
		snprintf(why, whylen, "%s: cannot read it", path);
		free(text);
		fclose(f);
		return NULL;
	}
	fclose(f);
	text[n] = '\0';
	*len = (size_t)n;
	return text;
}

/* key's value into buf: 1, 0 if absent (or unreadable: why has it). */
static int key_value(struct pool *p, const char *key, char *buf, size_t len)
{
	char why[ETCD_WHY_MAX];
	struct etcd_kvs kvs;
	int found;

	buf[0] = '\0';
	if (etcd_range(p->etcd, key, false, &kvs, why, sizeof(why)))
		return 0;
	if ((found = kvs.n == 1))
		snprintf(buf, len, "%s", kvs.kv[0].value);
	etcd_kvs_free(&kvs);
	return found;
}

static bool key_is(struct pool *p, const char *key, const char *value)
{
	char buf[64];

	return key_value(p, key, buf, sizeof(buf)) == 1 && strcmp(buf, value) == 0;
}

int pool_domain_known(struct pool *p, const char *name, char *why, size_t whylen)
{
	char key[POOL_KEY_MAX];
	struct etcd_kvs kvs;
	int rc;

	if (!domain_name_valid(name))
		return 0;
	pool_key(p, key, "domains/%s/config", name);
	if ((rc = etcd_range(p->etcd, key, false, &kvs, why, whylen)))
		return rc;
	rc = kvs.n > 0;
	etcd_kvs_free(&kvs);
	return rc;
}

int pool_domain_place(struct pool *p, const struct host_config *hc, const char *arg, const char *on,
		      char name[DOMAIN_NAME_MAX], char host[DOMAIN_NAME_MAX], char *why, size_t whylen)
{
	static struct domain_config dc;
	char path[CFG_PATH_MAX + 80], abspath[CFG_PATH_MAX + 80], err[1024];
	char kconfig[POOL_KEY_MAX], kdesired[POOL_KEY_MAX], kplace[POOL_KEY_MAX], khost[POOL_KEY_MAX];
	char kowner[POOL_KEY_MAX], kstop[POOL_KEY_MAX], kstopby[POOL_KEY_MAX];
	const struct pool_host *h;
	struct pool_view v;
	json_t *o;
	char *text, *spec;
	size_t len;
	bool ok;
	int rc;

	config_path(hc, arg, path, sizeof(path));
	if (!(text = read_text(path, &len, why, whylen)))
		return -ENOENT;
	/* The schema's checks here; the host's own (its memory, bridges) where it lands. */
	if (!realpath(path, abspath))
		snprintf(abspath, sizeof(abspath), "%s", path);
	if ((rc = domain_config_load_text(abspath, text, len, hc, false, &dc, err, sizeof(err)))) {
		snprintf(why, whylen, "%s", err);
		free(text);
		return rc;
	}
	snprintf(name, DOMAIN_NAME_MAX, "%s", dc.name);
	if ((rc = pool_view_read(p, &v, why, whylen))) {
		free(text);
		return rc;
	}
	h = pool_choose(&v, dc.memory_mib, on, NULL, why, whylen);
	if (h)
		snprintf(host, DOMAIN_NAME_MAX, "%s", h->name);
	pool_view_free(&v);
	if (!h) {
		free(text);
		return -ENOSPC;
	}
	o = json_pack("{s:s, s:s, s:I, s:I, s:b}", "text", text, "file", abspath, "memory_mib",
		      (json_int_t)dc.memory_mib, "vcpus", (json_int_t)dc.vcpus, "ha", dc.ha);
	free(text);
	spec = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!spec)
		return -ENOMEM;
	pool_key(p, kconfig, "domains/%s/config", name);
	pool_key(p, kdesired, "domains/%s/desired", name);
	pool_key(p, kplace, "domains/%s/placement", name);
	pool_key(p, kowner, "domains/%s/owner", name);
	pool_key(p, kstop, "domains/%s/stop", name);
	pool_key(p, kstopby, "domains/%s/stop-by", name);
	pool_key(p, khost, "hosts/%s", host);
	{
		/* The name free in the pool, the host still up: then all at once
		 * (an earlier stop's way forgotten). */
		struct etcd_cmp cmp[2] = { ETCD_ABSENT(kconfig), ETCD_PRESENT(khost) };
		struct etcd_op put[5] = { ETCD_PUT_OP(kconfig, spec, 0), ETCD_PUT_OP(kdesired, pool_desired_name(POOL_DESIRED_RUNNING), 0),
					  ETCD_PUT_OP(kplace, host, 0), ETCD_DEL_OP(kstop), ETCD_DEL_OP(kstopby) };
		/* A domain of the pool that was stopped starts again, its config
		 * as the file says now: only if still stopped and owned by none. */
		struct etcd_cmp again[3] = { ETCD_VALUE_IS(kdesired, pool_desired_name(POOL_DESIRED_STOPPED)), ETCD_ABSENT(kowner),
					     ETCD_PRESENT(khost) };

		rc = etcd_txn(p->etcd, cmp, 2, put, 5, NULL, 0, &ok, why, whylen);
		if (rc == 0 && !ok)
			rc = etcd_txn(p->etcd, again, 3, put, 5, NULL, 0, &ok, why, whylen);
	}
	free(spec);
	if (rc)
		return rc;
	if (!ok) {
		char owner[DOMAIN_NAME_MAX];

		if (pool_domain_known(p, name, why, whylen) == 1) {
			if (key_value(p, kowner, owner, sizeof(owner)) == 1)
				snprintf(why, whylen, "a domain %s is in the pool already (on host %s%s)", name, owner,
					 key_is(p, kdesired, pool_desired_name(POOL_DESIRED_STOPPED)) ? ", stopping: try again once it has stopped" : "");
			else
				snprintf(why, whylen, "a domain %s is in the pool already (not stopped)", name);
			return -EEXIST;
		}
		snprintf(why, whylen, "host %s left the pool meanwhile; try again", host);
		return -EAGAIN;
	}
	return 0;
}

int pool_stop_domain(const struct lodge *lg, const char *name, const char *how, unsigned timeout_ms, char *why,
		     size_t whylen)
{
	char pool_why[ETCD_WHY_MAX];
	struct lodge_status st;
	struct lodge_err err;
	struct pool p;
	int rc;

	if (!lg->hc.pool_etcd[0])
		return -ENOENT;                /* in no pool: a local domain */
	if ((rc = pool_open(&p, &lg->hc, NULL, NULL, NULL, why, whylen)))
		return rc;
	rc = pool_domain_stop(&p, name, how, timeout_ms, pool_why, sizeof(pool_why));
	pool_close(&p);
	if (rc == -ENOTCONN && lodge_status(lg, name, &st, &err) == 0) {
		snprintf(why, whylen, "the pool does not answer (%s): %s is stopped here only", pool_why, name);
		return POOL_STOP_HERE;
	}
	snprintf(why, whylen, "%s", pool_why);
	return rc;
}

int pool_domain_forget(struct pool *p, const char *name, char *why, size_t whylen)
{
	char key[POOL_KEY_MAX];

	pool_key(p, key, "domains/%s/", name);
	return etcd_delete(p->etcd, key, true, NULL, why, whylen);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int pool_domain_wait(struct pool *p, const char *name, unsigned timeout_ms, char *state, size_t statelen,
		     char *why, size_t whylen)
{
	uint64_t end = now_ms() + timeout_ms;
	char key[POOL_KEY_MAX];
	struct etcd_kvs kvs;
	int rc;

	pool_key(p, key, "domains/%s/state", name);
	for (;;) {
		if ((rc = etcd_range(p->etcd, key, false, &kvs, why, whylen)))
			return rc;
		if (kvs.n == 1) {
			json_t *o = json_loads(kvs.kv[0].value, 0, NULL), *w = json_object_get(o, "why");
			enum domain_state s = pool_reported_state(o, DOMAIN_STATE_UNKNOWN);

			snprintf(state, statelen, "%s", domain_state_name(s));
			if (s == DOMAIN_STATE_FAILED)
				snprintf(why, whylen, "%s", json_is_string(w) ? json_string_value(w) : state);
			json_decref(o);
			etcd_kvs_free(&kvs);
			if (s == DOMAIN_STATE_RUNNING || s == DOMAIN_STATE_PAUSED)
				return 0;
			if (s == DOMAIN_STATE_FAILED)
				return -EIO;
		} else {
			etcd_kvs_free(&kvs);
		}
		if (now_ms() >= end) {
			snprintf(why, whylen, "%s is not running yet after %u s", name, timeout_ms / 1000);
			return -ETIMEDOUT;
		}
		/* a start takes tens of ms: asked often in its first second */
		usleep(now_ms() + timeout_ms - end < 1000 ? 5000 : 100000);
	}
}

int pool_domain_spec(struct pool *p, const char *name, char **text, char *file, size_t filelen, char *why,
		     size_t whylen)
{
	char key[POOL_KEY_MAX];
	struct etcd_kvs kvs;
	json_t *o, *t, *f;
	int rc;

	pool_key(p, key, "domains/%s/config", name);
	if ((rc = etcd_range(p->etcd, key, false, &kvs, why, whylen)))
		return rc;
	if (kvs.n != 1) {
		etcd_kvs_free(&kvs);
		snprintf(why, whylen, "%s: no config in the pool", name);
		return -ENOENT;
	}
	o = json_loads(kvs.kv[0].value, 0, NULL);
	etcd_kvs_free(&kvs);
	t = json_object_get(o, "text");
	f = json_object_get(o, "file");
	if (!json_is_string(t) || !json_is_string(f)) {
		json_decref(o);
		snprintf(why, whylen, "%s: its config in the pool is not Lodge's", name);
		return -EPROTO;
	}
	*text = strdup(json_string_value(t));
	snprintf(file, filelen, "%s", json_string_value(f));
	json_decref(o);
	return *text ? 0 : -ENOMEM;
}

int pool_domain_stop(struct pool *p, const char *name, const char *how, unsigned timeout_ms, char *why,
		     size_t whylen)
{
	char kconfig[POOL_KEY_MAX], kdesired[POOL_KEY_MAX], kowner[POOL_KEY_MAX], kstop[POOL_KEY_MAX];
	char kstopby[POOL_KEY_MAX], owner[DOMAIN_NAME_MAX], *by;
	uint64_t end = now_ms() + timeout_ms;
	bool ok, destroy = strcmp(how, POOL_STOP_DESTROY) == 0;
	json_t *o;
	int rc;

	if (!domain_name_valid(name))
		return -ENOENT;
	pool_key(p, kconfig, "domains/%s/config", name);
	pool_key(p, kdesired, "domains/%s/desired", name);
	pool_key(p, kowner, "domains/%s/owner", name);
	pool_key(p, kstop, "domains/%s/stop", name);
	pool_key(p, kstopby, "domains/%s/stop-by", name);
	/* Who asks, for the owner's logs: this host and this process's face. */
	o = lodge_face()[0] ? json_pack("{s:s, s:s}", "host", p->host, "via", lodge_face())
			    : json_pack("{s:s}", "host", p->host);
	by = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!by)
		return -ENOMEM;
	{
		/* The admin's word first, in the pool: from then on no agent
		 * starts it again, HA or not (README.md, "Stopping"). */
		struct etcd_cmp cmp[2] = { ETCD_PRESENT(kconfig), ETCD_VALUE_IS(kdesired, pool_desired_name(POOL_DESIRED_RUNNING)) };
		struct etcd_op put[3] = { ETCD_PUT_OP(kdesired, pool_desired_name(POOL_DESIRED_STOPPED), 0), ETCD_PUT_OP(kstop, how, 0),
					  ETCD_PUT_OP(kstopby, by, 0) };

		if (etcd_txn(p->etcd, cmp, 2, put, 3, NULL, 0, &ok, why, whylen)) {
			free(by);
			return -ENOTCONN;
		}
	}
	rc = 0;
	if (!ok) {
		/* not to run: not the pool's, stopped, or stopping */
		if ((rc = pool_domain_known(p, name, why, whylen)) <= 0) {
			free(by);
			return rc ? -ENOTCONN : -ENOENT;
		}
		rc = 0;
		if (destroy) {
			/* a destroy hastens a shutdown under way */
			struct etcd_cmp cmp[2] = { ETCD_PRESENT(kowner), ETCD_VALUE_IS(kdesired, pool_desired_name(POOL_DESIRED_STOPPED)) };
			struct etcd_op put[2] = { ETCD_PUT_OP(kstop, POOL_STOP_DESTROY, 0), ETCD_PUT_OP(kstopby, by, 0) };

			rc = etcd_txn(p->etcd, cmp, 2, put, 2, NULL, 0, &ok, why, whylen);
		} else if (key_value(p, kowner, owner, sizeof(owner)) != 1) {
			free(by);
			snprintf(why, whylen, "%s is stopped already (lodge create %s starts it again)", name, name);
			return -EALREADY;
		}
	}
	free(by);
	if (rc)
		return rc;
	/* Its owner's agent ends it and lets go. */
	while (timeout_ms) {
		if (key_value(p, kowner, owner, sizeof(owner)) != 1)
			return 0;
		if (now_ms() >= end) {
			snprintf(why, whylen, "%s is to stop, but host %s has not stopped it after %u s", name, owner,
				 timeout_ms / 1000);
			return -ETIMEDOUT;
		}
		usleep(100000);
	}
	return 0;
}

int pool_domain_drop(struct pool *p, const char *name, char *why, size_t whylen)
{
	char kconfig[POOL_KEY_MAX], kdesired[POOL_KEY_MAX], kowner[POOL_KEY_MAX], kplace[POOL_KEY_MAX];
	char kdomain[POOL_KEY_MAX], owner[DOMAIN_NAME_MAX], place[DOMAIN_NAME_MAX];
	bool ok;
	int rc;

	if ((rc = pool_domain_known(p, name, why, whylen)) <= 0) {
		if (rc == 0)
			snprintf(why, whylen, "no domain %s in the pool", name);
		return rc ? rc : -ENOENT;
	}
	pool_key(p, kconfig, "domains/%s/config", name);
	pool_key(p, kdesired, "domains/%s/desired", name);
	pool_key(p, kowner, "domains/%s/owner", name);
	pool_key(p, kplace, "domains/%s/placement", name);
	pool_key(p, kdomain, "domains/%s/", name);
	{
		/* stopped and nobody's, at the revision the keys go */
		struct etcd_cmp cmp[3] = { ETCD_PRESENT(kconfig), ETCD_VALUE_IS(kdesired, pool_desired_name(POOL_DESIRED_STOPPED)),
					   ETCD_ABSENT(kowner) };
		struct etcd_op del = ETCD_DEL_PREFIX(kdomain);

		if ((rc = etcd_txn(p->etcd, cmp, 3, &del, 1, NULL, 0, &ok, why, whylen)))
			return rc;
	}
	if (ok)
		return 0;
	if (key_value(p, kowner, owner, sizeof(owner)) == 1)
		snprintf(why, whylen, "%s runs on host %s%s", name, owner,
			 key_is(p, kdesired, pool_desired_name(POOL_DESIRED_STOPPED)) ? " (stopping: try again once it has stopped)" :
			 ": lodge shutdown or destroy it first");
	else if (key_is(p, kdesired, pool_desired_name(POOL_DESIRED_RUNNING)) && key_value(p, kplace, place, sizeof(place)) == 1)
		snprintf(why, whylen, "%s is to run on host %s: lodge shutdown or destroy it first", name, place);
	else if (pool_domain_known(p, name, why, whylen) == 0)
		snprintf(why, whylen, "no domain %s in the pool", name);
	else
		snprintf(why, whylen, "%s is not stopped: lodge destroy it first", name);
	return -EBUSY;
}
