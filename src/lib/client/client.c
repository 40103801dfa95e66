#include "client.h"
#include "proto.h"
#include "runtime.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int client_connect(const char *rundir, const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (runtime_path(sa.sun_path, sizeof(sa.sun_path), rundir, name, RT_CONTROL))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* Read one line (without the newline) byte by byte: the bytes after it may
 * belong to the console stream and must stay in the socket. */
static int read_line(int fd, char *buf, size_t len, long deadline)
{
	size_t n = 0;

	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		long left = deadline - now_ms();
		char c;
		ssize_t r;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, left) <= 0)
			continue;
		r = read(fd, &c, 1);
		if (r <= 0)
			return r == 0 ? -ECONNRESET : -errno;
		if (c == '\n') {
			buf[n] = '\0';
			return n;
		}
		if (n + 1 < len)
			buf[n++] = c;
	}
}

/* A reply with keys ends with an empty line and nothing follows it, so it
 * can be read in large pieces: one or two reads instead of one per byte. */
static int read_reply(int fd, char *buf, size_t len, long deadline)
{
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = { fd, POLLIN, 0 };
		long left = deadline - now_ms();
		ssize_t r;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, left) <= 0)
			continue;
		r = read(fd, buf + n, len - 1 - n);
		if (r <= 0)
			return r == 0 ? -ECONNRESET : -errno;
		n += r;
		buf[n] = '\0';
		if (client_reply_complete(buf, n))
			return n;
	}
	return -EPROTO;
}

bool client_reply_complete(const char *buf, size_t n)
{
	return strncmp(buf, "error ", 6) == 0 ? memchr(buf, '\n', n) != NULL : strstr(buf, "\n\n") != NULL;
}

int client_parse_reply(char *buf, struct reply *r)
{
	char *line, *save = NULL;

	/* Not memset: a reply is ~100 KiB, and the dashboard reads 50 a second. */
	r->error[0] = '\0';
	r->nkeys = 0;
	line = strtok_r(buf, "\n", &save);
	if (!line)
		return -EPROTO;
	if (strncmp(line, "error ", 6) == 0) {
		snprintf(r->error, sizeof(r->error), "%.*s", (int)sizeof(r->error) - 1, line + 6);
		return 0;
	}
	if (strcmp(line, "ok") != 0)
		return -EPROTO;
	while ((line = strtok_r(NULL, "\n", &save)) && r->nkeys < CLIENT_MAX_KEYS) {
		char *sp = strchr(line, ' ');

		if (!sp)
			continue;
		*sp = '\0';
		snprintf(r->key[r->nkeys], sizeof(r->key[0]), "%.*s", (int)sizeof(r->key[0]) - 1, line);
		snprintf(r->value[r->nkeys], sizeof(r->value[0]), "%.*s", (int)sizeof(r->value[0]) - 1, sp + 1);
		r->nkeys++;
	}
	return 0;
}

static char client_face_word[PROTO_FACE_MAX + 1];

int client_set_face(const char *face)
{
	size_t len = strlen(face);

	if (len > PROTO_FACE_MAX || strspn(face, PROTO_FACE_CHARS) != len)
		return -EINVAL;
	memcpy(client_face_word, face, len + 1);
	return 0;
}

const char *client_face(void)
{
	return client_face_word;
}

/* The requests that only ask, never change a domain (the protocol table's
 * asks_only): no event is logged for them, so they go without the face,
 * and a domain whose lodge-hyp predates faces (started before an upgrade)
 * still answers the dashboard's questions. */
static bool only_asks(const char *cmd)
{
	char word[PROTO_LINE_MAX];
	int id;

	snprintf(word, sizeof(word), "%.*s", (int)strcspn(cmd, " "), cmd);
	return (id = proto_command_find(word)) >= 0 && proto_command_rule((enum proto_command)id)->asks_only;
}

/* "lodge/1 CMD\n" (lodge/1:FACE with a face set, for a request that
 * changes the domain) into line: its length, or -E2BIG. */
static int format_request(char *line, size_t len, const char *cmd)
{
	const char *face = only_asks(cmd) ? "" : client_face_word;
	int n = snprintf(line, len, "%s%d%s%s %s\n", PROTO_PREFIX, PROTO_VERSION, face[0] ? ":" : "", face, cmd);

	return n < 0 || (size_t)n >= len ? -E2BIG : n;
}

int client_request_fds(int sock, const char *cmd, const int *fds, unsigned nfds)
{
	char line[PROTO_LINE_MAX];
	union { struct cmsghdr h; char b[CMSG_SPACE(8 * sizeof(int))]; } u;
	struct iovec iov;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b };
	struct cmsghdr *h;
	int n = format_request(line, sizeof(line), cmd);

	if (n < 0)
		return n;
	if (nfds < 1 || nfds > 8)
		return -EINVAL;
	m.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
	iov = (struct iovec){ line, (size_t)n };
	memset(&u, 0, sizeof(u));
	h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(h), fds, nfds * sizeof(int));
	return sendmsg(sock, &m, MSG_NOSIGNAL) == n ? 0 : -errno;
}

int client_request_fd(int sock, const char *cmd, int fd)
{
	char line[PROTO_LINE_MAX];
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
	struct iovec iov;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			    .msg_controllen = sizeof(u.b) };
	struct cmsghdr *h;
	int n = format_request(line, sizeof(line), cmd);

	if (n < 0)
		return n;
	iov = (struct iovec){ line, (size_t)n };
	memset(&u, 0, sizeof(u));
	h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(int));
	return sendmsg(sock, &m, MSG_NOSIGNAL) == n ? 0 : -errno;
}

int client_read_line(int fd, char *buf, size_t len, int timeout_ms)
{
	return read_line(fd, buf, len, now_ms() + timeout_ms);
}

int client_request(int fd, const char *cmd, int with_keys, struct reply *r, int timeout_ms)
{
	char line[PROTO_LINE_MAX], reply[16384];
	long deadline = now_ms() + timeout_ms;
	int n = format_request(line, sizeof(line), cmd);
	int rc;

	r->error[0] = '\0';
	r->nkeys = 0;
	if (n < 0)
		return n;
	if (send(fd, line, n, MSG_NOSIGNAL) != n) {
		int err = errno;

		/* lodge-hyp refuses a peer it does not trust with one line and
		 * closes at once, perhaps before our request arrived: that line
		 * is still ours to read, and says more than EPIPE. */
		if ((err == EPIPE || err == ECONNRESET) &&
		    read_line(fd, line, sizeof(line), deadline) >= 0 &&
		    strncmp(line, "error ", 6) == 0) {
			snprintf(r->error, sizeof(r->error), "%.*s", (int)sizeof(r->error) - 1, line + 6);
			return 0;
		}
		return -err;
	}
	if (with_keys) {
		if ((rc = read_reply(fd, reply, sizeof(reply), deadline)) < 0)
			return rc;
		return client_parse_reply(reply, r);
	}
	if ((rc = read_line(fd, line, sizeof(line), deadline)) < 0)
		return rc;
	if (strncmp(line, "error ", 6) == 0) {
		snprintf(r->error, sizeof(r->error), "%.*s", (int)sizeof(r->error) - 1, line + 6);
		return 0;
	}
	if (strcmp(line, "ok") != 0)
		return -EPROTO;
	return 0;
}

int client_call(const char *rundir, const char *name, const char *cmd, int with_keys,
		struct reply *r)
{
	int fd = client_connect(rundir, name), rc;

	if (fd < 0)
		return fd;
	rc = client_request(fd, cmd, with_keys, r, 5000);
	close(fd);
	return rc;
}

int client_start(const char *rundir, const char *name, const char *cmd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char line[PROTO_LINE_MAX];
	int fd, n = format_request(line, sizeof(line), cmd);

	if (n < 0)
		return n;
	if (runtime_path(sa.sun_path, sizeof(sa.sun_path), rundir, name, RT_CONTROL))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* A Unix socket connects at once or not at all (EAGAIN), and a
	 * request line fits any empty socket buffer: neither waits. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    (send(fd, line, n, MSG_NOSIGNAL) != n && errno != EPIPE && errno != ECONNRESET)) {
		int e = errno;

		close(fd);
		return -e;
	}
	/* On EPIPE the fd stays: lodge-hyp may have refused us with a line
	 * that is still there to read (see client_request). */
	return fd;
}

int client_collect(int fd, char *buf, size_t len, size_t *n, struct reply *r)
{
	char *nl;

	for (;;) {
		ssize_t got;

		if (*n + 1 >= len)
			return -EPROTO;
		got = read(fd, buf + *n, len - 1 - *n);
		if (got < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
		if (got == 0)
			return -ECONNRESET;
		*n += got;
		buf[*n] = '\0';
		if ((nl = strchr(buf, '\n')))
			break;
	}
	*nl = '\0';
	r->error[0] = '\0';
	r->nkeys = 0;
	if (strncmp(buf, "error ", 6) == 0) {
		snprintf(r->error, sizeof(r->error), "%.*s", (int)sizeof(r->error) - 1, buf + 6);
		return 1;
	}
	return strcmp(buf, "ok") == 0 ? 1 : -EPROTO;
}

const char *reply_get(const struct reply *r, const char *key)
{
	unsigned i;

	for (i = 0; i < r->nkeys; i++)
		if (strcmp(r->key[i], key) == 0)
			return r->value[i];
	return NULL;
}
