/* The pool's domains with their hosts, for a host in a pool (lodge.conf's
 * pool_etcd; src/pool/README.md).  Asked as the dashboard asks everything,
 * never waited for: a job (lodge/job.h) calls pool_domains() (etcd may be
 * slow or away) and sends each row as a result record; the main loop
 * takes them as they come into the next sample, which replaces the shown
 * one only once the job ended well (until then the last one stays; got_ns
 * says when it came).  Each row of the table gets its host; a domain of the pool
 * that does not run here gets a row of its own (no figures: another host
 * runs it). */
#include "tui.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "lodge-pool.h"

bool pool_in_use(const struct tui *t)
{
	return t->hc.pool_etcd[0] != '\0';
}

/* The job, in its child: the pool's domains, a record each. */
static int pool_work(void *arg, struct lodge_job_end *end)
{
	const struct tui *t = arg;
	struct pool_domains d;
	size_t i;
	int rc;

	if ((rc = pool_domains(&t->hc, &d, end->error, sizeof(end->error))))
		return rc;
	for (i = 0; i < d.n && i < TUI_POOL_MAX && rc == 0; i++) {
		struct tui_pool_row r = { .memory_mib = d.row[i].memory_mib, .state = d.row[i].state };

		snprintf(r.name, sizeof(r.name), "%s", d.row[i].name);
		snprintf(r.host, sizeof(r.host), "%s", d.row[i].host);
		if (!lodge_job_record(&r, sizeof(r)))
			rc = -ECANCELED;
	}
	pool_domains_free(&d);
	return rc;
}

/* A row from the job into the next sample: a row's size, terminated
 * whatever came. */
static int pool_take_row(void *arg, const void *rec, size_t len)
{
	struct tui_pool *p = arg;
	struct tui_pool_row *r;

	if (len != sizeof(*r) || p->next_n >= TUI_POOL_MAX)
		return -EPROTO;
	r = &p->next[p->next_n++];
	memcpy(r, rec, sizeof(*r));
	r->name[sizeof(r->name) - 1] = '\0';
	r->host[sizeof(r->host) - 1] = '\0';
	if ((unsigned)r->state >= DOMAIN_STATE_COUNT)
		r->state = DOMAIN_STATE_UNKNOWN;
	return 0;
}

void pool_sample_start(struct tui *t)
{
	struct tui_pool *p = &t->pool;
	char why[LODGE_ERR_MAX];

	if (!pool_in_use(t) || p->out)
		return;                        /* the last one still out: one at a time */
	p->asked_ns = tui_now_ns();
	p->next_n = 0;
	if (lodge_job_start(&p->job, pool_work, t, LODGE_JOB_DETACH, why, sizeof(why))) {
		p->failed = true;
		lodge_text_shown(p->why, sizeof(p->why), why);
		return;
	}
	lodge_job_records(&p->job, pool_take_row, p, sizeof(p->next));
	p->out = true;
}

unsigned pool_pollfds(const struct tui *t, struct pollfd *fds, unsigned max)
{
	if (!t->pool.out || lodge_job_fd(&t->pool.job) < 0 || max == 0)
		return 0;
	fds[0] = (struct pollfd){ lodge_job_fd(&t->pool.job), POLLIN, 0 };
	return 1;
}

bool pool_waiting(const struct tui *t)
{
	return t->pool.out;
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

	if (!p->out || !(lodge_job_collect(&p->job) & LODGE_JOB_OVER))
		return false;
	p->out = false;
	if (p->job.end.rc) {
		p->failed = true;              /* the last sample stays, with its age */
		lodge_text_shown(p->why, sizeof(p->why), p->job.end.error[0] ? p->job.end.error : strerror(-p->job.end.rc));
		return true;
	}
	p->failed = false;
	p->why[0] = '\0';
	p->got_ns = tui_now_ns();
	memcpy(p->row, p->next, p->next_n * sizeof(p->row[0]));
	p->n = p->next_n;
	pool_apply(t);
	return true;
}

/* An age in words: "14 s", "3 min". */
static void age_words(uint64_t ns, char *out, size_t len)
{
	uint64_t s = ns / 1000000000ull;

	if (s < 120)
		snprintf(out, len, "%llu s", (unsigned long long)s);
	else
		snprintf(out, len, "%llu min", (unsigned long long)(s / 60));
}

bool pool_stale(const struct tui *t, uint64_t now, char *out, size_t len)
{
	const struct tui_pool *p = &t->pool;
	char age[32], waited[32];
	bool slow = p->out && now > p->asked_ns && now - p->asked_ns >= (uint64_t)TUI_POOL_SLOW_MS * 1000000;
	int n;

	if (!pool_in_use(t) || (!p->failed && !slow))
		return false;
	if (p->got_ns)
		age_words(now > p->got_ns ? now - p->got_ns : 0, age, sizeof(age));
	n = p->got_ns ? snprintf(out, len, "pool as of %s ago: ", age) : snprintf(out, len, "pool not read yet: ");
	if (n < 0 || (size_t)n >= len)
		return true;
	/* A failure says why; a job still out says how long it has waited. */
	if (p->failed) {
		snprintf(out + n, len - (size_t)n, "%s", p->why);
	} else {
		age_words(now - p->asked_ns, waited, sizeof(waited));
		snprintf(out + n, len - (size_t)n, "etcd has not answered for %s", waited);
	}
	return true;
}

void pool_free(struct tui *t)
{
	struct tui_pool *p = &t->pool;

	if (p->out)
		lodge_job_kill(&p->job);       /* etcd may not answer for seconds: not waited for */
	p->out = false;
}
