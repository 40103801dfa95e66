/* The etcd client (src/pool/etcd.h) against a live cluster: run by
 * tests/integ/pool-etcd.sh as  etcd-check URLS PREFIX DEADPORT.  Every
 * key it writes is under PREFIX (the cluster is shared by the run). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "etcd.h"

static int failed;
static char why[ETCD_WHY_MAX];

#define CHECK(name, cond, ...)                                                     \
	do {                                                                       \
		if (cond) {                                                        \
			printf("PASS: etcd: %s\n", name);                          \
		} else {                                                           \
			printf("FAIL: etcd: %s: ", name);                          \
			printf(__VA_ARGS__);                                       \
			printf("\n");                                              \
			failed = 1;                                                \
		}                                                                  \
	} while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *key(const char *prefix, const char *name)
{
	static char buf[8][256];
	static unsigned i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", prefix, name);
	return buf[i];
}

static char *value_of(struct etcd *e, const char *k)
{
	struct etcd_kvs kvs;
	char *v = NULL;

	if (etcd_range(e, k, false, &kvs, why, sizeof(why)) == 0) {
		if (kvs.n == 1)
			v = strdup(kvs.kv[0].value);
		etcd_kvs_free(&kvs);
	}
	return v;
}

struct seen {
	char text[1024];
	unsigned n;
};

static void on_event(const struct etcd_event *ev, void *arg)
{
	struct seen *s = arg;
	size_t len = strlen(s->text);

	snprintf(s->text + len, sizeof(s->text) - len, "%s%s %s=%s", len ? "; " : "", ev->deleted ? "del" : "put",
		 strrchr(ev->key, '/') + 1, ev->value);
	s->n++;
}

int main(int argc, char **argv)
{
	const char *urls, *prefix;
	struct etcd *e, *dead;
	struct etcd_kvs kvs;
	struct etcd_watch *w;
	struct seen seen = { "", 0 };
	char badurls[512], *v;
	int64_t lease, ttl, deleted;
	bool ok;
	double t0;
	int rc;

	if (argc != 4) {
		fprintf(stderr, "usage: etcd-check URLS PREFIX DEADPORT\n");
		return 2;
	}
	urls = argv[1];
	prefix = argv[2];

	/* A list that is not etcd's URLs: one line, no client. */
	e = etcd_open("http://127.0.0.1:1,ftp://x", NULL, why, sizeof(why));
	CHECK("a URL that is not http://HOST:PORT is refused", !e && strstr(why, "ftp://x"), "got %s", e ? "a client" : why);

	/* The first endpoint dead: the call goes to the next one. */
	snprintf(badurls, sizeof(badurls), "http://127.0.0.1:%s,%s", argv[3], urls);
	e = etcd_open(badurls, NULL, why, sizeof(why));
	if (!e) {
		printf("FAIL: etcd: open: %s\n", why);
		return 1;
	}
	t0 = now_s();
	rc = etcd_put(e, key(prefix, "a"), "one \"1\"\n", 0, why, sizeof(why));
	CHECK("a dead first member: the put goes to the next", rc == 0 && now_s() - t0 < 3, "rc %d after %.1f s: %s", rc,
	      now_s() - t0, why);
	v = value_of(e, key(prefix, "a"));
	CHECK("a value comes back as written", v && strcmp(v, "one \"1\"\n") == 0, "got %s", v ? v : why);
	free(v);

	etcd_put(e, key(prefix, "b"), "two", 0, why, sizeof(why));
	etcd_put(e, key(prefix + 0, "b/c"), "three", 0, why, sizeof(why));
	etcd_put(e, key(prefix, "bz"), "four", 0, why, sizeof(why));
	rc = etcd_range(e, key(prefix, "b/"), true, &kvs, why, sizeof(why));
	CHECK("a prefix range gives the keys under it only", rc == 0 && kvs.n == 1 &&
	      strcmp(kvs.kv[0].value, "three") == 0 && kvs.kv[0].create_revision > 0,
	      "rc %d, %u keys: %s", rc, rc ? 0 : kvs.n, why);
	if (rc == 0)
		etcd_kvs_free(&kvs);
	rc = etcd_range(e, key(prefix, "nothing"), false, &kvs, why, sizeof(why));
	CHECK("an absent key: no kvs", rc == 0 && kvs.n == 0 && kvs.revision > 0, "rc %d: %s", rc, why);

	/* Create-if-absent: one of two transactions wins. */
	{
		const char *k = key(prefix, "owner");
		struct etcd_cmp absent = ETCD_ABSENT(k);
		struct etcd_op put1 = ETCD_PUT_OP(k, "host1", 0), put2 = ETCD_PUT_OP(k, "host2", 0);
		bool first = false, second = true;

		rc = etcd_txn(e, &absent, 1, &put1, 1, NULL, 0, &first, why, sizeof(why));
		rc |= etcd_txn(e, &absent, 1, &put2, 1, NULL, 0, &second, why, sizeof(why));
		v = value_of(e, k);
		CHECK("create-if-absent: the first txn wins, the second changes nothing",
		      rc == 0 && first && !second && v && strcmp(v, "host1") == 0, "rc %d, %d %d, value %s", rc, first,
		      second, v ? v : "none");
		free(v);

		{
			struct etcd_cmp is1 = ETCD_VALUE_IS(k, "host1"), is2 = ETCD_VALUE_IS(k, "host2");
			struct etcd_op to3 = ETCD_PUT_OP(k, "host3", 0), other = ETCD_PUT_OP(key(prefix, "lost"), "x", 0);

			rc = etcd_txn(e, &is2, 1, &to3, 1, &other, 1, &ok, why, sizeof(why));
			v = value_of(e, key(prefix, "lost"));
			CHECK("a value compare that fails runs the failure ops", rc == 0 && !ok && v, "rc %d ok %d", rc, ok);
			free(v);
			rc = etcd_txn(e, &is1, 1, &to3, 1, NULL, 0, &ok, why, sizeof(why));
			v = value_of(e, k);
			CHECK("a value compare that holds runs the success ops", rc == 0 && ok && v && !strcmp(v, "host3"),
			      "rc %d ok %d value %s", rc, ok, v ? v : "none");
			free(v);
		}
	}

	/* Leases: keys bound to one go with it. */
	rc = etcd_lease_grant(e, 30, &lease, why, sizeof(why));
	CHECK("a lease is granted", rc == 0 && lease != 0, "%s", why);
	etcd_put(e, key(prefix, "leased/x"), "1", lease, why, sizeof(why));
	rc = etcd_lease_keepalive(e, lease, &ttl, why, sizeof(why));
	CHECK("a keepalive renews the lease", rc == 0 && ttl == 30, "rc %d ttl %" PRId64 ": %s", rc, ttl, why);
	rc = etcd_range(e, key(prefix, "leased/x"), false, &kvs, why, sizeof(why));
	CHECK("a key records its lease", rc == 0 && kvs.n == 1 && kvs.kv[0].lease == lease, "rc %d", rc);
	if (rc == 0)
		etcd_kvs_free(&kvs);
	rc = etcd_lease_revoke(e, lease, why, sizeof(why));
	v = value_of(e, key(prefix, "leased/x"));
	CHECK("a revoked lease takes its keys", rc == 0 && !v, "rc %d, value %s", rc, v ? v : "none");
	free(v);
	rc = etcd_lease_keepalive(e, lease, &ttl, why, sizeof(why));
	CHECK("a keepalive of a lease that is gone says TTL 0", rc == 0 && ttl == 0, "rc %d ttl %" PRId64, rc, ttl);

	rc = etcd_lease_grant(e, 2, &lease, why, sizeof(why));
	etcd_put(e, key(prefix, "leased/y"), "1", lease, why, sizeof(why));
	t0 = now_s();
	while ((v = value_of(e, key(prefix, "leased/y"))) && now_s() - t0 < 10) {
		free(v);
		usleep(100000);
	}
	CHECK("a lease not kept alive expires after its TTL, its key with it", rc == 0 && !v && now_s() - t0 >= 1.0,
	      "rc %d, after %.1f s the key is %s", rc, now_s() - t0, v ? "there" : "gone");
	free(v);

	/* Watch: the changes under the prefix in order, none before it. */
	w = etcd_watch_open(e, key(prefix, "w/"), 0, why, sizeof(why));
	CHECK("a watch opens", w != NULL, "%s", why);
	if (w) {
		int64_t next;

		etcd_put(e, key(prefix, "w/one"), "1", 0, why, sizeof(why));
		etcd_put(e, key(prefix, "elsewhere"), "x", 0, why, sizeof(why));
		etcd_delete(e, key(prefix, "w/one"), false, NULL, why, sizeof(why));
		t0 = now_s();
		rc = 0;
		while (seen.n < 2 && rc == 0 && now_s() - t0 < 10)
			rc = etcd_watch_poll(w, 200, on_event, &seen, why, sizeof(why));
		CHECK("a watch sees a put and a delete under its prefix, in order, nothing else",
		      rc == 0 && strcmp(seen.text, "put one=1; del one=") == 0, "rc %d, saw '%s' %s", rc, seen.text,
		      rc ? why : "");
		next = etcd_watch_next(w);
		etcd_watch_close(w);

		/* Opened again from where it stopped: what came meanwhile, once. */
		etcd_put(e, key(prefix, "w/two"), "2", 0, why, sizeof(why));
		w = etcd_watch_open(e, key(prefix, "w/"), next, why, sizeof(why));
		seen = (struct seen){ "", 0 };
		t0 = now_s();
		rc = w ? 0 : -1;
		while (w && seen.n < 1 && rc == 0 && now_s() - t0 < 10)
			rc = etcd_watch_poll(w, 200, on_event, &seen, why, sizeof(why));
		if (w && rc == 0)
			rc = etcd_watch_poll(w, 300, on_event, &seen, why, sizeof(why));
		CHECK("a watch opened again from its next revision sees what came between, once",
		      rc == 0 && strcmp(seen.text, "put two=2") == 0, "rc %d, saw '%s'", rc, seen.text);
		etcd_watch_close(w);
	}

	rc = etcd_delete(e, prefix, true, &deleted, why, sizeof(why));
	CHECK("a prefix delete takes every key under it", rc == 0 && deleted >= 6,
	      "rc %d, %" PRId64 " deleted", rc, deleted);
	etcd_close(e);

	/* No member answers: refused within the deadline with why. */
	snprintf(badurls, sizeof(badurls), "http://127.0.0.1:%s", argv[3]);
	dead = etcd_open(badurls, NULL, why, sizeof(why));
	etcd_set_deadline(dead, 1500, 500);
	t0 = now_s();
	rc = etcd_put(dead, key(prefix, "x"), "1", 0, why, sizeof(why));
	CHECK("no member up: the call fails within its deadline, naming the endpoint",
	      rc == -ETIMEDOUT && now_s() - t0 < 2.5 && strstr(why, badurls), "rc %d after %.1f s: %s", rc,
	      now_s() - t0, why);
	etcd_close(dead);
	return failed;
}
