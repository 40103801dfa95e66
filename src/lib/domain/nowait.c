/* Queries that never wait (lodge.h): a domain's vifs as its watcher sees
 * them, its console's tail and its console itself, sent at once and taken
 * in whenever they arrive.  A face with a main loop of its own polls q->fd beside its
 * other input, so a domain slow to answer, or stopped, holds nothing. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NET_REPLY_MAX   16384            /* as a blocking request reads it (client.c) */
#define LOG_REPLY_MAX   (16u << 20)      /* a whole console log, as lodge-hyp keeps it */

void lodge_query_close(struct lodge_query *q)
{
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
	free(q->buf);
	q->buf = NULL;
	q->n = q->cap = 0;
}

static int query_start(const struct lodge *lg, const char *domain, const char *cmd, size_t cap,
		       struct lodge_query *q, struct lodge_err *err)
{
	int fd, rc;

	lodge_query_close(q);
	if ((rc = lodge_resolve(lg, domain, q->name, err)))
		return rc;
	if (!(q->buf = malloc(cap)))
		return lodge_fail(err, -ENOMEM, "%s", strerror(ENOMEM));
	q->cap = cap;
	fd = client_start(lg->hc.runtime_dir, q->name, cmd);
	if (fd == -ENOENT || fd == -ECONNREFUSED || fd == -ENOTDIR) {
		lodge_query_close(q);
		return lodge_not_running(err, q->name);
	}
	if (fd < 0) {
		lodge_query_close(q);
		return lodge_fail(err, fd, "domain %s: %s", q->name, fd == -EAGAIN ?
				  "its control socket has too many connections waiting" : strerror(-fd));
	}
	q->fd = fd;
	return 0;
}

/* Read what has arrived: 1 at the end of the connection, 0 for more to
 * come, -errno (err set, q closed) on a failure.  grow: the buffer may
 * grow up to max (a log), else a reply that fills it is refused. */
static int query_read(struct lodge_query *q, size_t max, struct lodge_err *err)
{
	for (;;) {
		ssize_t got;

		if (q->n + 1 >= q->cap) {
			size_t cap = q->cap * 2 > max ? max : q->cap * 2;
			char *more = cap > q->cap ? realloc(q->buf, cap) : NULL;

			if (!more) {
				lodge_query_close(q);
				return lodge_fail(err, -EPROTO, "%s: a reply longer than %zu bytes", q->name, max);
			}
			q->buf = more;
			q->cap = cap;
		}
		got = read(q->fd, q->buf + q->n, q->cap - 1 - q->n);
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return 0;
		if (got < 0) {
			int e = errno;

			lodge_query_close(q);
			return lodge_fail(err, -e, "%s: %s", q->name, strerror(e));
		}
		if (got == 0)
			break;
		q->n += (size_t)got;
		q->buf[q->n] = '\0';
	}
	q->buf[q->n] = '\0';
	return 1;
}

/* lodge-hyp's refusal, "error WHY", as err: -EPROTO, q closed. */
static int query_refused(struct lodge_query *q, struct lodge_err *err)
{
	char *why = q->buf + 6;
	int rc;

	why[strcspn(why, "\n")] = '\0';
	rc = lodge_fail(err, -EPROTO, "%s: %s", q->name, why);
	lodge_query_close(q);
	return rc;
}

int lodge_net_start(const struct lodge *lg, const char *domain, struct lodge_query *q, struct lodge_err *err)
{
	return query_start(lg, domain, "peers", NET_REPLY_MAX, q, err);
}

int lodge_net_collect(struct lodge_query *q, const struct lodge_devices *dev, struct lodge_net *out,
		      struct lodge_err *err)
{
	static struct reply r;
	unsigned i;
	int rc;

	if (q->fd < 0)
		return lodge_fail(err, -EBADF, "no query out");
	/* The reply ends with an empty line; lodge-hyp keeps the connection. */
	rc = query_read(q, NET_REPLY_MAX, err);
	if (rc < 0)
		return rc;
	if (rc == 0 && !client_reply_complete(q->buf, q->n))
		return 0;
	if (!client_reply_complete(q->buf, q->n)) {
		lodge_query_close(q);
		return lodge_fail(err, -ECONNRESET, "%s: the connection was closed before the reply", q->name);
	}
	if (strncmp(q->buf, "error ", 6) == 0)
		return query_refused(q, err);
	if (client_parse_reply(q->buf, &r)) {
		lodge_query_close(q);
		return lodge_fail(err, -EPROTO, "%s: an unreadable reply", q->name);
	}
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", q->name);
	lodge_query_close(q);
	if (dev->nvifs == 0)
		return lodge_fail(err, -ENODEV, "domain %s has no vifs", out->name);
	lodge_net_from_reply(&r, out, dev->nvifs);
	for (i = 0; i < out->nvifs; i++) {
		struct lodge_vif_net *vn = &out->vifs[i];
		char ifname[IFNAMSIZ];

		/* The watcher names the tap; the config, its MAC and bridge. */
		memcpy(ifname, vn->vif.ifname, sizeof(ifname));
		vn->vif = dev->vif[i];
		memcpy(vn->vif.ifname, ifname, sizeof(ifname));
	}
	return 1;
}

int lodge_console_log_start(const struct lodge *lg, const char *domain, size_t last, struct lodge_query *q,
			    struct lodge_err *err)
{
	char cmd[48];

	if (last)
		snprintf(cmd, sizeof(cmd), "console-log %zu", last);
	else
		snprintf(cmd, sizeof(cmd), "console-log");
	return query_start(lg, domain, cmd, last ? last + 256 : 65536, q, err);
}

int lodge_console_log_collect(struct lodge_query *q, char **text, size_t *len, struct lodge_err *err)
{
	int rc;

	*text = NULL;
	*len = 0;
	if (q->fd < 0)
		return lodge_fail(err, -EBADF, "no query out");
	/* "ok", then the log to the end of the connection. */
	if ((rc = query_read(q, LOG_REPLY_MAX, err)) <= 0)
		return rc;
	if (strncmp(q->buf, "error ", 6) == 0)
		return query_refused(q, err);
	if (strncmp(q->buf, "ok\n", 3) != 0) {
		lodge_query_close(q);
		return lodge_fail(err, -EPROTO, "%s: cannot read the console log", q->name);
	}
	*len = q->n - 3;
	memmove(q->buf, q->buf + 3, *len + 1);
	*text = q->buf;
	q->buf = NULL;
	lodge_query_close(q);
	return 1;
}

int lodge_console_start(const struct lodge *lg, const char *domain, bool force, struct lodge_query *q,
			struct lodge_err *err)
{
	return query_start(lg, domain, force ? "console force" : "console", 512, q, err);
}

int lodge_console_collect(struct lodge_query *q, int *fd, struct lodge_err *err)
{
	int flags;

	*fd = -1;
	if (q->fd < 0)
		return lodge_fail(err, -EBADF, "no query out");
	/* A byte at a time: what follows the reply's line is the guest's. */
	for (;;) {
		ssize_t got;
		char c;

		if (q->n + 1 >= q->cap) {
			lodge_query_close(q);
			return lodge_fail(err, -EPROTO, "%s: an unreadable reply", q->name);
		}
		got = read(q->fd, &c, 1);
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return 0;
		if (got <= 0) {
			int e = got ? errno : ECONNRESET;

			lodge_query_close(q);
			return lodge_fail(err, -e, "%s: the connection was closed before the reply", q->name);
		}
		q->buf[q->n] = '\0';
		if (c == '\n')
			break;
		q->buf[q->n++] = c;
	}
	if (strncmp(q->buf, "error ", 6) == 0)
		return query_refused(q, err);
	if (strcmp(q->buf, "ok") != 0) {
		lodge_query_close(q);
		return lodge_fail(err, -EPROTO, "%s: an unreadable reply", q->name);
	}
	/* The console is the caller's now, blocking as lodge_console_open's is. */
	if ((flags = fcntl(q->fd, F_GETFL)) >= 0)
		fcntl(q->fd, F_SETFL, flags & ~O_NONBLOCK);
	*fd = q->fd;
	q->fd = -1;
	lodge_query_close(q);
	return 1;
}
