/* Saving and loading a whole domain: the order of the stream (save.h),
 * the pre-copy rounds of a live migration, and the handshake that hands
 * the domain over.  RAM is save/ram.c's; each vCPU's and device's state is
 * its own, through the registry (save/state.h). */
#include "save/save.h"
#include "save/ram.h"
#include "save/state.h"
#include "backend/disk.h"
#include "domain.h"
#include "log.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* Stop copying while the guest runs once what is dirty would take no
 * longer than this to send, or after SAVE_MAX_ROUNDS rounds (a guest that
 * dirties memory faster than the link carries it never converges). */
#define SAVE_DOWNTIME_TARGET_US 2000
#define SAVE_MAX_ROUNDS         30
#define SAVE_MIN_PAGES          64     /* below this, stop regardless of the rate */
#define SAVE_HANDSHAKE_MS       10000  /* the receiver loads everything in this */

#define END_LIVE 1u                    /* END payload flag: a handshake follows */

struct save_job {
	struct domain *dom;
	int fd;
	enum save_mode mode;
	int event_fd;
	pthread_t thread;
	pthread_mutex_t lock;
	struct save_progress progress;     /* under lock */
	bool ended;
	int rc;
	char why[256];
	bool was_paused;                   /* paused by the user before: stays so */
};

/* The receiver's side of the hand-over: the disks' one-writer locks. */
static int take_disks(struct domain *dom, char *why, size_t whylen)
{
	unsigned i, tries;
	int rc = 0;

	for (i = 0; i < dom->ndisks; i++) {
		/* The sender let go just before 'G'; its unlock may still be on
		 * its way through the kernel. */
		for (tries = 0; tries < 100; tries++) {
			if (!(rc = disk_lock(&dom->disks[i], why, whylen)))
				break;
			usleep(10000);
		}
		if (rc)
			return rc;
	}
	return 0;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void job_update(struct save_job *j, void (*fn)(struct save_progress *, const void *), const void *arg)
{
	uint64_t one = 1;

	pthread_mutex_lock(&j->lock);
	fn(&j->progress, arg);
	pthread_mutex_unlock(&j->lock);
	if (write(j->event_fd, &one, sizeof(one)) < 0) {
		/* an eventfd does not overflow on one write */
	}
}

static void set_progress(struct save_progress *p, const void *arg)
{
	*p = *(const struct save_progress *)arg;
}

/* Every registered entry, one DEV section each. */
static int send_state(int fd, char *why, size_t whylen)
{
	struct state_buf b;
	unsigned i;
	int rc = 0;

	for (i = 0; i < state_count() && !rc; i++) {
		state_buf_init(&b);
		if ((rc = state_save_entry(i, &b))) {
			snprintf(why, whylen, "cannot save %s: %s", state_name(i), strerror(-rc));
		} else {
			struct iovec iov = { b.data, b.len };

			if ((rc = state_write_section(fd, STATE_DEV, state_version(i), state_name(i), &iov, 1)))
				snprintf(why, whylen, "cannot write the saved state: %s", strerror(-rc));
		}
		state_buf_free(&b);
	}
	return rc;
}

static int send_end(int fd, uint32_t flags)
{
	struct iovec iov = { &flags, sizeof(flags) };

	return state_write_section(fd, STATE_END, 1, "end", &iov, 1);
}

/* Wait for one handshake byte. */
static int read_byte(int fd, int timeout_ms, char *c)
{
	struct pollfd p = { fd, POLLIN, 0 };
	ssize_t n;

	if (poll(&p, 1, timeout_ms) <= 0)
		return -ETIMEDOUT;
	n = read(fd, c, 1);
	if (n == 1)
		return 0;
	return n == 0 ? -ECONNRESET : -errno;
}

static int write_byte(int fd, char c)
{
	return send(fd, &c, 1, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

static void park(struct save_job *j)
{
	j->was_paused = j->dom->paused;
	vcpu_pause_all(j->dom);
	state_quiesce_all();
}

static void unpark(struct save_job *j)
{
	state_resume_all();
	if (!j->was_paused)
		vcpu_unpause_all(j->dom);
}

static int job_snapshot(struct save_job *j)
{
	struct save_progress p = { .phase = SAVE_STOPCOPY };
	uint64_t t0 = now_us();
	struct ram_stats st = { 0 };
	int rc;

	park(j);
	job_update(j, set_progress, &p);
	if ((rc = ram_send_touched(j->dom, j->fd, &st)))
		snprintf(j->why, sizeof(j->why), "cannot write guest memory: %s", strerror(-rc));
	else if (!(rc = send_state(j->fd, j->why, sizeof(j->why))) && (rc = send_end(j->fd, 0)))
		snprintf(j->why, sizeof(j->why), "cannot write the saved state: %s", strerror(-rc));
	p.pages = st.pages;
	p.bytes = st.bytes;
	p.downtime_us = p.total_us = now_us() - t0;
	p.phase = rc ? SAVE_FAILED : SAVE_DONE;
	job_update(j, set_progress, &p);
	/* A failed save gives the domain back at once; a good one waits for
	 * the agent's word (save_snapshot_release). */
	if (rc)
		unpark(j);
	return rc;
}

static int job_live(struct save_job *j)
{
	struct domain *dom = j->dom;
	uint64_t words = ram_bitmap_words(dom), t0 = now_us(), t_round, t_pause = 0, w;
	uint64_t *dirty = calloc(words, 8), *rest = calloc(words, 8);
	struct save_progress p = { .phase = SAVE_PRECOPY };
	struct ram_stats st = { 0 };
	uint64_t round_bytes = 0;        /* st.bytes when the round began */
	bool parked = false, given = false;
	unsigned i;
	long n = 0;
	char c;
	int rc;

	if (!dirty || !rest) {
		free(dirty);
		free(rest);
		snprintf(j->why, sizeof(j->why), "out of memory for the dirty bitmaps");
		return -ENOMEM;
	}
	if ((rc = ram_track_start(dom))) {
		snprintf(j->why, sizeof(j->why), "cannot track dirty pages: %s", strerror(-rc));
		goto out;
	}
	/* Round 0: everything the guest ever touched, while it runs. */
	job_update(j, set_progress, &p);
	t_round = now_us();
	if ((rc = ram_send_touched(dom, j->fd, &st)))
		goto io_error;
	if (now_us() > t_round && st.bytes)
		p.rate_kib = st.bytes * 1000000 / 1024 / (now_us() - t_round);
	/* The receiving lodge-hyp may still be starting (a new process, its
	 * VM, its sandbox): wait for it with the guest running, so that time
	 * is not downtime.  What the guest dirties meanwhile goes in round 1. */
	if ((rc = read_byte(j->fd, SAVE_HANDSHAKE_MS, &c)) || c != SAVE_READING) {
		snprintf(j->why, sizeof(j->why), "the receiver did not start reading (%s)",
			 rc ? strerror(-rc) : "unexpected reply");
		rc = rc ? rc : -EPROTO;
		goto out;
	}
	t_round = now_us();      /* the wait is no measure of the link */
	round_bytes = st.bytes;
	for (p.round = 1;; p.round++) {
		uint64_t took = now_us() - t_round, sent = st.bytes - round_bytes;

		if (sent && took)          /* else the last rate stands */
			p.rate_kib = sent * 1000000 / 1024 / took;
		if ((n = ram_collect_dirty(dom, dirty, false)) < 0) {
			rc = (int)n;
			snprintf(j->why, sizeof(j->why), "cannot read KVM's dirty log: %s", strerror(-rc));
			goto out;
		}
		p.dirty = (uint64_t)n;
		p.pages = st.pages;
		p.bytes = st.bytes;
		job_update(j, set_progress, &p);
		/* What sending the dirty pages would take at the last round's rate. */
		if ((uint64_t)n <= SAVE_MIN_PAGES || p.round >= SAVE_MAX_ROUNDS ||
		    (p.rate_kib && (uint64_t)n * 4 * 1000000 / p.rate_kib <= SAVE_DOWNTIME_TARGET_US))
			break;
		t_round = now_us();
		round_bytes = st.bytes;
		if ((rc = ram_send_bitmap(dom, j->fd, dirty, &st)))
			goto io_error;
	}
	/* Stop and copy: the pages left from the last round, whatever the
	 * guest dirtied since, and every page a device wrote meanwhile. */
	t_pause = now_us();
	park(j);
	parked = true;
	p.phase = SAVE_STOPCOPY;
	job_update(j, set_progress, &p);
	if ((n = ram_collect_dirty(dom, rest, true)) < 0) {
		rc = (int)n;
		snprintf(j->why, sizeof(j->why), "cannot read KVM's dirty log: %s", strerror(-rc));
		goto out;
	}
	for (w = 0; w < words; w++)
		rest[w] |= dirty[w];
	if ((rc = ram_send_bitmap(dom, j->fd, rest, &st)))
		goto io_error;
	if ((rc = send_state(j->fd, j->why, sizeof(j->why))))
		goto out;
	if ((rc = send_end(j->fd, END_LIVE)))
		goto io_error;
	if ((rc = read_byte(j->fd, SAVE_HANDSHAKE_MS, &c)) || c != SAVE_LOADED) {
		snprintf(j->why, sizeof(j->why), "the receiver did not load the domain (%s)",
			 rc ? strerror(-rc) : "it refused the stream");
		rc = rc ? rc : -EPROTO;
		goto out;
	}
	/* Everything the guest wrote is in the page cache of this host or
	 * on the shared storage: make it the storage's before letting go. */
	for (i = 0; i < dom->ndisks; i++) {
		if (!dom->disks[i].readonly)
			fdatasync(dom->disks[i].fd_buffered);
		disk_unlock(&dom->disks[i]);
	}
	if ((rc = write_byte(j->fd, SAVE_GO))) {
		char why[256];

		for (i = 0; i < dom->ndisks; i++)
			disk_lock(&dom->disks[i], why, sizeof(why));
		snprintf(j->why, sizeof(j->why), "the receiver went away before the hand-over: %s",
			 strerror(-rc));
		goto out;
	}
	given = true;
	/* The domain is the receiver's now; its 'R' says the guest runs, which
	 * is where the downtime ends.  Without it, it ends here. */
	read_byte(j->fd, 1000, &c);
	p.downtime_us = now_us() - t_pause;
	p.total_us = now_us() - t0;
	p.pages = st.pages;
	p.bytes = st.bytes;
	p.dirty = (uint64_t)n;
	rc = 0;
	goto out;

io_error:
	snprintf(j->why, sizeof(j->why), "cannot send to the receiver: %s", strerror(-rc));
out:
	ram_track_stop(dom);
	free(dirty);
	free(rest);
	p.phase = rc ? SAVE_FAILED : SAVE_DONE;
	job_update(j, set_progress, &p);
	/* Any failure before 'G' leaves the domain running here. */
	if (rc && parked && !given)
		unpark(j);
	return rc;
}

static void *job_thread(void *arg)
{
	struct save_job *j = arg;
	uint64_t one = 1;
	int rc;

	pthread_setname_np(pthread_self(), j->mode == SAVE_LIVE ? "migrate" : "save");
	rc = j->mode == SAVE_LIVE ? job_live(j) : job_snapshot(j);
	close(j->fd);
	j->fd = -1;
	pthread_mutex_lock(&j->lock);
	j->rc = rc;
	j->ended = true;
	pthread_mutex_unlock(&j->lock);
	if (write(j->event_fd, &one, sizeof(one)) < 0) {
		/* as above */
	}
	return NULL;
}

int save_job_start(struct domain *dom, int fd, enum save_mode mode, struct save_job **out)
{
	struct save_job *j = calloc(1, sizeof(*j));
	sigset_t all, old;
	int rc;

	if (!j)
		return -ENOMEM;
	j->dom = dom;
	j->fd = fd;
	j->mode = mode;
	pthread_mutex_init(&j->lock, NULL);
	if ((j->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		rc = -errno;
		free(j);
		return rc;
	}
	/* Signals are the main loop's (signalfd): none for this thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = -pthread_create(&j->thread, NULL, job_thread, j);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		close(j->event_fd);
		free(j);
		return rc;
	}
	*out = j;
	return 0;
}

int save_job_event_fd(const struct save_job *j)
{
	return j->event_fd;
}

bool save_job_read(struct save_job *j, struct save_progress *p, int *rc, char *why, size_t whylen)
{
	uint64_t v;
	bool ended;

	if (read(j->event_fd, &v, sizeof(v)) < 0) {
		/* nothing new: report what there is */
	}
	pthread_mutex_lock(&j->lock);
	*p = j->progress;
	ended = j->ended;
	*rc = j->rc;
	snprintf(why, whylen, "%s", j->why[0] ? j->why : (j->rc ? strerror(-j->rc) : ""));
	pthread_mutex_unlock(&j->lock);
	return ended;
}

void save_job_free(struct save_job *j)
{
	if (!j)
		return;
	pthread_join(j->thread, NULL);
	close(j->event_fd);
	free(j);
}

void save_snapshot_release(struct domain *dom, bool resume)
{
	if (!resume)
		return;
	state_resume_all();
	vcpu_unpause_all(dom);
}

/* ---- loading ------------------------------------------------------------- */

/* A peer that sends nothing for this long mid-stream is given up on: a
 * live sender writes continuously until END. */
#define SAVE_SECTION_TIMEOUT_S 60

/* The order every stream keeps (save_job's): RAM sections, then one DEV
 * section per registered entry, then END.  A stream is untrusted input:
 * anything out of that order, a second HEAD, a page a saved file holds
 * twice, more pages than a migration of this guest can send, or bytes
 * after a file's END are refused, before the guest runs. */
enum load_stage { LOAD_RAM, LOAD_DEV };

static int load_section(struct domain *dom, struct ram_loader *ld, const struct state_section *s,
			const uint8_t *payload, enum load_stage *stage, bool *seen, char *why, size_t whylen)
{
	unsigned n = state_count(), i;
	int rc;

	switch (s->type) {
	case STATE_RAM:
		if (*stage != LOAD_RAM) {
			snprintf(why, whylen, "the stream has guest memory after device state (out of order)");
			return -EBADMSG;
		}
		return ram_load_section(dom, ld, payload, s->len, why, whylen);
	case STATE_DEV:
		*stage = LOAD_DEV;
		for (i = 0; i < n && strcmp(state_name(i), s->name) != 0; i++)
			;
		if (i < n && seen[i]) {
			snprintf(why, whylen, "the stream has state for '%s' twice", s->name);
			return -EBADMSG;
		}
		if ((rc = state_load_named(s->name, s->version, payload, s->len, why, whylen)))
			return rc;
		seen[i] = true;
		return 0;
	case STATE_HEAD:
		snprintf(why, whylen, "the stream has a second HEAD section");
		return -EBADMSG;
	default:
		snprintf(why, whylen, "the stream has a section of unknown type %#x", s->type);
		return -EBADMSG;
	}
}

/* After a file's END: nothing more (a pipe ends when its writer does). */
static int expect_eof(int fd, char *why, size_t whylen)
{
	char c;
	ssize_t n;

	while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
		;
	if (n == 0)
		return 0;
	if (n < 0) {
		snprintf(why, whylen, "cannot read after its END section: %s", strerror(errno));
		return -errno;
	}
	snprintf(why, whylen, "the stream goes on after its END section (trailing data)");
	return -EBADMSG;
}

void save_load_prepare(int fd)
{
	struct timeval tv = { .tv_sec = SAVE_SECTION_TIMEOUT_S };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));    /* ENOTSOCK for a file: fine */
}

int save_load(struct domain *dom, int fd, bool *live, char *why, size_t whylen)
{
	unsigned n = state_count(), i;
	bool *seen = calloc(n ? n : 1, sizeof(*seen)), from_peer;
	enum load_stage stage = LOAD_RAM;
	struct ram_loader ld = { 0 };
	struct state_section s;
	uint8_t *payload = NULL;
	struct stat st;
	int rc = 0;

	*live = false;
	if (!seen || ram_loader_init(&ld, dom, 1) < 0) {
		free(seen);
		return -ENOMEM;
	}
	/* A migration peer is a socket; a file or the decompressor's pipe is
	 * a saved file, whose pages come once each. */
	from_peer = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
	if (from_peer) {
		ram_loader_free(&ld);
		ram_loader_init(&ld, dom, SAVE_MAX_ROUNDS + 2);
		/* The sender waits for this before it stops the guest. */
		if (send(fd, &(char){ SAVE_READING }, 1, MSG_NOSIGNAL) < 0)
			log_debug("cannot tell the sender we are reading: %s", strerror(errno));
	}
	for (;;) {
		if ((rc = state_read_section(fd, &s, &payload, why, whylen))) {
			if (rc == -EAGAIN || rc == -EWOULDBLOCK)
				snprintf(why, whylen, "the sender sent nothing for %d s", SAVE_SECTION_TIMEOUT_S);
			break;
		}
		if (s.type == STATE_END) {
			uint32_t flags = 0;

			if (s.len != sizeof(flags)) {
				snprintf(why, whylen, "its END section is malformed");
				rc = -EBADMSG;
			} else {
				memcpy(&flags, payload, sizeof(flags));
				*live = flags & END_LIVE;
				if (*live != from_peer) {
					snprintf(why, whylen, *live ? "a live migration's stream, read from a file"
								    : "a saved file's stream, sent by a migration peer");
					rc = -EBADMSG;
				}
			}
			break;
		}
		rc = load_section(dom, &ld, &s, payload, &stage, seen, why, whylen);
		free(payload);
		payload = NULL;
		if (rc)
			break;
	}
	free(payload);
	ram_loader_free(&ld);
	for (i = 0; !rc && i < n; i++)
		if (!seen[i]) {
			snprintf(why, whylen, "the stream has no state for '%s'", state_name(i));
			rc = -EBADMSG;
		}
	free(seen);
	if (!rc && !from_peer)
		rc = expect_eof(fd, why, whylen);
	if (rc || !*live)
		return rc;
	/* A live migration: everything is loaded; the sender still owns the
	 * domain until it says 'G'. */
	if ((rc = write_byte(fd, SAVE_LOADED))) {
		snprintf(why, whylen, "the sender went away: %s", strerror(-rc));
		return rc;
	}
	{
		char c;

		if ((rc = read_byte(fd, SAVE_HANDSHAKE_MS, &c)) || c != SAVE_GO) {
			snprintf(why, whylen, "the sender kept the domain (%s)",
				 rc ? strerror(-rc) : "no hand-over");
			return rc ? rc : -EPROTO;
		}
	}
	return take_disks(dom, why, whylen);
}
