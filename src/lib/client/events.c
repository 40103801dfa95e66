/* The logs a sysadmin reads (lodge.h): the event log that every domain's
 * lodge-hyp appends to (src/common/evlog.h), each domain's lodge-hyp.log,
 * and the face this process tells lodge-hyp it is. */
#include "internal.h"
#include "evlog.h"
#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

int lodge_set_face(const char *face)
{
	return client_set_face(face);
}

const char *lodge_face(void)
{
	return client_face();
}

int lodge_event_log_dir(char *out, size_t len)
{
	size_t n = (size_t)snprintf(out, len, "%s%s", cfg_root(), EVLOG_DIR);

	return n < len ? 0 : -ENAMETOOLONG;
}

/* Whole lines from a descriptor read as it grows: a line written in part
 * (a reader may see a write half done) waits for its end. */
struct line_reader {
	int fd;
	char buf[2 * EVLOG_LINE_MAX];
	size_t len;
};

/* Each whole line to fn (a line longer than the buffer, in parts):
 * 0 at the end of what is there, 1 when fn said stop, -errno. */
static int lines_read(struct line_reader *r, const char *domain, lodge_line_fn *fn, void *arg)
{
	for (;;) {
		ssize_t got = read(r->fd, r->buf + r->len, sizeof(r->buf) - 1 - r->len);
		char *start = r->buf, *nl;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			return 0;
		r->len += (size_t)got;
		r->buf[r->len] = '\0';
		while ((nl = memchr(start, '\n', r->len - (size_t)(start - r->buf))) ||
		       (start == r->buf && r->len == sizeof(r->buf) - 1)) {
			const char *dom;
			size_t n;

			if (nl)
				*nl = '\0';
			dom = evlog_line_domain(start, &n);
			if ((!domain || (dom && n == strlen(domain) && memcmp(dom, domain, n) == 0)) && fn(start, arg))
				return 1;
			start = nl ? nl + 1 : r->buf + r->len;
			if (!nl)
				break;
		}
		r->len -= (size_t)(start - r->buf);
		memmove(r->buf, start, r->len);
	}
}

/* The last lines, kept as they go by. */
struct tail {
	char **line;
	unsigned n, next, count;
};

static int tail_keep(const char *line, void *arg)
{
	struct tail *t = arg;
	char *copy = strdup(line);

	if (!copy)
		return 1;
	free(t->line[t->next]);
	t->line[t->next] = copy;
	t->next = (t->next + 1) % t->n;
	if (t->count < t->n)
		t->count++;
	return 0;
}

static int log_open(const char *path)
{
	return open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
}

/* Follow the log at path from where r is: the directory watched, so that
 * a file rotated away (a new one in its place) or truncated is read anew. */
static int log_follow(const char *dir, const char *path, struct line_reader *r, const char *domain,
		      lodge_line_fn *fn, void *arg, struct lodge_err *err)
{
	int ifd = inotify_init1(IN_CLOEXEC), rc = 0;

	if (ifd < 0)
		return lodge_fail(err, -errno, "cannot watch %s: %s", dir, strerror(errno));
	if (inotify_add_watch(ifd, dir, IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
			      IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF) < 0) {
		rc = lodge_fail(err, -errno, "cannot watch %s: %s", dir, strerror(errno));
		close(ifd);
		return rc;
	}
	for (;;) {
		char ev[sizeof(struct inotify_event) + NAME_MAX + 1] __attribute__((aligned(8)));
		struct stat now, open_st;
		struct pollfd p = { ifd, POLLIN, 0 };

		/* What came since the watch began, then after each change. */
		if (r->fd < 0 && (r->fd = log_open(path)) < 0 && errno != ENOENT) {
			rc = lodge_fail(err, -errno, "cannot read %s: %s", path, strerror(errno));
			break;
		}
		if (r->fd >= 0) {
			if (fstat(r->fd, &open_st) == 0 && lseek(r->fd, 0, SEEK_CUR) > open_st.st_size) {
				lseek(r->fd, 0, SEEK_SET);     /* truncated (copytruncate) */
				r->len = 0;
			}
			if ((rc = lines_read(r, domain, fn, arg)))
				break;
			/* Rotated: the rest of the old file is read; on to the new. */
			if (stat(path, &now) == 0 && (now.st_ino != open_st.st_ino || now.st_dev != open_st.st_dev)) {
				close(r->fd);
				r->fd = -1;
				r->len = 0;
				continue;
			}
		}
		if (poll(&p, 1, -1) < 0 && errno != EINTR) {
			rc = lodge_fail(err, -errno, "cannot watch %s: %s", dir, strerror(errno));
			break;
		}
		if (read(ifd, ev, sizeof(ev)) < 0 && errno != EINTR) {
			rc = lodge_fail(err, -errno, "cannot watch %s: %s", dir, strerror(errno));
			break;
		}
	}
	close(ifd);
	return rc < 0 ? rc : 0;
}

int lodge_log_read(const struct lodge *lg, const char *domain, unsigned last, bool follow, lodge_line_fn *fn,
		   void *arg, struct lodge_err *err)
{
	static struct line_reader r;
	char dir[CFG_PATH_MAX], path[CFG_PATH_MAX + 32];
	struct tail t = { 0 };
	unsigned i;
	int rc = 0;

	(void)lg;
	if (domain && !domain_name_valid(domain))
		return lodge_fail(err, -EINVAL, "'%s' is not a domain name (%s)", domain, domain_name_rule());
	if (lodge_event_log_dir(dir, sizeof(dir)) ||
	    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, EVLOG_FILE) >= sizeof(path))
		return lodge_fail(err, -ENAMETOOLONG, "the event log's path is too long");
	r.len = 0;
	r.fd = log_open(path);
	if (r.fd < 0 && errno != ENOENT)
		return lodge_fail(err, -errno, "cannot read %s: %s", path, strerror(errno));
	if (r.fd < 0 && follow && access(dir, F_OK) < 0)
		return lodge_fail(err, -errno, "cannot follow %s: %s (no domain has run here yet)", path,
				  strerror(errno));
	if (r.fd >= 0 && last) {
		if (!(t.line = calloc(last, sizeof(*t.line)))) {
			close(r.fd);
			return lodge_fail(err, -ENOMEM, "%s", strerror(ENOMEM));
		}
		t.n = last;
		rc = lines_read(&r, domain, tail_keep, &t);
		for (i = 0; i < t.count; i++) {
			unsigned k = (t.next + t.n - t.count + i) % t.n;

			if (rc == 0 && fn(t.line[k], arg))
				rc = 1;
		}
		for (i = 0; i < t.n; i++)
			free(t.line[i]);
		free(t.line);
		if (rc < 0)
			rc = lodge_fail(err, rc, "cannot read %s: %s", path, strerror(-rc));
	} else if (r.fd >= 0) {
		r.len = 0;
		lseek(r.fd, 0, SEEK_END);
	}
	if (rc == 0 && follow)
		rc = log_follow(dir, path, &r, domain, fn, arg, err);
	if (r.fd >= 0)
		close(r.fd);
	return rc < 0 ? rc : 0;
}

int lodge_hyp_log_open(const struct lodge *lg, const char *domain, struct lodge_err *err)
{
	char name[DOMAIN_NAME_MAX], path[CFG_PATH_MAX + DOMAIN_NAME_MAX + 32];
	int rc, fd;

	if ((rc = lodge_resolve(lg, domain, name, err)))
		return rc;
	if (runtime_path(path, sizeof(path), lg->hc.runtime_dir, name, RT_HYP_LOG))
		return lodge_fail(err, -ENAMETOOLONG, "the runtime directory's path is too long");
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC)) >= 0)
		return fd;
	if (errno == ENOENT)
		return lodge_fail(err, -ENOENT, "no domain named %s is running", name);
	return lodge_fail(err, -errno, "cannot read %s: %s", path, strerror(errno));
}
