/* The calls the faces make (lodge-pool.h): joining, leaving and the
 * pool's domains, each with the pool of lodge.conf opened and closed
 * here, so that no face holds an etcd client or a transaction of its own. */
#include "lodge-pool.h"
#include "pool.h"
#include "version.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

/* The pool's version, set by whoever came first: ours, or refused. */
static int join_version(struct pool *p, const char *etcd, char *why, size_t whylen)
{
	char key[POOL_KEY_MAX], err[ETCD_WHY_MAX];
	struct etcd_cmp absent;
	struct etcd_op put;
	struct etcd_kvs kvs;
	bool ok;
	int rc;

	pool_key(p, key, "version");
	absent = (struct etcd_cmp)ETCD_ABSENT(key);
	put = (struct etcd_op)ETCD_PUT_OP(key, POOL_PROTOCOL, 0);
	if ((rc = etcd_txn(p->etcd, &absent, 1, &put, 1, NULL, 0, &ok, err, sizeof(err))) ||
	    (rc = etcd_range(p->etcd, key, false, &kvs, err, sizeof(err)))) {
		snprintf(why, whylen, "cannot join the pool at %s: %s", etcd, err);
		return rc;
	}
	rc = 0;
	if (kvs.n != 1 || strcmp(kvs.kv[0].value, POOL_PROTOCOL)) {
		snprintf(why, whylen, "the pool at %s speaks protocol %.31s; this Lodge (%s) speaks %s", etcd,
			 kvs.n ? kvs.kv[0].value : "?", LODGE_VERSION, POOL_PROTOCOL);
		rc = -EPROTO;
	}
	etcd_kvs_free(&kvs);
	return rc;
}

/* members/H, unless hosts/H is up: another host of that name, or this
 * one's agent still running. */
static int join_member(struct pool *p, const char *etcd, char *why, size_t whylen)
{
	char member[POOL_KEY_MAX], host[POOL_KEY_MAX], err[ETCD_WHY_MAX], *json;
	json_t *o = json_pack("{s:s, s:I}", "host", p->host, "joined", (json_int_t)time(NULL));
	struct etcd_cmp cmp;
	struct etcd_op put;
	bool ok;
	int rc;

	json = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!json) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	pool_key(p, member, "members/%s", p->host);
	pool_key(p, host, "hosts/%s", p->host);
	cmp = (struct etcd_cmp)ETCD_ABSENT(host);
	put = (struct etcd_op)ETCD_PUT_OP(member, json, 0);
	rc = etcd_txn(p->etcd, &cmp, 1, &put, 1, NULL, 0, &ok, err, sizeof(err));
	free(json);
	if (rc) {
		snprintf(why, whylen, "cannot join the pool at %s: %s", etcd, err);
		return rc;
	}
	if (!ok) {
		snprintf(why, whylen, "host %s is up in the pool at %s already: another host has that name, or this "
			 "one's pool agent runs (--host NAME for another)", p->host, etcd);
		return -EEXIST;
	}
	return 0;
}

int pool_join(const struct host_config *access, const char *etcd, const char *host, const char *prefix,
	      const char *password_keep, char joined[DOMAIN_NAME_MAX], char *why, size_t whylen)
{
	static struct host_config hc;      /* access, with the kept password's name */
	char member[POOL_KEY_MAX], err[ETCD_WHY_MAX];
	struct pool p;
	int rc;

	if (prefix && !pool_prefix_valid(prefix)) {
		snprintf(why, whylen, "--prefix %.200s: not a key prefix like /lodge/pool (%s)", prefix,
			 pool_prefix_rule());
		return -EINVAL;
	}
	if ((rc = pool_open(&p, access, etcd, host, prefix, why, whylen)))
		return rc;
	if ((rc = join_version(&p, etcd, why, whylen)) || (rc = join_member(&p, etcd, why, whylen))) {
		pool_close(&p);
		return rc;
	}
	hc = *access;
	if (password_keep && rename(access->pool_password_file, password_keep)) {
		rc = -errno;
		snprintf(why, whylen, "cannot record the pool in lodge.conf: cannot keep the password in %.300s: %s",
			 password_keep, strerror(errno));
	} else {
		if (password_keep)
			snprintf(hc.pool_password_file, sizeof(hc.pool_password_file), "%s", password_keep);
		if ((rc = pool_conf_write(etcd, p.host, prefix, &hc, err, sizeof(err))))
			snprintf(why, whylen, "cannot record the pool in lodge.conf: %s", err);
	}
	if (rc) {
		/* nothing half-made: the pool forgets the host again */
		pool_key(&p, member, "members/%s", p.host);
		etcd_delete(p.etcd, member, false, NULL, err, sizeof(err));
		pool_close(&p);
		return rc;
	}
	snprintf(joined, DOMAIN_NAME_MAX, "%s", p.host);
	pool_close(&p);
	return 0;
}

/* Each domain this host owns (or that is placed here to start) moved
 * away by live migration to the host the placement rule picks (this one,
 * leaving, is none); the names of those that could not be into stuck. */
static size_t leave_migrate(struct pool *p, struct pool_view *v, pool_leave_progress *progress, void *arg,
			    char *stuck, size_t stucklen)
{
	size_t n = 0;
	unsigned i;

	for (i = 0; i < v->ndomains; i++) {
		const struct pool_domain *d = &v->domain[i];
		const struct pool_host *to;
		char from[DOMAIN_NAME_MAX], mwhy[ETCD_WHY_MAX];
		bool owned = strcmp(d->owner, p->host) == 0,
		     placed = !d->owner[0] && strcmp(d->placement, p->host) == 0 &&
			       d->desired == POOL_DESIRED_RUNNING;

		if (!owned && !placed)
			continue;
		if (!owned)
			snprintf(mwhy, sizeof(mwhy), "placed here, not started yet");
		else if (d->desired != POOL_DESIRED_RUNNING)
			snprintf(mwhy, sizeof(mwhy), "still stopping here");
		else if (!(to = pool_choose(v, d->memory_mib, NULL, p->host, mwhy, sizeof(mwhy))))
			;                          /* mwhy: no host has room */
		else if (pool_domain_migrate(p, d->name, to->name, from, mwhy, sizeof(mwhy)) == 0 &&
			 pool_migrate_wait(p, d->name, to->name, 120000, mwhy, sizeof(mwhy)) == 0) {
			if (progress)
				progress(arg, d->name, to->name, NULL);
			continue;
		}
		if (progress)
			progress(arg, d->name, NULL, mwhy);
		if (n + DOMAIN_NAME_MAX + 2 < stucklen)
			n += (size_t)snprintf(stuck + n, stucklen - n, "%s%s", n ? ", " : "", d->name);
	}
	return n;
}

int pool_leave(const struct host_config *hc, pool_leave_progress *progress, void *arg, char left[DOMAIN_NAME_MAX],
	       char *why, size_t whylen)
{
	char member[POOL_KEY_MAX], stuck[512] = "", err[ETCD_WHY_MAX] = "";
	struct pool_view v;
	struct pool p;
	bool live;
	int rc;

	if ((rc = pool_open(&p, hc, NULL, NULL, NULL, why, whylen)))
		return rc;
	/* leaving first: no create places a domain here meanwhile */
	if ((rc = pool_host_set_state(&p, POOL_HOST_LEAVING, &live, why, whylen)) ||
	    (rc = pool_view_read(&p, &v, why, whylen))) {
		pool_close(&p);
		return rc;
	}
	rc = leave_migrate(&p, &v, progress, arg, stuck, sizeof(stuck)) ? -EBUSY : 0;
	pool_view_free(&v);
	if (rc) {
		if (live && pool_host_set_state(&p, POOL_HOST_UP, &live, err, sizeof(err)) == 0)
			err[0] = '\0';
		snprintf(why, whylen, "host %s stays in the pool%s%.200s%s: %s could not be migrated away (see above); "
			 "stop or migrate %s and leave again", p.host, err[0] ? " (shown leaving: " : "", err,
			 err[0] ? ")" : "", stuck, strchr(stuck, ',') ? "them" : "it");
		pool_close(&p);
		return rc;
	}
	pool_key(&p, member, "members/%s", p.host);
	rc = etcd_delete(p.etcd, member, false, NULL, why, whylen);
	snprintf(left, DOMAIN_NAME_MAX, "%s", p.host);
	pool_close(&p);
	if (rc)
		return rc;
	if ((rc = pool_conf_write(NULL, NULL, NULL, NULL, err, sizeof(err))))
		snprintf(why, whylen, "left the pool, but cannot record it: %s", err);
	return rc;
}

static int row_cmp(const void *a, const void *b)
{
	return strcmp(((const struct pool_domain_row *)a)->name, ((const struct pool_domain_row *)b)->name);
}

int pool_domains(const struct host_config *hc, struct pool_domains *out, char *why, size_t whylen)
{
	struct pool_view v;
	struct pool p;
	unsigned i;
	int rc;

	out->n = 0;
	out->row = NULL;
	if ((rc = pool_open(&p, hc, NULL, NULL, NULL, why, whylen)))
		return rc;
	rc = pool_view_read(&p, &v, why, whylen);
	if (rc == -ETIMEDOUT)
		pool_unanswered(&p, hc, why, whylen);
	pool_close(&p);
	if (rc)
		return rc;
	if (v.ndomains && !(out->row = calloc(v.ndomains, sizeof(*out->row)))) {
		pool_view_free(&v);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < v.ndomains; i++) {
		const struct pool_domain *d = &v.domain[i];
		struct pool_domain_row *r = &out->row[out->n];
		/* an owner's note from etcd: escaped for whoever shows it (its
		 * state is read as one of proto.h's) */
		char note[sizeof(r->note)];

		if (d->desired == POOL_DESIRED_NONE)
			continue;          /* a half-written or foreign key: not a domain */
		snprintf(r->name, sizeof(r->name), "%s", d->name);
		snprintf(r->host, sizeof(r->host), "%s", d->owner[0] ? d->owner : d->placement);
		r->state = pool_domain_state(&v, d);
		r->memory_mib = d->memory_mib;
		r->ha = d->ha;
		lodge_text_shown(r->note, sizeof(r->note), pool_domain_note(d, note, sizeof(note)));
		out->n++;
	}
	pool_view_free(&v);
	qsort(out->row, out->n, sizeof(*out->row), row_cmp);
	return 0;
}

void pool_domains_free(struct pool_domains *d)
{
	free(d->row);
	d->row = NULL;
	d->n = 0;
}
