/* lodge-web: Lodge's web control interface (README in this directory).
 * One process, one thread, one libwebsockets event loop; every domain
 * is reached through liblodge (src/lib/include/lodge.h) as the lodge command and
 * the dashboard reach it, and nothing about a domain is kept here that
 * a lodge command could not see: only who is logged in.
 *
 * One file per concern:
 *   main.c     the command line: serve, passwd
 *   server.c   the listener, TLS, and every HTTP request's checks (Host,
 *              Origin, session, CSRF, role, body size) before a route
 *   users.c    ROOT/etc/lodge/web-users: crypt(3) hashes and roles
 *   session.c  sessions, CSRF tokens, the login rate limits
 *   login.c    the password checks, on a thread of their own
 *   api.c      the JSON API: a table of routes
 *   static.c   the page's files under share/lodge/web */
#ifndef LODGE_WEB_H
#define LODGE_WEB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "lodge.h"

/* ---- users (users.c) ------------------------------------------------------------ */

#define WEB_USERS_FILE "/etc/lodge/web-users"     /* under the root prefix */
/* A user's name is also the event log's face, "web-NAME" (PROTO_FACE_*:
 * a-z and '-', 16 at most): a lowercase letter, then a-z or '-'. */
#define WEB_USER_MAX 12
#define WEB_PASSWORD_MIN 8
#define WEB_PASSWORD_MAX 256

enum web_role { WEB_VIEWER, WEB_ADMIN };
const char *web_role_name(enum web_role r);
int web_role_parse(const char *word, enum web_role *r);
/* A valid user name: 0, or -EINVAL with why. */
int web_user_valid(const char *name, char *why, size_t len);
/* The users file's path, under the root prefix. */
void web_users_path(char *out, size_t len);
/* Check user's password against the file (read anew each time, so
 * lodge web-passwd needs no restart): 1 with *role if it matches, 0 if
 * not (no such user included), -errno if the file cannot be read. */
int web_users_verify(const char *user, const char *password, enum web_role *role);
/* Set (add or replace) user's password and role: the file rewritten
 * whole (a temporary file renamed over it), mode 0600.  0 or -errno with
 * why. */
int web_users_set(const char *user, const char *password, enum web_role role, char *why, size_t len);

/* ---- sessions and logins (session.c) ------------------------------------------------ */

#define WEB_COOKIE "lodge_session"
#define WEB_TOKEN_HEX 64                /* 32 random bytes */
#define WEB_SESSIONS_MAX 64             /* the least recently used goes first */
#define WEB_SESSION_IDLE_S (8 * 3600)

struct web_session {
	char id[WEB_TOKEN_HEX + 1];       /* the cookie's value; "" free */
	char csrf[WEB_TOKEN_HEX + 1];     /* every state change carries it (X-CSRF-Token) */
	char user[WEB_USER_MAX + 1];
	enum web_role role;
	time_t last;
};
/* A new session for user: NULL only if no randomness could be had. */
struct web_session *web_session_new(const char *user, enum web_role role);
/* The session a Cookie header names (NULL: none, expired, or unknown). */
struct web_session *web_session_find(const char *cookie_header);
void web_session_end(struct web_session *s);
/* Equal, in time independent of where they differ. */
bool web_token_equal(const char *a, const char *b);

/* Logins are limited by rule (session.c's table), per address and per
 * user name: after WEB_LOGIN_FREE failures in a row from one address, or
 * WEB_LOGIN_USER_FREE for one user name (from any address), the next
 * try may come only after a wait that doubles with each failure, from
 * 1 s to WEB_LOGIN_BLOCK_MAX_S; a try before is refused unchecked (429)
 * and counts as a failure.  A success clears its address's. */
#define WEB_LOGIN_FREE 5
#define WEB_LOGIN_USER_FREE 10
#define WEB_LOGIN_BLOCK_MAX_S 300
enum web_login_scope { WEB_LOGIN_BY_ADDR, WEB_LOGIN_BY_USER, WEB_LOGIN_SCOPES };
/* Let a try of user from addr in: 0, it may be checked (and it counts as
 * failed until web_login_result says otherwise); else the seconds until
 * it may, with the rule that holds it in *by. */
long web_login_admit(const char *addr, const char *user, enum web_login_scope *by);
void web_login_result(const char *addr, const char *user, bool ok);
/* "from", "for user": the scope's words in a refusal. */
const char *web_login_scope_what(enum web_login_scope scope);

/* All logins together (login.c): the password checks (crypt(3), tens of
 * ms of CPU each) run one at a time on a thread of their own, never on the
 * event loop; after a burst of WEB_LOGIN_CHECK_BURST checks at most one
 * each WEB_LOGIN_CHECK_EVERY_MS (a check waits its turn: a delay, not a
 * refusal); at most WEB_LOGIN_PENDING_MAX wait, more are refused (503). */
#define WEB_LOGIN_CHECK_BURST 20
#define WEB_LOGIN_CHECK_EVERY_MS 100
#define WEB_LOGIN_PENDING_MAX 16
struct web_login_job {
	char user[WEB_USER_MAX + 1];
	char password[WEB_PASSWORD_MAX + 1];
	char peer[64];
	bool tls;
	int rc;                           /* web_users_verify's */
	enum web_role role;
	struct lws *wsi;                  /* whose answer it is (server.c) */
	bool abandoned;                   /* its connection closed while it waited */
	struct web_login_job *next;
};
/* Start the checking thread; lws_cancel_service(ctx) wakes the event
 * loop when a check is done.  0 or -errno. */
struct lws_context;
int web_login_start(struct lws_context *ctx);
/* Queue a check: the job, or NULL if WEB_LOGIN_PENDING_MAX wait already. */
struct web_login_job *web_login_queue(const char *user, const char *password, const char *peer, bool tls);
/* Each check done, in the event loop's thread: fn(job, arg) for those
 * whose connection is still there, then the job freed. */
void web_login_each_done(void (*fn)(struct web_login_job *job, void *arg), void *arg);
/* The connection of job closed: it is freed when done. */
void web_login_abandon(struct web_login_job *job);

/* ---- requests (server.c) and routes (api.c) ------------------------------------------ */

#define WEB_BODY_MAX (64 * 1024)       /* a request's body: a create form is far less */
#define WEB_URI_MAX 256

struct web_request {
	bool post;
	char uri[WEB_URI_MAX];
	const char *body;                 /* NUL-terminated */
	size_t body_len;
	struct web_session *session;      /* NULL only for the login */
	char peer[64];
	bool tls;
};
struct web_response {
	unsigned status;
	char *body;                       /* malloc'd JSON */
	char cookie[256];                 /* a Set-Cookie value, "" none */
	struct web_login_job *login;      /* the answer comes when this check is done */
};

/* api.c: the answer to a login whose check is done. */
void web_login_finish(struct web_login_job *job, struct web_response *resp);

struct lws;
struct web_server;
struct web_server *web_server(void);
const struct lodge *web_lodge(void);

/* Answer req into resp: the route's status and JSON.  The session, the
 * CSRF token and Host and Origin are checked before (server.c); the role
 * here, route by route. */
void web_api(const struct web_request *req, struct web_response *resp);
/* Logins and logouts to syslog (authpriv), as lodge-web. */
void web_api_openlog(void);
/* Helpers of the routes (api.c): a JSON reply (j's reference taken);
 * the library's refusal with its status; the body as a JSON object (NULL:
 * a 400 already in resp); the face "web-USER" for what follows. */
struct json_t;
void web_reply_json(struct web_response *resp, unsigned status, struct json_t *j);
void web_reply_lodge_err(struct web_response *resp, int rc, const struct lodge_err *err);
struct json_t *web_body_json(const struct web_request *req, struct web_response *resp);
void web_as_user(const struct web_request *req);
/* api-create.c: the create form's fields, and a domain made from them. */
void web_get_create_form(const struct web_request *req, const char *word, struct web_response *resp);
void web_create(const struct web_request *req, const char *word, struct web_response *resp);
struct domain_form;
/* jobs.c: a create that makes a new disk (checked whole already), as a job: 202. */
/* POST /api/install (api-install.c): a Debian install's fields, checked,
 * run as a job (jobs.c) with lodge_install. */
struct web_install {
	char name[64], dist[64], size[64], memory[64], vcpus[64], network[64];
	char disk[CFG_PATH_MAX], packages[512];
	unsigned memory_mib, vcpus_n;     /* 0: the defaults */
	uint64_t bytes;                   /* the disk file's; 0: the default */
};
void web_get_install_form(const struct web_request *req, const char *word, struct web_response *resp);
void web_install(const struct web_request *req, const char *word, struct web_response *resp);
void web_install_opts(const struct web_install *in, struct lodge_install_opts *o);
void web_job_cancel(const struct web_request *req, const char *word, struct web_response *resp);
void web_install_job(const struct web_request *req, const struct web_install *in, struct web_response *resp);
void web_create_job(const struct web_request *req, const struct domain_form *form, const struct lodge_form_opts *o,
		    struct web_response *resp);
/* api-defined.c: the defined domains (domains_dir's configs): list, one's
 * config, start, config, autostart, delete. */
void web_get_defined(const struct web_request *req, const char *word, struct web_response *resp);
void web_get_defined_one(const struct web_request *req, const char *name, struct web_response *resp);
void web_defined_start(const struct web_request *req, const char *name, struct web_response *resp);
void web_defined_config(const struct web_request *req, const char *name, struct web_response *resp);
void web_defined_autostart(const struct web_request *req, const char *name, struct web_response *resp);
void web_defined_delete(const struct web_request *req, const char *name, struct web_response *resp);
/* api-detail.c: one domain in detail; the host's block devices. */
void web_get_domain(const struct web_request *req, const char *name, struct web_response *resp);
void web_get_blockdevs(const struct web_request *req, const char *word, struct web_response *resp);
/* jobs.c: save, restore, migrate and a create with a new disk, each in a child process. */
void web_save(const struct web_request *req, const char *name, struct web_response *resp);
void web_migrate(const struct web_request *req, const char *name, struct web_response *resp);
void web_restore(const struct web_request *req, const char *word, struct web_response *resp);
void web_get_jobs(const struct web_request *req, const char *word, struct web_response *resp);
/* POST .../block-detach {vdev}, .../network-detach {vif}: jobs, as a
 * detach waits for the guest (api.c's attaches answer at once). */
void web_block_detach(const struct web_request *req, const char *name, struct web_response *resp);
void web_network_detach(const struct web_request *req, const char *name, struct web_response *resp);
struct json_t *web_jobs_json(void);
struct lws_vhost;
void web_jobs_vhost(struct lws_vhost *vh);
/* {"error": msg} with status. */
void web_error(struct web_response *resp, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- the page (static.c) ------------------------------------------------------------- */

/* The file the page's path names, from the web directory: 0 with its
 * path and type; -ENOENT for any path not in the page's list. */
int web_static_find(const char *uri, char *path, size_t len, const char **mime);
/* The page's directory, and the one of xterm.js's bundle (built by make). */
void web_static_dir(const char *dir, const char *xterm);

/* ---- WebSockets (ws-updates.c, ws-console.c) ------------------------------------------ */

struct lws_protocols;
/* A WebSocket's handshake passes the HTTP checks (Host, session) and its
 * Origin must be there and be the server's own; its path must be prefix
 * (word NULL) or prefix then one word, copied to word: the session, or
 * NULL to refuse it. */
struct web_session *web_ws_admit(struct lws *wsi, const char *prefix, char *word, size_t wordlen);
extern const struct lws_protocols web_updates_protocol, web_console_protocol, web_console_fd_protocol,
	web_jobs_protocol;

/* ---- serving (server.c) ------------------------------------------------------------ */

struct web_options {
	const char *listen;               /* ADDR:PORT, [ADDR6]:PORT */
	const char *cert, *key;           /* both or neither */
	const char *server_name;          /* NULL, or a DNS name a Host may say */
	const char *web_dir;              /* the page's files */
};
/* Serve until SIGINT or SIGTERM: 0, or an exit status with the reason
 * said (log.h). */
int web_serve(struct lodge *lg, const struct web_options *o);
/* The server's own default guest's kernel and ramdisk lent as if under
 * kernel_dirs (api-create.c): the create form's defaults are accepted. */
void web_lend_default_guest(struct host_config *hc);

#endif
