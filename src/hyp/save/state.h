/* Domain state for save, restore and live migration.
 *
 * A saved domain is a stream of sections.  Each section is a header (a
 * four-letter type, a name, a per-section format version, the payload's
 * length), the payload, and a CRC-32 of both, so a truncated or corrupted
 * file is caught at the section it breaks, before anything is loaded from
 * it.  See lodge-hyp(8) for the whole stream.
 *
 * Every piece of a domain with state of its own -- each vCPU, the VM's
 * irqchip, PIT and clock, each device -- registers a small table of
 * operations (struct state_ops) under a unique name.  Saving writes one
 * STATE_DEV section per registered entry; loading hands each section to
 * the entry of the same name, and a section no entry claims, or an entry
 * no section fills, is an error: the two ends must describe the same
 * machine.
 *
 * Section payloads are built with struct state_buf and read back with
 * struct state_in, whose getters are bounds-checked: a short or malformed
 * payload sets an error the loader reports, never a read past the end. */
#ifndef LODGE_SAVE_STATE_H
#define LODGE_SAVE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stream.h"

/* ---- building a payload ------------------------------------------------ */
struct state_buf {
	uint8_t *data;
	size_t len, cap;
	int err;           /* -ENOMEM once an append failed; the rest are no-ops */
};
void state_buf_init(struct state_buf *b);
void state_buf_free(struct state_buf *b);
void state_put(struct state_buf *b, const void *p, size_t len);
void state_put_u8(struct state_buf *b, uint8_t v);
void state_put_u16(struct state_buf *b, uint16_t v);
void state_put_u32(struct state_buf *b, uint32_t v);
void state_put_u64(struct state_buf *b, uint64_t v);
/* A length-prefixed (u32) blob, for variable-sized kernel structures. */
void state_put_blob(struct state_buf *b, const void *p, uint32_t len);

/* ---- reading a payload ------------------------------------------------- */
struct state_in {
	const uint8_t *data;
	size_t len, off;
	bool bad;          /* a read went past the end (the getters return 0) */
};
static inline void state_in_init(struct state_in *in, const void *data, size_t len)
{
	in->data = data;
	in->len = len;
	in->off = 0;
	in->bad = false;
}
void state_get(struct state_in *in, void *p, size_t len);
uint8_t state_get_u8(struct state_in *in);
uint16_t state_get_u16(struct state_in *in);
uint32_t state_get_u32(struct state_in *in);
uint64_t state_get_u64(struct state_in *in);
/* A blob of exactly len bytes (a different stored length marks in bad). */
void state_get_blob(struct state_in *in, void *p, uint32_t len);
/* A blob of at most max bytes; returns its length (0 and bad if over). */
uint32_t state_get_blob_max(struct state_in *in, void *p, uint32_t max);
/* Everything read, nothing left over, nothing short. */
static inline bool state_in_done(const struct state_in *in)
{
	return !in->bad && in->off == in->len;
}

/* ---- registered state -------------------------------------------------- */
struct state_ops {
	/* Append this entry's state to b.  Called with the vCPUs parked and
	 * the devices quiesced (no request in flight). 0 or -errno. */
	int (*save)(void *obj, struct state_buf *b);
	/* Take state saved by save() (of the same format version) before
	 * the vCPUs first run.  On a bad payload, 0 is not returned and why
	 * says what is wrong in a few words. */
	int (*load)(void *obj, struct state_in *in, char *why, size_t whylen);
	/* The payload's format version: a stream of another is refused. */
	uint32_t version;
	/* Optional (NULL: nothing to do).  quiesce: stop taking new work from
	 * the guest and wait until nothing is in flight, so guest memory and
	 * this entry's state stand still (the vCPUs are parked first).
	 * resume: carry on after a snapshot (save --keep) or a migration that
	 * failed.  After load() the entry is already running: no resume. */
	void (*quiesce)(void *obj);
	void (*resume)(void *obj);
};

#define STATE_MAX_ENTRIES 128
/* Register obj's state under a unique name ("vcpu0", "uart.3f8",
 * "virtio-blk.0", ...), in the order it is to be loaded. 0 or -EEXIST,
 * -ENOSPC. */
int state_register(const char *name, const struct state_ops *ops, void *obj);
unsigned state_count(void);
/* Forget obj's entries (a device hot-unplugged); the order of the rest
 * stays. */
void state_unregister_obj(const void *obj);
/* Forget every registered entry (unit tests that build a second machine in
 * the same process).  The objects themselves are not touched. */
void state_reset_registry(void);
/* quiesce every entry that has the op, in registration order; resume in
 * reverse order. */
void state_quiesce_all(void);
void state_resume_all(void);
const char *state_name(unsigned i);
uint32_t state_version(unsigned i);
/* Save entry i into b; load a section payload into the entry of that name. */
int state_save_entry(unsigned i, struct state_buf *b);
int state_load_named(const char *name, uint32_t version, const void *data, size_t len,
		     char *why, size_t whylen);

#endif
