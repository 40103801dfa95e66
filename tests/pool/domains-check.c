/* pool_domains() (src/pool/lodge-pool.h) against a live cluster: run by
 * tests/integ/pool-faces.sh as  domains-check URLS PREFIX DEADPORT.  It
 * writes a pool's domain keys under PREFIX itself, as the commands and
 * agents would, and checks that every face's one call returns what etcd
 * holds: each domain with its host, state, memory, HA and note; a word
 * no pool agent says is read as unknown ("?"), never shown as it came.
 * A host record's state is read by its own table alike. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "etcd.h"
#include "lodge-pool.h"
#include "pool.h"

static int failed;

#define CHECK(name, cond, ...)                                                     \
	do {                                                                       \
		if (cond) {                                                        \
			printf("PASS: pool_domains: %s\n", name);                  \
		} else {                                                           \
			printf("FAIL: pool_domains: %s: ", name);                  \
			printf(__VA_ARGS__);                                       \
			printf("\n");                                              \
			failed = 1;                                                \
		}                                                                  \
	} while (0)

/* What the keys below say, as lodge list --pool shows it. */
static const struct pool_domain_row want[] = {
	{ "bad4", "h1", DOMAIN_STATE_FAILED, 64, false, "no disk \\e[31m here" },
	{ "db2", "h2", DOMAIN_STATE_STOPPED, 512, false, "last end: powered off" },
	{ "lost3", "h9", DOMAIN_STATE_LOST, 128, true, "" },
	{ "odd5", "h1", DOMAIN_STATE_UNKNOWN, 32, false, "" },
	{ "web1", "h1", DOMAIN_STATE_RUNNING, 256, true, "" },
};

static const char *const keys[][2] = {
	{ "domains/web1/config", "{\"text\":\"name = \\\"web1\\\"\\n\",\"file\":\"/x/web1.cfg\",\"memory_mib\":256,\"ha\":true}" },
	{ "domains/web1/desired", "running" },
	{ "domains/web1/placement", "h1" },
	{ "domains/web1/owner", "h1" },
	{ "domains/web1/state", "{\"host\":\"h1\",\"state\":\"running\",\"came\":\"start\"}" },
	{ "domains/db2/config", "{\"text\":\"\",\"file\":\"/x/db2.cfg\",\"memory_mib\":512,\"ha\":false}" },
	{ "domains/db2/desired", "stopped" },
	{ "domains/db2/placement", "h2" },
	{ "domains/db2/state", "{\"host\":\"h2\",\"state\":\"stopped\",\"ended\":\"powered off\"}" },
	{ "domains/lost3/config", "{\"text\":\"\",\"file\":\"/x/lost3.cfg\",\"memory_mib\":128,\"ha\":true}" },
	{ "domains/lost3/desired", "running" },
	{ "domains/lost3/placement", "h9" },
	/* an owner's words with a terminal escape in them: shown escaped */
	{ "domains/bad4/config", "{\"text\":\"\",\"file\":\"/x/bad4.cfg\",\"memory_mib\":64,\"ha\":false}" },
	{ "domains/bad4/desired", "running" },
	{ "domains/bad4/placement", "h1" },
	{ "domains/bad4/owner", "h1" },
	{ "domains/bad4/state", "{\"host\":\"h1\",\"state\":\"failed\",\"why\":\"no disk \\u001b[31m here\"}" },
	/* a word no agent says (a newer one's, or forged): unknown */
	{ "domains/odd5/config", "{\"text\":\"\",\"file\":\"/x/odd5.cfg\",\"memory_mib\":32,\"ha\":false}" },
	{ "domains/odd5/desired", "running" },
	{ "domains/odd5/placement", "h1" },
	{ "domains/odd5/owner", "h1" },
	{ "domains/odd5/state", "{\"host\":\"h1\",\"state\":\"\\u001b[31mrunning\"}" },
	/* half-written: no desired, not a domain */
	{ "domains/junk/placement", "h1" },
};

static bool row_is(const struct pool_domain_row *got, const struct pool_domain_row *w)
{
	return strcmp(got->name, w->name) == 0 && strcmp(got->host, w->host) == 0 &&
	       got->state == w->state && got->memory_mib == w->memory_mib && got->ha == w->ha &&
	       strcmp(got->note, w->note) == 0;
}

int main(int argc, char **argv)
{
	static struct host_config hc;
	char why[512], key[512];
	struct pool_domains d;
	struct etcd *e;
	size_t i;
	int rc;

	{
		static const struct { const char *record; enum pool_host_state want; } hosts[] = {
			{ "{\"name\":\"h1\",\"state\":\"up\"}", POOL_HOST_UP },
			{ "{\"name\":\"h1\"}", POOL_HOST_UP },
			{ "{\"name\":\"h1\",\"state\":\"leaving\"}", POOL_HOST_LEAVING },
			{ "{\"name\":\"h1\",\"state\":\"fenced\"}", POOL_HOST_FENCED },
			{ "{\"name\":\"h1\",\"state\":\"lost\"}", POOL_HOST_UNKNOWN },
			{ "{\"name\":\"h1\",\"state\":\"\\u001b[31mup\"}", POOL_HOST_UNKNOWN },
			{ "{\"name\":\"h1\",\"state\":7}", POOL_HOST_UP },
		};
		struct pool_host h;
		bool ok = true;

		for (i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
			memset(&h, 0, sizeof(h));
			h.live = true;
			if (pool_host_parse(hosts[i].record, &h) || pool_host_state(&h) != hosts[i].want) {
				printf("FAIL: pool_domains: host record %s: %s, not %s\n", hosts[i].record,
				       pool_host_state_name(pool_host_state(&h)), pool_host_state_name(hosts[i].want));
				ok = false;
				failed = 1;
			}
		}
		h.live = false;
		if (ok && pool_host_state(&h) == POOL_HOST_LOST && strcmp(pool_host_state_name(POOL_HOST_UNKNOWN), "?") == 0)
			printf("PASS: pool_domains: a host record's state: up, leaving, fenced as written, up without one, "
			       "any other word unknown (lost is no record's word); lost once its key is gone\n");
		else if (ok && (failed = 1))
			printf("FAIL: pool_domains: a host whose key is gone is %s, not lost\n",
			       pool_host_state_name(pool_host_state(&h)));
	}
	if (argc != 4) {
		fprintf(stderr, "usage: domains-check URLS PREFIX DEADPORT\n");
		return 2;
	}
	snprintf(hc.pool_host, sizeof(hc.pool_host), "checker");
	snprintf(hc.pool_prefix, sizeof(hc.pool_prefix), "%s", argv[2]);

	rc = pool_domains(&hc, &d, why, sizeof(why));
	CHECK("a host in no pool is told so", rc == -ENOENT && d.n == 0, "rc %d: %s", rc, why);

	snprintf(hc.pool_etcd, sizeof(hc.pool_etcd), "%s", argv[1]);
	rc = pool_domains(&hc, &d, why, sizeof(why));
	CHECK("an empty pool has no domains", rc == 0 && d.n == 0, "rc %d, %zu rows: %s", rc, d.n, why);
	pool_domains_free(&d);

	if (!(e = etcd_open(argv[1], NULL, why, sizeof(why)))) {
		printf("FAIL: pool_domains: cannot reach etcd: %s\n", why);
		return 1;
	}
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(key, sizeof(key), "%s/%s", argv[2], keys[i][0]);
		if (etcd_put(e, key, keys[i][1], 0, why, sizeof(why))) {
			printf("FAIL: pool_domains: cannot write %s: %s\n", key, why);
			return 1;
		}
	}
	rc = pool_domains(&hc, &d, why, sizeof(why));
	CHECK("every domain etcd holds, and nothing else", rc == 0 && d.n == sizeof(want) / sizeof(want[0]),
	      "rc %d, %zu rows: %s", rc, d.n, why);
	for (i = 0; rc == 0 && i < d.n && i < sizeof(want) / sizeof(want[0]); i++) {
		char name[sizeof(want[0].name) + 64];

		snprintf(name, sizeof(name), "%.64s: host, state, memory, HA and note as etcd says", want[i].name);
		CHECK(name, row_is(&d.row[i], &want[i]), "got %s|%s|%s|%lu|%d|%s", d.row[i].name, d.row[i].host,
		      domain_state_name(d.row[i].state), d.row[i].memory_mib, d.row[i].ha, d.row[i].note);
	}
	pool_domains_free(&d);

	/* A stop recorded in etcd shows at the next call. */
	snprintf(key, sizeof(key), "%s/domains/web1/owner", argv[2]);
	etcd_delete(e, key, false, NULL, why, sizeof(why));
	snprintf(key, sizeof(key), "%s/domains/web1/desired", argv[2]);
	etcd_put(e, key, "stopped", 0, why, sizeof(why));
	rc = pool_domains(&hc, &d, why, sizeof(why));
	CHECK("a domain stopped in etcd is stopped at the next call",
	      rc == 0 && d.n == 5 && strcmp(d.row[4].name, "web1") == 0 && d.row[4].state == DOMAIN_STATE_STOPPED,
	      "rc %d: %s", rc, d.n == 5 ? domain_state_name(d.row[4].state) : why);
	pool_domains_free(&d);
	snprintf(key, sizeof(key), "%s/", argv[2]);
	etcd_delete(e, key, true, NULL, why, sizeof(why));
	etcd_close(e);

	/* No etcd answering: one line saying so, no rows. */
	snprintf(hc.pool_etcd, sizeof(hc.pool_etcd), "http://127.0.0.1:%s", argv[3]);
	rc = pool_domains(&hc, &d, why, sizeof(why));
	CHECK("an etcd that does not answer is said in one line", rc < 0 && d.n == 0 && why[0] && !strchr(why, '\n'),
	      "rc %d: %s", rc, why);
	return failed;
}
