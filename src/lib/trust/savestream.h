/* The agent's part of a saved-state stream (src/common/stream.h): the
 * magic and the HEAD section it writes before lodge-hyp writes the rest,
 * and reads back on restore and on a migration's receiving end.  HEAD is
 * text, "key value" lines, then "config" and the domain's resolved config
 * in lodge.cfg(5) syntax to the end:
 *
 *     lodge 0.1.0
 *     name web
 *     saved 1764815000
 *     config
 *     name = "web"
 *     ...                                                               */
#ifndef LODGE_SAVESTREAM_H
#define LODGE_SAVESTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

struct secret;

struct stream_head {
	char version[32];
	char name[DOMAIN_NAME_MAX];
	long saved;
	char *config;                  /* NUL-terminated, malloc'd */
	/* Its signature: a "signed HEX" line just before "config", an
	 * HMAC-SHA256 of the HEAD's text without that line (body). */
	bool has_mac;
	unsigned char mac[32];
	char *body;                    /* malloc'd */
	size_t body_len;
};

/* Write the magic and HEAD for the running domain NAME (its resolved
 * config from the runtime directory), signed with key if it has one
 * (key NULL or empty: unsigned).  0, or -errno with why. */
int head_write(int fd, const struct host_config *hc, const char *name, const struct secret *key, char *why,
	       size_t whylen);
/* Read the magic and HEAD: 0, or -errno with why (not a save file, another
 * format or Lodge version, truncated, corrupt). */
int head_read(int fd, struct stream_head *h, char *why, size_t whylen);
void head_free(struct stream_head *h);
/* Whether h was signed with key (constant time; false without a key or
 * a signature). */
bool head_signed_by(const struct stream_head *h, const struct secret *key);

/* This host's key (hostkey.c): 32 random bytes in --root's
 * /var/lib/lodge/host.key, 0600 root's, made by the first save if create
 * (else -ENOENT when there is none).  A HEAD signed with it was written
 * by this host, which trusts it to name what it named (incoming.h).  0,
 * or -errno with why. */
int host_key_get(struct secret *k, bool create, char *why, size_t whylen);
void host_key_path(char *out, size_t len);
/* The key a stream is signed and checked with: the migration secret
 * shared with the pool's peers if there is one, else this host's own
 * (read into own, made first if create).  NULL, with why, if neither. */
const struct secret *stream_key(const struct secret *shared, struct secret *own, bool create, char *why,
				size_t whylen);
/* The HEAD's config as a domain config, validated as `lodge create` would
 * (label names it in messages: "web.save: config line 3: ..."). */
int head_config(const struct stream_head *h, const char *label, const struct host_config *hc,
		struct domain_config *dc, char *err, size_t errlen);

/* The most bytes a stream of dc may hold after its HEAD: each page of its
 * RAM once, with its record and section framing, and its vCPUs' and
 * devices' state.  A saved file larger than this (a bzip2 bomb) is refused
 * as it is read. */
uint64_t head_stream_bound(const struct domain_config *dc);

#endif
