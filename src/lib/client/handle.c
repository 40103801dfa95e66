/* The handle, errors and notices, and naming a domain (lodge.h). */
#include "internal.h"
#include "log.h"
#include "runtime.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int lodge_fail(struct lodge_err *err, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		err->from_hyp = false;
	}
	return rc;
}

void lodge_warn(const struct lodge *lg, const char *fmt, ...)
{
	char msg[LODGE_ERR_MAX];
	va_list ap;

	if (!lg || !lg->notice)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lg->notice(LODGE_NOTICE_WARNING, msg, lg->notice_arg);
}

long lodge_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

int lodge_open(struct lodge *lg, const char *root, struct lodge_err *err)
{
	char msg[LODGE_ERR_MAX];
	int rc;

	memset(lg, 0, sizeof(*lg));
	if (root && *root)
		cfg_set_root(root);
	if ((rc = host_config_load(&lg->hc, msg, sizeof(msg))))
		return lodge_fail(err, rc < 0 ? rc : -EINVAL, "%s", msg);
	return 0;
}

void lodge_on_notice(struct lodge *lg, lodge_notice_fn *fn, void *arg)
{
	lg->notice = fn;
	lg->notice_arg = arg;
}

int lodge_not_running(struct lodge_err *err, const char *name)
{
	return lodge_fail(err, -ENOENT, "no domain named %s is running", name);
}

/* Digits only, and small enough to be an ID: the ID, else -1. */
static long domain_id(const char *s)
{
	char *end;
	unsigned long v;

	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 9)
		return -1;
	v = strtoul(s, &end, 10);
	return (long)v;
}

struct find_id {
	unsigned long id;
	char name[DOMAIN_NAME_MAX];
};

static void match_id(const struct lodge_status *st, void *arg)
{
	struct find_id *f = arg;

	if (st->id == f->id && !f->name[0])
		snprintf(f->name, sizeof(f->name), "%s", st->name);
}

int lodge_resolve(const struct lodge *lg, const char *domain, char name[DOMAIN_NAME_MAX], struct lodge_err *err)
{
	long id = domain_id(domain);
	char dir[CFG_PATH_MAX + DOMAIN_NAME_MAX];
	struct find_id f = { 0 };
	struct stat st;
	bool valid = domain_name_valid(domain);

	name[0] = '\0';
	if (domain_name_is_host(domain))
		return lodge_fail(err, -EINVAL, "%s is the host, not a domain Lodge runs", DOMAIN_HOST_NAME);
	/* A running domain of that name first: a name is exact. */
	if (valid && (id < 0 || (runtime_dir_path(dir, sizeof(dir), lg->hc.runtime_dir, domain) == 0 &&
				 stat(dir, &st) == 0))) {
		memcpy(name, domain, strlen(domain) + 1);
		return 0;
	}
	if (id == 0)
		return lodge_fail(err, -EINVAL, "%s is the host, not a domain Lodge runs", DOMAIN_HOST_NAME);
	if (id < 0)
		return lodge_fail(err, -EINVAL, "'%s' is not a domain name or ID (a name is %s)", domain,
				  domain_name_rule());
	f.id = (unsigned long)id;
	lodge_scan(lg, match_id, &f);
	if (!f.name[0])
		return lodge_fail(err, -ENOENT, "no domain with name or ID %s is running", domain);
	memcpy(name, f.name, strlen(f.name) + 1);
	return 0;
}

int lodge_ask_name(const struct lodge *lg, const char *name, const char *cmd, bool with_keys, struct reply *r,
		   struct lodge_err *err)
{
	int rc = client_call(lg->hc.runtime_dir, name, cmd, with_keys, r);

	if (rc == -ENOENT || rc == -ECONNREFUSED || rc == -ENOTDIR)
		return lodge_not_running(err, name);
	if (rc)
		return lodge_fail(err, rc, "domain %s: %s", name, strerror(-rc));
	if (r->error[0])
		return lodge_fail(err, -EPROTO, "%s", r->error);
	return 0;
}

int lodge_ask(const struct lodge *lg, const char *domain, const char *cmd, bool with_keys, struct reply *r,
	      char *name, struct lodge_err *err)
{
	char resolved[DOMAIN_NAME_MAX];
	int rc;

	r->error[0] = '\0';
	r->nkeys = 0;
	if ((rc = lodge_resolve(lg, domain, resolved, err)))
		return rc;
	if (name)
		memcpy(name, resolved, strlen(resolved) + 1);
	return lodge_ask_name(lg, resolved, cmd, with_keys, r, err);
}

char *lodge_text_shown(char *out, size_t len, const char *text)
{
	return text_escape(out, len, text);
}
