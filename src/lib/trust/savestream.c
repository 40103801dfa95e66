/* The stream's magic and HEAD (savestream.h), and passing a descriptor to
 * lodge-hyp with a request. */
#include "savestream.h"
#include "migrate.h"
#include "runtime.h"
#include "stream.h"
#include "version.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define HEAD_CONFIG_MAX (256 * 1024)

static char *read_small_file(const char *path, size_t max)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (!f)
		return NULL;
	buf = malloc(max + 1);
	n = buf ? fread(buf, 1, max, f) : 0;
	fclose(f);
	if (buf)
		buf[n] = '\0';
	return buf;
}

/* HMAC-SHA256 of a HEAD's body (its text without the signature line). */
static bool head_mac(const struct secret *key, const char *body, size_t len, unsigned char mac[32])
{
	unsigned maclen = 0;

	return HMAC(EVP_sha256(), key->key, (int)key->len, (const unsigned char *)body, len, mac, &maclen) &&
	       maclen == 32;
}

int head_write(int fd, const struct host_config *hc, const char *name, const struct secret *key, char *why,
	       size_t whylen)
{
	char path[CFG_PATH_MAX + 80], *config, *keys, *text, hex[2 * 32 + 1] = "";
	unsigned char mac[32];
	struct iovec iov;
	int n, rc;

	runtime_path(path, sizeof(path), hc->runtime_dir, name, RT_CONFIG);
	if (!(config = read_small_file(path, HEAD_CONFIG_MAX))) {
		snprintf(why, whylen, "cannot read domain %s's config %s: %s", name, path, strerror(errno));
		return -errno;
	}
	if (asprintf(&keys, "lodge %s\nname %s\nsaved %ld\n", LODGE_VERSION, name, (long)time(NULL)) < 0) {
		free(config);
		return -ENOMEM;
	}
	/* The body signed is the HEAD as it reads without its signature. */
	if (key && key->len) {
		n = asprintf(&text, "%sconfig\n%s", keys, config);
		if (n < 0 || !head_mac(key, text, (size_t)n, mac)) {
			if (n >= 0)
				free(text);
			free(keys);
			free(config);
			snprintf(why, whylen, "cannot sign the stream's HEAD");
			return -ENOMEM;
		}
		free(text);
		mig_hex(mac, sizeof(mac), hex);
	}
	n = asprintf(&text, "%s%s%s%sconfig\n%s", keys, hex[0] ? "signed " : "", hex, hex[0] ? "\n" : "", config);
	free(keys);
	free(config);
	if (n < 0)
		return -ENOMEM;
	iov = (struct iovec){ text, (size_t)n };
	if ((rc = state_write_magic(fd)) || (rc = state_write_section(fd, STATE_HEAD, 1, "head", &iov, 1)))
		snprintf(why, whylen, "cannot write: %s", strerror(-rc));
	free(text);
	return rc;
}

/* HEAD is lines of text.  Messages quote its version, its name and its
 * config's keys and values: any other control character (an escape
 * sequence, a carriage return, a NUL) would reach the user's terminal. */
static bool head_is_text(const char *text, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			return false;
	}
	return true;
}

int head_read(int fd, struct stream_head *h, char *why, size_t whylen)
{
	struct state_section s;
	uint8_t *p;
	char *text, *line, *cfg, *sig;
	int rc;

	memset(h, 0, sizeof(*h));
	if ((rc = state_read_magic(fd, why, whylen)))
		return rc;
	if ((rc = state_read_section(fd, &s, &p, why, whylen)))
		return rc;
	if (s.type != STATE_HEAD || s.version != 1) {
		free(p);
		snprintf(why, whylen, "no HEAD section where the stream should begin");
		return -EBADMSG;
	}
	if (!(text = realloc(p, s.len + 1))) {
		free(p);
		return -ENOMEM;
	}
	text[s.len] = '\0';
	if (!head_is_text(text, s.len)) {
		free(text);
		snprintf(why, whylen, "its HEAD section holds control characters (corrupt)");
		return -EBADMSG;
	}
	cfg = strstr(text, "\nconfig\n");
	if (!cfg || strncmp(text, "lodge ", 6) != 0) {
		free(text);
		snprintf(why, whylen, "its HEAD section is malformed");
		return -EBADMSG;
	}
	/* A signature is the line just before "config"; the body is the
	 * text without it, as it was signed. */
	sig = cfg;
	while (sig > text && sig[-1] != '\n')
		sig--;
	if (strncmp(sig, "signed ", 7) == 0) {
		*cfg = '\0';
		h->has_mac = mig_unhex(sig + 7, h->mac, sizeof(h->mac)) == 0;
		*cfg = '\n';
	} else {
		sig = cfg + 1;
	}
	h->body_len = (size_t)(sig - text) + (s.len - (size_t)(cfg + 1 - text));
	if (!(h->body = malloc(h->body_len + 1))) {
		free(text);
		return -ENOMEM;
	}
	memcpy(h->body, text, (size_t)(sig - text));
	memcpy(h->body + (sig - text), cfg + 1, s.len - (size_t)(cfg + 1 - text));
	h->body[h->body_len] = '\0';
	*cfg = '\0';
	for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, "lodge ", 6) == 0)
			snprintf(h->version, sizeof(h->version), "%s", line + 6);
		else if (strncmp(line, "name ", 5) == 0)
			snprintf(h->name, sizeof(h->name), "%s", line + 5);
		else if (strncmp(line, "saved ", 6) == 0)
			h->saved = strtol(line + 6, NULL, 10);
	}
	h->config = strdup(cfg + 8);
	free(text);
	if (!h->config) {
		head_free(h);
		return -ENOMEM;
	}
	if (strcmp(h->version, LODGE_VERSION) != 0) {
		snprintf(why, whylen, "saved by Lodge %s; this is Lodge %s", h->version, LODGE_VERSION);
		head_free(h);
		return -EPROTO;
	}
	if (!h->name[0]) {
		snprintf(why, whylen, "its HEAD section names no domain");
		head_free(h);
		return -EBADMSG;
	}
	return 0;
}

void head_free(struct stream_head *h)
{
	free(h->config);
	h->config = NULL;
	free(h->body);
	h->body = NULL;
}

bool head_signed_by(const struct stream_head *h, const struct secret *key)
{
	unsigned char want[32];

	if (!key || !key->len || !h->has_mac || !h->body || !head_mac(key, h->body, h->body_len, want))
		return false;
	return CRYPTO_memcmp(want, h->mac, sizeof(want)) == 0;
}

int head_config(const struct stream_head *h, const char *label, const struct host_config *hc,
		struct domain_config *dc, char *err, size_t errlen)
{
	char path[] = "/tmp/lodge-head-XXXXXX", msg[1024], *at;
	size_t len = strlen(h->config);
	int fd = mkstemp(path), rc;

	if (fd < 0) {
		snprintf(err, errlen, "cannot make a temporary file: %s", strerror(errno));
		return -errno;
	}
	if (write(fd, h->config, len) != (ssize_t)len) {
		rc = -errno;
		close(fd);
		unlink(path);
		snprintf(err, errlen, "cannot write a temporary file: %s", strerror(-rc));
		return rc;
	}
	close(fd);
	rc = domain_config_load(path, hc, true, dc, msg, sizeof(msg));
	unlink(path);
	if (rc) {
		/* The loader quotes the keys and values it refuses, decoding the
		 * escapes libconfuse knows ("\e", "\x1b"): as the stream chose
		 * them, each control character reaches the user as a '?'. */
		for (at = msg; *at; at++)
			if ((unsigned char)*at < 0x20 || *at == 0x7f)
				*at = '?';
		/* The loader names the file it read; the user knows the save. */
		at = strstr(msg, path);
		if (at)
			snprintf(err, errlen, "%.*s%s's config%s", (int)(at - msg), msg, label, at + strlen(path));
		else
			snprintf(err, errlen, "%s's config: %s", label, msg);
		return rc;
	}
	if (strcmp(dc->name, h->name) != 0) {
		snprintf(err, errlen, "%s: its config names domain %s, its header %s", label, dc->name, h->name);
		return -EBADMSG;
	}
	return 0;
}

/* Per page: its record word, its 4 KiB and, at worst one record a
 * section, a section's header and CRC.  Per vCPU: registers, XSAVE, MSRs
 * and the LAPIC are a few KiB; a MiB each is generous.  The devices'
 * state (queues, MSI-X tables, config space) is small and fixed. */
#define BOUND_PER_PAGE   (8 + 4096 + 48)
#define BOUND_PER_VCPU   (1ULL << 20)
#define BOUND_DEVICES    (64ULL << 20)

uint64_t head_stream_bound(const struct domain_config *dc)
{
	uint64_t mib = dc->maxmem_mib > dc->memory_mib ? dc->maxmem_mib : dc->memory_mib;

	return mib * 256 * BOUND_PER_PAGE + dc->vcpus * BOUND_PER_VCPU + BOUND_DEVICES;
}
