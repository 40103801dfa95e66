/* lodge migrate and lodge migrate-receive: live migration over TCP, as
 * xl migrate and xl migrate-receive (Xen's relocation port, 8002).
 *
 * Who may hand this host a domain: over TCP, only a peer that knows the
 * shared secret (lodge.conf's migration_secret_file): each end sends a
 * random nonce and answers the other's with HMAC-SHA256(secret, role ||
 * nonce), so neither a listener nor a sender can be impersonated by one
 * that only replays.  Without a secret the listener is a Unix socket that
 * only root may reach (its mode, and the peer's uid from SO_PEERCRED):
 * a TCP port, even on loopback, would admit every local user.  Reach it
 * from another host through ssh, which forwards Unix sockets.  The stream
 * itself is not encrypted: across networks you do not trust, tunnel it.
 *
 * Then the sender sends the stream's HEAD (savestream.h); the receiver
 * checks the Lodge version and the config (its disks on the shared path,
 * its bridges) and lends it only what this host allows (incoming.h), and
 * says ok before any memory moves.  From there the socket belongs to the
 * two lodge-hyps (src/hyp/save/save.h).
 *
 * The receiver serves each connection in a child of its own, with
 * deadlines on everything a peer sends before its stream is handed on,
 * so a silent or slow peer holds one child for seconds, never the
 * listener; the number of connections at once is capped, in all and per
 * peer address. */
#include "agent.h"
#include "client.h"
#include "domains.h"
#include "incoming.h"
#include "log.h"
#include "savestream.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIGRATE_PORT     "8002"
#define MIGRATE_PROTO    "LODGE-MIGRATE 1"
#define AUTH_NONCE       32
#define AUTH_MAC         32              /* SHA-256 */
#define SECRET_MAX       4096
#define HANDSHAKE_MS     10000           /* each line and the HEAD, before lodge-hyp takes the stream */
#define MIGRATE_MAX_MS   (30 * 60 * 1000)
#define RECEIVE_MAX      8               /* connections served at once */
#define RECEIVE_MAX_PEER 4               /* ... from one peer address */
#define MIGRATE_SOCKET   ".migrate.sock" /* in the runtime directory; no domain name starts with '.' */

/* Child exit statuses of the receiver: the domain runs here; refused or
 * failed after the peer authenticated; the peer never authenticated. */
enum { RECV_OK = 0, RECV_FAILED = 1, RECV_UNAUTHENTICATED = 2 };

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* ---- the shared secret -------------------------------------------------------- */

struct secret {
	unsigned char key[SECRET_MAX];
	size_t len;                      /* 0: none */
};

static int secret_load(const char *path, struct secret *s)
{
	struct stat st;
	FILE *f;

	s->len = 0;
	if (!path || !*path)
		return 0;
	if (stat(path, &st) < 0) {
		log_err("cannot read the migration secret %s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077)) {
		log_err("the migration secret %s must be a regular file only its owner can read (chmod 600)", path);
		return -EPERM;
	}
	if (!(f = fopen(path, "r"))) {
		log_err("cannot read the migration secret %s: %s", path, strerror(errno));
		return -errno;
	}
	s->len = fread(s->key, 1, sizeof(s->key), f);
	fclose(f);
	while (s->len && (s->key[s->len - 1] == '\n' || s->key[s->len - 1] == '\r'))
		s->len--;
	if (s->len < 16) {
		log_err("the migration secret %s is too short (16 bytes at least; head -c 32 /dev/urandom | base64)", path);
		return -EINVAL;
	}
	return 0;
}

static void hex(const unsigned char *p, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = '\0';
}

static int unhex(const char *s, unsigned char *p, size_t n)
{
	size_t i;

	if (strlen(s) != 2 * n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		p[i] = (unsigned char)v;
	}
	return 0;
}

/* HMAC-SHA256(secret, role || nonce), as hex. */
static void auth_mac(const struct secret *s, const char *role, const unsigned char *nonce, char *out)
{
	unsigned char msg[16 + AUTH_NONCE], mac[EVP_MAX_MD_SIZE];
	unsigned maclen = 0;
	size_t rl = strlen(role);

	memcpy(msg, role, rl);
	memcpy(msg + rl, nonce, AUTH_NONCE);
	HMAC(EVP_sha256(), s->key, (int)s->len, msg, rl + AUTH_NONCE, mac, &maclen);
	hex(mac, AUTH_MAC, out);
}

static bool auth_check(const struct secret *s, const char *role, const unsigned char *nonce, const char *got)
{
	char want[2 * AUTH_MAC + 1];

	auth_mac(s, role, nonce, want);
	return strlen(got) == strlen(want) && CRYPTO_memcmp(want, got, strlen(want)) == 0;
}

static int send_line(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int send_line(int fd, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -E2BIG;
	return send(fd, buf, n, MSG_NOSIGNAL) == n ? 0 : -errno;
}

/* ---- addresses ------------------------------------------------------------------ */

/* "HOST[:PORT]" or "[V6]:PORT" into host and port. */
static int split_hostport(const char *arg, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon;

	if (arg[0] == '[') {
		const char *end = strchr(arg, ']');

		if (!end)
			return -EINVAL;
		snprintf(host, hlen, "%.*s", (int)(end - arg - 1), arg + 1);
		colon = end[1] == ':' ? end + 1 : NULL;
	} else {
		colon = strrchr(arg, ':');
		if (colon && strchr(arg, ':') != colon)
			colon = NULL;      /* a bare IPv6 address */
		snprintf(host, hlen, "%.*s", colon ? (int)(colon - arg) : (int)strlen(arg), arg);
	}
	snprintf(port, plen, "%s", colon ? colon + 1 : MIGRATE_PORT);
	return host[0] ? 0 : -EINVAL;
}

/* "unix:PATH" or a path: a Unix socket; NULL for HOST[:PORT]. */
static const char *unix_path(const char *arg)
{
	if (strncmp(arg, "unix:", 5) == 0)
		return arg + 5;
	return strchr(arg, '/') ? arg : NULL;
}

static int unix_addr(const char *path, struct sockaddr_un *sa)
{
	*sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
	if (!path[0] || strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

/* A bound on how long one read or write on sock may wait. */
static void socket_deadline(int sock, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* ---- the sender --------------------------------------------------------------------- */

static int sender_auth(int sock, const struct secret *s, const char *peer)
{
	unsigned char nonce[AUTH_NONCE], mine[AUTH_NONCE];
	char line[512], mac[2 * AUTH_MAC + 1], nh[2 * AUTH_NONCE + 1], *p;
	int rc;

	if ((rc = client_read_line(sock, line, sizeof(line), HANDSHAKE_MS)) < 0) {
		log_err("%s did not greet us: %s (is lodge migrate-receive running there?)", peer, strerror(-rc));
		return -EPROTO;
	}
	if (strncmp(line, "error ", 6) == 0) {
		log_err("%s refused us: %s", peer, line + 6);
		return -EACCES;
	}
	if (strncmp(line, MIGRATE_PROTO " nonce ", strlen(MIGRATE_PROTO) + 7) != 0) {
		log_err("%s speaks another protocol: '%.60s'", peer, line);
		return -EPROTO;
	}
	p = line + strlen(MIGRATE_PROTO) + 7;
	if (strcmp(p, "-") == 0) {
		if (s->len) {
			log_err("%s asks for no secret, but we have one: refusing an unauthenticated peer", peer);
			return -EACCES;
		}
		if ((rc = send_line(sock, "auth - nonce -\n")))
			return rc;
	} else {
		if (!s->len) {
			log_err("%s wants the migration secret: give --secret-file or lodge.conf's migration_secret_file", peer);
			return -EACCES;
		}
		if (unhex(p, nonce, sizeof(nonce)) || getrandom(mine, sizeof(mine), 0) != sizeof(mine))
			return -EPROTO;
		auth_mac(s, "sender", nonce, mac);
		hex(mine, sizeof(mine), nh);
		if ((rc = send_line(sock, "auth %s nonce %s\n", mac, nh)))
			return rc;
	}
	if ((rc = client_read_line(sock, line, sizeof(line), HANDSHAKE_MS)) < 0) {
		log_err("%s closed the connection during authentication", peer);
		return -EPROTO;
	}
	if (strncmp(line, "error ", 6) == 0) {
		log_err("%s refused us: %s", peer, line + 6);
		return -EACCES;
	}
	if (strncmp(line, "ok ", 3) != 0 || (s->len && !auth_check(s, "receiver", mine, line + 3))) {
		log_err("%s could not prove it knows the migration secret", peer);
		return -EACCES;
	}
	return 0;
}

static int connect_unix(const char *path)
{
	struct sockaddr_un sa;
	int fd;

	if (unix_addr(path, &sa)) {
		log_err("%s is too long for a socket path", path);
		return -ENAMETOOLONG;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		log_err("cannot connect to %s: %s", path, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	return fd;
}

static int connect_to(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res, *ai;
	int fd = -1, rc, one = 1;

	if ((rc = getaddrinfo(host, port, &hints, &res))) {
		log_err("cannot resolve %s: %s", host, gai_strerror(rc));
		return -ENOENT;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		rc = errno;
		close(fd);
		fd = -1;
		errno = rc;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		log_err("cannot connect to %s port %s: %s", host, port, strerror(errno));
		return -errno;
	}
	/* The last dirty pages and the hand-over bytes must not wait. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int cmd_migrate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "secret-file", required_argument, NULL, 's' }, { "quiet", no_argument, NULL, 'q' }, { 0 },
	};
	struct host_config hc;
	struct dom_status st;
	struct secret secret;
	const char *name, *secret_file = NULL, *path;
	char host[256], port[16], peer[CFG_PATH_MAX + 16], why[512], line[512];
	bool quiet = false;
	int c, sock, ctl, rc;
	long t0 = now_ms();

	optind = 1;
	while ((c = getopt_long(argc, argv, "+s:q", opts, NULL)) != -1) {
		if (c == 's')
			secret_file = optarg;
		else if (c == 'q')
			quiet = true;
		else
			return EXIT_USAGE;
	}
	if (argc - optind != 2) {
		log_err("usage: lodge migrate [--secret-file FILE] NAME HOST[:PORT]|SOCKET");
		return EXIT_USAGE;
	}
	name = argv[optind];
	path = unix_path(argv[optind + 1]);
	if (!path && split_hostport(argv[optind + 1], host, sizeof(host), port, sizeof(port))) {
		log_err("'%s' is not HOST[:PORT] or the path of a Unix socket", argv[optind + 1]);
		return EXIT_USAGE;
	}
	if (path)
		snprintf(peer, sizeof(peer), "%s", path);
	else
		snprintf(peer, sizeof(peer), "%s:%s", host, port);
	if (agent_host_config(&hc) || secret_load(secret_file ? secret_file : hc.migration_secret_file, &secret))
		return 1;
	if (domain_status(hc.runtime_dir, name, &st)) {
		log_err("no domain %s is running", name);
		return 1;
	}
	if ((sock = path ? connect_unix(path) : connect_to(host, port)) < 0)
		return 1;
	if (sender_auth(sock, &secret, peer)) {
		close(sock);
		return 1;
	}
	if ((rc = head_write(sock, &hc, name, why, sizeof(why)))) {
		log_err("cannot send domain %s's header to %s: %s", name, peer, why);
		close(sock);
		return 1;
	}
	if ((rc = client_read_line(sock, line, sizeof(line), HANDSHAKE_MS)) < 0 || strcmp(line, "ok") != 0) {
		log_err("%s will not take domain %s: %s", peer, name,
			rc < 0 ? strerror(-rc) : strncmp(line, "error ", 6) == 0 ? line + 6 : line);
		close(sock);
		return 1;
	}
	/* Both ends agree: the socket is lodge-hyp's from here. */
	if ((ctl = client_connect(hc.runtime_dir, name)) < 0 || (rc = client_request_fd(ctl, "migrate", sock))) {
		log_err("cannot reach domain %s: %s", name, strerror(ctl < 0 ? -ctl : -rc));
		close(sock);
		return 1;
	}
	close(sock);
	for (;;) {
		if ((rc = client_read_line(ctl, line, sizeof(line), MIGRATE_MAX_MS)) < 0) {
			log_err("lost domain %s's lodge-hyp during the migration: %s", name, strerror(-rc));
			close(ctl);
			return 1;
		}
		if (strncmp(line, "progress ", 9) == 0) {
			unsigned round;
			unsigned long long dirty, pages, rate;

			/* Round 0 (everything touched) reports only that it began. */
			if (!quiet && sscanf(line, "progress round %u dirty %llu pages %llu rate_kib %llu",
					     &round, &dirty, &pages, &rate) == 4 && round > 0)
				printf("round %u: %llu pages sent, %llu dirty, %.1f MiB/s\n", round, pages, dirty,
				       rate / 1024.0);
			fflush(stdout);
			continue;
		}
		break;
	}
	close(ctl);
	if (strncmp(line, "ok ", 3) != 0) {
		log_err("cannot migrate domain %s to %s: %s (it runs on here)", name, peer,
			strncmp(line, "error ", 6) == 0 ? line + 6 : line);
		return 1;
	}
	{
		unsigned long long down = 0, total = 0, pages = 0, bytes = 0;
		unsigned rounds = 0;

		sscanf(line, "ok downtime_us %llu total_us %llu rounds %u pages %llu bytes %llu",
		       &down, &total, &rounds, &pages, &bytes);
		printf("migrated %s to %s in %ld ms, downtime %.2f ms, %u rounds, %llu pages\n", name, peer,
		       now_ms() - t0, down / 1000.0, rounds, pages);
	}
	return 0;
}

/* ---- the receiver ------------------------------------------------------------------- */

static int receiver_auth(int sock, const struct secret *s, const char *peer)
{
	unsigned char nonce[AUTH_NONCE], theirs[AUTH_NONCE];
	char line[512], nh[2 * AUTH_NONCE + 1], mac[2 * AUTH_MAC + 1], got[2 * AUTH_MAC + 1];
	char theirs_hex[2 * AUTH_NONCE + 1];
	int rc;

	if (s->len) {
		if (getrandom(nonce, sizeof(nonce), 0) != sizeof(nonce))
			return -EIO;
		hex(nonce, sizeof(nonce), nh);
	} else {
		strcpy(nh, "-");
	}
	if ((rc = send_line(sock, MIGRATE_PROTO " nonce %s\n", nh)))
		return rc;
	if ((rc = client_read_line(sock, line, sizeof(line), HANDSHAKE_MS)) < 0)
		return rc;
	if (!s->len) {
		if (strcmp(line, "auth - nonce -") != 0) {
			send_line(sock, "error this host takes no migration secret\n");
			return -EACCES;
		}
		return send_line(sock, "ok -\n");
	}
	if (sscanf(line, "auth %64s nonce %64s", got, theirs_hex) != 2 || !auth_check(s, "sender", nonce, got) ||
	    unhex(theirs_hex, theirs, sizeof(theirs))) {
		log_warn("refused a migration from %s: it does not know the migration secret", peer);
		send_line(sock, "error authentication failed\n");
		return -EACCES;
	}
	auth_mac(s, "receiver", theirs, mac);
	return send_line(sock, "ok %s\n", mac);
}

/* One incoming migration on sock (in a child of the listener): RECV_OK
 * once the domain runs here. */
static int receive_one(int sock, const char *peer, const struct host_config *hc, const struct secret *s)
{
	struct stream_head h;
	struct domain_config *dc = malloc(sizeof(*dc));
	struct dom_status st;
	char why[CFG_PATH_MAX + 2048];
	int rc;

	if (!dc)
		return RECV_FAILED;
	/* Nothing the peer sends before lodge-hyp takes the stream may keep
	 * this child waiting longer than a handshake. */
	socket_deadline(sock, HANDSHAKE_MS);
	if ((rc = receiver_auth(sock, s, peer))) {
		if (rc == -ETIMEDOUT || rc == -EAGAIN)
			log_warn("refused a migration from %s: it did not authenticate within %d s", peer,
				 HANDSHAKE_MS / 1000);
		free(dc);
		return RECV_UNAUTHENTICATED;
	}
	if ((rc = head_read(sock, &h, why, sizeof(why)))) {
		if (rc == -EAGAIN || rc == -EWOULDBLOCK)
			snprintf(why, sizeof(why), "its header did not come within %d s", HANDSHAKE_MS / 1000);
		log_err("refused a migration from %s: %s", peer, why);
		send_line(sock, "error %s\n", why);
		free(dc);
		return RECV_FAILED;
	}
	rc = head_config(&h, "the incoming domain", hc, dc, why, sizeof(why));
	head_free(&h);
	if (!rc)
		rc = incoming_admit(dc, hc, why, sizeof(why));
	if (!rc && domain_status(hc->runtime_dir, dc->name, &st) == 0) {
		snprintf(why, sizeof(why), "a domain %s already runs here", dc->name);
		rc = -EEXIST;
	}
	if (rc) {
		log_err("refused domain from %s: %s", peer, why);
		send_line(sock, "error %s\n", why);
		free(dc);
		return RECV_FAILED;
	}
	if (send_line(sock, "ok\n")) {
		free(dc);
		return RECV_FAILED;
	}
	/* lodge-hyp takes the stream and returns once the guest runs here;
	 * if it fails, the sender sees the socket close and keeps it.  It
	 * keeps its own deadline on each section. */
	socket_deadline(sock, 0);
	rc = domain_start(dc, hc, false, sock);
	if (!rc) {
		printf("received %s from %s\n", dc->name, peer);
		fflush(stdout);
	}
	free(dc);
	return rc ? RECV_FAILED : RECV_OK;
}

/* ---- the listener ---------------------------------------------------------------------- */

struct receiver {
	int lfd;
	bool unix_socket;
	struct { pid_t pid; char peer[INET6_ADDRSTRLEN + 40]; } child[RECEIVE_MAX];
	unsigned nchild;
};

/* A Unix socket only root reaches: mode 0600 from the start (umask), and
 * a live listener already on the path is an error, a dead one's socket
 * is replaced. */
static int listen_unix(const char *path)
{
	struct sockaddr_un sa;
	mode_t old;
	int fd;

	if (unix_addr(path, &sa)) {
		log_err("%s is too long for a socket path", path);
		return -ENAMETOOLONG;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		log_err("another lodge migrate-receive listens on %s", path);
		close(fd);
		return -EADDRINUSE;
	}
	close(fd);
	unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0600) < 0 || listen(fd, 8) < 0) {
		int e = errno;

		umask(old);
		log_err("cannot listen on %s: %s", path, strerror(e));
		close(fd);
		return -e;
	}
	umask(old);
	return fd;
}

static int listen_tcp(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai;
	int fd, one = 1, rc;

	if ((rc = getaddrinfo(host, port, &hints, &ai))) {
		log_err("cannot listen on %s: %s", host, gai_strerror(rc));
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 8) < 0) {
		rc = -errno;
		log_err("cannot listen on %s port %s: %s", host, port, strerror(errno));
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
static int peer_of(struct receiver *r, int sock, const struct sockaddr_storage *sa, char *peer, size_t len)
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
		log_warn("refused a migration from uid %d (pid %d): only root may hand this host a domain",
			 clen == sizeof(cred) ? (int)cred.uid : -1, clen == sizeof(cred) ? (int)cred.pid : -1);
		send_line(sock, "error only root may migrate a domain to this host\n");
		return -EACCES;
	}
	snprintf(peer, len, "a local root process (pid %d)", (int)cred.pid);
	return 0;
}

/* Serve sock in a child; refused at once (one line) when too many run. */
static void receiver_start(struct receiver *r, int sock, const char *peer, const struct host_config *hc,
			   const struct secret *s, const sigset_t *oldmask)
{
	unsigned i, same = 0;
	pid_t pid;

	for (i = 0; i < r->nchild; i++)
		same += !r->unix_socket && strcmp(r->child[i].peer, peer) == 0;
	if (r->nchild == RECEIVE_MAX || same >= RECEIVE_MAX_PEER) {
		log_warn("refused a migration from %s: %u connections are being served%s", peer, r->nchild,
			 same >= RECEIVE_MAX_PEER ? " from there" : "");
		send_line(sock, "error this host is busy with other migrations; try again later\n");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		log_err("cannot serve a migration from %s: %s", peer, strerror(errno));
		return;
	}
	if (pid == 0) {
		int rc;

		close(r->lfd);
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		rc = receive_one(sock, peer, hc, s);
		fflush(stdout);
		_exit(rc);
	}
	r->child[r->nchild].pid = pid;
	snprintf(r->child[r->nchild].peer, sizeof(r->child[0].peer), "%s", peer);
	r->nchild++;
}

/* Reap ended children; returns the status of the first one that got past
 * authentication (for --once), else -1. */
static int receiver_reap(struct receiver *r)
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

int cmd_migrate_receive(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' }, { "once", no_argument, NULL, '1' },
		{ "secret-file", required_argument, NULL, 's' }, { 0 },
	};
	struct receiver r = { .lfd = -1 };
	struct host_config hc;
	struct secret secret;
	const char *listen_arg = NULL, *secret_file = NULL, *path;
	char host[256], port[16], sock_path[CFG_PATH_MAX + 32], where[CFG_PATH_MAX + 300];
	sigset_t chld, oldmask;
	bool once = false;
	int c, sfd, one = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+l:1s:", opts, NULL)) != -1) {
		if (c == 'l')
			listen_arg = optarg;
		else if (c == '1')
			once = true;
		else if (c == 's')
			secret_file = optarg;
		else
			return EXIT_USAGE;
	}
	if (optind != argc) {
		log_err("usage: lodge migrate-receive [--listen ADDR:PORT|SOCKET] [--once] [--secret-file FILE]");
		return EXIT_USAGE;
	}
	if (agent_host_config(&hc) || secret_load(secret_file ? secret_file : hc.migration_secret_file, &secret))
		return 1;
	/* Without a secret, and unless told otherwise, the Unix socket. */
	if (!listen_arg && !secret.len) {
		snprintf(sock_path, sizeof(sock_path), "%s/%s", hc.runtime_dir, MIGRATE_SOCKET);
		listen_arg = sock_path;
		if ((c = runtime_dir_create(hc.runtime_dir))) {
			log_err("cannot create %s: %s", hc.runtime_dir, strerror(-c));
			return 1;
		}
	}
	if (!listen_arg)
		listen_arg = hc.migration_listen;
	if ((path = unix_path(listen_arg))) {
		r.unix_socket = true;
		r.lfd = listen_unix(path);
		snprintf(where, sizeof(where), "%s (root only%s)", path, secret.len ? ", secret required" : "");
	} else if (split_hostport(listen_arg, host, sizeof(host), port, sizeof(port))) {
		log_err("'%s' is not ADDR:PORT or the path of a Unix socket", listen_arg);
		return EXIT_USAGE;
	} else if (!secret.len) {
		log_err("refusing to listen on %s without a migration secret: any local user, and anyone who "
			"reaches it, could put a guest on this host (set migration_secret_file in lodge.conf, or "
			"leave out --listen: the listener is then a Unix socket only root reaches, for an ssh tunnel)",
			listen_arg);
		return 1;
	} else {
		r.lfd = listen_tcp(host, port);
		snprintf(where, sizeof(where), "%s:%s (secret required)", host, port);
	}
	if (r.lfd < 0)
		return 1;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &oldmask);
	if ((sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		log_err("cannot watch for ended children: %s", strerror(errno));
		return 1;
	}
	printf("listening on %s\n", where);
	fflush(stdout);
	for (;;) {
		struct pollfd pfd[2] = { { r.lfd, POLLIN, 0 }, { sfd, POLLIN, 0 } };
		struct sockaddr_storage sa;
		socklen_t salen = sizeof(sa);
		char peer[INET6_ADDRSTRLEN + 40];
		int sock;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_err("poll: %s", strerror(errno));
			return 1;
		}
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			int first;

			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				;
			if ((first = receiver_reap(&r)) >= 0 && once)
				return first == RECV_OK ? 0 : 1;
		}
		if (!(pfd[0].revents & POLLIN))
			continue;
		if ((sock = accept4(r.lfd, (struct sockaddr *)&sa, &salen, SOCK_CLOEXEC)) < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			log_err("accept: %s", strerror(errno));
			return 1;
		}
		if (!r.unix_socket)
			setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (peer_of(&r, sock, &sa, peer, sizeof(peer)) == 0)
			receiver_start(&r, sock, peer, &hc, &secret, &oldmask);
		close(sock);
	}
}
