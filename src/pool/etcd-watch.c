/* etcd's watch through the gateway: one POST whose chunked answer never
 * ends, one {"result":{...}} per line (the first with "created":true),
 * read a line at a time through a curl multi handle so that the caller's
 * loop (the pool agent's) does its other work between changes. */
#include "etcd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "etcd-internal.h"

struct etcd_watch {
	struct etcd *e;                /* its TLS files and token */
	CURLM *multi;
	CURL *curl;
	struct curl_slist *headers;
	char *req;
	char *buf;                     /* what came and is not yet a whole line */
	size_t n, cap;
	bool created, overflow;
	json_t *pending;               /* results that came before a poll with a callback */
	int64_t next;                  /* the first revision not delivered */
	/* set while etcd_watch_poll runs */
	etcd_event_fn *fn;
	void *arg;
	int err;
	char why[ETCD_WHY_MAX];
	char url[256];
};

#define WATCH_LINE_MAX (64u << 20)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The stream's first error, kept: "etcd watch at URL: what". */
static void watch_fail(struct etcd_watch *w, int err, const char *what)
{
	int n;

	if (w->err)
		return;
	w->err = err;
	n = snprintf(w->why, sizeof(w->why), "etcd watch at %s: %s", w->url, what);
	(void)n;   /* a long message cut is still one line */
}

static void copy_why(char *why, size_t whylen, const char *text)
{
	int n = snprintf(why, whylen, "%s", text);

	(void)n;
}

static void deliver(struct etcd_watch *w, json_t *result)
{
	json_t *events = json_object_get(result, "events"), *ev;
	size_t i;

	json_array_foreach(events, i, ev) {
		json_t *kv = json_object_get(ev, "kv"), *type = json_object_get(ev, "type");
		struct etcd_kv k;
		struct etcd_event e;

		if (etcd_kv_from_json(kv, &k)) {
			watch_fail(w, -EPROTO, "a key or value that is not base64");
			return;
		}
		e = (struct etcd_event){
			.deleted = json_is_string(type) && strcmp(json_string_value(type), "DELETE") == 0,
			.key = k.key, .value = k.value, .mod_revision = k.mod_revision, .lease = k.lease,
		};
		if (w->fn)
			w->fn(&e, w->arg);
		if (k.mod_revision >= w->next)
			w->next = k.mod_revision + 1;
		free(k.key);
		free(k.value);
	}
}

static void line(struct etcd_watch *w, const char *text)
{
	json_error_t jerr;
	json_t *o = json_loads(text, 0, &jerr), *result, *err;

	if (!o) {
		watch_fail(w, -EPROTO, "a line that is not JSON");
		return;
	}
	if ((err = json_object_get(o, "error"))) {
		json_t *msg = json_object_get(err, "message");

		watch_fail(w, -EIO, json_is_string(msg) ? json_string_value(msg) : "the stream ended with an error");
	} else if ((result = json_object_get(o, "result"))) {
		if (etcd_num(result, "compact_revision")) {
			watch_fail(w, -ERANGE, "its start revision was compacted");
		} else if (json_is_true(json_object_get(result, "canceled"))) {
			watch_fail(w, -EIO, "canceled by etcd");
		} else {
			if (json_is_true(json_object_get(result, "created"))) {
				int64_t rev = etcd_num(json_object_get(result, "header"), "revision");

				w->created = true;
				if (w->next == 0)
					w->next = rev + 1;
			}
			if (w->fn)
				deliver(w, result);
			else if (json_object_get(result, "events"))
				json_array_append(w->pending, result);
		}
	}
	json_decref(o);
}

static size_t watch_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct etcd_watch *w = arg;
	size_t n = size * nmemb, start = 0, i;

	if (w->n + n + 1 > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		char *p;

		while (cap < w->n + n + 1)
			cap *= 2;
		if (cap > WATCH_LINE_MAX || !(p = realloc(w->buf, cap))) {
			watch_fail(w, -EPROTO, "a line too long");
			return 0;
		}
		w->buf = p;
		w->cap = cap;
	}
	memcpy(w->buf + w->n, data, n);
	w->n += n;
	for (i = 0; i < w->n; i++) {
		if (w->buf[i] != '\n')
			continue;
		w->buf[i] = '\0';
		if (i > start)
			line(w, w->buf + start);
		start = i + 1;
	}
	memmove(w->buf, w->buf + start, w->n - start);
	w->n -= start;
	return w->err ? 0 : n;
}

static int watch_start(struct etcd_watch *w, const char *endpoint)
{
	snprintf(w->url, sizeof(w->url), "%s/v3/watch", endpoint);
	if (!(w->curl = curl_easy_init()))
		return -ENOMEM;
	etcd_curl_setup(w->e, w->curl, &w->headers);
	curl_easy_setopt(w->curl, CURLOPT_URL, w->url);
	curl_easy_setopt(w->curl, CURLOPT_POSTFIELDS, w->req);
	curl_easy_setopt(w->curl, CURLOPT_WRITEFUNCTION, watch_write);
	curl_easy_setopt(w->curl, CURLOPT_WRITEDATA, w);
	curl_easy_setopt(w->curl, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
	curl_easy_setopt(w->curl, CURLOPT_NOSIGNAL, 1L);
	/* A member cut off from the others sends nothing: TCP keepalive
	 * finds a dead peer, the caller's own checks a silent one. */
	curl_easy_setopt(w->curl, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(w->curl, CURLOPT_TCP_KEEPIDLE, 2L);
	curl_easy_setopt(w->curl, CURLOPT_TCP_KEEPINTVL, 1L);
	curl_multi_add_handle(w->multi, w->curl);
	return 0;
}

static void watch_stop(struct etcd_watch *w)
{
	if (w->curl) {
		curl_multi_remove_handle(w->multi, w->curl);
		curl_easy_cleanup(w->curl);
		w->curl = NULL;
	}
	curl_slist_free_all(w->headers);
	w->headers = NULL;
	w->n = 0;
	w->created = false;
}

struct etcd_watch *etcd_watch_open(struct etcd *e, const char *prefix, int64_t from, char *why, size_t whylen)
{
	struct etcd_watch *w = calloc(1, sizeof(*w));
	json_t *req = json_object(), *create = etcd_range_json(prefix, true);
	unsigned i;

	if (!w || !req || !create) {
		snprintf(why, whylen, "out of memory");
		goto fail;
	}
	w->e = e;
	/* A token fresh for this stream: etcd checks it when the watch is
	 * made, and one that expired since the last request would fail it. */
	if (etcd_authenticate(e, why, whylen))
		goto fail;
	if (from > 0)
		json_object_set_new(create, "start_revision", etcd_num_json(from));
	json_object_set_new(req, "create_request", create);
	create = NULL;
	w->req = json_dumps(req, JSON_COMPACT);
	w->next = from > 0 ? from : 0;
	w->pending = json_array();
	if (!w->req || !w->pending || !(w->multi = curl_multi_init())) {
		snprintf(why, whylen, "out of memory");
		goto fail;
	}
	/* Each member in turn until one says the watch is created. */
	for (i = 0; i < etcd_nendpoints(e); i++) {
		const char *ep = etcd_nth_endpoint(e, i);
		int waited = 0, rc;

		w->err = 0;
		if (watch_start(w, ep)) {
			snprintf(why, whylen, "out of memory");
			goto fail;
		}
		while (!w->created && !w->err && waited < 1000 &&
		       !(etcd_hard_end(e) && now_ms() + 100 >= etcd_hard_end(e))) {
			rc = etcd_watch_poll(w, 100, NULL, NULL, why, whylen);
			if (rc)
				break;
			waited += 100;
		}
		if (w->created) {
			json_decref(req);
			return w;
		}
		watch_fail(w, -ETIMEDOUT, "no answer");
		copy_why(why, whylen, w->why);
		watch_stop(w);
	}
fail:
	json_decref(req);
	json_decref(create);
	etcd_watch_close(w);
	return NULL;
}

int etcd_watch_poll(struct etcd_watch *w, int timeout_ms, etcd_event_fn *fn, void *arg, char *why, size_t whylen)
{
	int running = 0, left;
	CURLMsg *msg;

	if (!w->curl) {
		copy_why(why, whylen, w->why[0] ? w->why : "etcd watch: closed");
		return w->err ? w->err : -EPIPE;
	}
	w->fn = fn;
	w->arg = arg;
	if (fn && json_array_size(w->pending)) {
		size_t i;
		json_t *result;

		json_array_foreach(w->pending, i, result)
			deliver(w, result);
		json_array_clear(w->pending);
	}
	curl_multi_perform(w->multi, &running);
	if (running && !w->err) {
		curl_multi_poll(w->multi, NULL, 0, timeout_ms, NULL);
		curl_multi_perform(w->multi, &running);
	}
	while ((msg = curl_multi_info_read(w->multi, &left)))
		if (msg->msg == CURLMSG_DONE && !w->err) {
			if (msg->data.result == CURLE_OK)
				watch_fail(w, -EPIPE, "the stream ended");
			else
				watch_fail(w, -EIO, curl_easy_strerror(msg->data.result));
		}
	w->fn = NULL;
	if (!running && !w->err)
		watch_fail(w, -EPIPE, "the stream ended");
	if (w->err) {
		copy_why(why, whylen, w->why);
		watch_stop(w);
		return w->err;
	}
	return 0;
}

int64_t etcd_watch_next(const struct etcd_watch *w)
{
	return w->next;
}

void etcd_watch_close(struct etcd_watch *w)
{
	if (!w)
		return;
	watch_stop(w);
	if (w->multi)
		curl_multi_cleanup(w->multi);
	json_decref(w->pending);
	free(w->req);
	free(w->buf);
	free(w);
}
