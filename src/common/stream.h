/* The saved-state stream's framing, shared by lodge-hyp (which writes and
 * reads the domain's state) and the agent (which writes the header, reads
 * it back on restore and carries streams to files and peers).
 *
 * A stream is STATE_MAGIC and the format version, then sections.  Each
 * section is a header (a four-letter type, a name, a per-section format
 * version, the payload's length), the payload, and a CRC-32 of both, so a
 * truncated or corrupted stream is caught at the section it breaks,
 * before anything is loaded from it. */
#ifndef LODGE_STREAM_H
#define LODGE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#define STATE_MAGIC        "LODGESAV"      /* 8 bytes: first in every stream */
#define STATE_FORMAT       1               /* the stream's format version */
#define STATE_NAME_MAX     24              /* section names, NUL included */
#define STATE_SECTION_MAX  (64u << 20)     /* no payload above this is believed */

/* Section types: four ASCII letters, little-endian. */
#define STATE_FOURCC(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define STATE_HEAD STATE_FOURCC('H', 'E', 'A', 'D')   /* version, config, machine shape */
#define STATE_RAM  STATE_FOURCC('R', 'A', 'M', ' ')   /* guest pages: (gpa, 4 KiB) records */
#define STATE_DEV  STATE_FOURCC('D', 'E', 'V', ' ')   /* one registered entry's state */
#define STATE_END  STATE_FOURCC('E', 'N', 'D', ' ')   /* the end of a complete stream */

/* ---- the stream's sections ---------------------------------------------- */
struct state_section {
	uint32_t type;
	uint32_t version;
	char name[STATE_NAME_MAX];
	uint64_t len;      /* payload bytes */
};

/* Write one section: header, payload gathered from parts, CRC.  The fd may
 * be a file, a pipe or a socket; short writes are retried.  0 or -errno. */
struct iovec;
int state_write_section(int fd, uint32_t type, uint32_t version, const char *name,
			const struct iovec *parts, unsigned nparts);
/* The stream's first 16 bytes: magic and format. */
int state_write_magic(int fd);
int state_read_magic(int fd, char *why, size_t whylen);
/* Read the next section into *payload (malloc'd, the caller frees it):
 * 0, or -EIO/-EBADMSG/-E2BIG/-EPROTO with why saying what is wrong
 * ("truncated in section RAM", "checksum mismatch in DEV vcpu0"). */
int state_read_section(int fd, struct state_section *s, uint8_t **payload,
		       char *why, size_t whylen);

/* CRC-32 (zlib's), over a gathered buffer. */
uint32_t state_crc(uint32_t crc, const void *p, size_t len);

#endif
