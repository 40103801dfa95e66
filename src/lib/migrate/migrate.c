/* Live migration, the sending end, as xl migrate (over TCP to Xen's
 * relocation port, 8002, or a Unix socket): authenticate (migrate.h),
 * send the HEAD, and once the receiver takes it hand the socket to the
 * domain's lodge-hyp, which reports each pre-copy round. */
#include "migrate.h"
#include "savestream.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define MIGRATE_MAX_MS (30 * 60 * 1000)

static int sender_auth(int sock, const struct secret *s, const char *peer, struct lodge_err *err)
{
	unsigned char nonce[AUTH_NONCE], mine[AUTH_NONCE];
	char line[512], mac[2 * AUTH_MAC + 1], nh[2 * AUTH_NONCE + 1], *p;
	int rc;

	if ((rc = client_read_line(sock, line, sizeof(line), HANDSHAKE_MS)) < 0)
		return lodge_fail(err, -EPROTO, "%s did not greet us: %s (is lodge migrate-receive running there?)",
				  peer, strerror(-rc));
	if (strncmp(line, "error ", 6) == 0)
		return lodge_fail(err, -EACCES, "%s refused us: %s", peer, line + 6);
	if (strncmp(line, MIGRATE_PROTO " nonce ", strlen(MIGRATE_PROTO) + 7) != 0)
		return lodge_fail(err, -EPROTO, "%s speaks another protocol: '%.60s'", peer, line);
	p = line + strlen(MIGRATE_PROTO) + 7;
	if (strcmp(p, "-") == 0) {
		if (s->len)
			return lodge_fail(err, -EACCES, "%s asks for no secret, but we have one: refusing an "
					  "unauthenticated peer", peer);
		if ((rc = mig_send_line(sock, "auth - nonce -\n")))
			return lodge_fail(err, rc, "%s: %s", peer, strerror(-rc));
	} else {
		if (!s->len)
			return lodge_fail(err, -EACCES, "%s wants the migration secret: give --secret-file or "
					  "lodge.conf's migration_secret_file", peer);
		if (mig_unhex(p, nonce, sizeof(nonce)) || getrandom(mine, sizeof(mine), 0) != sizeof(mine))
			return lodge_fail(err, -EPROTO, "%s sent a nonce that is not one", peer);
		mig_auth_mac(s, "sender", nonce, mac);
		mig_hex(mine, sizeof(mine), nh);
		if ((rc = mig_send_line(sock, "auth %s nonce %s\n", mac, nh)))
			return lodge_fail(err, rc, "%s: %s", peer, strerror(-rc));
	}
	if ((rc = client_read_line(sock, line, sizeof(line), HANDSHAKE_MS)) < 0)
		return lodge_fail(err, -EPROTO, "%s closed the connection during authentication", peer);
	if (strncmp(line, "error ", 6) == 0)
		return lodge_fail(err, -EACCES, "%s refused us: %s", peer, line + 6);
	if (strncmp(line, "ok ", 3) != 0 || (s->len && !mig_auth_check(s, "receiver", mine, line + 3)))
		return lodge_fail(err, -EACCES, "%s could not prove it knows the migration secret", peer);
	return 0;
}

static int connect_unix(const char *path, struct lodge_err *err)
{
	struct sockaddr_un sa;
	int fd;

	if (mig_unix_addr(path, &sa))
		return lodge_fail(err, -ENAMETOOLONG, "%s is too long for a socket path", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return lodge_fail(err, -e, "cannot connect to %s: %s", path, strerror(e));
	}
	return fd;
}

static int connect_to(const char *host, const char *port, struct lodge_err *err)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res, *ai;
	int fd = -1, rc, one = 1;

	if ((rc = getaddrinfo(host, port, &hints, &res)))
		return lodge_fail(err, -ENOENT, "cannot resolve %s: %s", host, gai_strerror(rc));
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
	if (fd < 0)
		return lodge_fail(err, -errno, "cannot connect to %s port %s: %s", host, port, strerror(errno));
	/* The last dirty pages and the hand-over bytes must not wait. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Hand the socket to the domain's lodge-hyp and follow it to the end:
 * its last line, "ok ..." or "error ...", into line. */
static int hand_over(const struct lodge *lg, const char *name, int sock, const struct lodge_migrate_opts *o,
		     char *line, size_t len, struct lodge_err *err)
{
	int ctl, rc;

	if ((ctl = client_connect(lg->hc.runtime_dir, name)) < 0 || (rc = client_request_fd(ctl, "migrate", sock))) {
		rc = ctl < 0 ? ctl : rc;
		if (ctl >= 0)
			close(ctl);
		return lodge_fail(err, rc, "cannot reach domain %s: %s", name, strerror(-rc));
	}
	for (;;) {
		struct lodge_progress p = { 0 };
		unsigned long long dirty, pages, rate;

		if ((rc = client_read_line(ctl, line, len, MIGRATE_MAX_MS)) < 0) {
			close(ctl);
			return lodge_fail(err, rc, "lost domain %s's lodge-hyp during the migration: %s", name,
					  strerror(-rc));
		}
		if (strncmp(line, "progress ", 9) != 0)
			break;
		if (o->progress && sscanf(line, "progress round %u dirty %llu pages %llu rate_kib %llu", &p.round,
					  &dirty, &pages, &rate) == 4) {
			p.dirty = dirty;
			p.pages = pages;
			p.rate_kib = rate;
			o->progress(&p, o->arg);
		}
	}
	close(ctl);
	return 0;
}

int lodge_migrate(const struct lodge *lg, const char *domain, const char *dest, const struct lodge_migrate_opts *o,
		  struct lodge_migrate_result *res, struct lodge_err *err)
{
	const char *path = mig_unix_path(dest), *name;
	char host[256], port[16], why[512], line[512];
	unsigned long long down = 0, total = 0, pages = 0, bytes = 0;
	struct lodge_status st;
	struct secret *secret;
	static struct secret own_key;
	long t0 = lodge_now_ms();
	int sock, rc;

	memset(res, 0, sizeof(*res));
	if (!path && mig_split_hostport(dest, host, sizeof(host), port, sizeof(port)))
		return lodge_fail(err, -EINVAL, "'%s' is not HOST[:PORT] or the path of a Unix socket", dest);
	if (path)
		snprintf(res->peer, sizeof(res->peer), "%s", path);
	else
		snprintf(res->peer, sizeof(res->peer), "%s:%s", host, port);
	if (!(secret = malloc(sizeof(*secret))))
		return lodge_fail(err, -ENOMEM, "%s", strerror(ENOMEM));
	if ((rc = mig_secret_load(o->secret_file ? o->secret_file : lg->hc.migration_secret_file, secret, err)) ||
	    (rc = lodge_status(lg, domain, &st, err)))
		goto out;
	name = st.name;
	snprintf(res->name, sizeof(res->name), "%s", name);
	if ((sock = rc = path ? connect_unix(path, err) : connect_to(host, port, err)) < 0)
		goto out;
	if ((rc = sender_auth(sock, secret, res->peer, err)))
		goto out_sock;
	/* Signed, so that the receiver (this host, or a peer that holds the
	 * secret) lends the domain what it names here. */
	if ((rc = head_write(sock, &lg->hc, name, stream_key(secret, &own_key, true, why, sizeof(why)), why,
			     sizeof(why)))) {
		lodge_fail(err, rc, "cannot send domain %s's header to %s: %s", name, res->peer, why);
		goto out_sock;
	}
	if ((rc = client_read_line(sock, line, sizeof(line), HANDSHAKE_MS)) < 0 || strcmp(line, "ok") != 0) {
		rc = lodge_fail(err, rc < 0 ? rc : -EACCES, "%s will not take domain %s: %s", res->peer, name,
				rc < 0 ? strerror(-rc) : strncmp(line, "error ", 6) == 0 ? line + 6 : line);
		goto out_sock;
	}
	/* Both ends agree: the socket is lodge-hyp's from here. */
	rc = hand_over(lg, name, sock, o, line, sizeof(line), err);
	close(sock);
	if (rc)
		goto out;
	if (strncmp(line, "ok ", 3) != 0) {
		rc = lodge_fail(err, -EIO, "cannot migrate domain %s to %s: %s (it runs on here)", name, res->peer,
				strncmp(line, "error ", 6) == 0 ? line + 6 : line);
		goto out;
	}
	sscanf(line, "ok downtime_us %llu total_us %llu rounds %u pages %llu bytes %llu", &down, &total,
	       &res->rounds, &pages, &bytes);
	res->downtime_us = down;
	res->total_us = total;
	res->pages = pages;
	res->bytes = bytes;
	res->ms = lodge_now_ms() - t0;
	goto out;
out_sock:
	close(sock);
out:
	free(secret);
	return rc;
}
