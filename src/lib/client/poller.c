/* Every running domain's status in one round trip: requests go out on all
 * control sockets before any reply is read, over connections kept open
 * between calls.  The dashboard asks 50 domains every second; a connect
 * and close per domain was most of its CPU time, and waiting for each
 * reply in turn most of its latency. */
#include "internal.h"
#include "proto.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define POLL_MAX_DOMAINS 1024
#define POLL_REPLY_MAX   16384
#define POLL_TIMEOUT_MS  2000

struct poll_conn {
	char name[DOMAIN_NAME_MAX];
	int fd;                 /* -1: not connected */
	char *buf;              /* the reply so far */
	size_t len;
	bool waiting, seen;
	bool kept;              /* the request went on a connection kept from an earlier scan */
	bool reconnected;       /* this scan already connected once more */
	char why[256];          /* why it could not be asked this scan; "" if it was */
};

struct lodge_poller {
	struct poll_conn conn[POLL_MAX_DOMAINS];
	unsigned n;
	/* Patient mode (the dashboard): a reply not in by timeout_ms is still
	 * awaited at the next scan, and `late` hears of the domain meanwhile. */
	int timeout_ms;
	void (*late)(const char *name, void *arg);
	void (*unasked)(const char *name, const char *why, void *arg);
};

struct lodge_poller *lodge_poller_new(void)
{
	struct lodge_poller *p = calloc(1, sizeof(struct lodge_poller));

	if (p)
		p->timeout_ms = POLL_TIMEOUT_MS;
	return p;
}

void lodge_poller_patient(struct lodge_poller *p, int timeout_ms, void (*late)(const char *name, void *arg))
{
	p->timeout_ms = timeout_ms;
	p->late = late;
}

void lodge_poller_on_unasked(struct lodge_poller *p, void (*unasked)(const char *name, const char *why, void *arg))
{
	p->unasked = unasked;
}

static void conn_close(struct poll_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->waiting = false;
}

void lodge_poller_free(struct lodge_poller *p)
{
	unsigned i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++) {
		conn_close(&p->conn[i]);
		free(p->conn[i].buf);
	}
	free(p);
}

/* Bring the list in line with the runtime directory's entries. */
static void update_names(struct lodge_poller *p, const char *rundir)
{
	DIR *d = opendir(rundir);
	struct dirent *de;
	unsigned i, j;

	for (i = 0; i < p->n; i++)
		p->conn[i].seen = false;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) ||
		    strlen(de->d_name) >= DOMAIN_NAME_MAX)
			continue;
		for (i = 0; i < p->n && strcmp(p->conn[i].name, de->d_name); i++)
			;
		if (i == p->n) {
			if (p->n == POLL_MAX_DOMAINS)
				continue;
			p->conn[p->n++] = (struct poll_conn){ .fd = -1 };
			memcpy(p->conn[i].name, de->d_name, strlen(de->d_name) + 1);
		}
		p->conn[i].seen = true;
	}
	if (d)
		closedir(d);
	for (i = j = 0; i < p->n; i++) {
		if (p->conn[i].seen) {
			p->conn[j++] = p->conn[i];
		} else {
			conn_close(&p->conn[i]);
			free(p->conn[i].buf);
		}
	}
	p->n = j;
}

/* A connection lodge-hyp refused at once leaves its one line to read:
 * its reason, into c->why. */
static void read_refusal(struct poll_conn *c)
{
	char line[sizeof(c->why) + 8];
	ssize_t n = recv(c->fd, line, sizeof(line) - 1, MSG_DONTWAIT);

	if (n <= 0)
		return;
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0';
	snprintf(c->why, sizeof(c->why), "%.*s", (int)sizeof(c->why) - 1,
		 strncmp(line, "error ", 6) == 0 ? line + 6 : line);
}

/* Send the status request, connecting as needed, and once more when a
 * kept connection turns out closed: lodge-hyp closes idle ones (and
 * every one when it ends).  False: not sent; c->why says why, or is
 * empty for a domain that is not running (its directory is removed). */
static bool send_request(struct poll_conn *c, const struct lodge *lg)
{
	char req[64];
	int len = snprintf(req, sizeof(req), "%s%d status\n", PROTO_PREFIX, PROTO_VERSION), tries;

	for (tries = 0; tries < 2; tries++) {
		if (c->fd < 0) {
			int fd = client_connect(lg->hc.runtime_dir, c->name);

			if (fd == -ECONNREFUSED || fd == -ENOENT || fd == -ENOTDIR) {
				lodge_remove_stale(lg, c->name, false);
				return false;
			}
			if (fd < 0) {
				snprintf(c->why, sizeof(c->why), "cannot connect: %s", strerror(-fd));
				return false;
			}
			c->fd = fd;
			c->kept = false;
		} else {
			c->kept = true;
		}
		if (send(c->fd, req, len, MSG_NOSIGNAL) == len) {
			c->len = 0;
			c->waiting = true;
			return true;
		}
		if (!c->kept) {
			snprintf(c->why, sizeof(c->why), "the connection was closed: %s", strerror(errno));
			read_refusal(c);
			conn_close(c);
			return false;
		}
		conn_close(c);
	}
	return false;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* Read what has arrived: true once the reply is whole, or the connection
 * ended (then c->fd is -1). */
static bool receive(struct poll_conn *c)
{
	ssize_t r;

	if (!c->buf && !(c->buf = malloc(POLL_REPLY_MAX))) {
		snprintf(c->why, sizeof(c->why), "%s", strerror(ENOMEM));
		return conn_close(c), true;
	}
	r = recv(c->fd, c->buf + c->len, POLL_REPLY_MAX - 1 - c->len, MSG_DONTWAIT);
	if (r < 0 && errno == EAGAIN)
		return false;
	if (r <= 0 || c->len + r >= POLL_REPLY_MAX - 1) {
		snprintf(c->why, sizeof(c->why), r > 0 ? "a reply longer than %d bytes" :
			 c->len ? "the connection was closed in the middle of the reply" :
			 "the connection was closed before the reply", POLL_REPLY_MAX);
		conn_close(c);
		return true;
	}
	c->len += r;
	c->buf[c->len] = '\0';
	if (!client_reply_complete(c->buf, c->len))
		return false;
	c->waiting = false;
	return true;
}

static int by_id(const void *a, const void *b)
{
	const struct lodge_status *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

int lodge_poller_scan(struct lodge_poller *p, const struct lodge *lg,
		      void (*fn)(const struct lodge_status *, void *), void *arg)
{
	static struct pollfd pfd[POLL_MAX_DOMAINS];
	static unsigned idx[POLL_MAX_DOMAINS];
	static struct lodge_status found[POLL_MAX_DOMAINS];
	static struct reply reply;
	long deadline = now_ms() + p->timeout_ms;
	unsigned i, npfd, nfound = 0;

	update_names(p, lg->hc.runtime_dir);
	for (i = 0; i < p->n; i++) {
		p->conn[i].why[0] = '\0';
		p->conn[i].reconnected = false;
		if (!p->conn[i].waiting)          /* else its last reply is still due */
			send_request(&p->conn[i], lg);
	}
	for (;;) {
		long left = deadline - now_ms();

		for (i = npfd = 0; i < p->n; i++)
			if (p->conn[i].waiting) {
				pfd[npfd] = (struct pollfd){ p->conn[i].fd, POLLIN, 0 };
				idx[npfd++] = i;
			}
		if (npfd == 0 || left <= 0 || poll(pfd, npfd, left) < 0)
			break;
		for (i = 0; i < npfd; i++) {
			struct poll_conn *c = &p->conn[idx[i]];

			if (!pfd[i].revents || !receive(c))
				continue;
			if (c->fd < 0) {
				/* Closed unanswered: a kept connection lodge-hyp
				 * found idle just as the request went. */
				if (c->kept && !c->len && !c->reconnected) {
					c->reconnected = true;
					c->why[0] = '\0';
					send_request(c, lg);
				}
				continue;
			}
			if (client_parse_reply(c->buf, &reply) == 0 && !reply.error[0]) {
				lodge_status_from_reply(&reply, c->name, &found[nfound++]);
				continue;
			}
			/* A refusal (lodge-hyp closes after it), or a reply
			 * that is not one: start afresh next time. */
			snprintf(c->why, sizeof(c->why), "%.*s", (int)sizeof(c->why) - 1,
				 reply.error[0] ? reply.error : "an unreadable reply");
			conn_close(c);
		}
	}
	for (i = 0; i < p->n; i++) {
		if (!p->conn[i].waiting)
			continue;
		if (p->late) {
			p->late(p->conn[i].name, arg);
		} else {
			snprintf(p->conn[i].why, sizeof(p->conn[i].why), "no reply within %d ms", p->timeout_ms);
			conn_close(&p->conn[i]);   /* a late reply must not answer the next request */
		}
	}
	qsort(found, nfound, sizeof(found[0]), by_id);
	for (i = 0; i < nfound; i++)
		fn(&found[i], arg);
	for (i = 0; i < p->n; i++) {
		if (!p->conn[i].why[0])
			continue;
		if (p->unasked)
			p->unasked(p->conn[i].name, p->conn[i].why, arg);
		else
			lodge_warn(lg, "domain %s: cannot ask its status: %s", p->conn[i].name, p->conn[i].why);
	}
	return nfound;
}

/* ---- the same without waiting: a face with a main loop of its own ---------------------
 * The dashboard polls these sockets beside its keyboard, so a domain slow
 * to answer (or stopped) holds neither the screen nor the keys: its
 * request stays out, and its reply is taken whenever it comes. */

/* Send the status request without waiting: on the kept connection, or on
 * a new one connected without waiting (a stopped domain whose backlog is
 * full refuses at once rather than hold us).  False: not sent, c->why
 * says why, or is empty for a domain that is not running (removed). */
static bool send_request_nowait(struct poll_conn *c, const struct lodge *lg)
{
	char req[64];
	int len = snprintf(req, sizeof(req), "%s%d status\n", PROTO_PREFIX, PROTO_VERSION), fd;

	c->len = 0;
	if (c->fd >= 0) {
		if (send(c->fd, req, len, MSG_NOSIGNAL | MSG_DONTWAIT) == len) {
			c->kept = c->waiting = true;
			return true;
		}
		conn_close(c);             /* lodge-hyp closed it idle: connect anew */
	}
	fd = client_start(lg->hc.runtime_dir, c->name, "status");
	if (fd == -ECONNREFUSED || fd == -ENOENT || fd == -ENOTDIR) {
		lodge_remove_stale(lg, c->name, false);
		return false;
	}
	if (fd < 0) {
		snprintf(c->why, sizeof(c->why), "cannot connect: %s",
			 fd == -EAGAIN ? "its control socket has too many connections waiting" : strerror(-fd));
		return false;
	}
	c->fd = fd;
	c->kept = false;
	c->waiting = true;
	return true;
}

static void report_unasked(struct lodge_poller *p, const struct lodge *lg, struct poll_conn *c, void *arg)
{
	if (!c->why[0])
		return;
	if (p->unasked)
		p->unasked(c->name, c->why, arg);
	else
		lodge_warn(lg, "domain %s: cannot ask its status: %s", c->name, c->why);
}

int lodge_poller_send(struct lodge_poller *p, const struct lodge *lg, void *arg)
{
	unsigned i;
	int sent = 0;

	update_names(p, lg->hc.runtime_dir);
	for (i = 0; i < p->n; i++) {
		struct poll_conn *c = &p->conn[i];

		c->why[0] = '\0';
		c->reconnected = false;
		if (c->waiting)               /* its last reply is still due: no second request */
			continue;
		if (send_request_nowait(c, lg))
			sent++;
		else
			report_unasked(p, lg, c, arg);
	}
	return sent;
}

unsigned lodge_poller_pollfds(const struct lodge_poller *p, struct pollfd *fds, unsigned max)
{
	unsigned i, n = 0;

	for (i = 0; i < p->n && n < max; i++)
		if (p->conn[i].waiting)
			fds[n++] = (struct pollfd){ p->conn[i].fd, POLLIN, 0 };
	return n;
}

/* The waiting connection on fd, if any. */
static struct poll_conn *waiting_on(struct lodge_poller *p, int fd)
{
	unsigned i;

	for (i = 0; i < p->n; i++)
		if (p->conn[i].waiting && p->conn[i].fd == fd)
			return &p->conn[i];
	return NULL;
}

int lodge_poller_collect(struct lodge_poller *p, const struct lodge *lg, const struct pollfd *ready, unsigned nready,
			 void (*fn)(const struct lodge_status *st, void *arg), void *arg)
{
	static struct pollfd pfd[POLL_MAX_DOMAINS];
	static struct lodge_status st;
	static struct reply reply;
	unsigned i;
	int waiting = 0;

	/* Without the caller's poll, one of our own says which have
	 * something to read: a recv on each of fifty sockets whenever a
	 * reply arrives would cost more than the reply. */
	if (!ready) {
		nready = lodge_poller_pollfds(p, pfd, POLL_MAX_DOMAINS);
		if (nready && poll(pfd, nready, 0) <= 0)
			nready = 0;
		ready = pfd;
	}
	for (i = 0; i < nready; i++) {
		struct poll_conn *c;

		if (!ready[i].revents || !(c = waiting_on(p, ready[i].fd)) || !receive(c))
			continue;
		if (c->fd < 0) {
			/* Closed unanswered: a kept connection lodge-hyp found
			 * idle just as the request went. */
			if (c->kept && !c->len && !c->reconnected) {
				c->reconnected = true;
				c->why[0] = '\0';
				if (send_request_nowait(c, lg))
					continue;
			}
			report_unasked(p, lg, c, arg);
			continue;
		}
		if (client_parse_reply(c->buf, &reply) == 0 && !reply.error[0]) {
			lodge_status_from_reply(&reply, c->name, &st);
			fn(&st, arg);
			continue;
		}
		/* A refusal (lodge-hyp closes after it), or a reply that is
		 * not one: start afresh next time. */
		snprintf(c->why, sizeof(c->why), "%.*s", (int)sizeof(c->why) - 1,
			 reply.error[0] ? reply.error : "an unreadable reply");
		conn_close(c);
		report_unasked(p, lg, c, arg);
	}
	for (i = 0; i < p->n; i++)
		waiting += p->conn[i].waiting;
	return waiting;
}

bool lodge_poller_knows(const struct lodge_poller *p, const char *name)
{
	unsigned i;

	for (i = 0; i < p->n; i++)
		if (strcmp(p->conn[i].name, name) == 0)
			return true;
	return false;
}

void lodge_poller_late(const struct lodge_poller *p, void *arg)
{
	unsigned i;

	for (i = 0; i < p->n && p->late; i++)
		if (p->conn[i].waiting)
			p->late(p->conn[i].name, arg);
}
