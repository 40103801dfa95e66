/* The migration's shared secret, its handshake's pieces and addresses
 * (migrate.h). */
#include "migrate.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>

int mig_secret_load(const char *path, struct secret *s, struct lodge_err *err)
{
	struct stat st;
	FILE *f;

	s->len = 0;
	if (!path || !*path)
		return 0;
	if (stat(path, &st) < 0)
		return lodge_fail(err, -errno, "cannot read the migration secret %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077))
		return lodge_fail(err, -EPERM, "the migration secret %s must be a regular file only its owner can "
				  "read (chmod 600)", path);
	if (!(f = fopen(path, "r")))
		return lodge_fail(err, -errno, "cannot read the migration secret %s: %s", path, strerror(errno));
	s->len = fread(s->key, 1, sizeof(s->key), f);
	fclose(f);
	while (s->len && (s->key[s->len - 1] == '\n' || s->key[s->len - 1] == '\r'))
		s->len--;
	if (s->len < 16)
		return lodge_fail(err, -EINVAL, "the migration secret %s is too short (16 bytes at least; "
				  "head -c 32 /dev/urandom | base64)", path);
	return 0;
}

void mig_hex(const unsigned char *p, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = '\0';
}

int mig_unhex(const char *s, unsigned char *p, size_t n)
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
void mig_auth_mac(const struct secret *s, const char *role, const unsigned char *nonce, char *out)
{
	unsigned char msg[16 + AUTH_NONCE], mac[EVP_MAX_MD_SIZE];
	unsigned maclen = 0;
	size_t rl = strlen(role);

	memcpy(msg, role, rl);
	memcpy(msg + rl, nonce, AUTH_NONCE);
	HMAC(EVP_sha256(), s->key, (int)s->len, msg, rl + AUTH_NONCE, mac, &maclen);
	mig_hex(mac, AUTH_MAC, out);
}

bool mig_auth_check(const struct secret *s, const char *role, const unsigned char *nonce, const char *got)
{
	char want[2 * AUTH_MAC + 1];

	mig_auth_mac(s, role, nonce, want);
	return strlen(got) == strlen(want) && CRYPTO_memcmp(want, got, strlen(want)) == 0;
}

int mig_send_line(int fd, const char *fmt, ...)
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

/* "HOST[:PORT]" or "[V6]:PORT" into host and port. */
int mig_split_hostport(const char *arg, char *host, size_t hlen, char *port, size_t plen)
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
const char *mig_unix_path(const char *arg)
{
	if (strncmp(arg, "unix:", 5) == 0)
		return arg + 5;
	return strchr(arg, '/') ? arg : NULL;
}

int mig_unix_addr(const char *path, struct sockaddr_un *sa)
{
	*sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
	if (!path[0] || strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

/* A bound on how long one read or write on sock may wait. */
void mig_socket_deadline(int sock, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}
