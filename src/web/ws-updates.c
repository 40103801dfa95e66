/* The live updates WebSocket (protocol "lodge-updates", path
 * /api/ws/updates): once a second every client gets the same message,
 *
 *   {"t": MS, "host": {GET /api/host}, "domains": [GET /api/domains's
 *    objects, each with "io": {disk_rd_bytes, disk_wr_bytes, net_rx_bytes,
 *    net_tx_bytes}]}
 *
 * built once for all of them; the page draws rates from two in a row.
 * Clients only listen: a frame from one closes it. */
#include "web.h"
#include "domain-list.h"

#include <jansson.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct updates_conn {
	struct web_session *session;
	char sid[WEB_TOKEN_HEX + 1];      /* the session it opened with: gone, the socket closes */
	unsigned long sent;               /* the generation it has */
	bool established;
};

static struct {
	char *msg;                        /* LWS_PRE bytes, then the message */
	size_t len;
	unsigned long gen;
	unsigned clients;
	lws_sorted_usec_list_t sul;
	struct lws_context *ctx;
	const struct lws_protocols *protocol;
} up;

/* What an update costs the server is mostly building it: fifty domains'
 * objects a second.  Each domain's object is kept from one update to the
 * next and its values changed in place (cols_json_update), and the text
 * goes into one buffer kept between updates, sent as it is to every
 * client. */
static json_t *dom_objs;                  /* name -> its object, the last update's domains */
static json_t *next_objs;                 /* the same, being filled for this one */
static char *buf;                         /* LWS_PRE bytes, then the message */
static size_t buf_size;

static json_t *domain_json(const struct lodge_status *st)
{
	struct list_row r;
	json_t *o = json_object_get(dom_objs, st->name), *io;

	if (!o || json_object_get(o, "why"))      /* new, or last listed as not asked */
		o = json_object();
	else
		json_incref(o);
	domain_list_row(&r, st);
	cols_json_update(o, domain_list_cols, domain_list_ncols, &r);
	if (!(io = json_object_get(o, "io"))) {
		io = json_object();
		json_object_set_new(o, "io", io);
	}
	json_object_set_new(io, "disk_rd_bytes", json_integer((json_int_t)st->disk_sum.in_bytes));
	json_object_set_new(io, "disk_wr_bytes", json_integer((json_int_t)st->disk_sum.out_bytes));
	json_object_set_new(io, "net_rx_bytes", json_integer((json_int_t)st->vif_sum.in_bytes));
	json_object_set_new(io, "net_tx_bytes", json_integer((json_int_t)st->vif_sum.out_bytes));
	json_object_set(next_objs, st->name, o);
	return o;
}

/* The poller keeps a connection to each domain between updates and asks
 * them all at once without waiting, as the dashboard samples: requests go
 * out on the second, the replies are taken from the loop every
 * GATHER_STEP_MS (one poll of the sockets whose replies are due), and the
 * update goes out once all are in or after UPDATE_WAIT_MS, a slower
 * domain listed as unknown (its reply taken at the next update). */
#define UPDATE_WAIT_MS 200
#define GATHER_STEP_MS 10
static struct lodge_poller *poller;
static struct {
	struct lodge_status *got;             /* this update's replies */
	unsigned n, cap;
	json_t *unasked;                      /* rows of the domains not asked, or slow */
	unsigned waited_ms;
	bool gathering;
	lws_sorted_usec_list_t sul;
} gather;

static void on_domain(const struct lodge_status *st, void *arg)
{
	(void)arg;
	if (gather.n == gather.cap) {
		unsigned cap = gather.cap ? gather.cap * 2 : 64;
		struct lodge_status *got = realloc(gather.got, cap * sizeof(*got));

		if (!got)
			return;
		gather.got = got;
		gather.cap = cap;
	}
	gather.got[gather.n++] = *st;
}

static void on_unasked(const char *name, const char *why, void *arg)
{
	struct lodge_unasked u;
	struct list_row r;
	json_t *o;

	(void)arg;
	snprintf(u.name, sizeof(u.name), "%s", name);
	snprintf(u.why, sizeof(u.why), "%s", why);
	domain_list_row_unasked(&r, &u);
	o = cols_json_row(domain_list_cols, domain_list_ncols, &r);
	json_object_set_new(o, "why", json_string(why));
	json_array_append_new(gather.unasked, o);
}

/* A domain slower than UPDATE_WAIT_MS: listed, its state unknown this
 * time (not left out: it would seem gone). */
static void on_late(const char *name, void *arg)
{
	on_unasked(name, "slow to answer", arg);
}

static int by_id(const void *a, const void *b)
{
	const struct lodge_status *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/* The message from what was gathered, into buf. */
static void build(void)
{
	static struct lodge_host h;
	struct lodge_status dom0;
	struct timespec ts;
	json_t *a = json_array(), *msg;
	size_t len;
	unsigned i;

	next_objs = json_object();
	lodge_host_status(&dom0);
	json_array_append_new(a, domain_json(&dom0));
	qsort(gather.got, gather.n, sizeof(gather.got[0]), by_id);
	for (i = 0; i < gather.n; i++)
		json_array_append_new(a, domain_json(&gather.got[i]));
	json_array_extend(a, gather.unasked);
	json_decref(dom_objs);                /* the domains gone go with it */
	dom_objs = next_objs;
	lodge_host_sample(&h);
	clock_gettime(CLOCK_REALTIME, &ts);
	msg = json_pack("{s:I,s:{s:i,s:I,s:I,s:f,s:f,s:I},s:o}", "t", (json_int_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
			"host", "nr_cpus", (int)h.ncpus, "total_memory_mib", (json_int_t)h.mem_total_mib, "free_memory_mib",
			(json_int_t)h.mem_avail_mib, "load1", h.load1, "cpu_pct", h.cpu_pct, "uptime_s",
			(json_int_t)h.uptime_s, "domains", a);
	json_object_set_new(msg, "jobs", web_jobs_json());
	len = json_dumpb(msg, buf ? buf + LWS_PRE : NULL, buf ? buf_size - LWS_PRE : 0,
			 JSON_COMPACT | JSON_REAL_PRECISION(15));
	if (len && (!buf || LWS_PRE + len > buf_size)) {
		size_t size = LWS_PRE + len + len / 4;
		char *b = realloc(buf, size);

		if (b) {
			buf = b;
			buf_size = size;
			len = json_dumpb(msg, buf + LWS_PRE, buf_size - LWS_PRE, JSON_COMPACT | JSON_REAL_PRECISION(15));
		} else {
			len = 0;
		}
	}
	json_decref(msg);
	if (!len)
		return;
	up.msg = buf;
	up.len = len;
	up.gen++;
}

static void gather_step(lws_sorted_usec_list_t *sul);

/* Ask every domain; the replies come in through gather_step. */
static void gather_start(void)
{
	if (!poller && (poller = lodge_poller_new())) {
		lodge_poller_patient(poller, UPDATE_WAIT_MS, on_late);
		lodge_poller_on_unasked(poller, on_unasked);
	}
	gather.n = 0;
	json_decref(gather.unasked);
	gather.unasked = json_array();
	gather.waited_ms = 0;
	gather.gathering = true;
	if (poller)
		lodge_poller_send(poller, web_lodge(), NULL);
	gather_step(&gather.sul);
}

static void gather_step(lws_sorted_usec_list_t *sul)
{
	int due = poller ? lodge_poller_collect(poller, web_lodge(), NULL, 0, on_domain, NULL) : 0;

	(void)sul;
	if (due > 0 && gather.waited_ms < UPDATE_WAIT_MS) {
		gather.waited_ms += GATHER_STEP_MS;
		lws_sul_schedule(up.ctx, 0, &gather.sul, gather_step, GATHER_STEP_MS * LWS_US_PER_MS);
		return;
	}
	if (due > 0)
		lodge_poller_late(poller, NULL);
	gather.gathering = false;
	build();
	lws_callback_on_writable_all_protocol(up.ctx, up.protocol);
}

static void tick(lws_sorted_usec_list_t *sul)
{
	(void)sul;
	if (up.clients) {
		if (!gather.gathering)
			gather_start();
		lws_sul_schedule(up.ctx, 0, &up.sul, tick, LWS_US_PER_SEC);
	}
}

static int updates_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct updates_conn *c = user;

	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		if (!(c->session = web_ws_admit(wsi, "/api/ws/updates", NULL, 0)))
			return -1;
		memcpy(c->sid, c->session->id, sizeof(c->sid));
		return 0;
	case LWS_CALLBACK_ESTABLISHED:
		c->established = true;
		up.ctx = lws_get_context(wsi);
		up.protocol = lws_get_protocol(wsi);
		if (!up.clients++) {
			gather_start();
			lws_sul_schedule(up.ctx, 0, &up.sul, tick, LWS_US_PER_SEC);
		}
		lws_callback_on_writable(wsi);
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		if (!web_token_equal(c->session->id, c->sid)) {
			lws_close_reason(wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION, (unsigned char *)"logged out", 10);
			return -1;
		}
		if (!up.msg || c->sent == up.gen)
			return 0;
		c->sent = up.gen;
		return lws_write(wsi, (unsigned char *)up.msg + LWS_PRE, up.len, LWS_WRITE_TEXT) < (int)up.len ? -1 : 0;
	case LWS_CALLBACK_RECEIVE:
		return -1;
	case LWS_CALLBACK_CLOSED:
		if (c->established && up.clients && !--up.clients) {
			/* No one watches: no timer, no connections to the domains. */
			lws_sul_cancel(&up.sul);
			lws_sul_cancel(&gather.sul);
			gather.gathering = false;
			lodge_poller_free(poller);
			poller = NULL;
			json_decref(dom_objs);
			dom_objs = NULL;
			/* Nor a last message: the next first watcher would be
			 * sent it at once, domains long gone and all. */
			up.msg = NULL;
			up.len = 0;
		}
		c->established = false;
		return 0;
	default:
		return 0;
	}
}

const struct lws_protocols web_updates_protocol = { "lodge-updates", updates_cb, sizeof(struct updates_conn), 512, 0,
						    NULL, 0 };
