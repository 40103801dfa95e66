/* The saved-state stream reader (src/hyp/save/stream.c) against a file or
 * a migration peer that sends anything.  Input: one flags byte (bit 0:
 * the harness recomputes every section's CRC-32, so the fuzzer gets past
 * the checksum to what follows it; bit 1: read from a pipe rather than a
 * memfd), then the stream: state_read_magic, then state_read_section until
 * END or an error, and every DEV section handed to state_load_named, as a
 * restore does.  Two entries are registered, "fuzz.fixed" (fixed fields
 * and blobs) and "fuzz.list" (a count, then that many records, each with a
 * bounded blob), whose loads use only the bounds-checked state_get_*.
 * Properties: no read past any buffer (ASan), an error always says why
 * in printable text, a payload is never above STATE_SECTION_MAX, and a
 * load accepted by state_load_named consumed its payload exactly. */
#include "fuzz.h"
#include "save/state.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HDR_LEN 40             /* type, version, name[24], len: the wire header */

struct fixed { uint8_t a; uint16_t b; uint32_t c; uint64_t d; uint8_t blob[32]; };
static struct fixed fixed;

static int load_fixed(void *obj, struct state_in *in, char *why, size_t whylen)
{
	struct fixed *f = obj;

	f->a = state_get_u8(in);
	f->b = state_get_u16(in);
	f->c = state_get_u32(in);
	f->d = state_get_u64(in);
	state_get_blob(in, f->blob, sizeof(f->blob));
	if (f->a > 3) {
		snprintf(why, whylen, "fuzz.fixed: mode %u", f->a);
		return -EINVAL;
	}
	return 0;
}

static int load_list(void *obj, struct state_in *in, char *why, size_t whylen)
{
	uint8_t name[16];
	uint32_t n = state_get_u32(in), i;

	if (n > 64) {
		snprintf(why, whylen, "fuzz.list: %u records", n);
		return -E2BIG;
	}
	for (i = 0; i < n && !in->bad; i++) {
		uint32_t len;

		state_get_u64(in);
		len = state_get_blob_max(in, name, sizeof(name));
		FUZZ_CHECK(len <= sizeof(name), "state_get_blob_max returned more than max");
	}
	return 0;
}

static const struct state_ops fixed_ops = { .load = load_fixed, .version = 1 };
static const struct state_ops list_ops = { .load = load_list, .version = 2 };

/* Make every whole section's CRC right. */
static void fix_crcs(uint8_t *s, size_t len)
{
	size_t off = 16;

	while (off + HDR_LEN <= len) {
		uint64_t plen;
		uint8_t hdr[HDR_LEN];
		uint32_t crc;

		memcpy(&plen, s + off + 32, 8);
		if (plen > len - off - HDR_LEN || len - off - HDR_LEN - plen < 4)
			return;
		memcpy(hdr, s + off, HDR_LEN);
		hdr[8 + 23] = '\0';           /* as the reader sees the name */
		crc = state_crc(state_crc(0, hdr, HDR_LEN), s + off + HDR_LEN, plen);
		memcpy(s + off + HDR_LEN + plen, &crc, 4);
		off += HDR_LEN + plen + 4;
	}
}

static int stream_fd(const uint8_t *s, size_t len, bool pipe_it)
{
	int fd, p[2];

	if (pipe_it && len <= 65536 && pipe(p) == 0) {
		fcntl(p[1], F_SETPIPE_SZ, 65536);
		if (write(p[1], s, len) == (ssize_t)len) {
			close(p[1]);
			return p[0];
		}
		close(p[0]);
		close(p[1]);
	}
	fd = memfd_create("fuzz-stream", MFD_CLOEXEC);
	FUZZ_CHECK(fd >= 0, "memfd_create");
	FUZZ_CHECK(write(fd, s, len) == (ssize_t)len, "write to the memfd");
	lseek(fd, 0, SEEK_SET);
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool registered;
	struct state_section sec;
	uint8_t *s, *payload;
	char why[256];
	int fd, rc, n;

	if (!registered) {
		FUZZ_CHECK(state_register("fuzz.fixed", &fixed_ops, &fixed) == 0, "register");
		FUZZ_CHECK(state_register("fuzz.list", &list_ops, NULL) == 0, "register");
		registered = true;
	}
	if (size < 1)
		return 0;
	s = malloc(size);
	memcpy(s, data + 1, size - 1);
	if (data[0] & 1)
		fix_crcs(s, size - 1);
	fd = stream_fd(s, size - 1, data[0] & 2);
	free(s);
	why[0] = '\0';
	rc = state_read_magic(fd, why, sizeof(why));
	FUZZ_CHECK(rc == 0 || why[0], "state_read_magic failed without saying why");
	FUZZ_CHECK(fuzz_printable(why), "a message with a control character");
	for (n = 0; rc == 0 && n < 1000; n++) {
		why[0] = '\0';
		rc = state_read_section(fd, &sec, &payload, why, sizeof(why));
		if (rc) {
			FUZZ_CHECK(why[0] || rc == -ENOMEM, "state_read_section failed without saying why");
			FUZZ_CHECK(fuzz_printable(why), "a message with a control character");
			FUZZ_CHECK(!payload, "a payload left behind by a failed read");
			break;
		}
		FUZZ_CHECK(sec.len <= STATE_SECTION_MAX, "a payload above STATE_SECTION_MAX");
		FUZZ_CHECK(memchr(sec.name, '\0', sizeof(sec.name)), "a section name without its NUL");
		if (sec.type == STATE_DEV) {
			why[0] = '\0';
			rc = state_load_named(sec.name, sec.version, payload, sec.len, why, sizeof(why));
			FUZZ_CHECK(rc == 0 || why[0], "state_load_named failed without saying why");
			FUZZ_CHECK(rc == 0 || fuzz_printable(why), "a message with a control character");
			FUZZ_CHECK(rc != 0 || strcmp(sec.name, "fuzz.fixed") || fixed.a <= 3,
				   "a refused fuzz.fixed state accepted");
			rc = 0;
		}
		free(payload);
		if (sec.type == STATE_END)
			break;
	}
	close(fd);
	return 0;
}
