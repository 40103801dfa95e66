/* The saved-state stream: payload buffers, bounds-checked readers, the
 * registry of state entries, and sections framed with a CRC-32. */
#include "save/state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void state_unregister_obj(const void *obj)
{
	unsigned i = 0;

	while (i < nentries) {
		if (entries[i].obj == obj) {
			memmove(&entries[i], &entries[i + 1], (nentries - i - 1) * sizeof(entries[0]));
			nentries--;
			memset(&entries[nentries], 0, sizeof(entries[0]));
		} else {
			i++;
		}
	}
}

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
uint32_t state_version(unsigned i) { return i < nentries ? entries[i].ops->version : 0; }

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

