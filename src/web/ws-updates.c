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

static json_t *domain_json(const struct lodge_status *st)
{
	struct list_row r;
	json_t *o;

	domain_list_row(&r, st);
	o = cols_json_row(domain_list_cols, domain_list_ncols, &r);
	json_object_set_new(o, "io", json_pack("{s:I,s:I,s:I,s:I}", "disk_rd_bytes", (json_int_t)st->disk_sum.in_bytes,
					       "disk_wr_bytes", (json_int_t)st->disk_sum.out_bytes, "net_rx_bytes",
					       (json_int_t)st->vif_sum.in_bytes, "net_tx_bytes",
					       (json_int_t)st->vif_sum.out_bytes));
	return o;
}

/* The poller keeps a connection to each domain between updates and asks
 * them all at once (the dashboard's sampler); a domain slow to answer is
 * left for the next update after UPDATE_WAIT_MS, so none holds the loop. */
#define UPDATE_WAIT_MS 200
static struct lodge_poller *poller;

static void on_domain(const struct lodge_status *st, void *arg)
{
	json_array_append_new(arg, domain_json(st));
}

static void on_unasked(const char *name, const char *why, void *arg)
{
	struct lodge_unasked u;
	struct list_row r;
	json_t *o;

	snprintf(u.name, sizeof(u.name), "%s", name);
	snprintf(u.why, sizeof(u.why), "%s", why);
	domain_list_row_unasked(&r, &u);
	o = cols_json_row(domain_list_cols, domain_list_ncols, &r);
	json_object_set_new(o, "why", json_string(why));
	json_array_append_new(arg, o);
}

/* A domain slower than UPDATE_WAIT_MS: listed, its state unknown this
 * time (not left out: it would seem gone). */
static void on_late(const char *name, void *arg)
{
	on_unasked(name, "slow to answer", arg);
}

static void build(void)
{
	static struct lodge_host h;
	struct lodge_status dom0;
	struct timespec ts;
	json_t *a = json_array(), *msg;
	char *text;

	if (!poller && (poller = lodge_poller_new())) {
		lodge_poller_patient(poller, UPDATE_WAIT_MS, on_late);
		lodge_poller_on_unasked(poller, on_unasked);
	}
	lodge_host_status(&dom0);
	json_array_append_new(a, domain_json(&dom0));
	if (poller)
		lodge_poller_scan(poller, web_lodge(), on_domain, a);
	lodge_host_sample(&h);
	clock_gettime(CLOCK_REALTIME, &ts);
	msg = json_pack("{s:I,s:{s:i,s:I,s:I,s:f,s:f,s:I},s:o}", "t", (json_int_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
			"host", "nr_cpus", (int)h.ncpus, "total_memory_mib", (json_int_t)h.mem_total_mib, "free_memory_mib",
			(json_int_t)h.mem_avail_mib, "load1", h.load1, "cpu_pct", h.cpu_pct, "uptime_s",
			(json_int_t)h.uptime_s, "domains", a);
	json_object_set_new(msg, "jobs", web_jobs_json());
	text = json_dumps(msg, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(msg);
	if (!text)
		return;
	free(up.msg);
	up.len = strlen(text);
	if ((up.msg = malloc(LWS_PRE + up.len)))
		memcpy(up.msg + LWS_PRE, text, up.len);
	free(text);
	up.gen++;
}

static void tick(lws_sorted_usec_list_t *sul)
{
	if (up.clients) {
		build();
		lws_callback_on_writable_all_protocol(up.ctx, up.protocol);
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
			build();
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
			lodge_poller_free(poller);
			poller = NULL;
		}
		c->established = false;
		return 0;
	default:
		return 0;
	}
}

const struct lws_protocols web_updates_protocol = { "lodge-updates", updates_cb, sizeof(struct updates_conn), 512, 0,
						    NULL, 0 };
