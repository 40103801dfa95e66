/* The pool's domains with their hosts, for a host in a pool (lodge.conf's
 * pool_etcd; src/pool/README.md).  Asked as the dashboard asks everything,
 * never waited for: a child calls pool_domains() (etcd may be slow or
 * away) and writes the rows to a pipe as they are, fixed records, and the
 * main loop reads the pipe as it fills.  A sample is taken whole when the
 * child ends; until then the last one stays, with its age.  Each row of
 * the table gets its host; a domain of the pool that does not run here
 * gets a row of its own (no figures: another host runs it). */
#include "tui.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lodge-pool.h"

bool pool_in_use(const struct tui *t)
{
	return t->hc.pool_etcd[0] != '\0';
}

/* The child's side: the pool's domains as records on the pipe, then its
 * end; exit status 0 once they are all written. */
static void __attribute__((noreturn)) pool_child(const struct tui *t, int out)
{
	struct pool_domains d;
	char why[256];
	size_t i;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null >= 0) {                   /* the screen is the parent's */
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
	}
	fcntl(out, F_SETFL, 0);            /* the child may wait for the parent to read */
	if (pool_domains(&t->hc, &d, why, sizeof(why)))
		_exit(1);
	for (i = 0; i < d.n && i < TUI_POOL_MAX; i++) {
		struct tui_pool_row r = { .memory_mib = d.row[i].memory_mib, .state = d.row[i].state };

		snprintf(r.name, sizeof(r.name), "%s", d.row[i].name);
		snprintf(r.host, sizeof(r.host), "%s", d.row[i].host);
		if (write(out, &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(1);
	}
	_exit(0);
}

static void pool_spawn(struct tui *t)
{
	struct tui_pool *p = &t->pool;
	int fds[2];

	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK))
		return;
	p->asked_ns = tui_now_ns();
	if ((p->pid = fork()) < 0) {
		close(fds[0]);
		close(fds[1]);
		p->pid = 0;
		return;
	}
	if (p->pid == 0) {
		close(fds[0]);
		pool_child(t, fds[1]);
	}
	close(fds[1]);
	p->fd = fds[0];
	p->len = 0;
}

void pool_sample_start(struct tui *t)
{
	if (!pool_in_use(t) || t->pool.pid > 0)
		return;                        /* the last one still out: one at a time */
	if (!t->pool.init) {
		t->pool.fd = -1;
		t->pool.init = true;
	}
	pool_spawn(t);
}

unsigned pool_pollfds(const struct tui *t, struct pollfd *fds, unsigned max)
{
	if (!t->pool.init || t->pool.pid <= 0 || t->pool.fd < 0 || max == 0)
		return 0;
	fds[0] = (struct pollfd){ t->pool.fd, POLLIN, 0 };
	return 1;
}

bool pool_waiting(const struct tui *t)
{
	return t->pool.pid > 0;
}

/* The child's records, whole ones only: the rows of a sample. */
static void pool_take(struct tui_pool *p)
{
	size_t n = p->len / sizeof(p->row[0]);

	p->n = n < TUI_POOL_MAX ? (unsigned)n : TUI_POOL_MAX;
	memcpy(p->row, p->buf, p->n * sizeof(p->row[0]));
	for (n = 0; n < p->n; n++) {           /* terminated, whatever came */
		p->row[n].name[sizeof(p->row[n].name) - 1] = '\0';
		p->row[n].host[sizeof(p->row[n].host) - 1] = '\0';
		if ((unsigned)p->row[n].state >= DOMAIN_STATE_COUNT)
			p->row[n].state = DOMAIN_STATE_UNKNOWN;
	}
}

const struct tui_pool_row *pool_row(const struct tui *t, const char *name)
{
	unsigned i;

	for (i = 0; i < t->pool.n; i++)
		if (strcmp(t->pool.row[i].name, name) == 0)
			return &t->pool.row[i];
	return NULL;
}

/* The sample into the table: hosts on every row; rows of the pool's
 * domains that run elsewhere added, and dropped once gone from the pool
 * or running here (then the poller's row is the one). */
static void pool_apply(struct tui *t)
{
	unsigned i, j;

	for (i = j = 0; i < t->ndoms; i++) {
		struct dom_sample *d = &t->doms[i];
		const struct tui_pool_row *r = pool_row(t, d->st.name);

		if (d->remote && (!r || d->answered_ns)) {
			if (!d->answered_ns)
				continue;          /* gone from the pool */
			d->remote = false;         /* it came here */
		}
		t->doms[j++] = *d;
	}
	t->ndoms = j;
	for (i = 0; i < t->pool.n && t->ndoms < TUI_MAX_DOMAINS; i++) {
		const struct tui_pool_row *r = &t->pool.row[i];
		struct dom_sample *d = NULL;

		for (j = 0; j < t->ndoms && !d; j++)
			if (strcmp(t->doms[j].st.name, r->name) == 0)
				d = &t->doms[j];
		if (d && !d->remote && !d->off)
			continue;
		/* a config of domains_dir shown off is the pool's domain: its row */
		if (d && d->off) {
			detail_free(d->detail);
			memset(d, 0, sizeof(*d));
			memcpy(d->st.name, r->name, sizeof(d->st.name) < sizeof(r->name) ? sizeof(d->st.name) : sizeof(r->name));
			d->st.name[sizeof(d->st.name) - 1] = '\0';
			d->remote = true;
		}
		if (!d) {
			d = &t->doms[t->ndoms++];
			memset(d, 0, sizeof(*d));
			memcpy(d->st.name, r->name, sizeof(d->st.name) < sizeof(r->name) ? sizeof(d->st.name) : sizeof(r->name));
			d->st.name[sizeof(d->st.name) - 1] = '\0';
			d->remote = true;
		}
		/* what the pool says of it, for the row's columns */
		d->st.state = r->state;
		d->st.target_mib = d->st.memory_mib = r->memory_mib;
	}
	sample_sort(t);
}

bool pool_collect(struct tui *t)
{
	struct tui_pool *p = &t->pool;
	bool ended = false;
	int status;

	if (p->pid <= 0)
		return false;
	while (p->fd >= 0) {
		ssize_t n;

		if (p->len + 4096 + 1 > p->cap) {
			size_t cap = p->cap ? p->cap * 2 : 16384;
			char *b = realloc(p->buf, cap);

			if (!b)
				break;
			p->buf = b;
			p->cap = cap;
		}
		n = read(p->fd, p->buf + p->len, p->cap - p->len - 1);
		if (n > 0) {
			p->len += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return false;              /* more to come */
		close(p->fd);                  /* its end (or an error: the same) */
		p->fd = -1;
		ended = true;
	}
	if (!ended && p->fd >= 0)
		return false;
	if (waitpid(p->pid, &status, 0) != p->pid)
		status = -1;
	p->pid = 0;
	if (status != 0 || !p->buf) {
		p->failed = true;              /* the last sample stays; the header says since when */
		return true;
	}
	p->failed = false;
	p->got_ns = tui_now_ns();
	pool_take(p);
	pool_apply(t);
	return true;
}

void pool_free(struct tui *t)
{
	struct tui_pool *p = &t->pool;

	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
		p->pid = 0;
	}
	if (p->fd >= 0 && p->init)
		close(p->fd);
	p->fd = -1;
	free(p->buf);
	p->buf = NULL;
	p->cap = p->len = 0;
}
