/* Running domains as the library sees them: directories in the runtime
 * directory whose control socket answers.  Nothing else is remembered. */
#include "cgroup.h"
#include "internal.h"
#include "proto.h"
#include "runtime.h"

#include <errno.h>
#include <stddef.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

/* "diskN" and "vifN" lines: five counters each. */
static void io_from_reply(const struct reply *r, enum proto_status_key kind, struct lodge_io *dev, unsigned max,
			  unsigned *n, struct lodge_io *sum)
{
	char key[PROTO_KEY_MAX];
	const char *v;

	for (*n = 0; *n < max; (*n)++) {
		struct lodge_io *d = &dev[*n];

		if (!(v = reply_get(r, proto_status_key_name(kind, *n, key))) ||
		    sscanf(v, "%lu %lu %lu %lu %lu", &d->in_ops, &d->in_bytes, &d->out_ops, &d->out_bytes,
			   &d->errors) != 5)
			break;
		sum->in_ops += d->in_ops;
		sum->in_bytes += d->in_bytes;
		sum->out_ops += d->out_ops;
		sum->out_bytes += d->out_bytes;
		sum->errors += d->errors;
	}
}

unsigned lodge_parse_list(const char *text, uint64_t *out, unsigned max)
{
	unsigned n = 0;
	char *end;

	while (n < max && *text) {
		out[n] = strtoull(text, &end, 10);
		if (end == text)
			break;
		n++;
		text = end;
	}
	return n;
}

void lodge_parse_addrs(const char *v, unsigned vif, struct lodge_addr *out, unsigned max, unsigned *n)
{
	while (*v && *n < max) {
		struct lodge_addr *a = &out[*n];
		int used = 0;

		while (*v == ' ')
			v++;
		/* ADDR,HOW,AGE: an address has no comma, a word no digit. */
		if (sscanf(v, "%45[^, ],%7[a-z],%lu%n", a->addr, a->how, &a->age_s, &used) == 3 && used > 0) {
			a->vif = vif;
			(*n)++;
		}
		v += strcspn(v, " ");
	}
}

void lodge_addrs_join(const struct lodge_status *st, char *buf, size_t len)
{
	size_t n = 0;
	unsigned pass, i;

	buf[0] = '\0';
	for (pass = 0; pass < 2; pass++)          /* IPv4 first: the one people look for */
		for (i = 0; i < st->naddrs; i++) {
			const char *a = st->addrs[i].addr;
			int r;

			if ((strchr(a, ':') != NULL) != pass || n + 1 >= len)
				continue;
			r = snprintf(buf + n, len - n, "%s%s", n ? "," : "", a);
			n = r > 0 && n + r < len ? n + r : len - 1;
		}
	if (!n)
		snprintf(buf, len, "-");
}

/* save_kind save|migrate, save_phase precopy|stopcopy|done|failed (the
 * words of proto.h), then the figures; an unknown kind or phase is left
 * as no save at all. */
static void save_from_reply(const struct reply *r, struct lodge_status *st)
{
	static const enum lodge_save_kind kinds[PROTO_SAVE_NKINDS] = {
		[PROTO_SAVE_KIND_SAVE] = LODGE_SAVE_SNAPSHOT,
		[PROTO_SAVE_KIND_MIGRATE] = LODGE_SAVE_MIGRATE,
	};
	const char *kind = reply_get(r, proto_status_key(PROTO_KEY_SAVE_KIND)),
		   *phase = reply_get(r, proto_status_key(PROTO_KEY_SAVE_PHASE));
	int k, ph;

	if (!kind || !phase || (k = proto_save_kind_of(kind)) < 0 || (ph = proto_save_phase_of(phase)) < 0) {
		st->save_kind = LODGE_SAVE_NONE;
		return;
	}
	st->save_kind = kinds[k];
	/* lodge_save_phase follows proto_save_phase word for word */
	st->save_phase = (enum lodge_save_phase)ph;
}

const char *lodge_save_word(const struct lodge_status *st)
{
	if (!lodge_saving(st))
		return NULL;
	return st->save_kind == LODGE_SAVE_MIGRATE ? "migr" : "save";
}

void lodge_save_describe(const struct lodge_status *st, char *buf, size_t len)
{
	static const char *const ended[] = { [LODGE_SAVE_DONE] = "done", [LODGE_SAVE_FAILED] = "failed" };

	if (st->save_kind == LODGE_SAVE_NONE)
		snprintf(buf, len, "-");
	else if (st->save_kind == LODGE_SAVE_SNAPSHOT && lodge_saving(st))
		snprintf(buf, len, "Save: writing");
	else if (st->save_kind == LODGE_SAVE_SNAPSHOT)
		snprintf(buf, len, "Save: %s, %llu pages", ended[st->save_phase], (unsigned long long)st->save_pages);
	else if (st->save_phase == LODGE_SAVE_PRECOPY)
		snprintf(buf, len, "Migration: round %u, %llu pages dirty, %llu sent, %.0f MiB/s", st->save_round,
			 (unsigned long long)st->save_dirty, (unsigned long long)st->save_pages,
			 st->save_rate_kib / 1024.0);
	else
		snprintf(buf, len, "Migration: %s after %u rounds, %llu pages sent",
			 st->save_phase == LODGE_SAVE_STOPCOPY ? "paused, copying the rest" : ended[st->save_phase],
			 st->save_round, (unsigned long long)st->save_pages);
}

/* The keys that are one field of lodge_status each, read alike. */
enum field_kind { FIELD_UINT, FIELD_INT, FIELD_ULONG, FIELD_U64, FIELD_U64_LIST, FIELD_TEXT, FIELD_STATE };
static const struct status_field {
	enum proto_status_key key;
	enum field_kind kind;
	size_t offset, size;
} status_fields[] = {
#define FIELD(k, kind, member) { k, kind, offsetof(struct lodge_status, member), sizeof(((struct lodge_status *)0)->member) }
	FIELD(PROTO_KEY_ID, FIELD_UINT, id),
	FIELD(PROTO_KEY_PID, FIELD_INT, pid),
	FIELD(PROTO_KEY_STATE, FIELD_STATE, state),
	FIELD(PROTO_KEY_VCPUS, FIELD_UINT, vcpus),
	FIELD(PROTO_KEY_MAX_VCPUS, FIELD_UINT, max_vcpus),
	FIELD(PROTO_KEY_MEMORY_MIB, FIELD_ULONG, memory_mib),
	FIELD(PROTO_KEY_MAXMEM_MIB, FIELD_ULONG, maxmem_mib),
	FIELD(PROTO_KEY_TARGET_MIB, FIELD_ULONG, target_mib),
	FIELD(PROTO_KEY_BALLOON_MIB, FIELD_ULONG, balloon_mib),
	FIELD(PROTO_KEY_GUEST_TOTAL_KIB, FIELD_ULONG, guest_total_kib),
	FIELD(PROTO_KEY_GUEST_FREE_KIB, FIELD_ULONG, guest_free_kib),
	FIELD(PROTO_KEY_GUEST_AVAIL_KIB, FIELD_ULONG, guest_avail_kib),
	FIELD(PROTO_KEY_CPU_NS, FIELD_U64, cpu_ns),
	FIELD(PROTO_KEY_VCPU_NS, FIELD_U64_LIST, vcpu_ns),
	FIELD(PROTO_KEY_RSS_KIB, FIELD_ULONG, rss_kib),
	FIELD(PROTO_KEY_KSM_SHARED_KIB, FIELD_ULONG, ksm_shared_kib),
	FIELD(PROTO_KEY_THP_KIB, FIELD_ULONG, thp_kib),
	FIELD(PROTO_KEY_UPTIME_S, FIELD_ULONG, uptime_s),
	FIELD(PROTO_KEY_END_REASON, FIELD_TEXT, end_reason),
	FIELD(PROTO_KEY_CPU_WAIT_NS, FIELD_U64, cpu_wait_ns),
	FIELD(PROTO_KEY_VCPU_WAIT_NS, FIELD_U64_LIST, vcpu_wait_ns),
	FIELD(PROTO_KEY_CPU_WEIGHT, FIELD_UINT, cpu_weight),
	FIELD(PROTO_KEY_CPU_CAP, FIELD_UINT, cpu_cap),
	FIELD(PROTO_KEY_CGROUP, FIELD_TEXT, cgroup),
	FIELD(PROTO_KEY_SAVE_ROUND, FIELD_UINT, save_round),
	FIELD(PROTO_KEY_SAVE_PAGES, FIELD_U64, save_pages),
	FIELD(PROTO_KEY_SAVE_DIRTY, FIELD_U64, save_dirty),
	FIELD(PROTO_KEY_SAVE_RATE_KIB, FIELD_U64, save_rate_kib),
#undef FIELD
};

static void field_from_text(const struct status_field *f, const char *v, struct lodge_status *st)
{
	void *to = (char *)st + f->offset;

	switch (f->kind) {
	case FIELD_UINT: *(unsigned *)to = (unsigned)strtoul(v, NULL, 10); break;
	case FIELD_INT: *(int *)to = atoi(v); break;
	case FIELD_ULONG: *(unsigned long *)to = strtoul(v, NULL, 10); break;
	case FIELD_U64: *(uint64_t *)to = strtoull(v, NULL, 10); break;
	case FIELD_U64_LIST: lodge_parse_list(v, to, (unsigned)(f->size / sizeof(uint64_t))); break;
	case FIELD_TEXT: snprintf(to, f->size, "%s", v); break;
	case FIELD_STATE: *(enum domain_state *)to = domain_state_of(v, DOMAIN_STATE_FROM_HYP); break;
	}
}

void lodge_status_from_reply(const struct reply *r, const char *name, struct lodge_status *st)
{
	char key[PROTO_KEY_MAX];
	uint64_t seen = 0;
	const char *v;
	unsigned i;

	_Static_assert(PROTO_NKEYS <= 64, "seen has a bit per key");
	memset(st, 0, sizeof(*st));
	snprintf(st->name, sizeof(st->name), "%s", name);
	st->state = DOMAIN_STATE_UNKNOWN;          /* a reply without one */
	for (i = 0; i < sizeof(status_fields) / sizeof(status_fields[0]); i++)
		if ((v = reply_get(r, proto_status_key(status_fields[i].key)))) {
			field_from_text(&status_fields[i], v, st);
			seen |= 1ULL << status_fields[i].key;
		}
	/* an older lodge-hyp, or one without a balloon or a guest's report */
	if (!(seen & (1ULL << PROTO_KEY_MAXMEM_MIB)))
		st->maxmem_mib = st->memory_mib;
	if (!(seen & (1ULL << PROTO_KEY_TARGET_MIB)))
		st->target_mib = st->memory_mib;
	st->guest_stats = seen & (1ULL << PROTO_KEY_GUEST_FREE_KIB);
	if (!(seen & (1ULL << PROTO_KEY_CPU_WEIGHT)))
		st->cpu_weight = DOMAIN_CPU_WEIGHT_DEFAULT;
	if (!(seen & (1ULL << PROTO_KEY_CGROUP)))
		snprintf(st->cgroup, sizeof(st->cgroup), "-");
	io_from_reply(r, PROTO_KEY_DISK, st->disk, DOMAIN_DISKS_MAX, &st->ndisks, &st->disk_sum);
	io_from_reply(r, PROTO_KEY_VIF, st->vif, DOMAIN_VIFS_MAX, &st->nvifs, &st->vif_sum);
	for (i = 0; i < DOMAIN_VIFS_MAX; i++)
		if ((v = reply_get(r, proto_status_key_name(PROTO_KEY_VIF_ADDRS, i, key))))
			lodge_parse_addrs(v, i, st->addrs, LODGE_MAX_ADDRS, &st->naddrs);
	save_from_reply(r, st);
}

int lodge_status_of(const struct lodge *lg, const char *name, struct lodge_status *st)
{
	struct reply r;
	int rc = client_call(lg->hc.runtime_dir, name, "status", 1, &r);

	if (rc == -ECONNREFUSED || rc == -ENOENT || rc == -ENOTDIR)
		return -ENOENT;
	if (rc)
		return rc;
	if (r.error[0])
		return -EPROTO;
	lodge_status_from_reply(&r, name, st);
	return 0;
}

int lodge_status(const struct lodge *lg, const char *domain, struct lodge_status *st, struct lodge_err *err)
{
	char name[DOMAIN_NAME_MAX];
	struct reply r;
	int rc = lodge_ask(lg, domain, "status", true, &r, name, err);

	if (rc)
		return rc;
	lodge_status_from_reply(&r, name, st);
	return 0;
}

/* Remove a dead domain's cgroup: its lodge-hyp's socket refuses already,
 * but its threads may still be on their way out of the cgroup (EBUSY) for
 * a moment. */
static int remove_dead_cgroup(const struct cgroup_cpu *cg)
{
	int rc, tries;

	for (tries = 0; (rc = cgroup_cpu_remove(cg)) == -EBUSY && tries < 300; tries++)
		usleep(10000);
	return rc;
}

/* The CPU cgroup a dead lodge-hyp named in its runtime directory (empty
 * now that its tasks are gone), or, for a start killed before it named
 * one, the cgroup its name gives. */
static void remove_stale_cgroup(const struct lodge *lg, const char *name, bool quiet)
{
	char path[CFG_PATH_MAX + DOMAIN_NAME_MAX + 16], dir[4096];
	char rel[sizeof(lg->hc.cgroup) + DOMAIN_NAME_MAX + 1];
	struct cgroup_cpu cg;
	FILE *f;
	int rc;

	if (runtime_path(path, sizeof(path), lg->hc.runtime_dir, name, RT_CGROUP) == 0 && (f = fopen(path, "r"))) {
		if (fgets(dir, sizeof(dir), f)) {
			dir[strcspn(dir, "\n")] = '\0';
			if (((rc = cgroup_cpu_at(&cg, dir)) || (rc = remove_dead_cgroup(&cg))) && !quiet)
				lodge_warn(lg, "cannot remove domain %s's cgroup %s: %s", name, dir, strerror(-rc));
		}
		fclose(f);
		return;
	}
	if (!quiet)
		return;
	snprintf(rel, sizeof(rel), "%s/%s", lg->hc.cgroup, name);
	if (cgroup_cpu_open(&cg, rel) == 0 && access(cg.dir, F_OK) == 0 && (rc = remove_dead_cgroup(&cg)))
		lodge_warn(lg, "cannot remove domain %s's cgroup %s: %s", name, cg.dir, strerror(-rc));
}

/* A directory whose socket no longer answers: its lodge-hyp died without
 * cleaning up (SIGKILL, a host crash).  Keep nothing a live domain needs.
 * quiet: a start that failed, whose error said enough. */
void lodge_remove_stale(const struct lodge *lg, const char *name, bool quiet)
{
	char dir[CFG_PATH_MAX + DOMAIN_NAME_MAX], sock[CFG_PATH_MAX + DOMAIN_NAME_MAX + 16];
	int lock;

	/* Under RUNDIR's lock, and only if its socket still does not answer: a
	 * start of the same name may have taken the leftovers over meanwhile. */
	lock = runtime_lock(lg->hc.runtime_dir);
	if (runtime_path(sock, sizeof(sock), lg->hc.runtime_dir, name, RT_CONTROL) == 0 &&
	    runtime_socket_live(sock)) {
		if (lock >= 0)
			close(lock);
		return;
	}
	if (!quiet)
		lodge_warn(lg, "domain %s is gone (its lodge-hyp is not running); removing %s/%s", name,
			   lg->hc.runtime_dir, name);
	remove_stale_cgroup(lg, name, quiet);
	if (runtime_dir_path(dir, sizeof(dir), lg->hc.runtime_dir, name) == 0)
		runtime_dir_remove(dir);
	if (lock >= 0)
		close(lock);
}

int lodge_wait_gone(const struct lodge *lg, const char *name, long ms)
{
	char dir[CFG_PATH_MAX + DOMAIN_NAME_MAX], ev[4096];
	long until = lodge_now_ms() + ms, left;
	/* Woken by the directory's going (renamed out of sight, then
	 * removed), not by a clock: a save returns the moment it is over. */
	int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK), rc = 0;

	if (runtime_dir_path(dir, sizeof(dir), lg->hc.runtime_dir, name))
		rc = -ENAMETOOLONG;
	else if (in >= 0)
		inotify_add_watch(in, lg->hc.runtime_dir, IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF | IN_ONLYDIR);
	while (!rc && access(dir, F_OK) == 0) {
		struct pollfd p = { in, POLLIN, 0 };

		if ((left = until - lodge_now_ms()) <= 0) {
			rc = -ETIMEDOUT;
			break;
		}
		/* Without inotify, a look every 10 ms. */
		if (in < 0 || poll(&p, 1, (int)left) < 0)
			usleep(10000);
		else
			while (read(in, ev, sizeof(ev)) > 0)
				;
	}
	if (in >= 0)
		close(in);
	return rc;
}

int lodge_scan(const struct lodge *lg, void (*fn)(const struct lodge_status *, void *), void *arg)
{
	struct lodge_poller *p = lodge_poller_new();
	int n;

	if (!p)
		return 0;
	n = lodge_poller_scan(p, lg, fn, arg);
	lodge_poller_free(p);
	return n;
}

struct collect {
	struct lodge_list *l;
	unsigned cap, ucap;
	bool nomem;
};

static void collect_one(const struct lodge_status *st, void *arg)
{
	struct collect *c = arg;

	if (c->l->n == c->cap) {
		unsigned cap = c->cap ? 2 * c->cap : 16;
		struct lodge_status *d = realloc(c->l->dom, cap * sizeof(*d));

		if (!d) {
			c->nomem = true;
			return;
		}
		c->l->dom = d;
		c->cap = cap;
	}
	c->l->dom[c->l->n++] = *st;
}

static void collect_unasked(const char *name, const char *why, void *arg)
{
	struct collect *c = arg;
	struct lodge_unasked *u;

	if (c->l->nunasked == c->ucap) {
		unsigned cap = c->ucap ? 2 * c->ucap : 4;

		if (!(u = realloc(c->l->unasked, cap * sizeof(*u)))) {
			c->nomem = true;
			return;
		}
		c->l->unasked = u;
		c->ucap = cap;
	}
	u = &c->l->unasked[c->l->nunasked++];
	snprintf(u->name, sizeof(u->name), "%s", name);
	snprintf(u->why, sizeof(u->why), "%s", why);
}

int lodge_list(const struct lodge *lg, struct lodge_list *out, struct lodge_err *err)
{
	struct collect c = { out, 0, 0, false };
	struct lodge_poller *p = lodge_poller_new();

	memset(out, 0, sizeof(*out));
	if (!p)
		return lodge_fail(err, -ENOMEM, "%s", strerror(ENOMEM));
	lodge_poller_on_unasked(p, collect_unasked);
	lodge_poller_scan(p, lg, collect_one, &c);
	lodge_poller_free(p);
	if (c.nomem) {
		lodge_list_free(out);
		return lodge_fail(err, -ENOMEM, "%s", strerror(ENOMEM));
	}
	return 0;
}

void lodge_list_free(struct lodge_list *l)
{
	free(l->dom);
	free(l->unasked);
	memset(l, 0, sizeof(*l));
}
