/* The saved-state stream: payload buffers, bounds-checked readers, the
 * registry of state entries, and sections framed with a CRC-32. */
#include "save/state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>

/* ---- payload buffers ------------------------------------------------------ */

void state_buf_init(struct state_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void state_buf_free(struct state_buf *b)
{
	free(b->data);
	state_buf_init(b);
}

void state_put(struct state_buf *b, const void *p, size_t len)
{
	if (b->err)
		return;
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *n;

		while (cap < b->len + len)
			cap *= 2;
		if (!(n = realloc(b->data, cap))) {
			b->err = -ENOMEM;
			return;
		}
		b->data = n;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, len);
	b->len += len;
}

/* The stream is little-endian, as is every host lodge-hyp runs on (x86). */
void state_put_u8(struct state_buf *b, uint8_t v) { state_put(b, &v, 1); }
void state_put_u16(struct state_buf *b, uint16_t v) { state_put(b, &v, 2); }
void state_put_u32(struct state_buf *b, uint32_t v) { state_put(b, &v, 4); }
void state_put_u64(struct state_buf *b, uint64_t v) { state_put(b, &v, 8); }

void state_put_blob(struct state_buf *b, const void *p, uint32_t len)
{
	state_put_u32(b, len);
	state_put(b, p, len);
}

void state_get(struct state_in *in, void *p, size_t len)
{
	if (in->bad || len > in->len - in->off) {
		in->bad = true;
		memset(p, 0, len);
		return;
	}
	memcpy(p, in->data + in->off, len);
	in->off += len;
}

uint8_t state_get_u8(struct state_in *in) { uint8_t v; state_get(in, &v, 1); return v; }
uint16_t state_get_u16(struct state_in *in) { uint16_t v; state_get(in, &v, 2); return v; }
uint32_t state_get_u32(struct state_in *in) { uint32_t v; state_get(in, &v, 4); return v; }
uint64_t state_get_u64(struct state_in *in) { uint64_t v; state_get(in, &v, 8); return v; }

void state_get_blob(struct state_in *in, void *p, uint32_t len)
{
	if (state_get_u32(in) != len) {
		in->bad = true;
		memset(p, 0, len);
		return;
	}
	state_get(in, p, len);
}

uint32_t state_get_blob_max(struct state_in *in, void *p, uint32_t max)
{
	uint32_t len = state_get_u32(in);

	if (len > max) {
		in->bad = true;
		return 0;
	}
	state_get(in, p, len);
	return in->bad ? 0 : len;
}

/* ---- the registry ------------------------------------------------------------ */

static struct state_entry {
	char name[STATE_NAME_MAX];
	const struct state_ops *ops;
	void *obj;
} entries[STATE_MAX_ENTRIES];
static unsigned nentries;

int state_register(const char *name, const struct state_ops *ops, void *obj)
{
	unsigned i;

	if (strlen(name) >= STATE_NAME_MAX)
		return -ENAMETOOLONG;
	for (i = 0; i < nentries; i++)
		if (strcmp(entries[i].name, name) == 0)
			return -EEXIST;
	if (nentries == STATE_MAX_ENTRIES)
		return -ENOSPC;
	snprintf(entries[nentries].name, STATE_NAME_MAX, "%s", name);
	entries[nentries].ops = ops;
	entries[nentries].obj = obj;
	nentries++;
	return 0;
}

unsigned state_count(void) { return nentries; }

void state_reset_registry(void)
{
	memset(entries, 0, sizeof(entries));
	nentries = 0;
}

void state_quiesce_all(void)
{
	unsigned i;

	for (i = 0; i < nentries; i++)
		if (entries[i].ops->quiesce)
			entries[i].ops->quiesce(entries[i].obj);
}

void state_resume_all(void)
{
	unsigned i;

	for (i = nentries; i-- > 0;)
		if (entries[i].ops->resume)
			entries[i].ops->resume(entries[i].obj);
}
const char *state_name(unsigned i) { return i < nentries ? entries[i].name : NULL; }

int state_save_entry(unsigned i, struct state_buf *b)
{
	int rc;

	if (i >= nentries)
		return -ENOENT;
	rc = entries[i].ops->save(entries[i].obj, b);
	return rc ? rc : b->err;
}

int state_load_named(const char *name, uint32_t version, const void *data, size_t len,
		     char *why, size_t whylen)
{
	struct state_in in;
	unsigned i;
	int rc;

	for (i = 0; i < nentries; i++)
		if (strcmp(entries[i].name, name) == 0)
			break;
	if (i == nentries) {
		snprintf(why, whylen, "the stream has state for '%s', which this domain does not have", name);
		return -ENOENT;
	}
	if (version != entries[i].ops->version) {
		snprintf(why, whylen, "'%s' state is format %u, this lodge-hyp reads %u", name, version,
			 entries[i].ops->version);
		return -EPROTO;
	}
	state_in_init(&in, data, len);
	why[0] = '\0';
	rc = entries[i].ops->load(entries[i].obj, &in, why, whylen);
	if (!rc && !state_in_done(&in)) {
		snprintf(why, whylen, "'%s' state is %s", name, in.bad ? "short" : "longer than expected");
		return -EBADMSG;
	}
	if (rc && !why[0])
		snprintf(why, whylen, "'%s' state refused: %s", name, strerror(-rc));
	return rc;
}

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
	return buf;
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
