/* The saved-state stream's framing (stream.h): sections with a CRC-32. */
#include "stream.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>

/* ---- sections ------------------------------------------------------------------ */

/* On the wire: type, version, name, payload length; then the payload; then
 * CRC-32 of header and payload. */
struct wire_header {
	uint32_t type;
	uint32_t version;
	char name[STATE_NAME_MAX];
	uint64_t len;
} __attribute__((packed));

uint32_t state_crc(uint32_t crc, const void *p, size_t len)
{
	/* zlib's crc32 takes a uInt length: feed it in pieces. */
	while (len) {
		uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;

		crc = (uint32_t)crc32(crc, p, n);
		p = (const uint8_t *)p + n;
		len -= n;
	}
	return crc;
}

static int write_all_iov(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n > IOV_MAX ? IOV_MAX : n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + w;
			iov->iov_len -= w;
		}
	}
	return 0;
}

int state_write_section(int fd, uint32_t type, uint32_t version, const char *name,
			const struct iovec *parts, unsigned nparts)
{
	struct wire_header h = { .type = type, .version = version };
	struct iovec *iov;
	uint32_t crc;
	unsigned i;
	int rc;

	snprintf(h.name, sizeof(h.name), "%s", name ? name : "");
	for (i = 0; i < nparts; i++)
		h.len += parts[i].iov_len;
	if (h.len > STATE_SECTION_MAX)
		return -E2BIG;
	crc = state_crc(0, &h, sizeof(h));
	for (i = 0; i < nparts; i++)
		crc = state_crc(crc, parts[i].iov_base, parts[i].iov_len);
	iov = calloc(nparts + 2, sizeof(*iov));
	if (!iov)
		return -ENOMEM;
	iov[0] = (struct iovec){ &h, sizeof(h) };
	memcpy(iov + 1, parts, nparts * sizeof(*iov));
	iov[nparts + 1] = (struct iovec){ &crc, sizeof(crc) };
	rc = write_all_iov(fd, iov, nparts + 2);
	free(iov);
	return rc;
}

static int read_all(int fd, void *p, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, (uint8_t *)p + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ENODATA;   /* the stream ended early */
		got += r;
	}
	return 0;
}

int state_write_magic(int fd)
{
	uint8_t m[16] = STATE_MAGIC;
	uint32_t format = STATE_FORMAT;
	struct iovec iov = { m, sizeof(m) };

	memcpy(m + 8, &format, 4);
	return write_all_iov(fd, &iov, 1);
}

int state_read_magic(int fd, char *why, size_t whylen)
{
	uint8_t m[16];
	uint32_t format;
	int rc = read_all(fd, m, sizeof(m));

	if (rc) {
		if (rc != -ENODATA) {
			snprintf(why, whylen, "cannot read: %s", strerror(-rc));
			return rc;
		}
		snprintf(why, whylen, "empty, or truncated before its header");
		return -EBADMSG;
	}
	if (memcmp(m, STATE_MAGIC, 8) != 0) {
		snprintf(why, whylen, "not a Lodge saved domain (no LODGESAV header)");
		return -EBADMSG;
	}
	memcpy(&format, m + 8, 4);
	if (format != STATE_FORMAT) {
		snprintf(why, whylen, "saved in stream format %u; this Lodge reads format %u",
			 format, STATE_FORMAT);
		return -EPROTO;
	}
	return 0;
}

static const char *type_name(uint32_t type, char buf[5])
{
	unsigned i;

	for (i = 0; i < 4; i++) {
		char c = (char)(type >> (8 * i));

		buf[i] = (c >= 0x20 && c < 0x7f) ? c : '?';
	}
	buf[4] = '\0';
	for (i = 4; i > 0 && buf[i - 1] == ' '; i--)
		buf[i - 1] = '\0';          /* "RAM " reads better as "RAM" */
	return buf;
}

/* Printable ASCII, as every registered entry's name is. */
static bool plain_name(const char *name)
{
	for (; *name; name++)
		if ((unsigned char)*name < 0x20 || (unsigned char)*name > 0x7e)
			return false;
	return true;
}

int state_read_section(int fd, struct state_section *s, uint8_t **payload,
		       char *why, size_t whylen)
{
	struct wire_header h;
	uint32_t crc, want;
	char tn[5];
	uint8_t *p;
	int rc;

	*payload = NULL;
	if ((rc = read_all(fd, &h, sizeof(h)))) {
		if (rc != -ENODATA) {
			snprintf(why, whylen, "cannot read: %s", strerror(-rc));
			return rc;
		}
		snprintf(why, whylen, "truncated: the stream ends before its END section");
		return -EBADMSG;
	}
	h.name[STATE_NAME_MAX - 1] = '\0';
	type_name(h.type, tn);
	/* Every message about the section names it: a name lodge-hyp never
	 * writes must not carry escape sequences or line breaks with it. */
	if (!plain_name(h.name)) {
		snprintf(why, whylen, "section %s has a name that is not plain text (corrupt)", tn);
		return -EBADMSG;
	}
	if (h.len > STATE_SECTION_MAX) {
		snprintf(why, whylen, "section %s %s claims %llu bytes (corrupt)", tn, h.name,
			 (unsigned long long)h.len);
		return -E2BIG;
	}
	if (!(p = malloc(h.len ? h.len : 1)))
		return -ENOMEM;
	if ((rc = read_all(fd, p, h.len)) || (rc = read_all(fd, &want, sizeof(want)))) {
		free(p);
		if (rc != -ENODATA) {
			snprintf(why, whylen, "cannot read: %s", strerror(-rc));
			return rc;
		}
		snprintf(why, whylen, "truncated in section %s %s", tn, h.name);
		return -EBADMSG;
	}
	crc = state_crc(state_crc(0, &h, sizeof(h)), p, h.len);
	if (crc != want) {
		free(p);
		snprintf(why, whylen, "checksum mismatch in section %s %s (corrupt)", tn, h.name);
		return -EBADMSG;
	}
	s->type = h.type;
	s->version = h.version;
	memcpy(s->name, h.name, sizeof(s->name));
	s->len = h.len;
	*payload = p;
	return 0;
}
