/* Long jobs: save, restore and migrate take seconds to minutes, and the
 * one event loop must not wait for them (the updates and the consoles go
 * on).  Each runs in a child process of its own, which calls liblodge
 * and writes its progress and its end to a pipe, one JSON line each; the
 * pipe is in the loop.  GET /api/jobs, and each update, list them.
 *
 * Where a save goes is not the web user's to say: always lodge.conf's
 * save_dir/NAME.save (a path from the browser would let a web admin have
 * root write any file); restore takes a name and reads that file.  A
 * migration goes to HOST[:PORT] only, with lodge.conf's secret (never a
 * Unix socket path of this host).  A create that makes a new disk is a
 * job too (mkfs.ext4 takes seconds): the library's lodge_form_create in
 * the child, the form checked whole before (api-create.c). */
#include "web.h"
#include "config-form.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libwebsockets.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A saved domain's name, as a file name under save_dir: no '/', no leading '.'. */
#define NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
#define JOBS_MAX 16                   /* kept, the oldest ended one replaced */

/* A detach is a job too: it waits for the guest to eject the device (up
 * to its timeout, 10 s unless told). */
enum job_kind { JOB_SAVE, JOB_RESTORE, JOB_MIGRATE, JOB_BLOCK_DETACH, JOB_NETWORK_DETACH, JOB_CREATE, JOB_INSTALL };
static const char *const kind_words[] = { "save", "restore", "migrate", "block-detach", "network-detach", "create",
					  "install" };
#define DETACH_TIMEOUT_MAX_S 3600     /* as lodge block-detach --timeout */

struct job {
	bool used, running;
	enum job_kind kind;
	char name[DOMAIN_NAME_MAX], user[WEB_USER_MAX + 1], dest[128];
	char which[32];                   /* a detach's vdev, or vif MAC or index */
	bool force;
	unsigned timeout_ms;
	struct domain_form form;          /* a create's */
	struct lodge_form_opts form_opts;
	struct web_install install;       /* an install's */
	pid_t pid;
	struct lws *pipe;
	char line[1024];                  /* the child's line being read */
	size_t len;
	json_t *progress;                 /* the last progress line */
	char error[LODGE_ERR_MAX];        /* "" while running or done well */
	unsigned long id;
};

static struct job jobs[JOBS_MAX];
static unsigned long next_id = 1;

/* ---- the child ------------------------------------------------------------------------------ */

static int child_fd = -1;

static void child_line(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);

	json_decref(j);
	if (s) {
		dprintf(child_fd, "%s\n", s);
		free(s);
	}
}

static void child_progress(const struct lodge_progress *p, void *arg)
{
	child_line(json_pack("{s:i,s:I,s:I,s:I,s:I,s:I}", "round", (int)p->round, "pages", (json_int_t)p->pages, "dirty",
			     (json_int_t)p->dirty, "rate_kib", (json_int_t)p->rate_kib, "bytes", (json_int_t)p->bytes,
			     "total", (json_int_t)p->total));
}

/* An install is cancelled as the dashboard's k cancels one: SIGTERM to
 * its child, whose next progress call says stop (at least every 200 ms),
 * and lodge_install undoes what it made. */
static volatile sig_atomic_t child_cancelled;

static void child_on_term(int sig)
{
	child_cancelled = 1;
}

/* An install's phase in words and its percent of the whole. */
static bool child_install_progress(const struct lodge_job_progress *p, void *arg)
{
	child_line(json_pack("{s:s,s:i}", "phase", lodge_phase_words(p->phase), "pct", p->pct));
	return !child_cancelled;
}

static void child_run(const struct job *jb, bool compress)
{
	const struct lodge *lg = web_lodge();
	char file[CFG_PATH_MAX + DOMAIN_NAME_MAX + 8];
	struct lodge_err err;
	int rc = -EINVAL;

	memset(&err, 0, sizeof(err));
	snprintf(file, sizeof(file), "%s/%s.save", lg->hc.save_dir, jb->name);
	if (jb->kind == JOB_SAVE) {
		struct lodge_save_opts o = { .compress = compress, .progress = child_progress };
		struct lodge_save_result res;

		rc = lodge_save(lg, jb->name, file, &o, &res, &err);
	} else if (jb->kind == JOB_RESTORE) {
		struct lodge_restore_opts o = { .progress = child_progress };
		struct lodge_restore_result res;

		rc = lodge_restore(lg, file, &o, &res, &err);
	} else if (jb->kind == JOB_BLOCK_DETACH) {
		rc = lodge_block_detach(lg, jb->name, jb->which, jb->force, jb->timeout_ms, &err);
	} else if (jb->kind == JOB_NETWORK_DETACH) {
		rc = lodge_network_detach(lg, jb->name, jb->which, jb->force, jb->timeout_ms, &err);
	} else if (jb->kind == JOB_CREATE) {
		struct lodge_form_result res;

		rc = lodge_form_create(lg, &jb->form, &jb->form_opts, &res, &err);
	} else if (jb->kind == JOB_INSTALL) {
		static struct lodge_install_result res;
		struct lodge_install_opts o;

		web_install_opts(&jb->install, &o);
		o.progress = child_install_progress;
		rc = lodge_install(lg, &o, &res, &err);
	} else {
		struct lodge_migrate_opts o = { .progress = child_progress };
		struct lodge_migrate_result res;

		rc = lodge_migrate(lg, jb->name, jb->dest, &o, &res, &err);
	}
	child_line(json_pack("{s:b,s:s}", "done", rc == 0, "error", rc ? (err.msg[0] ? err.msg : strerror(-rc)) : ""));
}

/* ---- the parent: the pipe in the loop -------------------------------------------------------- */

static void job_line(struct job *jb, const char *line)
{
	json_t *j = json_loads(line, 0, NULL);

	if (!j)
		return;
	if (json_object_get(j, "done")) {
		jb->running = false;
		if (!json_is_true(json_object_get(j, "done")))
			snprintf(jb->error, sizeof(jb->error), "%s", json_string_value(json_object_get(j, "error")) ?: "failed");
		json_decref(j);
		return;
	}
	json_decref(jb->progress);
	jb->progress = j;
}

static int jobs_pipe_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct job *jb = lws_get_opaque_user_data(wsi);
	char buf[4096];
	ssize_t got;

	switch (reason) {
	case LWS_CALLBACK_RAW_RX_FILE:
		if (!jb)
			return -1;
		got = read(lws_get_socket_fd(wsi), buf, sizeof(buf));
		if (got <= 0)
			return -1;
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] != '\n') {
				if (jb->len < sizeof(jb->line) - 1)
					jb->line[jb->len++] = buf[i];
				continue;
			}
			jb->line[jb->len] = '\0';
			job_line(jb, jb->line);
			jb->len = 0;
		}
		return 0;
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		if (jb) {
			jb->pipe = NULL;
			if (jb->running) {
				jb->running = false;
				snprintf(jb->error, sizeof(jb->error), "the job's process ended without a word");
			}
			waitpid(jb->pid, NULL, 0);
		}
		return 0;
	default:
		return 0;
	}
}

const struct lws_protocols web_jobs_protocol = { "lodge-job-pipe", jobs_pipe_cb, 0, 0, 0, NULL, 0 };

/* A slot for a job of name: an unused one, else the oldest ended one;
 * NULL if name has a job running, or all run. */
static struct job *job_slot(const char *name)
{
	struct job *slot = NULL;
	size_t i;

	for (i = 0; i < JOBS_MAX; i++) {
		struct job *jb = &jobs[i];

		if (jb->used && jb->running && strcmp(jb->name, name) == 0)
			return NULL;          /* one job a domain at a time */
		if (!jb->used && (!slot || slot->used))
			slot = jb;
		else if (jb->used && !jb->running && (!slot || (slot->used && jb->id < slot->id)))
			slot = jb;
	}
	return slot;
}

static struct lws_vhost *jobs_vhost;

void web_jobs_vhost(struct lws_vhost *vh)
{
	jobs_vhost = vh;
}

/* Start jb in a child: 0, or an HTTP status with resp set. */
static unsigned job_start(struct job *jb, bool compress, struct web_response *resp)
{
	lws_adopt_desc_t ad = { 0 };
	int p[2];

	if (pipe2(p, O_CLOEXEC)) {
		web_error(resp, 500, "no pipe: %s", strerror(errno));
		return 500;
	}
	if ((jb->pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		web_error(resp, 500, "cannot fork: %s", strerror(errno));
		return 500;
	}
	if (jb->pid == 0) {
		close(p[0]);
		if (jb->kind == JOB_INSTALL)
			sigaction(SIGTERM, &(struct sigaction){ .sa_handler = child_on_term }, NULL);
		else
			signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		child_fd = p[1];
		child_run(jb, compress);
		_exit(0);
	}
	close(p[1]);
	ad.vh = jobs_vhost;
	ad.type = LWS_ADOPT_RAW_FILE_DESC;
	ad.fd.filefd = p[0];
	ad.vh_prot_name = "lodge-job-pipe";
	ad.opaque = jb;
	if (!(jb->pipe = lws_adopt_descriptor_vhost_via_info(&ad))) {
		/* The child goes on; its end goes unheard. */
		web_error(resp, 500, "cannot watch the job");
		return 500;
	}
	return 0;
}

json_t *web_jobs_json(void)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < JOBS_MAX; i++) {
		const struct job *jb = &jobs[i];

		if (!jb->used)
			continue;
		json_array_append_new(a, json_pack("{s:I,s:s,s:s,s:s,s:s,s:O*,s:s*}", "id", (json_int_t)jb->id, "kind",
						   kind_words[jb->kind], "name", jb->name, "user", jb->user, "state",
						   jb->running ? "running" : jb->error[0] ? "failed" : "done", "progress",
						   jb->progress, "error", jb->error[0] ? jb->error : NULL));
	}
	return a;
}

void web_get_jobs(const struct web_request *req, const char *word, struct web_response *resp)
{
	web_reply_json(resp, 200, web_jobs_json());
}

/* A slot for a job of kind on name, cleared, with its id and user; NULL
 * with a 409 in resp. */
static struct job *job_take(const struct web_request *req, const char *name, enum job_kind kind,
			    struct web_response *resp)
{
	struct job *jb = job_slot(name);

	if (!jb) {
		web_error(resp, 409, "a job of %s runs, or %d jobs do", name, JOBS_MAX);
		return NULL;
	}
	json_decref(jb->progress);
	memset(jb, 0, sizeof(*jb));
	jb->used = jb->running = true;
	jb->kind = kind;
	jb->id = next_id++;
	snprintf(jb->name, sizeof(jb->name), "%s", name);
	snprintf(jb->user, sizeof(jb->user), "%s", req->session->user);
	return jb;
}

/* jb, taken and filled, started: its id in a 202. */
static void job_go(const struct web_request *req, struct job *jb, bool compress, struct web_response *resp)
{
	web_as_user(req);
	if (job_start(jb, compress, resp)) {
		jb->used = jb->running = false;
		return;
	}
	web_reply_json(resp, 202, json_pack("{s:I,s:s,s:s}", "id", (json_int_t)jb->id, "kind", kind_words[jb->kind],
					    "name", jb->name));
}

/* POST /api/domains/NAME/{save,migrate,block-detach,network-detach},
 * POST /api/restore: the job's id, 202. */
static void start(const struct web_request *req, const char *name, enum job_kind kind, struct web_response *resp)
{
	bool detach = kind == JOB_BLOCK_DETACH || kind == JOB_NETWORK_DETACH;
	const char *dest = "", *which = "", *which_key = kind == JOB_BLOCK_DETACH ? "vdev" : "vif";
	json_int_t timeout_s = LODGE_DETACH_TIMEOUT_MS / 1000;
	int compress = 0, force = 0;
	struct job *jb;
	json_t *j = NULL;

	if (req->body_len && !(j = web_body_json(req, resp)))
		return;
	if (detach && (!j || json_unpack(j, "{s:s,s?b,s?I}", which_key, &which, "force", &force, "timeout_s", &timeout_s) ||
		       !which[0] || strlen(which) >= sizeof(jb->which) || timeout_s < 1 || timeout_s > DETACH_TIMEOUT_MAX_S)) {
		json_decref(j);
		web_error(resp, 400, "the body is {\"%s\": %s, \"force\": true|false, \"timeout_s\": 1 to %d} (force and "
			  "timeout_s may be left out: false, %d)", which_key,
			  kind == JOB_BLOCK_DETACH ? "VDEV" : "MAC or index", DETACH_TIMEOUT_MAX_S,
			  LODGE_DETACH_TIMEOUT_MS / 1000);
		return;
	}
	if (kind == JOB_MIGRATE && (!j || json_unpack(j, "{s:s}", "dest", &dest) || !dest[0] || strlen(dest) >= 128 ||
				    strchr(dest, '/') || strncmp(dest, "unix:", 5) == 0)) {
		json_decref(j);
		web_error(resp, 400, "the body is {\"dest\": \"HOST[:PORT]\"} (a host, not a socket path)");
		return;
	}
	if (kind == JOB_SAVE && j && json_unpack(j, "{s?b}", "compress", &compress)) {
		json_decref(j);
		web_error(resp, 400, "the body is {\"compress\": true|false} or empty");
		return;
	}
	if (kind == JOB_RESTORE && (!j || json_unpack(j, "{s:s}", "name", &name) || !name[0] || name[0] == '.' ||
				    strlen(name) >= DOMAIN_NAME_MAX || strspn(name, NAME_CHARS) != strlen(name))) {
		json_decref(j);
		web_error(resp, 400, "the body is {\"name\": NAME} (save_dir/NAME.save)");
		return;
	}
	if (!(jb = job_take(req, name, kind, resp))) {
		json_decref(j);
		return;
	}
	snprintf(jb->dest, sizeof(jb->dest), "%s", dest);
	snprintf(jb->which, sizeof(jb->which), "%s", which);
	jb->force = force;
	jb->timeout_ms = (unsigned)timeout_s * 1000u;
	json_decref(j);
	job_go(req, jb, compress, resp);
}

void web_create_job(const struct web_request *req, const struct domain_form *form, const struct lodge_form_opts *o,
		    struct web_response *resp)
{
	struct job *jb = job_take(req, form->value[FORM_NAME], JOB_CREATE, resp);

	if (!jb)
		return;
	jb->form = *form;
	jb->form_opts = *o;
	job_go(req, jb, false, resp);
}

void web_install_job(const struct web_request *req, const struct web_install *in, struct web_response *resp)
{
	struct job *jb = job_take(req, in->name, JOB_INSTALL, resp);

	if (!jb)
		return;
	jb->install = *in;
	job_go(req, jb, false, resp);
}

/* POST /api/jobs/ID/cancel: a running install stopped, undone (202);
 * the other jobs end by themselves (409). */
void web_job_cancel(const struct web_request *req, const char *word, struct web_response *resp)
{
	char *end;
	unsigned long id = strtoul(word, &end, 10);
	size_t i;

	for (i = 0; *word && !*end && i < JOBS_MAX; i++) {
		struct job *jb = &jobs[i];

		if (!jb->used || jb->id != id)
			continue;
		if (!jb->running || jb->kind != JOB_INSTALL) {
			web_error(resp, 409, "job %lu is %s: only a running install is cancelled", id,
				  jb->running ? kind_words[jb->kind] : "over");
			return;
		}
		kill(jb->pid, SIGTERM);
		web_reply_json(resp, 202, json_pack("{s:I}", "id", (json_int_t)id));
		return;
	}
	web_error(resp, 404, "no job %s", word);
}

void web_save(const struct web_request *req, const char *name, struct web_response *resp)
{
	start(req, name, JOB_SAVE, resp);
}

void web_migrate(const struct web_request *req, const char *name, struct web_response *resp)
{
	start(req, name, JOB_MIGRATE, resp);
}

void web_restore(const struct web_request *req, const char *word, struct web_response *resp)
{
	start(req, "", JOB_RESTORE, resp);
}

void web_block_detach(const struct web_request *req, const char *name, struct web_response *resp)
{
	start(req, name, JOB_BLOCK_DETACH, resp);
}

void web_network_detach(const struct web_request *req, const char *name, struct web_response *resp)
{
	start(req, name, JOB_NETWORK_DETACH, resp);
}
