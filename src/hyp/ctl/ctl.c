/* lodge-hyp's event loop (ctl.h): the control socket's clients, the
 * attached console, the terminal in standalone mode, signals, a save's
 * progress and the domain's end.  The commands are ctl-commands.c's.
 *
 * The loop is everyone's way to the domain, root's above all, so no
 * client may hold it: replies are sent whole or the client is dropped,
 * console output goes as the socket takes it, slots are shared out by
 * who asks (ctl-loop.h), and a client whose line does not finish or who
 * sends nothing for the idle timeout is closed. */
#include "ctl/ctl-loop.h"
#include "dev/hotplug.h"
#include "console.h"
#include "crash.h"
#include "dev/devices.h"
#include "domain.h"
#include "events.h"
#include "log.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Close the descriptors a request brought that no command took. */
static void ctl_client_drop_fds(struct ctl_client *cl)
{
	unsigned i;

	for (i = 0; i < cl->nextra; i++)
		close(cl->extra_fds[i]);
	cl->nextra = 0;
	if (cl->passed_fd >= 0)
		close(cl->passed_fd);
	cl->passed_fd = -1;
}

void ctl_client_close(struct ctl_client *cl)
{
	if (cl->fd >= 0)
		close(cl->fd);
	cl->fd = -1;
	free(cl->io);
	cl->io = NULL;
	cl->in_len = 0;
	cl->mode = CL_REQUESTS;
	cl->out_len = cl->out_off = 0;
	ctl_client_drop_fds(cl);
}

/* Replies are small: send them whole or drop a client that will not read.
 * 8 KiB holds a status or vcpu-list reply for 64 vCPUs. */
void client_send(struct ctl_client *cl, const char *fmt, ...)
{
	char buf[16384];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	if (send(cl->fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL) != n)
		ctl_client_close(cl);
	else
		cl->active_ms = cl->ctl->now_ms;
}

bool ctl_client_busy(const struct ctl *c, const struct ctl_client *cl)
{
	return cl->mode != CL_REQUESTS || cl == c->job_client || cl == c->detach_client;
}

/* When the client's time is up (UINT64_MAX: never): a line it began must
 * be whole within the line timeout, and it must ask something within the
 * idle timeout of its last request or reply. */
static uint64_t client_deadline(const struct ctl *c, const struct ctl_client *cl)
{
	if (cl->fd < 0 || ctl_client_busy(c, cl))
		return UINT64_MAX;
	return cl->in_len ? cl->line_ms + c->line_ms : cl->active_ms + c->idle_ms;
}

/* Close a client to free its slot.  One in the middle of a line waits for
 * a reply, and is told why; an idle one is closed without a word: a
 * client keeping its connection between requests (the dashboard's) would
 * take any line for the reply to its next request, and an end of file
 * tells it to connect again. */
static void client_drop(struct ctl_client *cl, const char *why)
{
	if (cl->in_len)
		client_send(cl, "error %s\n", why);
	ctl_client_close(cl);
}

static void ctl_expire(struct ctl *c)
{
	char why[64];
	unsigned i;

	snprintf(why, sizeof(why), "request line not finished within %llu s",
		 (unsigned long long)(c->line_ms / 1000));
	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		if (c->now_ms >= client_deadline(c, &c->clients[i]))
			client_drop(&c->clients[i], why);
}

/* Root's eviction order: users other than root first, then the longest idle. */
static bool evict_before(const struct ctl_client *a, const struct ctl_client *b)
{
	if ((a->uid != 0) != (b->uid != 0))
		return a->uid != 0;
	return a->active_ms < b->active_ms;
}

int ctl_add_client(struct ctl *c, int fd, enum ctl_level level, uid_t uid)
{
	struct ctl_client *slot = NULL, *victim = NULL;
	unsigned i, others = 0, same = 0;
	char refusal[200] = "";
	int n;

	for (i = 0; i < CTL_MAX_CLIENTS; i++) {
		struct ctl_client *cl = &c->clients[i];

		if (cl->fd < 0) {
			slot = slot ? slot : cl;
			continue;
		}
		others += cl->uid != 0;
		same += cl->uid != 0 && cl->uid == uid;
		if (!ctl_client_busy(c, cl) && (!victim || evict_before(cl, victim)))
			victim = cl;
	}
	if (uid != 0 && same >= CTL_MAX_PER_USER)
		snprintf(refusal, sizeof(refusal), "error too many clients: uid %u has %u connections open, "
			 "the most for a user other than root\n", (unsigned)uid, same);
	else if (uid != 0 && others >= CTL_MAX_UNPRIVILEGED)
		snprintf(refusal, sizeof(refusal), "error too many clients: users other than root have %u "
			 "connections open, the most they may share\n", others);
	else if (!slot && uid == 0 && victim) {
		client_drop(victim, "connection closed to make room for root");
		slot = victim;
	} else if (!slot)
		snprintf(refusal, sizeof(refusal), "error too many clients: all %d connections are in use\n",
			 CTL_MAX_CLIENTS);
	if (refusal[0]) {
		log_debug("control socket: refused uid %u: %s", (unsigned)uid, refusal + 6);
		n = strlen(refusal);
		if (send(fd, refusal, n, MSG_DONTWAIT | MSG_NOSIGNAL) != n) {
			/* it goes anyway */
		}
		close(fd);
		return -EUSERS;
	}
	*slot = (struct ctl_client){ .ctl = c, .fd = fd, .level = level, .uid = uid, .mode = CL_REQUESTS,
				     .active_ms = c->now_ms, .passed_fd = -1, .io = malloc(sizeof(*slot->io)) };
	if (!slot->io) {
		n = snprintf(refusal, sizeof(refusal), "error out of memory for another connection\n");
		if (send(fd, refusal, n, MSG_DONTWAIT | MSG_NOSIGNAL) != n) {
			/* it goes anyway */
		}
		ctl_client_close(slot);
		return -ENOMEM;
	}
	return 0;
}

/* Request bytes, and descriptors if some came with them (SCM_RIGHTS):
 * up to CTL_PASSED_FDS_MAX, the last in passed_fd and those before it in
 * extra_fds; any more are closed at once, and so are those of an earlier
 * request that no command took. */
static ssize_t recv_request(struct ctl_client *cl, char *buf, size_t len)
{
	union { struct cmsghdr h; char b[CMSG_SPACE(CTL_PASSED_FDS_MAX * sizeof(int))]; } u;
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			    .msg_controllen = sizeof(u.b) };
	struct cmsghdr *h;
	ssize_t n = recvmsg(cl->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	for (h = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL; h; h = CMSG_NXTHDR(&m, h)) {
		size_t i, nfds;
		int fds[CTL_PASSED_FDS_MAX];

		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		nfds = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (nfds > CTL_PASSED_FDS_MAX)
			nfds = CTL_PASSED_FDS_MAX;
		memcpy(fds, CMSG_DATA(h), nfds * sizeof(int));
		ctl_client_drop_fds(cl);
		for (i = 0; i < nfds; i++) {
			if (cl->passed_fd >= 0)
				cl->extra_fds[cl->nextra++] = cl->passed_fd;
			cl->passed_fd = fds[i];
		}
	}
	return n;
}

/* Bytes from a client: request lines, or console input once attached. */
static void ctl_client_input(struct ctl *c, struct ctl_client *cl)
{
	char buf[PROTO_LINE_MAX];
	ssize_t n;

	if (cl->mode == CL_CONSOLE) {
		if (c->pending_len)
			return;                       /* the UART is still busy with earlier input */
		n = recv(cl->fd, c->pending, sizeof(c->pending), MSG_DONTWAIT);
		if (n <= 0) {
			if (n == 0 || errno != EAGAIN)
				ctl_client_close(cl);
			return;
		}
		c->pending_len = n;
		c->pending_off = 0;
		return;
	}
	n = recv_request(cl, buf, sizeof(buf) - cl->in_len);
	if (n <= 0) {
		if (n == 0 || errno != EAGAIN)
			ctl_client_close(cl);
		return;
	}
	cl->active_ms = c->now_ms;
	if (!cl->in_len)
		cl->line_ms = c->now_ms;
	memcpy(cl->io->in + cl->in_len, buf, n);
	cl->in_len += n;
	while (cl->fd >= 0 && cl->mode == CL_REQUESTS) {
		char *nl = memchr(cl->io->in, '\n', cl->in_len);
		size_t len;

		if (!nl) {
			if (cl->in_len == sizeof(cl->io->in)) {
				client_send(cl, "error request longer than %d bytes\n", PROTO_LINE_MAX);
				ctl_client_close(cl);
			}
			return;
		}
		*nl = '\0';
		len = nl - cl->io->in + 1;
		/* The request's words are read from a copy: a reply that
		 * cannot be sent closes the client, and its buffers go. */
		memcpy(buf, cl->io->in, len);
		ctl_request(c, cl, buf);
		if (cl->fd < 0)
			return;
		memmove(cl->io->in, cl->io->in + len, cl->in_len - len);
		cl->in_len -= len;
		cl->line_ms = c->now_ms;         /* what is left came with this read */
	}
}

/* Send a console or console-log client what it is due, as far as the
 * socket takes it (the rest waits for POLLOUT); a dump is closed once
 * sent. */
void ctl_client_output(struct ctl_client *cl)
{
	while (cl->fd >= 0) {
		ssize_t w;

		if (cl->out_off == cl->out_len) {
			size_t max = sizeof(cl->io->out);

			/* A dump ends where the console was when asked (a
			 * reader that fell behind the history may be past it). */
			if (cl->mode == CL_DUMP)
				max = cl->con_pos >= cl->dump_end ? 0 :
				      cl->dump_end - cl->con_pos < max ? cl->dump_end - cl->con_pos : max;
			cl->out_len = max ? console_read(&cl->con_pos, cl->io->out, max) : 0;
			cl->out_off = 0;
			if (!cl->out_len) {
				if (cl->mode == CL_DUMP)
					ctl_client_close(cl);
				return;
			}
		}
		w = send(cl->fd, cl->io->out + cl->out_off, cl->out_len - cl->out_off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0) {
			if (errno != EAGAIN)
				ctl_client_close(cl);
			return;             /* poll for POLLOUT */
		}
		cl->out_off += w;
	}
}

static void ctl_accept(struct ctl *c)
{
	char who[64], msg[160];
	enum ctl_level level;
	unsigned n;
	uid_t uid;
	int fd, len;

	for (n = 0; n < CTL_ACCEPT_BURST; n++) {
		if ((fd = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) < 0)
			return;
		level = ctl_peer_level(fd, &c->access, &uid, who, sizeof(who));
		if (level == CTL_DENIED) {
			len = snprintf(msg, sizeof(msg), "error permission denied: %s is not root nor in the "
				       "group lodge.conf grants control or stats\n", who);
			if (send(fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL) != len) {
				/* it goes anyway */
			}
			close(fd);
			continue;
		}
		ctl_add_client(c, fd, level, uid);
	}
}

static void ctl_stdin(struct ctl *c)
{
	ssize_t n = read(c->in_fd, c->pending, sizeof(c->pending));

	if (n <= 0) {
		c->in_fd = -1;            /* input closed: the guest runs on */
		return;
	}
	c->pending_len = n;
	c->pending_off = 0;
	if (console_is_tty() && memchr(c->pending, CONSOLE_ESCAPE, n))
		domain_end(c->dom, DOMAIN_STOPPED, "stopped from the console (Ctrl-])");
}

/* The domain's end into the event log, unless who ended it (a request
 * on the control socket, a signal) was told there already. */
static void ctl_end_event(struct ctl *c)
{
	static const struct { enum evlog_event ev; const char *who; } by_end[] = {
		[DOMAIN_POWEROFF] = { EV_POWERED_OFF, "guest" },
		[DOMAIN_ERROR] = { EV_FAILED, "lodge-hyp" },
		[DOMAIN_REBOOT] = { EV_REBOOTED, "guest" },
		[DOMAIN_CRASH] = { EV_CRASHED, "guest" },
		[DOMAIN_STOPPED] = { EV_STOPPED, "lodge-hyp" },
	};
	int end = atomic_load(&c->dom->end);

	if (c->end_told || end < 0 || end >= (int)(sizeof(by_end) / sizeof(by_end[0])))
		return;
	c->end_told = true;
	event_send(by_end[end].ev, by_end[end].who, "%s", c->dom->end_reason);
}

static bool ctl_done(struct ctl *c)
{
	if (atomic_load(&c->dom->end) == DOMAIN_RUNNING)
		return false;
	ctl_end_event(c);
	if (c->destroyed || domain_action_for(c->dom) != ACTION_PRESERVE)
		return true;
	/* Kept for inspection: say why now, beside any registers logged,
	 * not only once someone destroys it. */
	if (!c->told_preserved) {
		log_warn("domain %s stopped (%s): preserved until lodge destroy", c->dom->name,
			 c->dom->end_reason);
		c->told_preserved = true;
	}
	return false;
}

void ctl_init(struct ctl *c, struct domain *dom, struct uart *com1, int in_fd, int listen_fd, int sig_fd,
	      const struct ctl_access *access)
{
	unsigned idle_timeout_s = access->idle_timeout_s;
	unsigned i;

	memset(c, 0, sizeof(*c));
	c->access = *access;
	c->dom = dom;
	c->com1 = com1;
	c->in_fd = in_fd;
	c->listen_fd = listen_fd;
	c->sig_fd = sig_fd;
	c->idle_ms = (uint64_t)(idle_timeout_s ? idle_timeout_s : CTL_IDLE_TIMEOUT_S) * 1000;
	c->line_ms = CTL_LINE_TIMEOUT_S * 1000 < c->idle_ms ? CTL_LINE_TIMEOUT_S * 1000 : c->idle_ms;
	c->clock_ms = monotonic_ms;
	c->now_ms = c->clock_ms();
	c->watchdog_ms = access && access->watchdog_s ? c->now_ms + access->watchdog_s * 1000ull : 0;
	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		c->clients[i] = (struct ctl_client){ .ctl = c, .fd = -1, .passed_fd = -1 };
}

/* How long poll may wait: until the nearest client's time is up, and
 * briefly while the UART has not taken all input yet. */
static int ctl_poll_timeout(const struct ctl *c, int max_wait_ms)
{
	uint64_t next = UINT64_MAX, d;
	int wait = max_wait_ms;
	unsigned i;

	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		if ((d = client_deadline(c, &c->clients[i])) < next)
			next = d;
	if ((d = ctl_hotplug_deadline(c)) < next)
		next = d;
	if (c->pending_len && (wait < 0 || wait > 10))
		wait = 10;
	if (c->watchdog_ms && c->watchdog_ms < next)
		next = c->watchdog_ms;
	if (next != UINT64_MAX) {
		d = next > c->now_ms ? next - c->now_ms : 0;
		if (wait < 0 || d < (uint64_t)wait)
			wait = (int)d;
	}
	return wait;
}

bool ctl_step(struct ctl *c, int max_wait_ms)
{
	enum { P_END, P_SIG, P_STDIN, P_LISTEN, P_CONSOLE, P_JOB, P_HOTPLUG, P_CLIENT0 };
	struct pollfd pfd[P_CLIENT0 + CTL_MAX_CLIENTS];
	struct domain *dom = c->dom;
	bool ended = atomic_load(&dom->end) != DOMAIN_RUNNING;
	unsigned i;

	if (ctl_done(c))
		return false;
	c->now_ms = c->clock_ms();
	pfd[P_END] = (struct pollfd){ ended ? -1 : dom->end_eventfd, POLLIN, 0 };
	pfd[P_SIG] = (struct pollfd){ c->sig_fd, POLLIN, 0 };
	pfd[P_STDIN] = (struct pollfd){ c->pending_len ? -1 : c->in_fd, POLLIN, 0 };
	pfd[P_LISTEN] = (struct pollfd){ c->listen_fd, POLLIN, 0 };
	pfd[P_CONSOLE] = (struct pollfd){ console_event_fd(), POLLIN, 0 };
	pfd[P_JOB] = (struct pollfd){ c->job ? save_job_event_fd(c->job) : -1, POLLIN, 0 };
	pfd[P_HOTPLUG] = (struct pollfd){ pcihp_event_fd(), POLLIN, 0 };
	for (i = 0; i < CTL_MAX_CLIENTS; i++) {
		struct ctl_client *cl = &c->clients[i];
		short ev = POLLIN;

		if (cl->mode == CL_CONSOLE && c->pending_len)
			ev = 0;
		if (cl->mode == CL_DUMP)
			ev = POLLOUT;
		if (cl->mode == CL_CONSOLE && cl->out_off < cl->out_len)
			ev |= POLLOUT;
		pfd[P_CLIENT0 + i] = (struct pollfd){ cl->fd, ev, 0 };
	}
	if (poll(pfd, P_CLIENT0 + CTL_MAX_CLIENTS, ctl_poll_timeout(c, max_wait_ms)) < 0 && errno != EINTR)
		return false;
	c->now_ms = c->clock_ms();

	if (pfd[P_SIG].revents & POLLIN) {
		struct signalfd_siginfo si;

		if (read(c->sig_fd, &si, sizeof(si)) == sizeof(si)) {
			char who[EVLOG_WHO_MAX];

			domain_end(dom, DOMAIN_STOPPED, "stopped by signal %s", strsignal(si.ssi_signo));
			c->destroyed = true;
			/* The sender as the kernel says; one sent to the
			 * supervisor and passed on, the supervisor logged. */
			if ((pid_t)si.ssi_pid != events_supervisor())
				event_send(EV_DESTROYED, event_who(who, sizeof(who), si.ssi_uid, (pid_t)si.ssi_pid, NULL),
					   "by signal %s", strsignal(si.ssi_signo));
			c->end_told = true;
		}
	}
	/* The pool agent did not feed its watchdog in time: it may be dead,
	 * and another host may start this domain once its lease ends. */
	if (c->watchdog_ms && c->now_ms >= c->watchdog_ms && !ended) {
		domain_end(dom, DOMAIN_STOPPED, "the pool agent's watchdog was not fed by its deadline");
		c->destroyed = true;
		event_send(EV_DESTROYED, "watchdog", "the pool agent did not feed it by its deadline");
		c->end_told = true;
		c->watchdog_ms = 0;
	}
	if (pfd[P_STDIN].revents & (POLLIN | POLLHUP))
		ctl_stdin(c);
	if (pfd[P_CONSOLE].revents & POLLIN)
		console_event_drain();
	if (c->job && (pfd[P_JOB].revents & POLLIN))
		ctl_save_event(c);
	if (pfd[P_HOTPLUG].revents & POLLIN)
		ctl_hotplug_event(c);
	for (i = 0; i < CTL_MAX_CLIENTS; i++) {
		struct ctl_client *cl = &c->clients[i];
		short rev = pfd[P_CLIENT0 + i].revents;

		if (cl->fd < 0 || pfd[P_CLIENT0 + i].fd != cl->fd)
			continue;
		/* A dump only writes: a peer gone shows there. */
		if ((rev & (POLLIN | POLLHUP | POLLERR)) && cl->mode != CL_DUMP)
			ctl_client_input(c, cl);
		if (cl->mode != CL_REQUESTS)
			ctl_client_output(cl);
	}
	/* After the clients: the slots of those that left are free. */
	if (pfd[P_LISTEN].revents & POLLIN)
		ctl_accept(c);
	if (c->job_client && c->job_client->fd < 0) {
		/* The agent went away: a held snapshot runs on; a job
		 * still running finishes without anyone to tell. */
		if (c->snapshot_held) {
			log_warn("the client of domain %s's save went away: the domain runs on", dom->name);
			c->snapshot_held = false;
			save_snapshot_release(dom, true);
		}
		c->job_client = NULL;
	}
	if (c->pending_len) {
		c->pending_off += uart_receive(c->com1, c->pending + c->pending_off, c->pending_len - c->pending_off);
		if (c->pending_off == c->pending_len)
			c->pending_len = 0;
	}
	ctl_expire(c);
	ctl_hotplug_expire(c);
	return true;
}

bool ctl_finish(struct ctl *c)
{
	unsigned i;

	for (i = 0; i < CTL_MAX_CLIENTS; i++) {
		if (c->clients[i].mode != CL_REQUESTS)
			ctl_client_output(&c->clients[i]);   /* the last words, best effort */
		ctl_client_close(&c->clients[i]);
	}
	return c->destroyed;
}

bool ctl_run(struct domain *dom, struct uart *com1, int in_fd, int listen_fd, int sig_fd,
	     const struct ctl_access *access)
{
	static struct ctl c;      /* 64 clients' slots: not for the stack */

	ctl_init(&c, dom, com1, in_fd, listen_fd, sig_fd, access);
	while (ctl_step(&c, -1))
		;
	crash_announce(dom);      /* an attached console's last words say where the evidence is */
	return ctl_finish(&c);
}
