/* save_load() (src/hyp/save/save.c): what lodge-hyp reads of a restored
 * or migrated domain's stream after the agent read its magic and HEAD,
 * into a small domain: 2 MiB of guest RAM between two PROT_NONE guard
 * pages, either as one range at 0 or split into 1 MiB at 0 and 1 MiB at
 * 4 GiB, and six state entries -- the platform devices COM1, acpi-pm,
 * i8042 and rtc, and two toy entries that count their loads.
 *
 * Input: one flags byte, then the sections that follow HEAD.
 *   bits 0-1  where the stream comes from: 0 or 3 a saved file (a memfd),
 *             1 a pipe (the decompressor), 2 a socket (a migration peer;
 *             the bytes after END are what the peer sends next: 'G'
 *             hands the domain over; then the peer hangs up, so no wait)
 *   bit 2     leave the CRCs as they are (else every whole section's CRC
 *             is made right, so mutations reach the section parsers)
 *   bit 3     split RAM (low and high ranges)
 *
 * Before each input every page of RAM holds a pattern of its own; the
 * harness walks the stream itself to know what the loader may do.
 * Properties, besides no crash and no ASan or UBSan report:
 *   - a refusal says why, in printable text;
 *   - RAM changes only in pages some RAM record names (every other page
 *     keeps its pattern), never outside RAM (the guard pages fault);
 *   - a load that succeeded had every registered entry's DEV section once
 *     and called its load once, RAM sections only before DEV sections,
 *     a good END, and left each named page holding its last record's
 *     bytes; from a file: no page twice, END not live, nothing after END;
 *     from a peer: END live, no more records than SAVE_MAX_ROUNDS + 2
 *     passes over RAM, and the peer heard 'S' and then 'L'.
 *   - a peer always hears 'S' first.
 *
 * LODGE_FUZZ_VERBOSE=1: each input's outcome on stderr.
 * Seeds: LODGE_FUZZ_LOAD_SEEDS=DIR replay-fuzz-load writes streams made
 * by the real writers (ram_send_touched, ram_send_bitmap, each entry's
 * save as save.c's send_state does), good and broken ones, into DIR and
 * exits. */
#include "fuzz.h"
#include "dev/devices.h"
#include "domain.h"
#include "log.h"
#include "save/ram.h"
#include "save/save.h"
#include "save/state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define RAM_SIZE     (2u << 20)
#define RAM_PAGES    (RAM_SIZE / GUEST_PAGE_SIZE)
#define SPLIT_LOW    (1u << 20)                   /* bit 3: RAM at 0 up to here, the rest at 4 GiB */
#define MAX_PASSES   32                           /* save.c's SAVE_MAX_ROUNDS + 2, for a peer */
#define HDR_LEN      40                           /* type, version, name[24], len */
#define REC_ZERO     1ULL                         /* ram.c's record flags */
#define REC_FLAGS    0xfffULL
#define END_LIVE     1u
#define MAX_ENT      8
#define PIPE_BYTES   (1 << 20)

#define F_SOURCE     3
#define F_RAW_CRC    4
#define F_SPLIT      8

enum source { SRC_FILE, SRC_PIPE, SRC_PEER };

static struct domain dom = { DOMAIN_DEFAULTS };
static uint8_t *ram;
static uint8_t baseline[RAM_SIZE];               /* each page's own pattern */

/* ---- two toy entries that count their loads ------------------------------- */

struct fixed { uint8_t mode; uint32_t word; uint8_t blob[16]; };
static struct fixed fixed;
static unsigned loads_fixed, loads_list;

static int save_fixed(void *obj, struct state_buf *b)
{
	const struct fixed *f = obj;

	state_put_u8(b, f->mode);
	state_put_u32(b, f->word);
	state_put_blob(b, f->blob, sizeof(f->blob));
	return 0;
}

static int load_fixed(void *obj, struct state_in *in, char *why, size_t whylen)
{
	struct fixed *f = obj;

	loads_fixed++;
	f->mode = state_get_u8(in);
	f->word = state_get_u32(in);
	state_get_blob(in, f->blob, sizeof(f->blob));
	if (f->mode > 3) {
		snprintf(why, whylen, "fuzz.fixed: mode %u", f->mode);
		return -EINVAL;
	}
	return 0;
}

static int save_list(void *obj, struct state_buf *b)
{
	state_put_u32(b, 2);
	state_put_blob(b, "one", 3);
	state_put_blob(b, "two", 3);
	return 0;
}

static int load_list(void *obj, struct state_in *in, char *why, size_t whylen)
{
	uint8_t item[16];
	uint32_t n = state_get_u32(in), i;

	loads_list++;
	if (n > 64) {
		snprintf(why, whylen, "fuzz.list: %u items", n);
		return -E2BIG;
	}
	for (i = 0; i < n && !in->bad; i++)
		state_get_blob_max(in, item, sizeof(item));
	return 0;
}

static const struct state_ops fixed_ops = { .save = save_fixed, .load = load_fixed, .version = 1 };
static const struct state_ops list_ops = { .save = save_list, .load = load_list, .version = 2 };

/* ---- the domain ------------------------------------------------------------ */

static unsigned nent;
static struct state_buf pristine[MAX_ENT];

static void set_layout(bool split)
{
	guest_mem_wrap(&dom.mem, ram, RAM_SIZE);
	if (split) {
		dom.mem.low_size = SPLIT_LOW;
		dom.mem.high_size = RAM_SIZE - SPLIT_LOW;
	}
}

static void setup(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, RAM_SIZE + 2 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned i;

	log_init("fuzz-load");
	log_set_level(LOG_ERR);
	FUZZ_CHECK(p != MAP_FAILED, "mmap guest RAM");
	FUZZ_CHECK(mprotect(p + pg, RAM_SIZE, PROT_READ | PROT_WRITE) == 0, "mprotect guest RAM");
	ram = p + pg;
	set_layout(false);
	for (i = 0; i < RAM_PAGES; i++)
		memset(baseline + i * GUEST_PAGE_SIZE, (uint8_t)(i * 151 + 7) | 1, GUEST_PAGE_SIZE);
	memcpy(ram, baseline, RAM_SIZE);

	/* In lodge-hyp's order: the platform devices; then ours. */
	FUZZ_CHECK(uart_create(&dom, 0x3f8, 4) != NULL, "uart_create");
	FUZZ_CHECK(acpi_pm_init(&dom) == 0, "acpi_pm_init");
	FUZZ_CHECK(i8042_init(&dom) == 0, "i8042_init");
	FUZZ_CHECK(rtc_init(&dom) == 0, "rtc_init");
	fixed = (struct fixed){ .mode = 2, .word = 0x1234, .blob = "fixed" };
	FUZZ_CHECK(state_register("fuzz.fixed", &fixed_ops, &fixed) == 0, "register fuzz.fixed");
	FUZZ_CHECK(state_register("fuzz.list", &list_ops, NULL) == 0, "register fuzz.list");
	nent = state_count();
	FUZZ_CHECK(nent == 6, "the registry holds six entries");
	for (i = 0; i < nent; i++) {
		state_buf_init(&pristine[i]);
		FUZZ_CHECK(state_save_entry(i, &pristine[i]) == 0, "save a pristine state");
	}
}

/* Every entry back as created, the load counts at zero. */
static void reset_entries(void)
{
	char why[256];
	unsigned i;

	for (i = 0; i < nent; i++)
		FUZZ_CHECK(state_load_named(state_name(i), state_version(i), pristine[i].data, pristine[i].len,
					    why, sizeof(why)) == 0, "a pristine state refused");
	loads_fixed = loads_list = 0;
}

/* ---- the stream as the harness reads it ------------------------------------- */

static void section_crc(const uint8_t *sec, uint64_t plen, uint32_t *crc)
{
	uint8_t hdr[HDR_LEN];

	memcpy(hdr, sec, HDR_LEN);
	hdr[8 + STATE_NAME_MAX - 1] = '\0';         /* as the reader sees the name */
	*crc = state_crc(state_crc(0, hdr, HDR_LEN), sec + HDR_LEN, plen);
}

/* Whole sections from s: header, payload, CRC; the length or 0. */
static size_t section_len(const uint8_t *s, size_t left)
{
	uint64_t plen;

	if (left < HDR_LEN)
		return 0;
	memcpy(&plen, s + 32, 8);
	if (plen > STATE_SECTION_MAX || plen > left - HDR_LEN || left - HDR_LEN - plen < 4)
		return 0;
	return HDR_LEN + plen + 4;
}

static void fix_crcs(uint8_t *s, size_t len)
{
	size_t off = 0, n;

	while ((n = section_len(s + off, len - off))) {
		uint32_t crc;

		section_crc(s + off, n - HDR_LEN - 4, &crc);
		memcpy(s + off + n - 4, &crc, 4);
		off += n;
	}
}

/* What the stream holds, up to its END or the first section the reader
 * cannot frame (a bad CRC included): a superset of what the loader may
 * apply, and, if it succeeded, exactly what it applied. */
struct walk {
	bool named[RAM_PAGES];         /* some record names the page */
	unsigned nrec[RAM_PAGES];
	const uint8_t *last[RAM_PAGES];   /* the last record's data, NULL: a zero page */
	uint64_t records;
	unsigned dev[MAX_ENT];         /* DEV sections per registered entry */
	bool out_of_order;             /* RAM after DEV, a HEAD, an unknown type or name */
	bool ended, end_ok;
	uint32_t end_flags;
	size_t after_end;              /* offset of the first byte after END */
};

static bool gpa_page(const struct guest_mem *m, uint64_t gpa, uint64_t *pg)
{
	if (gpa < m->low_size && m->low_size - gpa >= GUEST_PAGE_SIZE)
		*pg = gpa / GUEST_PAGE_SIZE;
	else if (gpa >= GPA_HIGH_RAM_BASE && gpa - GPA_HIGH_RAM_BASE < m->high_size &&
		 m->high_size - (gpa - GPA_HIGH_RAM_BASE) >= GUEST_PAGE_SIZE)
		*pg = (m->low_size + gpa - GPA_HIGH_RAM_BASE) / GUEST_PAGE_SIZE;
	else
		return false;
	return true;
}

static void walk_ram(struct walk *w, const uint8_t *p, uint64_t len)
{
	uint64_t off = 0;

	while (len - off >= 8) {
		uint64_t rec, pg;

		memcpy(&rec, p + off, 8);
		off += 8;
		if ((rec & REC_FLAGS & ~REC_ZERO) || !gpa_page(&dom.mem, rec & ~REC_FLAGS, &pg))
			return;                       /* the loader stops here too */
		if (!(rec & REC_ZERO) && len - off < GUEST_PAGE_SIZE)
			return;
		w->named[pg] = true;
		w->nrec[pg]++;
		w->records++;
		w->last[pg] = rec & REC_ZERO ? NULL : p + off;
		if (!(rec & REC_ZERO))
			off += GUEST_PAGE_SIZE;
	}
}

static void walk(struct walk *w, const uint8_t *s, size_t len)
{
	bool dev_seen = false;
	size_t off = 0, n;

	memset(w, 0, sizeof(*w));
	while ((n = section_len(s + off, len - off))) {
		uint32_t type, crc, want;
		uint64_t plen = n - HDR_LEN - 4;
		char name[STATE_NAME_MAX];
		const uint8_t *p = s + off + HDR_LEN;
		unsigned i;

		section_crc(s + off, plen, &crc);
		memcpy(&want, p + plen, 4);
		if (crc != want)
			return;
		memcpy(&type, s + off, 4);
		memcpy(name, s + off + 8, sizeof(name));
		name[sizeof(name) - 1] = '\0';
		off += n;
		if (type == STATE_END) {
			w->ended = true;
			w->end_ok = plen == 4;
			if (w->end_ok)
				memcpy(&w->end_flags, p, 4);
			w->after_end = off;
			return;
		}
		if (type == STATE_RAM) {
			w->out_of_order |= dev_seen;
			walk_ram(w, p, plen);
		} else if (type == STATE_DEV) {
			dev_seen = true;
			for (i = 0; i < nent && strcmp(state_name(i), name); i++)
				;
			if (i < nent)
				w->dev[i]++;
			else
				w->out_of_order = true;
		} else {
			w->out_of_order = true;
		}
	}
}

/* ---- feeding it ------------------------------------------------------------ */

static int memfd_with(const uint8_t *s, size_t len)
{
	int fd = memfd_create("fuzz-load", MFD_CLOEXEC);

	FUZZ_CHECK(fd >= 0, "memfd_create");
	FUZZ_CHECK(write(fd, s, len) == (ssize_t)len, "write to the memfd");
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* The loader's end of a pipe or socket already holding the whole stream
 * (its writer gone, or for a socket its sending half shut), or a memfd
 * when it does not fit; *src says which. */
static int stream_fd(const uint8_t *s, size_t len, enum source *src, int *peer)
{
	int fd[2], big = 8 << 20;

	*peer = -1;
	if (*src == SRC_PIPE && pipe2(fd, O_CLOEXEC) == 0) {
		fcntl(fd[1], F_SETPIPE_SZ, PIPE_BYTES);
		fcntl(fd[1], F_SETFL, O_NONBLOCK);
		if (!len || write(fd[1], s, len) == (ssize_t)len) {
			close(fd[1]);
			return fd[0];
		}
		close(fd[0]);
		close(fd[1]);
	}
	if (*src == SRC_PEER && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd) == 0) {
		size_t done = 0;
		ssize_t w = 0;

		if (setsockopt(fd[1], SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)) < 0)
			setsockopt(fd[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
		while (done < len && (w = send(fd[1], s + done, len - done, MSG_DONTWAIT | MSG_NOSIGNAL)) > 0)
			done += (size_t)w;
		if (done == len) {
			shutdown(fd[1], SHUT_WR);
			*peer = fd[1];
			return fd[0];
		}
		close(fd[0]);
		close(fd[1]);
	}
	*src = SRC_FILE;
	return memfd_with(s, len);
}

/* ---- the properties ------------------------------------------------------- */

static void check_ram(const struct walk *w, bool ok)
{
	unsigned pg;

	for (pg = 0; pg < RAM_PAGES; pg++) {
		static const uint8_t zero[GUEST_PAGE_SIZE];
		uint8_t *now = ram + (size_t)pg * GUEST_PAGE_SIZE;
		const uint8_t *was = baseline + (size_t)pg * GUEST_PAGE_SIZE;
		char msg[128];

		if (!w->named[pg] && memcmp(now, was, GUEST_PAGE_SIZE)) {
			snprintf(msg, sizeof(msg), "page %u changed, which no RAM record names", pg);
			FUZZ_CHECK(0, msg);
		}
		if (!w->named[pg])
			continue;
		if (ok && memcmp(now, w->last[pg] ? w->last[pg] : zero, GUEST_PAGE_SIZE)) {
			snprintf(msg, sizeof(msg), "page %u does not hold its last record after a good load", pg);
			FUZZ_CHECK(0, msg);
		}
		memcpy(now, was, GUEST_PAGE_SIZE);
	}
}

static void check_loaded(const struct walk *w, const uint8_t *s, size_t len, enum source src, bool live,
			 const char *heard)
{
	unsigned i, pg;

	FUZZ_CHECK(w->ended && w->end_ok, "a load succeeded without a good END");
	FUZZ_CHECK(!w->out_of_order, "a load succeeded with sections out of order or unknown");
	for (i = 0; i < nent; i++)
		FUZZ_CHECK(w->dev[i] == 1, "a load succeeded without each entry's DEV section exactly once");
	FUZZ_CHECK(loads_fixed == 1 && loads_list == 1, "a load succeeded without each entry loaded exactly once");
	if (src == SRC_PEER) {
		FUZZ_CHECK(live && (w->end_flags & END_LIVE), "a peer's stream loaded without a live END");
		FUZZ_CHECK(w->records <= (uint64_t)RAM_PAGES * MAX_PASSES, "a peer sent more records than its rounds hold");
		FUZZ_CHECK(w->after_end < len && s[w->after_end] == SAVE_GO, "a peer's stream loaded without its 'G'");
		FUZZ_CHECK(!strcmp(heard, "SL"), "the peer did not hear 'S' then 'L'");
		return;
	}
	FUZZ_CHECK(!live && !(w->end_flags & END_LIVE), "a saved file loaded as a live migration");
	FUZZ_CHECK(w->after_end == len, "a saved file loaded with bytes after its END");
	for (pg = 0; pg < RAM_PAGES; pg++)
		FUZZ_CHECK(w->nrec[pg] <= 1, "a saved file loaded with a page twice");
}

static void seeds(const char *dir);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready, verbose;
	static struct walk w;
	enum source src;
	char why[256] = "", heard[8] = "";
	uint8_t *s;
	size_t len;
	bool live = true;
	int fd, peer, rc;

	if (!ready) {
		setup();
		ready = true;
		verbose = getenv("LODGE_FUZZ_VERBOSE") != NULL;
		if (getenv("LODGE_FUZZ_LOAD_SEEDS"))
			seeds(getenv("LODGE_FUZZ_LOAD_SEEDS"));
	}
	if (size < 1)
		return 0;
	len = size - 1;
	s = malloc(len ? len : 1);
	memcpy(s, data + 1, len);
	if (!(data[0] & F_RAW_CRC))
		fix_crcs(s, len);
	set_layout(data[0] & F_SPLIT);
	src = (data[0] & F_SOURCE) == 1 ? SRC_PIPE : (data[0] & F_SOURCE) == 2 ? SRC_PEER : SRC_FILE;
	fd = stream_fd(s, len, &src, &peer);

	rc = save_load(&dom, fd, &live, why, sizeof(why));

	if (verbose)
		fprintf(stderr, "fuzz-load: source %d: %s\n", src, rc ? why : live ? "loaded, live" : "loaded");
	FUZZ_CHECK(rc == 0 || why[0] || rc == -ENOMEM, "save_load refused without saying why");
	FUZZ_CHECK(rc == 0 || fuzz_printable(why), "save_load's refusal holds a control character");
	if (peer >= 0) {
		ssize_t n = recv(peer, heard, sizeof(heard) - 1, MSG_DONTWAIT);

		heard[n > 0 ? n : 0] = '\0';
		FUZZ_CHECK(heard[0] == SAVE_READING, "a peer did not hear 'S' first");
		close(peer);
	}
	close(fd);
	walk(&w, s, len);
	if (rc == 0)
		check_loaded(&w, s, len, src, live, heard);
	check_ram(&w, rc == 0);
	reset_entries();
	free(s);
	return 0;
}

/* ---- seeds: streams by the real writers ------------------------------------ */

static void put_section(struct state_buf *b, uint32_t type, uint32_t version, const char *name,
			const void *p, uint64_t len)
{
	uint8_t hdr[HDR_LEN] = { 0 };
	uint32_t crc;

	memcpy(hdr, &type, 4);
	memcpy(hdr + 4, &version, 4);
	snprintf((char *)hdr + 8, STATE_NAME_MAX, "%s", name);
	memcpy(hdr + 32, &len, 8);
	crc = state_crc(state_crc(0, hdr, HDR_LEN), p, len);
	state_put(b, hdr, HDR_LEN);
	state_put(b, p, len);
	state_put(b, &crc, 4);
}

/* What a writer wrote into an fd, appended to b. */
static void put_fd(struct state_buf *b, int fd)
{
	off_t len = lseek(fd, 0, SEEK_END);
	uint8_t *p = malloc(len ? len : 1);

	FUZZ_CHECK(p && pread(fd, p, len, 0) == len, "read back a writer's output");
	state_put(b, p, len);
	free(p);
	close(fd);
}

/* RAM as ram_send_touched writes it: the pages that are not zero. */
static void put_touched(struct state_buf *b)
{
	struct ram_stats st = { 0 };
	int fd = memfd_create("seed", MFD_CLOEXEC);

	FUZZ_CHECK(ram_send_touched(&dom, fd, &st) == 0, "ram_send_touched");
	put_fd(b, fd);
}

/* RAM as a migration round writes it: the pages in the bitmap, zero or not. */
static void put_pages(struct state_buf *b, const unsigned *pages, unsigned n)
{
	uint64_t bitmap[RAM_PAGES / 64] = { 0 };
	struct ram_stats st = { 0 };
	int fd = memfd_create("seed", MFD_CLOEXEC);
	unsigned i;

	for (i = 0; i < n; i++)
		bitmap[pages[i] / 64] |= 1ULL << (pages[i] % 64);
	FUZZ_CHECK(ram_send_bitmap(&dom, fd, bitmap, &st) == 0, "ram_send_bitmap");
	put_fd(b, fd);
}

/* Each entry's DEV section, as send_state writes them; skip: none, or the
 * entry left out; twice: one written twice. */
static void put_state(struct state_buf *b, int skip, int twice)
{
	unsigned i;

	for (i = 0; i < nent; i++) {
		struct state_buf e;

		if ((int)i == skip)
			continue;
		state_buf_init(&e);
		FUZZ_CHECK(state_save_entry(i, &e) == 0, "save an entry");
		put_section(b, STATE_DEV, state_version(i), state_name(i), e.data, e.len);
		if ((int)i == twice)
			put_section(b, STATE_DEV, state_version(i), state_name(i), e.data, e.len);
		state_buf_free(&e);
	}
}

static void put_end(struct state_buf *b, uint32_t flags)
{
	put_section(b, STATE_END, 1, "end", &flags, sizeof(flags));
}

static void write_seed(const char *dir, const char *name, uint8_t flags, const struct state_buf *b, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FUZZ_CHECK((f = fopen(path, "wb")) != NULL, path);
	fputc(flags, f);
	if (len)
		fwrite(b->data, 1, len, f);
	fclose(f);
}

/* A guest that wrote two pages, the first and the last (in the high range
 * when split), and left the rest zero. */
static void guest_wrote(bool split)
{
	static const unsigned pages[] = { 0, RAM_PAGES - 1 };
	unsigned i;

	set_layout(split);
	memset(ram, 0, RAM_SIZE);
	for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		snprintf((char *)ram + (size_t)pages[i] * GUEST_PAGE_SIZE, 64, "page %u of a guest", pages[i]);
}

/* A whole stream after HEAD: as job_snapshot writes it (every page
 * touched, here with zero records for three more pages), or as job_live
 * does (round 0 with every page touched, then rounds with pages dirtied
 * again: page 0 is sent twice); then the entries and END. */
static void put_stream(struct state_buf *b, bool rounds, uint32_t end_flags)
{
	static const unsigned zeros[] = { 10, 11, 200 }, again[] = { 0, 12 }, one[] = { 12 };

	state_buf_init(b);
	put_touched(b);
	if (rounds) {
		put_pages(b, again, 2);
		put_pages(b, one, 1);
	} else {
		put_pages(b, zeros, 3);
	}
	put_state(b, -1, -1);
	put_end(b, end_flags);
}

static void seeds(const char *dir)
{
	struct state_buf b, t;
	uint64_t rec;

	mkdir(dir, 0755);
	guest_wrote(false);
	put_stream(&b, false, 0);
	write_seed(dir, "file", 0, &b, b.len);
	write_seed(dir, "pipe", 1, &b, b.len);
	write_seed(dir, "file-raw-crc", F_RAW_CRC, &b, b.len);
	write_seed(dir, "peer-file-end", 2, &b, b.len);
	write_seed(dir, "truncated", 0, &b, b.len - 100);
	state_put(&b, "x", 1);
	write_seed(dir, "trailing", 0, &b, b.len);
	b.data[b.len / 2] ^= 0x10;
	write_seed(dir, "crc-wrong", F_RAW_CRC, &b, b.len - 1);
	state_buf_free(&b);
	put_stream(&b, false, END_LIVE);
	write_seed(dir, "file-live-end", 0, &b, b.len);
	state_buf_free(&b);

	put_stream(&b, true, 0);
	write_seed(dir, "file-page-twice", 0, &b, b.len);
	state_buf_free(&b);
	put_stream(&b, true, END_LIVE);
	write_seed(dir, "peer-no-go", 2, &b, b.len);
	state_put_u8(&b, SAVE_GO);
	write_seed(dir, "peer", 2, &b, b.len);
	write_seed(dir, "peer-no-socket", 1, &b, b.len);
	state_buf_free(&b);

	guest_wrote(true);
	put_stream(&b, false, 0);
	write_seed(dir, "split", F_SPLIT, &b, b.len);
	write_seed(dir, "split-as-one", 0, &b, b.len);   /* a high page outside RAM */
	state_buf_free(&b);
	put_stream(&b, true, END_LIVE);
	state_put_u8(&b, SAVE_GO);
	write_seed(dir, "peer-split", 2 | F_SPLIT, &b, b.len);
	state_buf_free(&b);
	guest_wrote(false);

	state_buf_init(&b);
	put_state(&b, -1, -1);
	put_touched(&b);                    /* RAM after DEV */
	put_end(&b, 0);
	write_seed(dir, "ram-after-dev", 0, &b, b.len);
	state_buf_free(&b);

	state_buf_init(&b);
	put_touched(&b);
	put_section(&b, STATE_HEAD, 1, "head", "lodge 0.1.0\nname v\nconfig\n", 26);
	put_state(&b, -1, -1);
	put_end(&b, 0);
	write_seed(dir, "second-head", 0, &b, b.len);
	state_buf_free(&b);

	state_buf_init(&b);
	put_touched(&b);
	put_state(&b, 3, -1);
	put_end(&b, 0);
	write_seed(dir, "dev-missing", 0, &b, b.len);
	state_buf_free(&b);

	state_buf_init(&b);
	put_touched(&b);
	put_state(&b, -1, 4);
	put_end(&b, 0);
	write_seed(dir, "dev-twice", 0, &b, b.len);
	state_buf_free(&b);

	state_buf_init(&b);
	put_touched(&b);
	put_state(&b, -1, -1);
	put_section(&b, STATE_DEV, 1, "vcpu0", "", 0);
	put_end(&b, 0);
	write_seed(dir, "dev-unknown", 0, &b, b.len);
	state_buf_free(&b);

	state_buf_init(&b);
	put_touched(&b);
	put_section(&b, STATE_DEV, 7, "fuzz.fixed", "", 0);
	write_seed(dir, "dev-version", 0, &b, b.len);
	state_buf_free(&b);

	state_buf_init(&b);
	put_touched(&b);
	put_section(&b, STATE_FOURCC('N', 'O', 'P', 'E'), 1, "nope", "", 0);
	write_seed(dir, "type-unknown", 0, &b, b.len);
	state_buf_free(&b);

	state_buf_init(&b);
	put_touched(&b);
	put_state(&b, -1, -1);
	put_section(&b, STATE_END, 1, "end", "\0\0\0\0\0\0\0\0", 8);
	write_seed(dir, "end-malformed", 0, &b, b.len);
	state_buf_free(&b);

	/* Records the loader must refuse, one RAM section each. */
	state_buf_init(&t);
	rec = 0x3000 | 2;                   /* an unknown flag */
	state_put_u64(&t, rec);
	rec = RAM_SIZE | REC_ZERO;          /* past RAM */
	state_put_u64(&t, rec);
	rec = 0x5000;                       /* a page cut short */
	state_put_u64(&t, rec);
	state_put(&t, "short", 5);
	state_buf_init(&b);
	put_section(&b, STATE_RAM, 1, "ram", t.data, 8);
	write_seed(dir, "ram-flag-unknown", 0, &b, b.len);
	state_buf_free(&b);
	state_buf_init(&b);
	put_section(&b, STATE_RAM, 1, "ram", t.data + 8, 8);
	write_seed(dir, "ram-past-end", 0, &b, b.len);
	state_buf_free(&b);
	state_buf_init(&b);
	put_section(&b, STATE_RAM, 1, "ram", t.data + 16, 13);
	write_seed(dir, "ram-page-short", 0, &b, b.len);
	state_buf_free(&b);
	state_buf_init(&b);
	put_section(&b, STATE_RAM, 1, "ram", t.data + 16, 4);
	write_seed(dir, "ram-record-short", 0, &b, b.len);
	state_buf_free(&b);
	state_buf_free(&t);

	write_seed(dir, "empty", 0, NULL, 0);
	exit(0);
}
