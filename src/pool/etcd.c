/* etcd v3 over its JSON gateway (etcd.h; the wire format in wave2-facts 6:
 * base64 keys and values, int64 as strings, zero values left out). */
#include "etcd.h"
#include "etcd-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>
#include <openssl/evp.h>

struct etcd {
	CURL *curl;
	char *endpoint[ETCD_ENDPOINTS_MAX];
	unsigned n, cur;
	unsigned total_ms, attempt_ms;
	uint64_t hard_end;                 /* CLOCK_MONOTONIC ms no call goes past; 0 none */
	bool https;
	char *cacert, *cert, *key;         /* etcd_auth's, copied; NULL: none */
	char *user, *password_arg;
	etcd_password_fn *password;
	char *token;                       /* etcd's for user, NULL: none yet */
	bool authenticating;               /* the request under way asks for one */
	char errbuf[CURL_ERROR_SIZE];
};

/* An answer's body as it comes. */
struct body {
	char *buf;
	size_t n, cap;
	bool overflow;
};
#define BODY_MAX (64u << 20)

static void say(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- base64 and numbers ------------------------------------------------------------- */

static char *b64_encode(const char *s, size_t n)
{
	char *out = malloc(4 * ((n + 2) / 3) + 1);

	if (out)
		EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)s, (int)n);
	return out;
}

/* NULL if text is not base64. */
static char *b64_decode(const char *text)
{
	size_t n = strlen(text), pad = 0;
	char *out;
	int len;

	if (n % 4)
		return NULL;
	out = malloc(n / 4 * 3 + 1);
	if (!out)
		return NULL;
	len = EVP_DecodeBlock((unsigned char *)out, (const unsigned char *)text, (int)n);
	if (len < 0) {
		free(out);
		return NULL;
	}
	/* EVP_DecodeBlock counts the padding's bytes as data. */
	while (pad < 2 && n > pad && text[n - 1 - pad] == '=')
		pad++;
	out[(size_t)len - pad] = '\0';
	return out;
}

/* An int64 the gateway writes as a string (or a number); 0 if absent. */
int64_t etcd_num(json_t *o, const char *name)
{
	json_t *v = json_object_get(o, name);

	if (json_is_string(v))
		return strtoll(json_string_value(v), NULL, 10);
	if (json_is_integer(v))
		return (int64_t)json_integer_value(v);
	return 0;
}

json_t *etcd_num_json(int64_t v)
{
	char s[24];

	snprintf(s, sizeof(s), "%" PRId64, v);
	return json_string(s);
}

static json_t *b64_json(const char *s)
{
	char *b = b64_encode(s, strlen(s));
	json_t *v = b ? json_string(b) : NULL;

	free(b);
	return v;
}

/* The key just past every key that starts with prefix (etcd's range_end). */
static json_t *prefix_end_json(const char *prefix)
{
	size_t n = strlen(prefix);
	char *end = strdup(prefix);
	json_t *v;

	if (!end)
		return NULL;
	while (n > 0 && (unsigned char)end[n - 1] == 0xff)
		n--;
	if (n == 0) {
		free(end);
		return json_string("AA==");   /* "\0": every key */
	}
	end[n - 1]++;
	end[n] = '\0';
	v = b64_json(end);
	free(end);
	return v;
}

/* ---- the client --------------------------------------------------------------------- */

/* s copied into *to if given and not "": false if out of memory. */
static bool keep(char **to, const char *s)
{
	return !s || !*s || (*to = strdup(s));
}

static int auth_check(struct etcd *e, const struct etcd_auth *a, char *why, size_t whylen)
{
	if (!a)
		return 0;
	if (!keep(&e->cacert, a->cacert) || !keep(&e->cert, a->cert) || !keep(&e->key, a->key) ||
	    !keep(&e->user, a->user) || !keep(&e->password_arg, a->password_arg)) {
		say(why, whylen, "out of memory");
		return -ENOMEM;
	}
	if (e->https && !e->cacert) {
		say(why, whylen, "https etcd URLs need the CA that signed etcd's certificate (--cacert FILE, "
		    "pool_cacert): the pool trusts its own CA, not the system's");
		return -EINVAL;
	}
	if (!e->https && (e->cacert || e->cert || e->key)) {
		say(why, whylen, "a CA, certificate or key is for https etcd URLs; these are http");
		return -EINVAL;
	}
	if (!e->cert != !e->key) {
		say(why, whylen, "a client certificate and its key go together (--cert FILE --key FILE)");
		return -EINVAL;
	}
	e->password = a->password;
	if (!e->user != !e->password) {
		say(why, whylen, "etcd's user authentication needs both a user and a password");
		return -EINVAL;
	}
	return 0;
}

struct etcd *etcd_open(const char *endpoints, const struct etcd_auth *auth, char *why, size_t whylen)
{
	struct etcd *e = calloc(1, sizeof(*e));
	char *list, *tok, *save = NULL;
	unsigned nhttps = 0;

	if (!e || !(list = strdup(endpoints))) {
		free(e);
		say(why, whylen, "out of memory");
		return NULL;
	}
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t n = strlen(tok);

		size_t scheme = strncmp(tok, "https://", 8) == 0 ? 8 : 7;

		/* http(s)://HOST:PORT, a trailing slash allowed, nothing after it */
		if (tok[n - 1] == '/')
			tok[--n] = '\0';
		if ((scheme == 7 && strncmp(tok, "http://", 7)) || n <= scheme ||
		    strcspn(tok + scheme, " ?#@/") != n - scheme) {
			say(why, whylen, "%s: not an etcd client URL (http://HOST:PORT or https://HOST:PORT)", tok);
			goto bad;
		}
		nhttps += scheme == 8;
		if (e->n == ETCD_ENDPOINTS_MAX) {
			say(why, whylen, "more than %d etcd endpoints", ETCD_ENDPOINTS_MAX);
			goto bad;
		}
		if (!(e->endpoint[e->n++] = strdup(tok))) {
			say(why, whylen, "out of memory");
			goto bad;
		}
	}
	if (e->n == 0) {
		say(why, whylen, "no etcd endpoint given");
		goto bad;
	}
	if (nhttps && nhttps != e->n) {
		say(why, whylen, "%s: some etcd URLs are https, some http: one pool, one way to reach it", endpoints);
		goto bad;
	}
	e->https = nhttps > 0;
	if (auth_check(e, auth, why, whylen))
		goto bad;
	free(list);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (!(e->curl = curl_easy_init())) {
		say(why, whylen, "libcurl cannot start");
		etcd_close(e);
		return NULL;
	}
	e->total_ms = 5000;
	e->attempt_ms = 2000;
	return e;
bad:
	free(list);
	etcd_close(e);
	return NULL;
}

void etcd_close(struct etcd *e)
{
	unsigned i;

	if (!e)
		return;
	if (e->curl)
		curl_easy_cleanup(e->curl);
	for (i = 0; i < e->n; i++)
		free(e->endpoint[i]);
	free(e->cacert);
	free(e->cert);
	free(e->key);
	free(e->user);
	free(e->password_arg);
	free(e->token);
	free(e);
}

void etcd_curl_setup(struct etcd *e, CURL *curl, struct curl_slist **headers)
{
	*headers = NULL;
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, e->https ? "https" : "http");
	if (e->https) {
		curl_easy_setopt(curl, CURLOPT_CAINFO, e->cacert);
		curl_easy_setopt(curl, CURLOPT_CAPATH, NULL);     /* this CA alone */
		curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
		curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
		if (e->cert) {
			curl_easy_setopt(curl, CURLOPT_SSLCERT, e->cert);
			curl_easy_setopt(curl, CURLOPT_SSLKEY, e->key);
		}
	}
	if (e->token && !e->authenticating) {
		char *h = malloc(strlen(e->token) + 32);

		if (h) {
			sprintf(h, "Authorization: %s", e->token);
			*headers = curl_slist_append(NULL, h);
			explicit_bzero(h, strlen(h));
			free(h);
			curl_easy_setopt(curl, CURLOPT_HTTPHEADER, *headers);
		}
	}
}

void etcd_set_deadline(struct etcd *e, unsigned total_ms, unsigned attempt_ms)
{
	e->total_ms = total_ms;
	e->attempt_ms = attempt_ms ? attempt_ms : 1;
}

unsigned etcd_nendpoints(const struct etcd *e)
{
	return e->n;
}

/* The i-th endpoint counting from the one that answered last. */
const char *etcd_nth_endpoint(const struct etcd *e, unsigned i)
{
	return e->endpoint[(e->cur + i) % e->n];
}

void etcd_set_hard_end(struct etcd *e, uint64_t end_ms)
{
	e->hard_end = end_ms;
}

uint64_t etcd_hard_end(const struct etcd *e)
{
	return e->hard_end;
}

const char *etcd_endpoint(const struct etcd *e)
{
	return e->endpoint[e->cur];
}

static size_t body_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct body *b = arg;
	size_t n = size * nmemb;

	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 1024;
		char *p;

		while (cap < b->n + n + 1)
			cap *= 2;
		if (cap > BODY_MAX || !(p = realloc(b->buf, cap))) {
			b->overflow = true;
			return 0;
		}
		b->buf = p;
		b->cap = cap;
	}
	memcpy(b->buf + b->n, data, n);
	b->n += n;
	b->buf[b->n] = '\0';
	return n;
}

/* etcd's error codes (gRPC's) worth another member or another try. */
static bool retryable_code(int64_t code)
{
	return code == 4 /* deadline exceeded */ || code == 14 /* unavailable */ || code == 10 /* aborted */ ||
	       code == 13 /* internal */ || code == 8 /* resource exhausted */ || code == 2 /* unknown */;
}

/* One attempt at endpoint i: 0 with *reply; 1 to try elsewhere (why
 * set); -errno to give up. */
static int attempt(struct etcd *e, unsigned i, const char *path, const char *req, unsigned ms, json_t **reply,
		   char *why, size_t whylen)
{
	struct body b = { 0 };
	char url[512];
	json_error_t jerr;
	json_t *err;
	long status = 0;
	CURLcode cc;

	struct curl_slist *headers;

	snprintf(url, sizeof(url), "%s%s", e->endpoint[i], path);
	curl_easy_reset(e->curl);
	etcd_curl_setup(e, e->curl, &headers);
	e->errbuf[0] = '\0';
	curl_easy_setopt(e->curl, CURLOPT_ERRORBUFFER, e->errbuf);
	curl_easy_setopt(e->curl, CURLOPT_URL, url);
	curl_easy_setopt(e->curl, CURLOPT_POSTFIELDS, req);
	curl_easy_setopt(e->curl, CURLOPT_WRITEFUNCTION, body_write);
	curl_easy_setopt(e->curl, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(e->curl, CURLOPT_TIMEOUT_MS, (long)ms);
	curl_easy_setopt(e->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)(ms < 1000 ? ms : 1000));
	curl_easy_setopt(e->curl, CURLOPT_NOSIGNAL, 1L);
	cc = curl_easy_perform(e->curl);
	curl_slist_free_all(headers);
	curl_easy_setopt(e->curl, CURLOPT_HTTPHEADER, NULL);
	if (cc != CURLE_OK) {
		/* etcd ended the handshake with an alert (TLS 1.3 sends it
		 * after the client's finished: curl sees a failed read) */
		bool refused = e->https && strstr(e->errbuf, " alert ");

		say(why, whylen, "etcd at %s: %s%s%s", e->endpoint[i],
		    refused ? "refused this host's TLS client certificate (or its lack)" : curl_easy_strerror(cc),
		    e->errbuf[0] ? ": " : "", e->errbuf);
		free(b.buf);
		/* Whom this host trusts or how it proves itself: no other
		 * member or later try answers that differently. */
		if (refused || cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE ||
		    cc == CURLE_SSL_CERTPROBLEM)
			return -EACCES;
		return b.overflow ? -EPROTO : 1;
	}
	curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, &status);
	*reply = b.buf ? json_loads(b.buf, 0, &jerr) : NULL;
	if (!*reply || !json_is_object(*reply)) {
		char text[160] = "";
		size_t k;

		/* the gateway's own refusals are a line of text: said, escaped */
		for (k = 0; b.buf && k + 1 < sizeof(text) && b.buf[k]; k++)
			text[k] = (unsigned char)b.buf[k] < 0x20 || b.buf[k] == 0x7f ? ' ' : b.buf[k];
		text[k] = '\0';
		while (k && text[k - 1] == ' ')
			text[--k] = '\0';
		say(why, whylen, "etcd at %s: HTTP %ld, %s%s%s", e->endpoint[i], status,
		    b.buf ? "an answer that is not JSON" : "no answer", text[0] ? ": " : "", text);
		free(b.buf);
		json_decref(*reply);
		*reply = NULL;
		return status >= 500 || status == 0 ? 1 : -EPROTO;
	}
	free(b.buf);
	if ((err = json_object_get(*reply, "error"))) {
		int64_t code = etcd_num(*reply, "code");
		json_t *msg = json_object_get(*reply, "message");

		const char *text = json_is_string(msg) ? json_string_value(msg) :
				   json_is_string(err) ? json_string_value(err) : "error";
		bool stale = e->user && !e->authenticating &&
			     (strstr(text, "invalid auth token") || strstr(text, "user name is empty"));

		say(why, whylen, "etcd at %s: %s", e->endpoint[i], text);
		json_decref(*reply);
		*reply = NULL;
		if (stale)
			return -EKEYEXPIRED;      /* call() asks for a new token */
		if (code == 16 /* unauthenticated */ || code == 7 /* permission denied */)
			return -EACCES;
		return retryable_code(code) || status >= 500 ? 1 : -EINVAL;
	}
	return 0;
}

/* POST req (consumed) to path at the members in turn until one answers
 * or the deadline passes. */
static int call_once(struct etcd *e, const char *path, json_t *req, json_t **reply, char *why, size_t whylen)
{
	uint64_t start = now_ms(), end = start + e->total_ms;
	unsigned backoff = 50, tries = 0, i;
	char *text = req ? json_dumps(req, JSON_COMPACT) : NULL;
	int rc = -ETIMEDOUT;

	json_decref(req);
	if (e->hard_end && end > e->hard_end) {
		end = e->hard_end;
		if (start >= end) {
			free(text);
			say(why, whylen, "etcd not asked: this host's fence deadline has come (its HA domains are "
			    "fenced first; the pool is asked again once the lease is renewed)");
			return -ETIMEDOUT;
		}
		tries = 1;   /* no attempt at all past the end */
	}
	if (!text) {
		say(why, whylen, "out of memory");
		return -ENOMEM;
	}
	say(why, whylen, "etcd: no answer");
	for (;;) {
		for (i = 0; i < e->n; i++) {
			unsigned k = (e->cur + i) % e->n;
			uint64_t now = now_ms();
			unsigned ms;

			if (now >= end && tries > 0)
				goto out;
			ms = end > now ? (unsigned)(end - now) : 1;
			if (ms > e->attempt_ms)
				ms = e->attempt_ms;
			tries++;
			rc = attempt(e, k, path, text, ms, reply, why, whylen);
			if (rc <= 0) {
				if (rc == 0)
					e->cur = k;
				goto out;
			}
			rc = -ETIMEDOUT;
		}
		if (now_ms() + backoff >= end)
			break;
		sleep_ms(backoff);
		backoff = backoff * 2 > 1000 ? 1000 : backoff * 2;
	}
out:
	free(text);
	return rc;
}

/* A token for user from etcd: the one request without one. */
static int authenticate(struct etcd *e, char *why, size_t whylen)
{
	char password[256];
	json_t *req, *reply = NULL, *t;
	int rc;

	if ((rc = e->password(e->password_arg, password, sizeof(password), why, whylen)))
		return rc;
	req = json_pack("{s:s, s:s}", "name", e->user, "password", password);
	explicit_bzero(password, sizeof(password));
	free(e->token);
	e->token = NULL;
	e->authenticating = true;
	rc = call_once(e, "/v3/auth/authenticate", req, &reply, why, whylen);
	e->authenticating = false;
	if (rc) {
		char inner[ETCD_WHY_MAX];

		snprintf(inner, sizeof(inner), "%s", why);
		say(why, whylen, "etcd did not accept user %s: %s", e->user, inner);
		return rc == -EINVAL ? -EACCES : rc;
	}
	t = json_object_get(reply, "token");
	if (!json_is_string(t) || !(e->token = strdup(json_string_value(t)))) {
		say(why, whylen, "etcd at %s gave user %s no token (is its authentication enabled?)",
		    etcd_endpoint(e), e->user);
		json_decref(reply);
		return -EPROTO;
	}
	json_decref(reply);
	return 0;
}

int etcd_authenticate(struct etcd *e, char *why, size_t whylen)
{
	return e->user ? authenticate(e, why, whylen) : 0;
}

/* call_once with this client's token: asked for first, and once more
 * when etcd says it is no longer valid. */
static int call(struct etcd *e, const char *path, json_t *req, json_t **reply, char *why, size_t whylen)
{
	int rc;

	if (e->user && !e->token && (rc = authenticate(e, why, whylen))) {
		json_decref(req);
		return rc;
	}
	json_incref(req);                  /* kept for a second try */
	rc = call_once(e, path, req, reply, why, whylen);
	if (rc == -EKEYEXPIRED && (rc = authenticate(e, why, whylen)) == 0)
		return call_once(e, path, req, reply, why, whylen);
	json_decref(req);
	return rc;
}

/* ---- kv ----------------------------------------------------------------------------- */

void etcd_kvs_free(struct etcd_kvs *kvs)
{
	unsigned i;

	for (i = 0; i < kvs->n; i++) {
		free(kvs->kv[i].key);
		free(kvs->kv[i].value);
	}
	free(kvs->kv);
	memset(kvs, 0, sizeof(*kvs));
}

const struct etcd_kv *etcd_kvs_find(const struct etcd_kvs *kvs, const char *key)
{
	unsigned i;

	for (i = 0; i < kvs->n; i++)
		if (strcmp(kvs->kv[i].key, key) == 0)
			return &kvs->kv[i];
	return NULL;
}

int etcd_kv_from_json(json_t *o, struct etcd_kv *kv)
{
	json_t *k = json_object_get(o, "key"), *v = json_object_get(o, "value");

	memset(kv, 0, sizeof(*kv));
	if (!json_is_string(k))
		return -EPROTO;
	kv->key = b64_decode(json_string_value(k));
	kv->value = json_is_string(v) ? b64_decode(json_string_value(v)) : strdup("");
	if (!kv->key || !kv->value) {
		free(kv->key);
		free(kv->value);
		return -EPROTO;
	}
	kv->create_revision = etcd_num(o, "create_revision");
	kv->mod_revision = etcd_num(o, "mod_revision");
	kv->version = etcd_num(o, "version");
	kv->lease = etcd_num(o, "lease");
	return 0;
}

static int64_t header_revision(json_t *reply)
{
	return etcd_num(json_object_get(reply, "header"), "revision");
}

json_t *etcd_range_json(const char *key, bool prefix)
{
	json_t *r = json_object();

	json_object_set_new(r, "key", b64_json(key));
	if (prefix)
		json_object_set_new(r, "range_end", prefix_end_json(key));
	return r;
}

bool etcd_answers_alone(struct etcd *e)
{
	json_t *req = etcd_range_json("lodge-quorum-probe", false), *reply = NULL;
	char why[ETCD_WHY_MAX];

	json_object_set_new(req, "serializable", json_true());
	json_object_set_new(req, "count_only", json_true());
	if (call(e, "/v3/kv/range", req, &reply, why, sizeof(why)))
		return false;
	json_decref(reply);
	return true;
}

int etcd_range(struct etcd *e, const char *key, bool prefix, struct etcd_kvs *out, char *why, size_t whylen)
{
	json_t *reply = NULL, *kvs, *o;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = call(e, "/v3/kv/range", etcd_range_json(key, prefix), &reply, why, whylen)))
		return rc;
	out->revision = header_revision(reply);
	kvs = json_object_get(reply, "kvs");
	if (json_is_array(kvs) && json_array_size(kvs)) {
		if (!(out->kv = calloc(json_array_size(kvs), sizeof(*out->kv)))) {
			json_decref(reply);
			return -ENOMEM;
		}
		json_array_foreach(kvs, i, o) {
			if (etcd_kv_from_json(o, &out->kv[out->n])) {
				say(why, whylen, "etcd at %s: a key or value that is not base64", etcd_endpoint(e));
				etcd_kvs_free(out);
				json_decref(reply);
				return -EPROTO;
			}
			out->n++;
		}
	}
	json_decref(reply);
	return 0;
}

static json_t *put_req(const char *key, const char *value, int64_t lease)
{
	json_t *r = json_object();

	json_object_set_new(r, "key", b64_json(key));
	json_object_set_new(r, "value", b64_json(value));
	if (lease)
		json_object_set_new(r, "lease", etcd_num_json(lease));
	return r;
}

int etcd_put(struct etcd *e, const char *key, const char *value, int64_t lease, char *why, size_t whylen)
{
	json_t *reply = NULL;
	int rc = call(e, "/v3/kv/put", put_req(key, value, lease), &reply, why, whylen);

	json_decref(reply);
	return rc;
}

int etcd_delete(struct etcd *e, const char *key, bool prefix, int64_t *deleted, char *why, size_t whylen)
{
	json_t *reply = NULL;
	int rc = call(e, "/v3/kv/deleterange", etcd_range_json(key, prefix), &reply, why, whylen);

	if (rc == 0 && deleted)
		*deleted = etcd_num(reply, "deleted");
	json_decref(reply);
	return rc;
}

static json_t *ops_json(const struct etcd_op *ops, unsigned n)
{
	json_t *a = json_array();
	unsigned i;

	for (i = 0; i < n; i++) {
		json_t *op = json_object();

		if (ops[i].verb == ETCD_PUT)
			json_object_set_new(op, "request_put", put_req(ops[i].key, ops[i].value, ops[i].lease));
		else
			json_object_set_new(op, "request_delete_range", etcd_range_json(ops[i].key, ops[i].prefix));
		json_array_append_new(a, op);
	}
	return a;
}

int etcd_txn(struct etcd *e, const struct etcd_cmp *cmp, unsigned ncmp, const struct etcd_op *then,
	     unsigned nthen, const struct etcd_op *otherwise, unsigned notherwise, bool *succeeded,
	     char *why, size_t whylen)
{
	static const char *const target[] = { "CREATE", "MOD", "VALUE", "LEASE" };
	static const char *const field[] = { "create_revision", "mod_revision", "value", "lease" };
	json_t *req = json_object(), *cmps = json_array(), *reply = NULL;
	unsigned i;
	int rc;

	for (i = 0; i < ncmp; i++) {
		json_t *c = json_object();

		json_object_set_new(c, "key", b64_json(cmp[i].key));
		json_object_set_new(c, "target", json_string(target[cmp[i].target]));
		if (cmp[i].not_equal)
			json_object_set_new(c, "result", json_string("NOT_EQUAL"));
		json_object_set_new(c, field[cmp[i].target],
				    cmp[i].target == ETCD_VALUE ? b64_json(cmp[i].value) : etcd_num_json(cmp[i].number));
		json_array_append_new(cmps, c);
	}
	json_object_set_new(req, "compare", cmps);
	json_object_set_new(req, "success", ops_json(then, nthen));
	json_object_set_new(req, "failure", ops_json(otherwise, notherwise));
	if ((rc = call(e, "/v3/kv/txn", req, &reply, why, whylen)))
		return rc;
	/* false is a zero value: left out */
	*succeeded = json_is_true(json_object_get(reply, "succeeded"));
	json_decref(reply);
	return 0;
}

/* ---- leases ------------------------------------------------------------------------- */

/* A lease call: a request of one number, FIELD = N, to PATH; its reply in
 * *REPLY (the caller's to free). */
static int lease_call(struct etcd *e, const char *path, const char *field, int64_t n, json_t **reply, char *why,
		      size_t whylen)
{
	json_t *req = json_object();

	json_object_set_new(req, field, etcd_num_json(n));
	return call(e, path, req, reply, why, whylen);
}

int etcd_lease_grant(struct etcd *e, int64_t ttl, int64_t *id, char *why, size_t whylen)
{
	json_t *reply = NULL;
	int rc;

	if ((rc = lease_call(e, "/v3/lease/grant", "TTL", ttl, &reply, why, whylen)))
		return rc;
	*id = etcd_num(reply, "ID");
	json_decref(reply);
	if (*id == 0) {
		say(why, whylen, "etcd at %s: a lease grant without an ID", etcd_endpoint(e));
		return -EPROTO;
	}
	return 0;
}

int etcd_lease_keepalive(struct etcd *e, int64_t id, int64_t *ttl, char *why, size_t whylen)
{
	json_t *reply = NULL;
	int rc;

	if ((rc = lease_call(e, "/v3/lease/keepalive", "ID", id, &reply, why, whylen)))
		return rc;
	/* One result per ID sent; a lease that is gone comes back without TTL. */
	*ttl = etcd_num(json_object_get(reply, "result"), "TTL");
	if (*ttl < 0)
		*ttl = 0;
	json_decref(reply);
	return 0;
}

int etcd_lease_revoke(struct etcd *e, int64_t id, char *why, size_t whylen)
{
	json_t *reply = NULL;
	int rc;

	rc = lease_call(e, "/v3/lease/revoke", "ID", id, &reply, why, whylen);
	json_decref(reply);
	return rc;
}
