/* An etcd v3 client over its HTTP/JSON gateway (etcd 3.4, wave2-facts 6):
 * libcurl for the requests, jansson for the bodies.  Keys and values are
 * C strings here (base64 on the wire); revisions and lease IDs int64.
 *
 * Every call tries the endpoints in turn, starting with the one that
 * last answered, and goes round them again after a backoff (50 ms
 * doubling to 1 s) until the client's deadline (etcd_set_deadline):
 * a member that is down, unreachable or without a leader costs one
 * attempt, not the call.  What etcd itself refuses (a malformed request)
 * fails at once.  A put or txn retried after a lost answer may have been
 * applied by the first attempt: callers make their writes idempotent or,
 * for a txn, read back what they meant to write (src/pool/README.md).
 *
 * Errors: -errno with why (one line naming the endpoint and etcd's or
 * curl's words): -ETIMEDOUT the deadline passed with no member answering,
 * -ECONNREFUSED none could be reached, -EPROTO an answer that is not
 * etcd's, -EINVAL etcd refused the request. */
#ifndef LODGE_POOL_ETCD_H
#define LODGE_POOL_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ETCD_ENDPOINTS_MAX 8
#define ETCD_WHY_MAX 512

struct etcd;

/* user's password into out (len bytes, NUL-terminated): 0, or -errno
 * with why.  Asked at each authentication: a password changed in its
 * file is the next token's. */
typedef int etcd_password_fn(const char *arg, char *out, size_t len, char *why, size_t whylen);

/* Who this client is and whom it trusts (lodge.conf's pool_cacert...;
 * NULL or "" each: none).  https endpoints need cacert: the pool trusts
 * its own CA, not the system's hundreds; cert and key go together and
 * only over https.  With user, every request carries the token etcd gave
 * for user and password() (POST /v3/auth/authenticate), asked again when
 * etcd calls it invalid (its simple tokens expire, a password change
 * drops them). */
struct etcd_auth {
	const char *cacert, *cert, *key;
	const char *user;
	etcd_password_fn *password;
	const char *password_arg;
};

/* endpoints: http://HOST:PORT[,...] or all https:// (a trailing slash
 * allowed).  NULL with why if the list or auth is malformed or curl
 * cannot start. */
struct etcd *etcd_open(const char *endpoints, const struct etcd_auth *auth, char *why, size_t whylen);
void etcd_close(struct etcd *e);
/* A new token for etcd_auth's user now (nothing without a user): 0, or
 * -EACCES with why when etcd refuses the user or password. */
int etcd_authenticate(struct etcd *e, char *why, size_t whylen);
/* How long one call may go on retrying (default 5000 ms), and how long
 * one attempt at one member may take (default 2000 ms). */
void etcd_set_deadline(struct etcd *e, unsigned total_ms, unsigned attempt_ms);
/* No call goes on past end_ms (CLOCK_MONOTONIC, in ms; 0: no such end),
 * whatever its deadline: the pool agent's fence deadline. */
void etcd_set_hard_end(struct etcd *e, uint64_t end_ms);
uint64_t etcd_hard_end(const struct etcd *e);
/* After calls that no member answered in time: whether one answers a
 * serializable read (its own copy, no leader needed), i.e. etcd is up
 * but has lost its quorum, rather than out of reach. */
bool etcd_answers_alone(struct etcd *e);
/* The endpoint that answered last (for messages). */
const char *etcd_endpoint(const struct etcd *e);

struct etcd_kv {
	char *key, *value;             /* NUL-terminated (a value with a NUL is cut there) */
	int64_t create_revision, mod_revision, version, lease;
};
struct etcd_kvs {
	unsigned n;
	struct etcd_kv *kv;
	int64_t revision;              /* the store's revision the answer is at */
};
void etcd_kvs_free(struct etcd_kvs *kvs);
/* The value of key in kvs, NULL if absent. */
const struct etcd_kv *etcd_kvs_find(const struct etcd_kvs *kvs, const char *key);

/* key alone, or with prefix every key that starts with it, in key order. */
int etcd_range(struct etcd *e, const char *key, bool prefix, struct etcd_kvs *out, char *why, size_t whylen);
/* lease 0: none. */
int etcd_put(struct etcd *e, const char *key, const char *value, int64_t lease, char *why, size_t whylen);
/* *deleted (may be NULL): how many keys went. */
int etcd_delete(struct etcd *e, const char *key, bool prefix, int64_t *deleted, char *why, size_t whylen);

/* A transaction's compare: key's create revision (0: absent), mod
 * revision, value or lease, equal (or not_equal) to the given one. */
enum etcd_target { ETCD_CREATE, ETCD_MOD, ETCD_VALUE, ETCD_LEASE };
struct etcd_cmp {
	const char *key;
	enum etcd_target target;
	bool not_equal;
	int64_t number;                /* ETCD_CREATE, ETCD_MOD, ETCD_LEASE */
	const char *value;             /* ETCD_VALUE */
};
/* Shorthands for the compares the pool uses. */
#define ETCD_ABSENT(k)      ((struct etcd_cmp){ .key = (k), .target = ETCD_CREATE, .number = 0 })
#define ETCD_PRESENT(k)     ((struct etcd_cmp){ .key = (k), .target = ETCD_CREATE, .number = 0, .not_equal = true })
#define ETCD_VALUE_IS(k, v) ((struct etcd_cmp){ .key = (k), .target = ETCD_VALUE, .value = (v) })

enum etcd_verb { ETCD_PUT, ETCD_DELETE };
struct etcd_op {
	enum etcd_verb verb;
	const char *key;
	const char *value;             /* ETCD_PUT */
	int64_t lease;                 /* ETCD_PUT, 0: none */
	bool prefix;                   /* ETCD_DELETE */
};
#define ETCD_PUT_OP(k, v, l) ((struct etcd_op){ .verb = ETCD_PUT, .key = (k), .value = (v), .lease = (l) })
#define ETCD_DEL_OP(k)       ((struct etcd_op){ .verb = ETCD_DELETE, .key = (k) })
#define ETCD_DEL_PREFIX(k)   ((struct etcd_op){ .verb = ETCD_DELETE, .key = (k), .prefix = true })

/* If every compare holds, the then ops, else the otherwise ops, all at
 * one revision: 0 with *succeeded saying which. */
int etcd_txn(struct etcd *e, const struct etcd_cmp *cmp, unsigned ncmp, const struct etcd_op *then,
	     unsigned nthen, const struct etcd_op *otherwise, unsigned notherwise, bool *succeeded,
	     char *why, size_t whylen);

/* A lease of ttl seconds (etcd raises a smaller one to its minimum). */
int etcd_lease_grant(struct etcd *e, int64_t ttl, int64_t *id, char *why, size_t whylen);
/* Renew: *ttl the seconds granted anew, 0 if the lease is gone (expired
 * or revoked: its keys with it). */
int etcd_lease_keepalive(struct etcd *e, int64_t id, int64_t *ttl, char *why, size_t whylen);
int etcd_lease_revoke(struct etcd *e, int64_t id, char *why, size_t whylen);

/* ---- watch: a stream of changes under a prefix ---------------------------------------- */

struct etcd_event {
	bool deleted;                  /* else a put */
	const char *key, *value;       /* value "" for a delete */
	int64_t mod_revision, lease;
};
typedef void etcd_event_fn(const struct etcd_event *ev, void *arg);

struct etcd_watch;
/* Watch every key under prefix from revision from (0: from now on), on
 * a connection of its own that etcd_watch_poll reads.  NULL with why if
 * no member takes it before the deadline. */
struct etcd_watch *etcd_watch_open(struct etcd *e, const char *prefix, int64_t from, char *why, size_t whylen);
/* Wait up to timeout_ms for changes, fn called for each in order: 0, or
 * -errno with why when the stream ended (a member died, the connection
 * broke, the revision was compacted: -ERANGE); then close it and open a
 * new one from etcd_watch_next, or read everything anew. */
int etcd_watch_poll(struct etcd_watch *w, int timeout_ms, etcd_event_fn *fn, void *arg, char *why,
		    size_t whylen);
/* The first revision the watch has not delivered. */
int64_t etcd_watch_next(const struct etcd_watch *w);
void etcd_watch_close(struct etcd_watch *w);

#endif
