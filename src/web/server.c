/* The listener and every HTTP request's way in (libwebsockets: one
 * event loop for HTTP, the WebSockets and TLS; README says why).
 *
 * Each request passes, in order, before any route sees it:
 *   Host      an IP address, localhost, this host's name or --server-name, else 403:
 *             a page of another site whose name was rebound to this
 *             address (DNS rebinding) sends its own name
 *   method    GET or POST, else 405
 *   the page  its fixed list of files (static.c), no session needed
 *   Origin    absent (curl), or this server's own, else 403
 *   body      a POST's Content-Length (no Transfer-Encoding, else 411) at
 *             most WEB_BODY_MAX, else 413 and the connection closed
 *             unread; JSON, else 415
 *   session   its cookie, else 401 (only POST /api/login goes without:
 *             its password is checked on login.c's thread, its answer
 *             given when that is done)
 *   CSRF      a POST's X-CSRF-Token header is the session's, else 403
 * and the route checks the role (api.c). */
#include "web.h"
#include "log.h"
#include "exit-status.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libwebsockets.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOGIN_URI "/api/login"
#define CSRF_HEADER "x-csrf-token:"

struct http_conn {
	struct web_request req;
	char *body;                       /* LWS_PRE headroom not needed: read only */
	size_t body_len;
	bool body_too_big;
	char *out;                        /* the response body, LWS_PRE bytes in */
	size_t out_len;
	bool close_after;
	/* A request has one answer: once it is given (a refusal before the
	 * body, too), the body's callbacks are dropped and no route runs. */
	bool answered;
	/* Its body is still to come (a Content-Length or Transfer-Encoding):
	 * answered before it, the connection is closed after the answer,
	 * as the unread body would otherwise be parsed as the next request. */
	bool body_pending;
	struct web_login_job *login;      /* its password being checked (login.c) */
};

static struct lodge *server_lg;
static char server_name[254];         /* --server-name: "" none */
static bool server_tls;
static volatile sig_atomic_t stopping, reloading;
static struct lws_context *server_ctx;

const struct lodge *web_lodge(void)
{
	return server_lg;
}

static void conn_reset(struct http_conn *c)
{
	free(c->body);
	free(c->out);
	memset(c, 0, sizeof(*c));
}

/* ---- checks ---------------------------------------------------------------------------- */

static bool ip_literal(const char *name)
{
	unsigned char buf[16];
	char v6[64];
	size_t n = strlen(name);

	if (inet_pton(AF_INET, name, buf) == 1)
		return true;
	if (n > 2 && n < sizeof(v6) && name[0] == '[' && name[n - 1] == ']') {
		memcpy(v6, name + 1, n - 2);
		v6[n - 2] = '\0';
		return inet_pton(AF_INET6, v6, buf) == 1;
	}
	return false;
}

/* The Host header's name (its port cut off) is one a rebinding attack
 * cannot send. */
static bool host_allowed(const char *host)
{
	char name[256], me[256];
	const char *colon = host[0] == '[' ? strstr(host, "]:") : strrchr(host, ':');
	size_t n = colon ? (size_t)(colon - host) + (host[0] == '[') : strlen(host);

	if (!host[0] || n >= sizeof(name))
		return false;
	memcpy(name, host, n);
	name[n] = '\0';
	if (colon && strspn(colon + 1 + (host[0] == '['), "0123456789") != strlen(colon + 1 + (host[0] == '[')))
		return false;
	if (ip_literal(name) || strcasecmp(name, "localhost") == 0 ||
	    (server_name[0] && strcasecmp(name, server_name) == 0))
		return true;
	return gethostname(me, sizeof(me)) == 0 && strcasecmp(name, me) == 0;
}

static int header(struct lws *wsi, enum lws_token_indexes t, char *out, int len)
{
	out[0] = '\0';
	if (lws_hdr_total_length(wsi, t) >= len)
		return -E2BIG;
	return lws_hdr_copy(wsi, out, len, t) < 0 ? -EINVAL : 0;
}

/* ---- responses ------------------------------------------------------------------------- */

/* Headers now, the body when the socket can take it (WRITEABLE). */
static int respond(struct lws *wsi, struct http_conn *c, struct web_response *r)
{
	unsigned char buf[LWS_PRE + 2048], *start = buf + LWS_PRE, *p = start, *end = buf + sizeof(buf) - 1;
	size_t len = r->body ? strlen(r->body) : 0;
	static const char nosniff[] = "nosniff", nostore[] = "no-store";

	c->answered = true;
	if (c->body_pending)
		c->close_after = true;
	if (!(c->out = malloc(LWS_PRE + len + 1))) {
		free(r->body);
		return -1;
	}
	memcpy(c->out + LWS_PRE, r->body ? r->body : "", len);
	c->out_len = len;
	free(r->body);
	r->body = NULL;
	if (lws_add_http_common_headers(wsi, r->status, "application/json", len, &p, end) ||
	    lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:", (const unsigned char *)nostore,
					sizeof(nostore) - 1, &p, end) ||
	    lws_add_http_header_by_name(wsi, (const unsigned char *)"x-content-type-options:",
					(const unsigned char *)nosniff, sizeof(nosniff) - 1, &p, end) ||
	    (r->cookie[0] && lws_add_http_header_by_name(wsi, (const unsigned char *)"set-cookie:",
							 (const unsigned char *)r->cookie, (int)strlen(r->cookie), &p, end)) ||
	    lws_finalize_write_http_header(wsi, start, &p, end))
		return -1;
	lws_callback_on_writable(wsi);
	return 0;
}

static int respond_error(struct lws *wsi, struct http_conn *c, unsigned status, const char *msg)
{
	struct web_response r = { 0 };

	web_error(&r, status, "%s", msg);
	return respond(wsi, c, &r);
}

/* The page's files, with headers that keep it to itself: nothing from
 * elsewhere, never in another site's frame. */
static int serve_file(struct lws *wsi, const char *path, const char *mime, bool close_after)
{
	static const char csp[] = "default-src 'self'; connect-src 'self'; img-src 'self' data:; "
				  "style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
	unsigned char extra[1024], *p = extra, *end = extra + sizeof(extra);
	int rc;

	if (lws_add_http_header_by_name(wsi, (const unsigned char *)"content-security-policy:",
					(const unsigned char *)csp, sizeof(csp) - 1, &p, end) ||
	    lws_add_http_header_by_name(wsi, (const unsigned char *)"x-frame-options:", (const unsigned char *)"DENY", 4,
					&p, end) ||
	    lws_add_http_header_by_name(wsi, (const unsigned char *)"x-content-type-options:",
					(const unsigned char *)"nosniff", 7, &p, end) ||
	    lws_add_http_header_by_name(wsi, (const unsigned char *)"referrer-policy:",
					(const unsigned char *)"no-referrer", 11, &p, end))
		return -1;
	rc = lws_serve_http_file(wsi, path, mime, (const char *)extra, (int)(p - extra));
	if (rc < 0)
		return -1;
	return rc > 0 && (close_after || lws_http_transaction_completed(wsi)) ? -1 : 0;
}

/* ---- a request --------------------------------------------------------------------------- */

/* Everything past the body: the session, the CSRF token, the route. */
static int handle(struct lws *wsi, struct http_conn *c)
{
	struct web_response r = { 0 };
	char cookie[1024], token[WEB_TOKEN_HEX + 2];
	bool login = c->req.post && strcmp(c->req.uri, LOGIN_URI) == 0;

	c->req.body = c->body ? c->body : "";
	c->req.body_len = c->body_len;
	c->req.tls = server_tls;
	if (!login) {
		if (header(wsi, WSI_TOKEN_HTTP_COOKIE, cookie, sizeof(cookie)) ||
		    !(c->req.session = web_session_find(cookie)))
			return respond_error(wsi, c, 401, "not logged in (POST /api/login)");
		if (c->req.post) {
			token[0] = '\0';
			if (lws_hdr_custom_length(wsi, CSRF_HEADER, (int)strlen(CSRF_HEADER)) <= 0 ||
			    lws_hdr_custom_copy(wsi, token, sizeof(token), CSRF_HEADER, (int)strlen(CSRF_HEADER)) < 0 ||
			    !web_token_equal(token, c->req.session->csrf))
				return respond_error(wsi, c, 403, "no valid X-CSRF-Token (the login's csrf)");
		}
	}
	web_api(&c->req, &r);
	if (r.login) {
		c->login = r.login;       /* answered by login_done */
		r.login->wsi = wsi;
		return 0;
	}
	return respond(wsi, c, &r);
}

/* A password check is done (login.c): its answer to its connection. */
static void login_done(struct web_login_job *job, void *arg)
{
	struct http_conn *c = lws_wsi_user(job->wsi);
	struct web_response r = { 0 };

	(void)arg;
	c->login = NULL;
	web_login_finish(job, &r);
	if (respond(job->wsi, c, &r))
		lws_set_timeout(job->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

static int on_request(struct lws *wsi, struct http_conn *c, const char *uri)
{
	char host[256], origin[300], want[300], len[32], ctype[128], path[600];
	const char *mime;
	unsigned long long clen;

	conn_reset(c);
	c->body_pending = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0 ||
			  (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0 &&
			   !(header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH, len, sizeof(len)) == 0 &&
			     strspn(len, "0") == strlen(len)));
	lws_get_peer_simple(wsi, c->req.peer, sizeof(c->req.peer));
	if (strlen(uri) >= WEB_URI_MAX)
		return respond_error(wsi, c, 414, "the path is too long");
	snprintf(c->req.uri, sizeof(c->req.uri), "%s", uri);
	if (header(wsi, WSI_TOKEN_HOST, host, sizeof(host)) || !host_allowed(host))
		return respond_error(wsi, c, 403, "this Host is not this server's (an address, localhost or its name)");
	c->req.post = lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0;
	if (!c->req.post && lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) <= 0) {
		c->close_after = true;
		return respond_error(wsi, c, 405, "only GET and POST");
	}
	if (!c->req.post && web_static_find(uri, path, sizeof(path), &mime) == 0) {
		c->answered = true;
		c->close_after = c->body_pending;
		return serve_file(wsi, path, mime, c->close_after);
	}
	if (strncmp(uri, "/api/", 5) != 0)
		return respond_error(wsi, c, 404, "no such page");
	snprintf(want, sizeof(want), "%s://%s", server_tls ? "https" : "http", host);
	if (!header(wsi, WSI_TOKEN_ORIGIN, origin, sizeof(origin)) && origin[0] && strcmp(origin, want) != 0)
		return respond_error(wsi, c, 403, "a request from another site's page (Origin)");
	if (!c->req.post)
		return handle(wsi, c);
	/* A body's length is known before it is read (WEB_BODY_MAX): no
	 * chunked bodies. */
	if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0)
		return respond_error(wsi, c, 411, "a POST's body needs a Content-Length (no Transfer-Encoding)");
	if (header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH, len, sizeof(len)) ||
	    (len[0] && (strspn(len, "0123456789") != strlen(len) || strlen(len) > 12))) {
		c->close_after = true;
		return respond_error(wsi, c, 400, "a bad Content-Length");
	}
	clen = len[0] ? strtoull(len, NULL, 10) : 0;
	if (clen > WEB_BODY_MAX) {
		c->close_after = true;        /* its body is never read */
		return respond_error(wsi, c, 413, "the body is larger than 64 KiB");
	}
	if (clen && (header(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE, ctype, sizeof(ctype)) ||
		     strncasecmp(ctype, "application/json", 16) != 0)) {
		c->close_after = true;
		return respond_error(wsi, c, 415, "the body must be JSON (Content-Type: application/json)");
	}
	if (!clen)
		return handle(wsi, c);
	return 0;                         /* the body comes: HTTP_BODY, then BODY_COMPLETION */
}

static int http_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct http_conn *c = user;
	char *grown;

	switch (reason) {
	case LWS_CALLBACK_HTTP:
		return on_request(wsi, c, in);
	case LWS_CALLBACK_HTTP_BODY:
		if (c->answered)
			return 0;         /* refused already: the body is dropped unread */
		if (c->body_too_big || c->body_len + len > WEB_BODY_MAX) {
			c->body_too_big = true;
			return 0;
		}
		if (!(grown = realloc(c->body, c->body_len + len + 1)))
			return -1;
		c->body = grown;
		memcpy(c->body + c->body_len, in, len);
		c->body_len += len;
		c->body[c->body_len] = '\0';
		return 0;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		c->body_pending = false;
		if (c->answered)
			return 0;         /* never the route of a refused request */
		if (c->body_too_big) {
			c->close_after = true;
			return respond_error(wsi, c, 413, "the body is larger than 64 KiB");
		}
		return handle(wsi, c);
	case LWS_CALLBACK_HTTP_WRITEABLE:
		if (!c || !c->out)
			return 0;
		if (lws_write(wsi, (unsigned char *)c->out + LWS_PRE, c->out_len, LWS_WRITE_HTTP_FINAL) != (int)c->out_len)
			return -1;
		free(c->out);
		c->out = NULL;
		if (c->close_after)
			return -1;
		return lws_http_transaction_completed(wsi) ? -1 : 0;
	case LWS_CALLBACK_HTTP_FILE_COMPLETION:
		if (c && c->close_after)
			return -1;
		return lws_http_transaction_completed(wsi) ? -1 : 0;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		web_login_each_done(login_done, NULL);
		return 0;
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		if (c) {
			if (c->login)
				web_login_abandon(c->login);
			conn_reset(c);
		}
		return 0;
	default:
		break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* ---- WebSockets ------------------------------------------------------------------------- */

struct web_session *web_ws_admit(struct lws *wsi, const char *prefix, char *word, size_t wordlen)
{
	char host[256], origin[300], want[300], uri[WEB_URI_MAX], cookie[1024];
	size_t n = strlen(prefix);
	const char *rest;

	if (header(wsi, WSI_TOKEN_HOST, host, sizeof(host)) || !host_allowed(host) ||
	    header(wsi, WSI_TOKEN_ORIGIN, origin, sizeof(origin)) ||
	    header(wsi, WSI_TOKEN_GET_URI, uri, sizeof(uri)) || header(wsi, WSI_TOKEN_HTTP_COOKIE, cookie, sizeof(cookie)))
		return NULL;
	/* A WebSocket is not held to the same origin by the browser: the
	 * server must see that the page is its own. */
	snprintf(want, sizeof(want), "%s://%s", server_tls ? "https" : "http", host);
	if (strcmp(origin, want) != 0 || strncmp(uri, prefix, n) != 0)
		return NULL;
	rest = uri + n;
	if (word) {
		if (!*rest || strlen(rest) >= wordlen || strchr(rest, '/'))
			return NULL;
		snprintf(word, wordlen, "%s", rest);
	} else if (*rest) {
		return NULL;
	}
	return web_session_find(cookie);
}

static const struct lws_protocols http_protocol = { "http", http_cb, sizeof(struct http_conn), 0, 0, NULL, 0 };
static const struct lws_protocols *protocols[] = {
	&http_protocol, &web_updates_protocol, &web_console_protocol, &web_console_fd_protocol, &web_jobs_protocol, NULL,
};

/* ---- the listener ------------------------------------------------------------------------ */

/* ADDR:PORT or [ADDR6]:PORT into addr and port: 0, or -EINVAL. */
static int parse_listen(const char *listen, char *addr, size_t len, int *port, bool *loopback)
{
	const char *colon = listen[0] == '[' ? strstr(listen, "]:") : strrchr(listen, ':');
	const char *a = listen + (listen[0] == '['), *ps;
	size_t n;
	unsigned char bin[16];
	char *end;
	long p;

	if (!colon)
		return -EINVAL;
	n = (size_t)(colon - a);
	ps = colon + 1 + (listen[0] == '[');
	if (!n || n >= len)
		return -EINVAL;
	memcpy(addr, a, n);
	addr[n] = '\0';
	errno = 0;
	p = strtol(ps, &end, 10);
	if (!*ps || *end || errno || p < 1 || p > 65535 || strspn(ps, "0123456789") != strlen(ps))
		return -EINVAL;
	*port = (int)p;
	if (inet_pton(AF_INET, addr, bin) == 1)
		*loopback = bin[0] == 127;
	else if (listen[0] == '[' && inet_pton(AF_INET6, addr, bin) == 1)
		*loopback = IN6_IS_ADDR_LOOPBACK((struct in6_addr *)bin);
	else
		return -EINVAL;
	return 0;
}

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reloading = 1;
	else
		stopping = 1;
	if (server_ctx)
		lws_cancel_service(server_ctx);
}

/* SIGHUP, as dnsmasq and nginx: lodge.conf read again, whole, between two
 * requests (the loop is the only thread that reads it), so the next
 * request has the new settings.  One that does not load changes nothing:
 * the old settings stay, and one line says why. */
static void reload_config(void)
{
	static struct host_config fresh;
	char why[LODGE_ERR_MAX];

	reloading = 0;
	if (host_config_load(&fresh, why, sizeof(why))) {
		why[strcspn(why, "\n")] = '\0';
		log_err("lodge.conf not reloaded, the settings stay as they were: %s", why);
		return;
	}
	server_lg->hc = fresh;
	web_lend_default_guest(&server_lg->hc);
	log_info("lodge.conf reloaded");
}

static void lws_log(int level, const char *line)
{
	char buf[512];
	size_t n = strcspn(line, "\n");

	snprintf(buf, sizeof(buf), "%.*s", (int)n, line);
	if (level & LLL_ERR)
		log_err("libwebsockets: %s", buf);
	else
		log_warn("libwebsockets: %s", buf);
}

int web_serve(struct lodge *lg, const struct web_options *o)
{
	struct lws_context_creation_info info;
	char addr[64];
	int port;
	bool loopback;
	struct sigaction sa = { .sa_handler = on_signal };

	if (parse_listen(o->listen, addr, sizeof(addr), &port, &loopback)) {
		log_err("--listen '%s' is not ADDR:PORT (an IPv4 address, or [IPv6]:PORT, and a port 1-65535)",
			o->listen);
		return EXIT_USAGE;
	}
	if (!loopback && !o->cert) {
		log_err("--listen %s is not a loopback address: it needs TLS (--cert FILE --key FILE)", o->listen);
		return EXIT_USAGE;
	}
	if (o->server_name && (!o->server_name[0] || strlen(o->server_name) >= sizeof(server_name) ||
			       strspn(o->server_name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") !=
				       strlen(o->server_name))) {
		log_err("--server-name '%s' is not a DNS name (letters, digits, '.' and '-')", o->server_name);
		return EXIT_USAGE;
	}
	snprintf(server_name, sizeof(server_name), "%s", o->server_name ? o->server_name : "");
	if (o->cert && (access(o->cert, R_OK) || access(o->key, R_OK))) {
		log_err("cannot read %s: %s", access(o->cert, R_OK) ? o->cert : o->key, strerror(errno));
		return EXIT_FAILED;
	}
	web_api_openlog();
	server_lg = lg;
	web_lend_default_guest(&lg->hc);
	server_tls = o->cert != NULL;
	lws_set_log_level(LLL_ERR, lws_log);
	memset(&info, 0, sizeof(info));
	info.port = port;
	info.iface = addr;
	info.pprotocols = protocols;
	info.vhost_name = "lodge";
	info.alpn = "http/1.1";
	info.options = LWS_SERVER_OPTION_VALIDATE_UTF8;
	if (server_tls) {
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		info.ssl_cert_filepath = o->cert;
		info.ssl_private_key_filepath = o->key;
	}
	if (!(server_ctx = lws_create_context(&info))) {
		log_err("cannot serve on %s%s", o->listen,
			server_tls ? " (is the address this host's, the port free, the certificate and key a pair?)"
				   : " (is the address this host's and the port free?)");
		return EXIT_FAILED;
	}
	if (web_login_start(server_ctx)) {
		log_err("cannot start the thread of password checks");
		lws_context_destroy(server_ctx);
		return EXIT_FAILED;
	}
	web_jobs_vhost(lws_get_vhost_by_name(server_ctx, "lodge"));
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	log_info("serving on %s://%s", server_tls ? "https" : "http", o->listen);
	while (!stopping && lws_service(server_ctx, 0) >= 0)
		if (reloading)
			reload_config();
	lws_context_destroy(server_ctx);
	server_ctx = NULL;
	return EXIT_OK;
}
