/* The JSON API (lodge-web(8)): one table of routes, each with its method,
 * its path, the role it needs and its handler.  A request reaches a
 * handler only with a session (but the login), and a POST only with its
 * CSRF token (server.c); the role is checked here, from the table.  Every
 * change to a domain is asked of its lodge-hyp with the face
 * "web-USER", so the event log says which web user did it. */
#include "web.h"
#include "domain-list.h"
#include "network-list.h"
#include "log.h"
#include "pool.h"
#include "pool-list.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

enum need { NEED_NONE, NEED_VIEWER, NEED_ADMIN };

struct route {
	bool post;
	const char *path;                 /* a star: one word of the path there (a name) */
	const char *verb;                 /* after the word: "pause" of /api/domains/NAME/pause */
	enum need need;
	void (*fn)(const struct web_request *req, const char *word, struct web_response *resp);
};

void web_reply_json(struct web_response *resp, unsigned status, json_t *j)
{
	resp->status = status;
	resp->body = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(j);
}

void web_error(struct web_response *resp, unsigned status, const char *fmt, ...)
{
	char msg[LODGE_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	web_reply_json(resp, status, json_pack("{s:s}", "error", msg));
}

/* The library's refusal: lodge-hyp's lines as they are, else its sentence. */
void web_reply_lodge_err(struct web_response *resp, int rc, const struct lodge_err *err)
{
	unsigned status = rc == -ENOENT ? 404 : rc == -EINVAL ? 400 : rc == -EACCES ? 403
			 : rc == -EBUSY || rc == -EEXIST || rc == -EAGAIN ? 409 : 500;

	web_error(resp, status, "%s", err->msg[0] ? err->msg : strerror(-rc));
}

json_t *web_body_json(const struct web_request *req, struct web_response *resp)
{
	json_error_t e;
	json_t *j = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &e);

	if (!j || !json_is_object(j)) {
		json_decref(j);
		web_error(resp, 400, "the body is not a JSON object%s%s", j ? "" : ": ", j ? "" : e.text);
		return NULL;
	}
	return j;
}

/* Logins, failed ones and logouts go to syslog's authpriv: they are no
 * domain's event (the event log has each change a user makes).  Here,
 * not in server.c: syslog.h's LOG_ERR and LOG_INFO are macros that would
 * replace log.h's levels of the same names. */
void web_api_openlog(void)
{
	openlog("lodge-web", LOG_PID, LOG_AUTHPRIV);
}

/* ---- the session ------------------------------------------------------------------------ */

/* The session, and the order the dashboard sorts states in (proto.h's
 * enum): the page sorts its State column by it, not by the words. */
static void session_json(struct web_response *resp, unsigned status, const struct web_session *s)
{
	json_t *order = json_array();
	unsigned i;

	for (i = 0; i < DOMAIN_STATE_COUNT; i++)
		json_array_append_new(order, json_string(domain_state_name((enum domain_state)i)));
	web_reply_json(resp, status, json_pack("{s:s,s:s,s:s,s:o}", "user", s->user, "role", web_role_name(s->role),
					   "csrf", s->csrf, "state_order", order));
}

/* The body read and the limits passed, the password is checked on
 * login.c's thread: the answer, web_login_finish, comes when it is done. */
static void do_login(const struct web_request *req, const char *word, struct web_response *resp)
{
	const char *user = NULL, *password = NULL;
	char name[WEB_USER_MAX + 1];
	enum web_login_scope by = WEB_LOGIN_BY_ADDR;
	long wait;
	json_t *j;

	if (!(j = web_body_json(req, resp)))
		return;
	if (json_unpack(j, "{s:s,s:s}", "user", &user, "password", &password) || strlen(password) > WEB_PASSWORD_MAX) {
		json_decref(j);
		web_error(resp, 400, "the body is {\"user\": ..., \"password\": ...}");
		return;
	}
	/* A name longer than a user's is no user's: checked (a hash spent all
	 * the same) as the name cut to that length, which cannot match. */
	snprintf(name, sizeof(name), "%.*s", WEB_USER_MAX, user);
	if ((wait = web_login_admit(req->peer, name, &by))) {
		json_decref(j);
		syslog(LOG_AUTHPRIV | LOG_WARNING, "login refused from %s: too many failures %s (%ld s to wait)",
		       req->peer, by == WEB_LOGIN_BY_USER ? "for one user name" : "from this address", wait);
		web_error(resp, 429, "too many failed logins %s %s: try again in %ld s", web_login_scope_what(by),
			  by == WEB_LOGIN_BY_USER ? name : req->peer, wait);
		return;
	}
	resp->login = web_login_queue(strlen(user) <= WEB_USER_MAX ? name : "", password, req->peer, req->tls);
	json_decref(j);
	if (!resp->login)
		web_error(resp, 503, "too many logins at once (%d wait): try again", WEB_LOGIN_PENDING_MAX);
}

void web_login_finish(struct web_login_job *job, struct web_response *resp)
{
	struct web_session *s;

	if (job->rc < 0) {
		web_error(resp, 500, "the users file cannot be read (%s): lodge web-passwd makes it",
			  job->rc == -EPERM ? "others may write it" : strerror(-job->rc));
		return;
	}
	web_login_result(job->peer, job->user, job->rc == 1);
	if (job->rc != 1) {
		/* The name as typed may be anything: not logged, so no password
		 * typed into the user field lands in the log. */
		syslog(LOG_AUTHPRIV | LOG_WARNING, "failed login from %s", job->peer);
		web_error(resp, 401, "wrong user or password");
		return;
	}
	if (!(s = web_session_new(job->user, job->role))) {
		web_error(resp, 500, "no randomness for a session");
		return;
	}
	syslog(LOG_AUTHPRIV | LOG_NOTICE, "%s (%s) logged in from %s", job->user, web_role_name(job->role), job->peer);
	snprintf(resp->cookie, sizeof(resp->cookie), "%s=%s; Path=/; HttpOnly; SameSite=Strict%s", WEB_COOKIE, s->id,
		 job->tls ? "; Secure" : "");
	session_json(resp, 200, s);
}

static void do_logout(const struct web_request *req, const char *word, struct web_response *resp)
{
	syslog(LOG_AUTHPRIV | LOG_NOTICE, "%s logged out from %s", req->session->user, req->peer);
	web_session_end(req->session);
	snprintf(resp->cookie, sizeof(resp->cookie), "%s=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0%s",
		 WEB_COOKIE, req->tls ? "; Secure" : "");
	web_reply_json(resp, 200, json_object());
}

static void get_session(const struct web_request *req, const char *word, struct web_response *resp)
{
	session_json(resp, 200, req->session);
}

/* ---- domains ------------------------------------------------------------------------------ */

static json_t *status_json(const struct lodge_status *st)
{
	struct list_row r;

	domain_list_row(&r, st);
	return cols_json_row(domain_list_cols, domain_list_ncols, &r);
}

static void get_domains(const struct web_request *req, const char *word, struct web_response *resp)
{
	struct lodge_status dom0;
	struct lodge_list l;
	struct lodge_err err;
	json_t *a = json_array();
	unsigned i;
	int rc;

	lodge_host_status(&dom0);
	json_array_append_new(a, status_json(&dom0));
	if ((rc = lodge_list(web_lodge(), &l, &err))) {
		json_decref(a);
		web_reply_lodge_err(resp, rc, &err);
		return;
	}
	for (i = 0; i < l.n; i++)
		json_array_append_new(a, status_json(&l.dom[i]));
	for (i = 0; i < l.nunasked; i++) {
		struct list_row r;
		json_t *o;

		domain_list_row_unasked(&r, &l.unasked[i]);
		o = cols_json_row(domain_list_cols, domain_list_ncols, &r);
		json_object_set_new(o, "why", json_string(l.unasked[i].why));
		json_array_append_new(a, o);
	}
	lodge_list_free(&l);
	web_reply_json(resp, 200, a);
}

/* The face the domain's lodge-hyp is told: web-USER (the event log's via=). */
void web_as_user(const struct web_request *req)
{
	char face[WEB_USER_MAX + 8];

	snprintf(face, sizeof(face), "web-%s", req->session->user);
	lodge_set_face(face);
}

static void lifecycle(const struct web_request *req, const char *name, struct web_response *resp,
		      int (*fn)(const struct lodge *, const char *, struct lodge_err *))
{
	struct lodge_err err;
	int rc;

	web_as_user(req);
	if ((rc = fn(web_lodge(), name, &err)))
		web_reply_lodge_err(resp, rc, &err);
	else
		web_reply_json(resp, 200, json_pack("{s:s}", "name", name));
}

/* A pool host's shutdown and destroy: the pool's stop first, as the
 * command line's (pool_stop_domain: desired stopped in etcd, its owner's
 * agent stops it wherever it runs); the local verb when the domain is
 * not the pool's, or the pool does not answer and it runs here. */
static int pool_stop(const struct lodge *lg, const char *name, const char *how, struct lodge_err *err)
{
	char why[ETCD_WHY_MAX];
	int rc = pool_stop_domain(lg, name, how, 0, why, sizeof(why));

	if (rc == POOL_STOP_HERE)
		log_warn("%s", why);
	if (rc == -ENOENT || rc == POOL_STOP_HERE)
		return strcmp(how, POOL_STOP_DESTROY) == 0 ? lodge_destroy(lg, name, err) : lodge_shutdown(lg, name, 0, err);
	if (rc)
		snprintf(err->msg, sizeof(err->msg), "%s", why);
	return rc;
}

static int shutdown_now(const struct lodge *lg, const char *name, struct lodge_err *err)
{
	return pool_stop(lg, name, POOL_STOP_SHUTDOWN, err);
}

static int destroy_now(const struct lodge *lg, const char *name, struct lodge_err *err)
{
	return pool_stop(lg, name, POOL_STOP_DESTROY, err);
}

#define LIFECYCLE(fn, call) \
	static void fn(const struct web_request *req, const char *name, struct web_response *resp) \
	{ lifecycle(req, name, resp, call); }
LIFECYCLE(do_pause, lodge_pause)
LIFECYCLE(do_unpause, lodge_unpause)
LIFECYCLE(do_shutdown, shutdown_now)
LIFECYCLE(do_reboot, lodge_reboot)
LIFECYCLE(do_destroy, destroy_now)

static void do_mem_set(const struct web_request *req, const char *name, struct web_response *resp)
{
	json_int_t mib = 0;
	struct lodge_err err;
	json_t *j;
	int rc;

	if (!(j = web_body_json(req, resp)))
		return;
	rc = json_unpack(j, "{s:I}", "memory_mib", &mib);
	json_decref(j);
	if (rc || mib < 1 || mib > 0xffffffffLL) {
		web_error(resp, 400, "the body is {\"memory_mib\": N}, N a whole number of MiB");
		return;
	}
	web_as_user(req);
	if ((rc = lodge_mem_set(web_lodge(), name, (unsigned long)mib, &err)))
		web_reply_lodge_err(resp, rc, &err);
	else
		web_reply_json(resp, 200, json_pack("{s:s,s:I}", "name", name, "memory_mib", mib));
}

/* POST .../block-attach {"disk": SPEC}, .../network-attach {"vif": SPEC}:
 * SPEC as a config's disk or vif entry (lodge block-attach's checks: a
 * disk another domain holds, a vdev or MAC taken, no free slot). */
static void do_attach(const struct web_request *req, const char *name, struct web_response *resp, bool disk)
{
	const char *spec = "", *key = disk ? "disk" : "vif";
	char made[16] = "";
	struct lodge_err err;
	json_t *j;
	int rc;

	if (!(j = web_body_json(req, resp)))
		return;
	if (json_unpack(j, "{s:s}", key, &spec) || (disk && !spec[0]) || strlen(spec) >= LODGE_ERR_MAX) {
		json_decref(j);
		web_error(resp, 400, "the body is {\"%s\": SPEC}, SPEC as a domain config's %s entry%s", key, key,
			  disk ? "" : " (may be empty: the default bridge)");
		return;
	}
	if (disk) {
		/* Relative to what? Not this server's working directory: parsed
		 * with none, a relative path stays one (d.path is set before the
		 * file is looked for) and is refused. */
		struct cfg_disk d;
		char why[512];

		rc = domain_disk_spec_parse("block-attach", spec, &d, why, sizeof(why));
		if (d.path[0] && d.path[0] != '/')
			snprintf(why, sizeof(why), "a disk's path must be absolute here");
		if (rc || d.path[0] != '/') {
			web_error(resp, 400, "disk '%s': %s", spec, why);
			json_decref(j);
			return;
		}
	}
	web_as_user(req);
	/* The server is root; its users are not: a disk only from the
	 * storage lodge.conf lends (as a migrated domain's), checked on the
	 * descriptor lodge-hyp gets (lodge_disk_open), not on a name looked
	 * up twice. */
	rc = disk ? lodge_block_attach(web_lodge(), name, spec, true, made, &err)
		  : lodge_network_attach(web_lodge(), name, spec, made, &err);
	json_decref(j);
	if (rc)
		web_reply_lodge_err(resp, rc, &err);
	else
		web_reply_json(resp, 200, json_pack("{s:s,s:s}", "name", name, disk ? "vdev" : "vif", made));
}

static void do_block_attach(const struct web_request *req, const char *name, struct web_response *resp)
{
	do_attach(req, name, resp, true);
}

static void do_network_attach(const struct web_request *req, const char *name, struct web_response *resp)
{
	do_attach(req, name, resp, false);
}

/* ---- the host ------------------------------------------------------------------------------ */

static void get_host(const struct web_request *req, const char *word, struct web_response *resp)
{
	static struct lodge_host h;       /* the last sample gives the CPU's use since */
	struct lodge_host_info hi;

	lodge_host_info(&hi);
	lodge_host_sample(&h);
	web_reply_json(resp, 200,
		   json_pack("{s:s,s:i,s:I,s:I,s:s,s:i,s:f,s:f,s:f,s:f,s:I}", "host", hi.model, "nr_cpus", (int)hi.ncpus,
			     "total_memory_mib", (json_int_t)hi.mem_total_mib, "free_memory_mib",
			     (json_int_t)hi.mem_avail_mib, "kvm_backend", hi.kvm_backend, "max_vcpus_per_domain",
			     hi.max_vcpus, "load1", h.load1, "load5", h.load5, "load15", h.load15, "cpu_pct", h.cpu_pct,
			     "uptime_s", (json_int_t)h.uptime_s));
}

static void add_bridge(const char *name, int ports, bool up, void *arg)
{
	json_array_append_new(arg, json_pack("{s:s,s:i,s:s}", "bridge", name, "ports", ports, "state", up ? "up" : "down"));
}

static void get_bridges(const struct web_request *req, const char *word, struct web_response *resp)
{
	struct lodge_err err;
	json_t *a = json_array();
	int rc;

	if ((rc = lodge_bridge_list(add_bridge, a, &err))) {
		json_decref(a);
		web_reply_lodge_err(resp, rc, &err);
		return;
	}
	web_reply_json(resp, 200, a);
}

/* What `lodge network-list -o json` gives (no domain): the same columns. */
#define WEB_NETWORKS_MAX 64
static void get_networks(const struct web_request *req, const char *word, struct web_response *resp)
{
	static struct lodge_network nets[WEB_NETWORKS_MAX];
	struct lodge_err err;
	json_t *a;
	int n, i;

	if ((n = lodge_network_list(web_lodge(), nets, WEB_NETWORKS_MAX, &err)) < 0) {
		web_reply_lodge_err(resp, n, &err);
		return;
	}
	a = json_array();
	for (i = 0; i < n && i < WEB_NETWORKS_MAX; i++)
		json_array_append_new(a, cols_json_row(network_list_cols, network_list_ncols, &nets[i]));
	web_reply_json(resp, 200, a);
}

/* The pool's domains, for a host in a pool (lodge.conf's pool_etcd), as
 * lodge list --pool gives them; {"pool": false} on a host in none.  Asked
 * on Refresh, not every second: pool_domains() waits for etcd. */
static void get_pool(const struct web_request *req, const char *word, struct web_response *resp)
{
	struct pool_domains d;
	char why[512];
	json_t *a;
	size_t i;
	int rc;

	if (!web_lodge()->hc.pool_etcd[0]) {
		web_reply_json(resp, 200, json_pack("{s:b}", "pool", 0));
		return;
	}
	if ((rc = pool_domains(&web_lodge()->hc, &d, why, sizeof(why)))) {
		web_error(resp, 502, "%s", why);
		return;
	}
	a = json_array();
	for (i = 0; i < d.n; i++)
		json_array_append_new(a, cols_json_row(pool_list_cols, pool_list_ncols, &d.row[i]));
	pool_domains_free(&d);
	web_reply_json(resp, 200, json_pack("{s:b,s:o}", "pool", 1, "domains", a));
}

/* ---- the table ------------------------------------------------------------------------------ */

static const struct route routes[] = {
	{ true, "/api/login", NULL, NEED_NONE, do_login },
	{ true, "/api/logout", NULL, NEED_VIEWER, do_logout },
	{ false, "/api/session", NULL, NEED_VIEWER, get_session },
	{ false, "/api/domains", NULL, NEED_VIEWER, get_domains },
	{ false, "/api/domains/*", NULL, NEED_VIEWER, web_get_domain },
	{ true, "/api/domains/*", "pause", NEED_ADMIN, do_pause },
	{ true, "/api/domains/*", "unpause", NEED_ADMIN, do_unpause },
	{ true, "/api/domains/*", "shutdown", NEED_ADMIN, do_shutdown },
	{ true, "/api/domains/*", "reboot", NEED_ADMIN, do_reboot },
	{ true, "/api/domains/*", "destroy", NEED_ADMIN, do_destroy },
	{ true, "/api/domains/*", "mem-set", NEED_ADMIN, do_mem_set },
	{ true, "/api/domains/*", "save", NEED_ADMIN, web_save },
	{ true, "/api/domains/*", "migrate", NEED_ADMIN, web_migrate },
	{ true, "/api/domains/*", "block-attach", NEED_ADMIN, do_block_attach },
	{ true, "/api/domains/*", "block-detach", NEED_ADMIN, web_block_detach },
	{ true, "/api/domains/*", "network-attach", NEED_ADMIN, do_network_attach },
	{ true, "/api/domains/*", "network-detach", NEED_ADMIN, web_network_detach },
	{ true, "/api/restore", NULL, NEED_ADMIN, web_restore },
	{ false, "/api/jobs", NULL, NEED_VIEWER, web_get_jobs },
	{ true, "/api/jobs/*", "cancel", NEED_ADMIN, web_job_cancel },
	{ false, "/api/create-form", NULL, NEED_VIEWER, web_get_create_form },
	{ true, "/api/domains", NULL, NEED_ADMIN, web_create },
	{ false, "/api/install-form", NULL, NEED_VIEWER, web_get_install_form },
	{ true, "/api/install", NULL, NEED_ADMIN, web_install },
	{ false, "/api/host", NULL, NEED_VIEWER, get_host },
	{ false, "/api/bridges", NULL, NEED_VIEWER, get_bridges },
	{ false, "/api/networks", NULL, NEED_VIEWER, get_networks },
	{ false, "/api/pool", NULL, NEED_VIEWER, get_pool },
	{ false, "/api/blockdevs", NULL, NEED_VIEWER, web_get_blockdevs },
	{ false, "/api/defined", NULL, NEED_VIEWER, web_get_defined },
	{ false, "/api/defined/*", NULL, NEED_VIEWER, web_get_defined_one },
	{ true, "/api/defined/*", "start", NEED_ADMIN, web_defined_start },
	{ true, "/api/defined/*", "config", NEED_ADMIN, web_defined_config },
	{ true, "/api/defined/*", "autostart", NEED_ADMIN, web_defined_autostart },
	{ true, "/api/defined/*", "delete", NEED_ADMIN, web_defined_delete },
};

/* uri against a route's path: true with the word where its '*' is. */
static bool route_match(const struct route *rt, const char *uri, char *word, size_t len)
{
	const char *star = strchr(rt->path, '*'), *rest;
	size_t n;

	word[0] = '\0';
	if (!star)
		return !rt->verb && strcmp(rt->path, uri) == 0;
	n = (size_t)(star - rt->path);
	if (strncmp(rt->path, uri, n) != 0)
		return false;
	rest = uri + n;
	n = strcspn(rest, "/");
	if (!n || n >= len)
		return false;
	memcpy(word, rest, n);
	word[n] = '\0';
	rest += n;
	if (!rt->verb)
		return !*rest;
	return rest[0] == '/' && strcmp(rest + 1, rt->verb) == 0;
}

void web_api(const struct web_request *req, struct web_response *resp)
{
	char word[WEB_URI_MAX];
	bool other_method = false;
	size_t i;

	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		const struct route *rt = &routes[i];

		if (!route_match(rt, req->uri, word, sizeof(word)))
			continue;
		if (rt->post != req->post) {
			other_method = true;
			continue;
		}
		if (rt->need == NEED_ADMIN && req->session->role != WEB_ADMIN) {
			web_error(resp, 403, "%s may only look (role viewer)", req->session->user);
			return;
		}
		rt->fn(req, word, resp);
		return;
	}
	if (other_method)
		web_error(resp, 405, "%s takes %s", req->uri, req->post ? "GET" : "POST");
	else
		web_error(resp, 404, "no such API path");
}
