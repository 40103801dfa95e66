/* Live migration, the receiving end, as xl migrate-receive.
 *
 * The listener serves each connection in a child of its own, with
 * deadlines on everything a peer sends before its stream is handed on,
 * so a silent or slow peer holds one child for seconds, never the
 * listener; the number of connections at once is capped, in all and per
 * peer address.  A child tells the listener what happened through a pipe
 * (one record a write, whole), and the listener tells the face. */
#include "incoming.h"
#include "migrate.h"
#include "savestream.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define RECEIVE_MAX      8               /* connections served at once */
#define RECEIVE_MAX_PEER 4               /* ... from one peer address */
#define MIGRATE_SOCKET   ".migrate.sock" /* in the runtime directory; no domain name starts with '.' */
#define PEER_MAX         (INET6_ADDRSTRLEN + 40)

/* Child exit statuses: the domain runs here; refused or failed after the
 * peer authenticated; the peer never authenticated. */
enum { RECV_OK = 0, RECV_FAILED = 1, RECV_UNAUTHENTICATED = 2 };

/* What a child tells the listener: one write, under PIPE_BUF. */
struct recv_record {
	enum lodge_recv_event event;
	char name[DOMAIN_NAME_MAX];
	char peer[PEER_MAX];
	char text[2048];
};
_Static_assert(sizeof(struct recv_record) <= PIPE_BUF, "a record is written whole");

struct lodge_receiver {
	struct lodge lg;                 /* the face's, its notices the listener's to tell */
	struct lodge_receiver_opts o;
	struct secret secret;
	int lfd, sfd, events[2];
	bool unix_socket;
	sigset_t oldmask;
	struct { pid_t pid; char peer[PEER_MAX]; } child[RECEIVE_MAX];
	unsigned nchild;
};

/* In the listener: an event for the face. */
static void tell(struct lodge_receiver *r, enum lodge_recv_event e, const char *name, const char *peer,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void tell(struct lodge_receiver *r, enum lodge_recv_event e, const char *name, const char *peer,
		 const char *fmt, ...)
{
	char text[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (r->o.event)
		r->o.event(e, name, peer, text, r->o.arg);
}

/* In a child: the same, as a record down the pipe. */
static void child_tell(int fd, enum lodge_recv_event e, const char *name, const char *peer, const char *text)
{
	struct recv_record rec = { .event = e };

	snprintf(rec.name, sizeof(rec.name), "%s", name ? name : "");
	snprintf(rec.peer, sizeof(rec.peer), "%s", peer ? peer : "");
	snprintf(rec.text, sizeof(rec.text), "%s", text ? text : "");
	if (write(fd, &rec, sizeof(rec)) < 0) {
		/* the listener is gone: nobody to tell */
	}
}

/* A child's notices (lodge-hyp's lines as a domain starts) go the same way. */
static int child_events_fd = -1;

static void child_notice(enum lodge_notice kind, const char *text, void *arg)
{
	child_tell(child_events_fd, kind == LODGE_NOTICE_HYP ? LODGE_RECV_HYP : LODGE_RECV_WARNING, NULL, NULL, text);
}

static int receiver_auth(int sock, const struct secret *s, const char *peer, int events)
{
	unsigned char nonce[AUTH_NONCE], theirs[AUTH_NONCE];
	char line[512], nh[2 * AUTH_NONCE + 1], mac[2 * AUTH_MAC + 1], got[2 * AUTH_MAC + 1];
	char theirs_hex[2 * AUTH_NONCE + 1], text[256];
	int rc;

	if (s->len) {
		if (getrandom(nonce, sizeof(nonce), 0) != sizeof(nonce))
			return -EIO;
		mig_hex(nonce, sizeof(nonce), nh);
	} else {
		strcpy(nh, "-");
	}
	if ((rc = mig_send_line(sock, MIGRATE_PROTO " nonce %s\n", nh)))
		return rc;
	if ((rc = client_read_line(sock, line, sizeof(line), HANDSHAKE_MS)) < 0)
		return rc;
	if (!s->len) {
		if (strcmp(line, "auth - nonce -") != 0) {
			mig_send_line(sock, "error this host takes no migration secret\n");
			return -EACCES;
		}
		return mig_send_line(sock, "ok -\n");
	}
	if (sscanf(line, "auth %64s nonce %64s", got, theirs_hex) != 2 || !mig_auth_check(s, "sender", nonce, got) ||
	    mig_unhex(theirs_hex, theirs, sizeof(theirs))) {
		snprintf(text, sizeof(text), "refused a migration from %s: it does not know the migration secret", peer);
		child_tell(events, LODGE_RECV_WARNING, NULL, peer, text);
		mig_send_line(sock, "error authentication failed\n");
		return -EACCES;
	}
	mig_auth_mac(s, "receiver", theirs, mac);
	return mig_send_line(sock, "ok %s\n", mac);
}

/* One incoming migration on sock (in a child of the listener): RECV_OK
 * once the domain runs here. */
static int receive_one(const struct lodge_receiver *r, int sock, const char *peer)
{
	struct lodge lg = r->lg;
	struct domain_config *dc = malloc(sizeof(*dc));
	char why[CFG_PATH_MAX + 2048], text[sizeof(why) + 200];
	struct lodge_status st;
	struct stream_head h;
	struct lodge_err err;
	static struct secret own_key;
	bool signed_here;
	int rc, ev = r->events[1];

	if (!dc)
		return RECV_FAILED;
	child_events_fd = ev;
	lodge_on_notice(&lg, child_notice, NULL);
	/* Nothing the peer sends before lodge-hyp takes the stream may keep
	 * this child waiting longer than a handshake. */
	mig_socket_deadline(sock, HANDSHAKE_MS);
	if ((rc = receiver_auth(sock, &r->secret, peer, ev))) {
		if (rc == -ETIMEDOUT || rc == -EAGAIN) {
			snprintf(text, sizeof(text), "refused a migration from %s: it did not authenticate within %d s",
				 peer, HANDSHAKE_MS / 1000);
			child_tell(ev, LODGE_RECV_WARNING, NULL, peer, text);
		}
		free(dc);
		return RECV_UNAUTHENTICATED;
	}
	if ((rc = head_read(sock, &h, why, sizeof(why)))) {
		if (rc == -EAGAIN || rc == -EWOULDBLOCK)
			snprintf(why, sizeof(why), "its header did not come within %d s", HANDSHAKE_MS / 1000);
		snprintf(text, sizeof(text), "refused a migration from %s: %s", peer, why);
		child_tell(ev, LODGE_RECV_ERROR, NULL, peer, text);
		mig_send_line(sock, "error %s\n", why);
		free(dc);
		return RECV_FAILED;
	}
	rc = head_config(&h, "the incoming domain", &lg.hc, dc, why, sizeof(why));
	/* Signed with this host's own key (no secret: the sender is root on
	 * this host, over the root-only socket): trusted to name what it
	 * named.  A peer's stream, signed with the migration secret, proves
	 * only where it came from: the host resources it names are held to
	 * this host's lodge.conf, as a pool config from etcd is, so that one
	 * host's looser lodge.conf never decides what another lends. */
	signed_here = !r->secret.len &&
		      head_signed_by(&h, stream_key(NULL, &own_key, false, text, sizeof(text)));
	head_free(&h);
	if (!rc && !signed_here)
		rc = incoming_admit(dc, &lg.hc, why, sizeof(why));
	if (!rc && lodge_status_of(&lg, dc->name, &st) == 0) {
		snprintf(why, sizeof(why), "a domain %s already runs here", dc->name);
		rc = -EEXIST;
	}
	if (rc) {
		snprintf(text, sizeof(text), "refused domain from %s: %s", peer, why);
		child_tell(ev, LODGE_RECV_ERROR, NULL, peer, text);
		mig_send_line(sock, "error %s\n", why);
		free(dc);
		return RECV_FAILED;
	}
	if (mig_send_line(sock, "ok\n")) {
		free(dc);
		return RECV_FAILED;
	}
	/* lodge-hyp takes the stream and returns once the guest runs here;
	 * if it fails, the sender sees the socket close and keeps it.  It
	 * keeps its own deadline on each section. */
	mig_socket_deadline(sock, 0);
	if ((rc = lodge_start(&lg, dc, false, sock, &err)))
		child_tell(ev, err.from_hyp ? LODGE_RECV_HYP : LODGE_RECV_ERROR, dc->name, peer, err.msg);
	else
		child_tell(ev, LODGE_RECV_RECEIVED, dc->name, peer, "");
	free(dc);
	return rc ? RECV_FAILED : RECV_OK;
}

/* A Unix socket only root reaches: mode 0600 from the start (umask), and
 * a live listener already on the path is an error, a dead one's socket
 * is replaced. */
static int listen_unix(const char *path, struct lodge_err *err)
{
	struct sockaddr_un sa;
	mode_t old;
	int fd;

	if (mig_unix_addr(path, &sa))
		return lodge_fail(err, -ENAMETOOLONG, "%s is too long for a socket path", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return lodge_fail(err, -errno, "cannot listen on %s: %s", path, strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		return lodge_fail(err, -EADDRINUSE, "another lodge migrate-receive listens on %s", path);
	}
	close(fd);
	unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return lodge_fail(err, -errno, "cannot listen on %s: %s", path, strerror(errno));
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0600) < 0 || listen(fd, 8) < 0) {
		int e = errno;

		umask(old);
		close(fd);
		return lodge_fail(err, -e, "cannot listen on %s: %s", path, strerror(e));
	}
	umask(old);
	return fd;
}

static int listen_tcp(const char *host, const char *port, struct lodge_err *err)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai;
	int fd, one = 1, rc;

	if ((rc = getaddrinfo(host, port, &hints, &ai)))
		return lodge_fail(err, -EINVAL, "cannot listen on %s: %s", host, gai_strerror(rc));
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 8) < 0) {
		rc = lodge_fail(err, -errno, "cannot listen on %s port %s: %s", host, port, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return rc;
	}
	freeaddrinfo(ai);
	return fd;
}

/* Who is at the other end: an address, or for a Unix socket a uid that
 * must be root's (its file mode admits no one else; this is the check
 * that does not depend on it).  -EACCES: refused, with a line sent. */
static int peer_of(struct lodge_receiver *r, int sock, const struct sockaddr_storage *sa, char *peer, size_t len)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);

	if (!r->unix_socket) {
		snprintf(peer, len, "?");
		if (sa->ss_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, peer, len);
		else if (sa->ss_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, peer, len);
		return 0;
	}
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 || cred.uid != 0) {
		tell(r, LODGE_RECV_WARNING, NULL, NULL,
		     "refused a migration from uid %d (pid %d): only root may hand this host a domain",
		     clen == sizeof(cred) ? (int)cred.uid : -1, clen == sizeof(cred) ? (int)cred.pid : -1);
		mig_send_line(sock, "error only root may migrate a domain to this host\n");
		return -EACCES;
	}
	snprintf(peer, len, "a local root process (pid %d)", (int)cred.pid);
	return 0;
}

/* Serve sock in a child; refused at once (one line) when too many run. */
static void receiver_start(struct lodge_receiver *r, int sock, const char *peer)
{
	unsigned i, same = 0;
	pid_t pid;

	for (i = 0; i < r->nchild; i++)
		same += !r->unix_socket && strcmp(r->child[i].peer, peer) == 0;
	if (r->nchild == RECEIVE_MAX || same >= RECEIVE_MAX_PEER) {
		tell(r, LODGE_RECV_WARNING, NULL, peer, "refused a migration from %s: %u connections are being served%s",
		     peer, r->nchild, same >= RECEIVE_MAX_PEER ? " from there" : "");
		mig_send_line(sock, "error this host is busy with other migrations; try again later\n");
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		tell(r, LODGE_RECV_ERROR, NULL, peer, "cannot serve a migration from %s: %s", peer, strerror(errno));
		return;
	}
	if (pid == 0) {
		close(r->lfd);
		close(r->sfd);
		close(r->events[0]);
		sigprocmask(SIG_SETMASK, &r->oldmask, NULL);
		_exit(receive_one(r, sock, peer));
	}
	r->child[r->nchild].pid = pid;
	snprintf(r->child[r->nchild].peer, sizeof(r->child[0].peer), "%s", peer);
	r->nchild++;
}

/* Reap ended children; returns the status of the first one that got past
 * authentication (for once), else -1. */
static int receiver_reap(struct lodge_receiver *r)
{
	int st, first = -1;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		unsigned i;
		int code = WIFEXITED(st) ? WEXITSTATUS(st) : RECV_FAILED;

		for (i = 0; i < r->nchild && r->child[i].pid != pid; i++)
			;
		if (i == r->nchild)
			continue;
		r->child[i] = r->child[--r->nchild];
		if (first < 0 && code != RECV_UNAUTHENTICATED)
			first = code;
	}
	return first;
}

/* Every record the children have written so far, to the face. */
static void receiver_events(struct lodge_receiver *r)
{
	struct recv_record rec;

	while (read(r->events[0], &rec, sizeof(rec)) == sizeof(rec))
		if (r->o.event)
			r->o.event(rec.event, rec.name, rec.peer, rec.text, r->o.arg);
}

int lodge_receiver_open(const struct lodge *lg, const struct lodge_receiver_opts *o, struct lodge_receiver **out,
			char *where, size_t wherelen, struct lodge_err *err)
{
	struct lodge_receiver *r = calloc(1, sizeof(*r));
	char host[256], port[16], sock_path[CFG_PATH_MAX + 32];
	const char *listen_arg = o->listen, *path;
	sigset_t chld;
	int rc;

	*out = NULL;
	if (!r)
		return lodge_fail(err, -ENOMEM, "%s", strerror(ENOMEM));
	r->lg = *lg;
	r->o = *o;
	r->lfd = r->sfd = r->events[0] = r->events[1] = -1;
	if ((rc = mig_secret_load(o->secret_file ? o->secret_file : lg->hc.migration_secret_file, &r->secret, err)))
		goto fail;
	/* Without a secret, and unless told otherwise, the Unix socket. */
	if (!listen_arg && !r->secret.len) {
		snprintf(sock_path, sizeof(sock_path), "%s/%s", lg->hc.runtime_dir, MIGRATE_SOCKET);
		listen_arg = sock_path;
		if ((rc = lodge_runtime_dir_create(lg->hc.runtime_dir))) {
			lodge_fail(err, rc, "cannot create %s: %s", lg->hc.runtime_dir, strerror(-rc));
			goto fail;
		}
	}
	if (!listen_arg)
		listen_arg = lg->hc.migration_listen;
	if ((path = mig_unix_path(listen_arg))) {
		r->unix_socket = true;
		rc = r->lfd = listen_unix(path, err);
		snprintf(where, wherelen, "%s (root only%s)", path, r->secret.len ? ", secret required" : "");
	} else if (mig_split_hostport(listen_arg, host, sizeof(host), port, sizeof(port))) {
		rc = lodge_fail(err, -EINVAL, "'%s' is not ADDR:PORT or the path of a Unix socket", listen_arg);
	} else if (!r->secret.len) {
		rc = lodge_fail(err, -EPERM, "refusing to listen on %s without a migration secret: any local user, and "
				"anyone who reaches it, could put a guest on this host (set migration_secret_file in "
				"lodge.conf, or leave out --listen: the listener is then a Unix socket only root "
				"reaches, for an ssh tunnel)", listen_arg);
	} else {
		rc = r->lfd = listen_tcp(host, port, err);
		snprintf(where, wherelen, "%s:%s (secret required)", host, port);
	}
	if (rc < 0)
		goto fail;
	if (pipe2(r->events, O_CLOEXEC) < 0 || fcntl(r->events[0], F_SETFL, O_NONBLOCK) < 0) {
		rc = lodge_fail(err, -errno, "cannot make a pipe: %s", strerror(errno));
		goto fail;
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &r->oldmask);
	if ((r->sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		rc = lodge_fail(err, -errno, "cannot watch for ended children: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &r->oldmask, NULL);
		goto fail;
	}
	*out = r;
	return 0;
fail:
	lodge_receiver_close(r);
	return rc;
}

int lodge_receiver_run(struct lodge_receiver *r, struct lodge_err *err)
{
	int one = 1;

	for (;;) {
		struct pollfd pfd[3] = { { r->lfd, POLLIN, 0 }, { r->sfd, POLLIN, 0 }, { r->events[0], POLLIN, 0 } };
		struct sockaddr_storage sa;
		socklen_t salen = sizeof(sa);
		char peer[PEER_MAX];
		int sock;

		if (poll(pfd, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return lodge_fail(err, -errno, "poll: %s", strerror(errno));
		}
		if (pfd[2].revents & POLLIN)
			receiver_events(r);
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			int first;

			while (read(r->sfd, &si, sizeof(si)) == sizeof(si))
				;
			/* A child's last records are in the pipe before its end. */
			receiver_events(r);
			if ((first = receiver_reap(r)) >= 0 && r->o.once)
				return first == RECV_OK ? 0 : lodge_fail(err, -EIO, "%s", "");
		}
		if (!(pfd[0].revents & POLLIN))
			continue;
		if ((sock = accept4(r->lfd, (struct sockaddr *)&sa, &salen, SOCK_CLOEXEC)) < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return lodge_fail(err, -errno, "accept: %s", strerror(errno));
		}
		if (!r->unix_socket)
			setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (peer_of(r, sock, &sa, peer, sizeof(peer)) == 0)
			receiver_start(r, sock, peer);
		close(sock);
	}
}

void lodge_receiver_close(struct lodge_receiver *r)
{
	if (!r)
		return;
	if (r->lfd >= 0)
		close(r->lfd);
	if (r->sfd >= 0) {
		close(r->sfd);
		sigprocmask(SIG_SETMASK, &r->oldmask, NULL);
	}
	if (r->events[0] >= 0)
		close(r->events[0]);
	if (r->events[1] >= 0)
		close(r->events[1]);
	free(r);
}
