/* Lifecycle events into the event log (events.h). */
#include "events.h"
#include "log.h"
#include "schema.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* One event on the pipe: written whole (under PIPE_BUF, so no two
 * processes' writes interleave), read whole. */
struct event_msg {
	uint32_t ev;
	char who[EVLOG_WHO_MAX];
	char detail[EVLOG_DETAIL_MAX];
};
_Static_assert(sizeof(struct event_msg) <= 4096, "a pipe write of PIPE_BUF or less is atomic");

static int ev_rd = -1, ev_wr = -1;
/* A token bucket: a burst of EVENT_BURST, then EVENT_RATE a second.  The
 * senders are sandboxed processes; one taken over must not fill /var/log
 * through root.  (Clients asking that fast are refused no request: only
 * their lines are dropped, and counted in lodge-hyp.log.) */
#define EVENT_BURST 200
#define EVENT_RATE  20
static double ev_tokens = EVENT_BURST;
static struct timespec ev_last;
static unsigned long ev_dropped;
static char ev_dir[4096], ev_domain[128];
static pid_t ev_supervisor;
/* The runtime directory followed (events_follow), and its parent as the
 * kernel spells it. */
static int ev_rundir_fd = -1;
static char ev_rundir_parent[4096];

int events_open(const char *log_dir, const char *domain)
{
	int p[2];

	if (strlen(log_dir) >= sizeof(ev_dir) || strlen(domain) >= sizeof(ev_domain))
		return -ENAMETOOLONG;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	ev_rd = p[0];
	ev_wr = p[1];
	ev_supervisor = getpid();
	snprintf(ev_dir, sizeof(ev_dir), "%s", log_dir);
	snprintf(ev_domain, sizeof(ev_domain), "%s", domain);
	return 0;
}

int events_fd(void)
{
	return ev_rd;
}

pid_t events_supervisor(void)
{
	return ev_supervisor;
}

/* Where descriptor fd's directory is, as the kernel says: 0 or -1. */
static int fd_path(int fd, char *out, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, out, len - 1);
	if (n <= 0 || (size_t)n >= len - 1)
		return -1;
	out[n] = '\0';
	return 0;
}

void events_follow(const char *dir, const char *domain)
{
	char *slash;

	snprintf(ev_domain, sizeof(ev_domain), "%s", domain);
	if ((ev_rundir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	if (fd_path(ev_rundir_fd, ev_rundir_parent, sizeof(ev_rundir_parent)) ||
	    !(slash = strrchr(ev_rundir_parent, '/'))) {
		close(ev_rundir_fd);
		ev_rundir_fd = -1;
		return;
	}
	*slash = '\0';
}

const char *events_domain(void)
{
	char path[4200];
	size_t plen = strlen(ev_rundir_parent);

	/* Gone from RUNDIR (removed: " (deleted)"; or renamed to .NAME on
	 * its way out): not a new name. */
	if (ev_rundir_fd >= 0 && fd_path(ev_rundir_fd, path, sizeof(path)) == 0 &&
	    strncmp(path, ev_rundir_parent, plen) == 0 && path[plen] == '/' && domain_name_valid(path + plen + 1))
		snprintf(ev_domain, sizeof(ev_domain), "%s", path + plen + 1);
	return ev_domain;
}

void events_child(void)
{
	if (ev_rd >= 0)
		close(ev_rd);
	ev_rd = -1;
	/* a way into the runtime directory: never the sandboxed process's */
	if (ev_rundir_fd >= 0)
		close(ev_rundir_fd);
	ev_rundir_fd = -1;
}

static void event_write(const struct event_msg *m)
{
	static int last_err;
	char line[EVLOG_LINE_MAX], who[EVLOG_WHO_MAX], detail[EVLOG_DETAIL_MAX];
	struct timespec now;
	size_t n;
	int rc;

	/* Whatever the sender left in them, strings end within their fields. */
	snprintf(who, sizeof(who), "%.*s", (int)sizeof(m->who) - 1, m->who);
	snprintf(detail, sizeof(detail), "%.*s", (int)sizeof(m->detail) - 1, m->detail);
	if (m->ev == EV_RENAMED) {
		/* The old name and the new are the supervisor's own: a rename
		 * the directory does not show is none. */
		char old[sizeof(ev_domain)];

		snprintf(old, sizeof(old), "%s", ev_domain);
		if (strcmp(old, events_domain()) == 0)
			return;
		snprintf(detail, sizeof(detail), "from %s", old);
	} else {
		events_domain();
	}
	clock_gettime(CLOCK_REALTIME, &now);
	if (!(n = evlog_format(line, sizeof(line), &now, ev_domain, m->ev, who, detail)))
		return;              /* no event of ours */
	rc = evlog_append(ev_dir, line, n);
	if (rc && rc != last_err)
		log_warn("cannot write the event log %s/%s: %s", ev_dir, EVLOG_FILE, strerror(-rc));
	last_err = rc;
	evlog_syslog(line);
}

static bool event_allowed(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (ev_last.tv_sec)
		ev_tokens += ((double)(now.tv_sec - ev_last.tv_sec) + (now.tv_nsec - ev_last.tv_nsec) / 1e9) * EVENT_RATE;
	ev_last = now;
	if (ev_tokens > EVENT_BURST)
		ev_tokens = EVENT_BURST;
	if (ev_tokens < 1) {
		ev_dropped++;
		return false;
	}
	ev_tokens--;
	if (ev_dropped) {
		log_warn("%lu events of domain %s not logged: more than %d a second", ev_dropped, ev_domain,
			 EVENT_RATE);
		ev_dropped = 0;
	}
	return true;
}

void events_drain(void)
{
	struct event_msg m;
	ssize_t n;

	if (ev_rd < 0)
		return;
	while ((n = read(ev_rd, &m, sizeof(m))) == (ssize_t)sizeof(m) || (n < 0 && errno == EINTR))
		if (n > 0 && event_allowed())
			event_write(&m);
}

void event_send(enum evlog_event ev, const char *who, const char *fmt, ...)
{
	struct event_msg m;
	va_list ap;

	if (ev_wr < 0)
		return;
	memset(&m, 0, sizeof(m));
	m.ev = ev;
	snprintf(m.who, sizeof(m.who), "%s", who ? who : "");
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(m.detail, sizeof(m.detail), fmt, ap);
		va_end(ap);
	}
	if (write(ev_wr, &m, sizeof(m)) != (ssize_t)sizeof(m))
		log_warn("event %s of domain %s lost: %s", evlog_event_name(ev), ev_domain, strerror(errno));
}

char *event_who(char *out, size_t len, uid_t uid, pid_t pid, const char *face)
{
	snprintf(out, len, "uid=%u,pid=%d%s%s", (unsigned)uid, (int)pid, face && face[0] ? ",via=" : "",
		 face && face[0] ? face : "");
	return out;
}

char *event_who_peer(char *out, size_t len, int sock, const char *face)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);

	if (sock < 0 || getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0) {
		snprintf(out, len, "unknown");
		return out;
	}
	return event_who(out, len, cred.uid, cred.pid, face);
}
