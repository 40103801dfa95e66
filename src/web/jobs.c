/* Long jobs: save, restore and migrate take seconds to minutes, and the
 * one event loop must not wait for them (the updates and the consoles go
 * on).  Each runs as a job (lodge/job.h): a child process of its own,
 * which calls liblodge and reports its progress (a JSON object's text)
 * and its end on the job's pipe; the pipe is in the loop.  GET /api/jobs, and each update, list them.
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
#include <sys/prctl.h>
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

struct web_job {
	bool used, running;
	enum job_kind kind;
	char name[DOMAIN_NAME_MAX], user[WEB_USER_MAX + 1], dest[128];
	char which[32];                   /* a detach's vdev, or vif MAC or index */
	bool force;
	unsigned timeout_ms;
	struct domain_form form;          /* a create's */
	struct lodge_form_opts form_opts;
	struct web_install install;       /* an install's */
	struct lodge_job run;             /* its child */
	struct lws *pipe;                 /* a dup of the job's fd, in the loop */
	json_t *progress;                 /* the last progress line */
	char error[LODGE_ERR_MAX];        /* "" while running or done well */
	unsigned long id;
};

static struct web_job jobs[JOBS_MAX];
static unsigned long next_id = 1;

/* ---- the child ------------------------------------------------------------------------------ */

/* A progress record: the JSON object's text. */
static bool child_line(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);
	bool go;

	json_decref(j);
	go = lodge_job_progress(-1, -1, s);
	free(s);
	return go;
}

static void child_progress(const struct lodge_progress *p, void *arg)
{
	child_line(json_pack("{s:i,s:I,s:I,s:I,s:I,s:I}", "round", (int)p->round, "pages", (json_int_t)p->pages, "dirty",
			     (json_int_t)p->dirty, "rate_kib", (json_int_t)p->rate_kib, "bytes", (json_int_t)p->bytes,
			     "total", (json_int_t)p->total));
}

/* An install is cancelled as the dashboard's D cancels one
 * (lodge_job_cancel): its next progress call says stop (at least every
 * 200 ms), and lodge_install undoes what it made. */
/* An install's phase in words and its percent of the whole. */
static bool child_install_progress(const struct lodge_job_progress *p, void *arg)
{
	return child_line(json_pack("{s:s,s:i}", "phase", lodge_phase_words(p->phase), "pct", p->pct));
}

struct job_work {
	const struct web_job *jb;
	bool compress;
};

static int child_run(void *arg, struct lodge_job_end *end)
{
	const struct web_job *jb = ((const struct job_work *)arg)->jb;
	bool compress = ((const struct job_work *)arg)->compress;
	const struct lodge *lg = web_lodge();
	char file[CFG_PATH_MAX + DOMAIN_NAME_MAX + 8];
	struct lodge_err err;
	int rc = -EINVAL;

	/* Only an install is cancelled; the others end on a signal as they
	 * always did, and go on if lodge-web ends. */
	if (jb->kind != JOB_INSTALL) {
		prctl(PR_SET_PDEATHSIG, 0);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
	}
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
		/* The cancel reached a tool it ran too: undone all the same. */
		if (rc && lodge_job_stopping()) {
			rc = -ECANCELED;
			snprintf(err.msg, sizeof(err.msg), "cancelled");
		}
	} else {
		struct lodge_migrate_opts o = { .progress = child_progress };
		struct lodge_migrate_result res;

		rc = lodge_migrate(lg, jb->name, jb->dest, &o, &res, &err);
	}
	if (rc)
		snprintf(end->error, sizeof(end->error), "%s", err.msg[0] ? err.msg : strerror(-rc));
	return rc;
}

/* ---- the parent: the pipe in the loop -------------------------------------------------------- */

static void job_over(struct web_job *jb)
{
	jb->running = false;
	if (!jb->run.ended)
		snprintf(jb->error, sizeof(jb->error), "the job's process ended without a word");
	else if (jb->run.end.rc)
		snprintf(jb->error, sizeof(jb->error), "%s", jb->run.end.error[0] ? jb->run.end.error : "failed");
}

static int jobs_pipe_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct web_job *jb = lws_get_opaque_user_data(wsi);
	int got;

	switch (reason) {
	case LWS_CALLBACK_RAW_RX_FILE:
		if (!jb)
			return -1;
		got = lodge_job_collect(&jb->run);
		if (got & LODGE_JOB_PROGRESS) {
			json_t *j = json_loads(jb->run.text, 0, NULL);

			if (j) {
				json_decref(jb->progress);
				jb->progress = j;
			}
		}
		if (got & LODGE_JOB_OVER) {
			job_over(jb);
			return -1;            /* the loop's dup closed with the wsi */
		}
		return 0;
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		if (jb) {
			jb->pipe = NULL;
			if (!jb->run.reaped) {
				lodge_job_release(&jb->run);
				job_over(jb);
			}
		}
		return 0;
	default:
		return 0;
	}
}

const struct lws_protocols web_jobs_protocol = { "lodge-job-pipe", jobs_pipe_cb, 0, 0, 0, NULL, 0 };

/* A slot for a job of name: an unused one, else the oldest ended one;
 * NULL if name has a job running, or all run. */
static struct web_job *job_slot(const char *name)
{
	struct web_job *slot = NULL;
	size_t i;

	for (i = 0; i < JOBS_MAX; i++) {
		struct web_job *jb = &jobs[i];

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
static unsigned job_start(struct web_job *jb, bool compress, struct web_response *resp)
{
	struct job_work w = { jb, compress };    /* the child's copy is the one it reads */
	lws_adopt_desc_t ad = { 0 };
	char why[256];
	int fd;

	if (lodge_job_start(&jb->run, child_run, &w, 0, why, sizeof(why))) {
		web_error(resp, 500, "%s", why);
		return 500;
	}
	/* The loop watches a dup, closed with its wsi; the job reads and
	 * closes its own. */
	ad.vh = jobs_vhost;
	ad.type = LWS_ADOPT_RAW_FILE_DESC;
	ad.fd.filefd = fd = fcntl(lodge_job_fd(&jb->run), F_DUPFD_CLOEXEC, 3);
	ad.vh_prot_name = "lodge-job-pipe";
	ad.opaque = jb;
	if (fd < 0 || !(jb->pipe = lws_adopt_descriptor_vhost_via_info(&ad))) {
		/* The child goes on; its end goes unheard. */
		if (fd >= 0)
			close(fd);
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
		const struct web_job *jb = &jobs[i];

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
static struct web_job *job_take(const struct web_request *req, const char *name, enum job_kind kind,
			    struct web_response *resp)
{
	struct web_job *jb = job_slot(name);

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
static void job_go(const struct web_request *req, struct web_job *jb, bool compress, struct web_response *resp)
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
	struct web_job *jb;
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
	struct web_job *jb = job_take(req, form->value[FORM_NAME], JOB_CREATE, resp);

	if (!jb)
		return;
	jb->form = *form;
	jb->form_opts = *o;
	job_go(req, jb, false, resp);
}

void web_install_job(const struct web_request *req, const struct web_install *in, struct web_response *resp)
{
	struct web_job *jb = job_take(req, in->name, JOB_INSTALL, resp);

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
		struct web_job *jb = &jobs[i];

		if (!jb->used || jb->id != id)
			continue;
		if (!jb->running || jb->kind != JOB_INSTALL) {
			web_error(resp, 409, "job %lu is %s: only a running install is cancelled", id,
				  jb->running ? kind_words[jb->kind] : "over");
			return;
		}
		lodge_job_cancel(&jb->run);
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
