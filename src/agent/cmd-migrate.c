/* lodge migrate and lodge migrate-receive: live migration over TCP, as
 * xl migrate and xl migrate-receive (Xen's relocation port, 8002).
 *
 * The two agents first prove to each other that they know the shared
 * secret (lodge.conf's migration_secret_file): each sends a random nonce
 * and answers the other's with HMAC-SHA256(secret, role || nonce), so
 * neither a listener nor a sender can be impersonated by one that only
 * replays.  Without a secret the listener stays on loopback (reach it
 * through an ssh tunnel); the stream itself is not encrypted, which is
 * what the tunnel is for across untrusted networks.
 *
 * Then the sender sends the stream's HEAD (savestream.h); the receiver
 * checks the Lodge version and the config (its disks on the shared path,
 * its bridges) and says ok before any memory moves.  From there the
 * socket belongs to the two lodge-hyps (src/hyp/save/save.h). */
#include "agent.h"
#include "client.h"
#include "domains.h"
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
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MIGRATE_PORT     "8002"
#define MIGRATE_PROTO    "LODGE-MIGRATE 1"
#define AUTH_NONCE       32
#define AUTH_MAC         32              /* SHA-256 */
#define SECRET_MAX       4096
#define HANDSHAKE_MS     10000
#define MIGRATE_MAX_MS   (30 * 60 * 1000)

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

static bool is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return false;
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
	const char *name, *secret_file = NULL;
	char host[256], port[16], peer[300], why[512], line[512];
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
		log_err("usage: lodge migrate [--secret-file FILE] NAME HOST[:PORT]");
		return EXIT_USAGE;
	}
	name = argv[optind];
	if (split_hostport(argv[optind + 1], host, sizeof(host), port, sizeof(port))) {
		log_err("'%s' is not HOST[:PORT]", argv[optind + 1]);
		return EXIT_USAGE;
	}
	snprintf(peer, sizeof(peer), "%s:%s", host, port);
	if (agent_host_config(&hc) || secret_load(secret_file ? secret_file : hc.migration_secret_file, &secret))
		return 1;
	if (domain_status(hc.runtime_dir, name, &st)) {
		log_err("no domain %s is running", name);
		return 1;
	}
	if ((sock = connect_to(host, port)) < 0)
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

/* One incoming migration on sock: 0 once the domain runs here. */
static int receive_one(int sock, const char *peer, const struct host_config *hc, const struct secret *s)
{
	struct stream_head h;
	struct domain_config dc;
	struct dom_status st;
	char why[1024];
	int rc;

	if ((rc = receiver_auth(sock, s, peer)))
		return rc;
	if ((rc = head_read(sock, &h, why, sizeof(why)))) {
		log_err("refused a migration from %s: %s", peer, why);
		send_line(sock, "error %s\n", why);
		return rc;
	}
	rc = head_config(&h, "the incoming domain", hc, &dc, why, sizeof(why));
	head_free(&h);
	if (!rc && domain_status(hc->runtime_dir, dc.name, &st) == 0) {
		snprintf(why, sizeof(why), "a domain %s already runs here", dc.name);
		rc = -EEXIST;
	}
	if (rc) {
		log_err("refused domain from %s: %s", peer, why);
		send_line(sock, "error %s\n", why);
		return rc;
	}
	if ((rc = send_line(sock, "ok\n")))
		return rc;
	/* lodge-hyp takes the stream and returns once the guest runs here;
	 * if it fails, the sender sees the socket close and keeps it. */
	if ((rc = domain_start(&dc, hc, false, sock)))
		return rc;
	printf("received %s from %s\n", dc.name, peer);
	fflush(stdout);
	return 0;
}

int cmd_migrate_receive(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' }, { "once", no_argument, NULL, '1' },
		{ "secret-file", required_argument, NULL, 's' }, { 0 },
	};
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai;
	struct host_config hc;
	struct secret secret;
	const char *listen_arg = NULL, *secret_file = NULL;
	char host[256], port[16];
	bool once = false;
	int c, lfd, one = 1, rc = 0;

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
		log_err("usage: lodge migrate-receive [--listen ADDR:PORT] [--once] [--secret-file FILE]");
		return EXIT_USAGE;
	}
	if (agent_host_config(&hc) || secret_load(secret_file ? secret_file : hc.migration_secret_file, &secret))
		return 1;
	if (split_hostport(listen_arg ? listen_arg : hc.migration_listen, host, sizeof(host), port, sizeof(port))) {
		log_err("'%s' is not ADDR:PORT", listen_arg ? listen_arg : hc.migration_listen);
		return EXIT_USAGE;
	}
	if ((rc = getaddrinfo(host, port, &hints, &ai))) {
		log_err("cannot listen on %s: %s", host, gai_strerror(rc));
		return 1;
	}
	if (!secret.len && !is_loopback(ai->ai_addr)) {
		log_err("refusing to listen on %s without a migration secret: anyone who reaches it could "
			"put a guest on this host (set migration_secret_file in lodge.conf, or listen on "
			"127.0.0.1 behind an ssh tunnel)", host);
		freeaddrinfo(ai);
		return 1;
	}
	lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd >= 0)
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(lfd, 4) < 0) {
		log_err("cannot listen on %s port %s: %s", host, port, strerror(errno));
		freeaddrinfo(ai);
		return 1;
	}
	freeaddrinfo(ai);
	printf("listening on %s:%s%s\n", host, port, secret.len ? " (secret required)" : "");
	fflush(stdout);
	for (;;) {
		struct sockaddr_storage sa;
		socklen_t salen = sizeof(sa);
		char peer[INET6_ADDRSTRLEN + 8] = "?";
		int sock = accept4(lfd, (struct sockaddr *)&sa, &salen, SOCK_CLOEXEC);

		if (sock < 0) {
			if (errno == EINTR)
				continue;
			log_err("accept: %s", strerror(errno));
			return 1;
		}
		setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (sa.ss_family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, peer, sizeof(peer));
		else if (sa.ss_family == AF_INET6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr, peer, sizeof(peer));
		rc = receive_one(sock, peer, &hc, &secret);
		close(sock);
		if (once)
			return rc ? 1 : 0;
	}
}
