/* Guest RAM in the stream.  A RAM section carries up to RAM_RECORDS page
 * records: a u64 with the page's guest-physical address and flags, then,
 * unless RAM_ZERO is set, the page's 4096 bytes.  Pages are copied out of
 * guest memory before the section's CRC is taken, so a guest writing the
 * page during a pre-copy round cannot make the section's checksum lie
 * (the page is dirty again and goes in a later round). */
#include "save/ram.h"
#include "save/state.h"
#include "domain.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#define RAM_RECORDS   256               /* pages per section: 1 MiB of data */
#define RAM_ZERO      1ULL              /* record flag: the page is all zeros */
#define RAM_FLAGS     0xfffULL

#define PAGEMAP_PRESENT (1ULL << 63)
#define PAGEMAP_SWAPPED (1ULL << 62)

static int pagemap_fd = -1;

/* One RAM section being filled. */
struct ram_out {
	int fd;
	uint8_t *buf;
	size_t len;
	unsigned records;
	struct ram_stats *st;
};

static uint64_t ram_pages(const struct domain *dom)
{
	return dom->mem.ram_size >> GUEST_PAGE_SHIFT;
}

uint64_t ram_bitmap_words(const struct domain *dom)
{
	return (ram_pages(dom) + 63) / 64;
}

/* Offset into guest RAM to guest-physical address. */
static uint64_t page_gpa(const struct domain *dom, uint64_t pg)
{
	uint64_t off = pg << GUEST_PAGE_SHIFT;

	return off < dom->mem.low_size ? off : GPA_HIGH_RAM_BASE + (off - dom->mem.low_size);
}

static bool page_is_zero(const uint8_t *p)
{
	const uint64_t *w = (const uint64_t *)p;
	unsigned i;

	for (i = 0; i < GUEST_PAGE_SIZE / 8; i += 4)
		if (w[i] | w[i + 1] | w[i + 2] | w[i + 3])
			return false;
	return true;
}

int ram_init(struct domain *dom)
{
	if (pagemap_fd < 0)
		pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	return pagemap_fd < 0 ? -errno : 0;
}

static int ram_flush(struct ram_out *o)
{
	struct iovec iov = { o->buf, o->len };
	int rc;

	if (!o->records)
		return 0;
	rc = state_write_section(o->fd, STATE_RAM, 1, "ram", &iov, 1);
	if (rc)
		return rc;
	o->st->pages += o->records;
	o->st->bytes += o->len + 48;
	o->len = 0;
	o->records = 0;
	return 0;
}

static int ram_add(struct ram_out *o, struct domain *dom, uint64_t pg, bool skip_zero)
{
	const uint8_t *page = dom->mem.host + (pg << GUEST_PAGE_SHIFT);
	uint64_t rec = page_gpa(dom, pg);
	uint8_t *dst = o->buf + o->len + 8;

	/* Copy first, then look: the guest may be writing it right now. */
	memcpy(dst, page, GUEST_PAGE_SIZE);
	if (page_is_zero(dst)) {
		if (skip_zero)
			return 0;
		rec |= RAM_ZERO;
	}
	memcpy(o->buf + o->len, &rec, 8);
	o->len += 8 + (rec & RAM_ZERO ? 0 : GUEST_PAGE_SIZE);
	if (++o->records == RAM_RECORDS)
		return ram_flush(o);
	return 0;
}

static int ram_out_init(struct ram_out *o, int fd, struct ram_stats *st)
{
	*o = (struct ram_out){ .fd = fd, .st = st };
	o->buf = malloc(RAM_RECORDS * (8 + GUEST_PAGE_SIZE));
	return o->buf ? 0 : -ENOMEM;
}

int ram_send_touched(struct domain *dom, int fd, struct ram_stats *st)
{
	enum { CHUNK = 4096 };
	uint64_t *map = malloc(CHUNK * sizeof(*map)), npages = ram_pages(dom), pg, i;
	struct ram_out o;
	int rc;

	if (!map || (rc = ram_out_init(&o, fd, st))) {
		free(map);
		return -ENOMEM;
	}
	rc = 0;
	for (pg = 0; pg < npages && !rc; pg += CHUNK) {
		uint64_t n = npages - pg < CHUNK ? npages - pg : CHUNK;
		off_t at = (off_t)(((uintptr_t)dom->mem.host >> GUEST_PAGE_SHIFT) + pg) * 8;

		/* Without pagemap every page is a candidate; zeros are still skipped. */
		if (pagemap_fd < 0 || pread(pagemap_fd, map, n * 8, at) != (ssize_t)(n * 8))
			for (i = 0; i < n; i++)
				map[i] = PAGEMAP_PRESENT;
		for (i = 0; i < n && !rc; i++)
			if (map[i] & (PAGEMAP_PRESENT | PAGEMAP_SWAPPED))
				rc = ram_add(&o, dom, pg + i, true);
	}
	if (!rc)
		rc = ram_flush(&o);
	free(o.buf);
	free(map);
	return rc;
}

int ram_send_bitmap(struct domain *dom, int fd, const uint64_t *bitmap, struct ram_stats *st)
{
	uint64_t words = ram_bitmap_words(dom), w;
	struct ram_out o;
	int rc;

	if ((rc = ram_out_init(&o, fd, st)))
		return rc;
	for (w = 0; w < words && !rc; w++) {
		uint64_t bits = bitmap[w];

		while (bits && !rc) {
			unsigned b = __builtin_ctzll(bits);

			bits &= bits - 1;
			rc = ram_add(&o, dom, w * 64 + b, false);
		}
	}
	if (!rc)
		rc = ram_flush(&o);
	free(o.buf);
	return rc;
}

/* ---- dirty tracking ------------------------------------------------------ */

/* The KVM memory slots as kvm_create_vm() made them: 0 low RAM, 1 high. */
static int set_slot_logging(struct domain *dom, bool on)
{
	struct kvm_userspace_memory_region r[2] = {
		{ .slot = 0, .guest_phys_addr = 0, .memory_size = dom->mem.low_size,
		  .userspace_addr = (uintptr_t)dom->mem.host },
		{ .slot = 1, .guest_phys_addr = GPA_HIGH_RAM_BASE, .memory_size = dom->mem.high_size,
		  .userspace_addr = (uintptr_t)(dom->mem.host + dom->mem.low_size) },
	};
	unsigned i;

	for (i = 0; i < 2; i++) {
		if (!r[i].memory_size)
			continue;
		r[i].flags = on ? KVM_MEM_LOG_DIRTY_PAGES : 0;
		if (ioctl(dom->vm_fd, KVM_SET_USER_MEMORY_REGION, &r[i]) < 0)
			return -errno;
	}
	return 0;
}

/* OR slot's dirty log (fetched and cleared by KVM) into bitmap at page first. */
static int fetch_slot_log(struct domain *dom, unsigned slot, uint64_t first, uint64_t pages,
			  uint64_t *bitmap)
{
	uint64_t words = (pages + 63) / 64, i;
	uint64_t *log;
	struct kvm_dirty_log d = { .slot = slot };

	if (!pages)
		return 0;
	if (!(log = calloc(words, 8)))
		return -ENOMEM;
	d.dirty_bitmap = log;
	if (ioctl(dom->vm_fd, KVM_GET_DIRTY_LOG, &d) < 0) {
		free(log);
		return -errno;
	}
	/* first is a multiple of 64 pages (low RAM ends on a 1 GiB boundary or
	 * at the end of RAM), so words line up. */
	for (i = 0; i < words; i++)
		bitmap[first / 64 + i] |= log[i];
	free(log);
	return 0;
}

int ram_track_start(struct domain *dom)
{
	uint64_t words = ram_bitmap_words(dom);
	_Atomic uint64_t *round = calloc(words, 8), *all = calloc(words, 8);
	uint64_t *scratch = calloc(words, 8);
	int rc;

	if (!round || !all || !scratch) {
		free((void *)round);
		free((void *)all);
		free(scratch);
		return -ENOMEM;
	}
	if ((dom->mem.low_size >> GUEST_PAGE_SHIFT) % 64 && dom->mem.high_size) {
		free((void *)round);
		free((void *)all);
		free(scratch);
		return -EINVAL;    /* cannot happen: low RAM is whole GiBs when high RAM exists */
	}
	dom->mem.dirty_all = all;
	atomic_store_explicit(&dom->mem.dirty_round, round, memory_order_release);
	if ((rc = set_slot_logging(dom, true))) {
		ram_track_stop(dom);
		free(scratch);
		return rc;
	}
	/* Start from a clean log: everything before now goes in the first pass. */
	rc = fetch_slot_log(dom, 0, 0, dom->mem.low_size >> GUEST_PAGE_SHIFT, scratch);
	if (!rc)
		rc = fetch_slot_log(dom, 1, dom->mem.low_size >> GUEST_PAGE_SHIFT,
				    dom->mem.high_size >> GUEST_PAGE_SHIFT, scratch);
	free(scratch);
	if (rc)
		ram_track_stop(dom);
	return rc;
}

void ram_track_stop(struct domain *dom)
{
	_Atomic uint64_t *round = atomic_exchange(&dom->mem.dirty_round, NULL);

	if (dom->vm_fd >= 0 && set_slot_logging(dom, false))
		log_warn("cannot turn KVM's dirty log off: %s", strerror(errno));
	/* A device thread may have loaded the old pointer just now; the
	 * tracking memory is small, so leaking it is safer than a free that
	 * races with a late mark. */
	(void)round;
}

long ram_collect_dirty(struct domain *dom, uint64_t *bitmap, bool final)
{
	_Atomic uint64_t *round = atomic_load(&dom->mem.dirty_round);
	uint64_t words = ram_bitmap_words(dom), w;
	long count = 0;
	int rc;

	if (!round)
		return -EINVAL;
	memset(bitmap, 0, words * 8);
	rc = fetch_slot_log(dom, 0, 0, dom->mem.low_size >> GUEST_PAGE_SHIFT, bitmap);
	if (!rc)
		rc = fetch_slot_log(dom, 1, dom->mem.low_size >> GUEST_PAGE_SHIFT,
				    dom->mem.high_size >> GUEST_PAGE_SHIFT, bitmap);
	if (rc)
		return rc;
	for (w = 0; w < words; w++) {
		bitmap[w] |= atomic_exchange_explicit(&round[w], 0, memory_order_relaxed);
		if (final)
			bitmap[w] |= atomic_load_explicit(&dom->mem.dirty_all[w], memory_order_relaxed);
		count += __builtin_popcountll(bitmap[w]);
	}
	return count;
}

/* ---- receiving ------------------------------------------------------------ */

int ram_loader_init(struct ram_loader *ld, const struct domain *dom, unsigned max_passes)
{
	ld->records = 0;
	ld->max_records = ram_pages(dom) * (max_passes ? max_passes : 1);
	ld->seen = NULL;
	if (max_passes <= 1 && !(ld->seen = calloc(ram_bitmap_words(dom) ? ram_bitmap_words(dom) : 1, 8)))
		return -ENOMEM;
	return 0;
}

void ram_loader_free(struct ram_loader *ld)
{
	free(ld->seen);
	ld->seen = NULL;
}

/* The page index of a guest-physical address inside RAM (page_gpa's inverse). */
static uint64_t gpa_page(const struct domain *dom, uint64_t gpa)
{
	return (gpa < dom->mem.low_size ? gpa : dom->mem.low_size + (gpa - GPA_HIGH_RAM_BASE)) >> GUEST_PAGE_SHIFT;
}

int ram_load_section(struct domain *dom, struct ram_loader *ld, const uint8_t *p, uint64_t len,
		     char *why, size_t whylen)
{
	uint64_t off = 0;

	while (off < len) {
		uint64_t rec, gpa, pg;
		uint8_t *dst;

		if (len - off < 8) {
			snprintf(why, whylen, "a RAM record is cut short");
			return -EBADMSG;
		}
		memcpy(&rec, p + off, 8);
		off += 8;
		gpa = rec & ~RAM_FLAGS;
		if (rec & RAM_FLAGS & ~RAM_ZERO) {
			snprintf(why, whylen, "a RAM record for page %#llx has unknown flags %#llx",
				 (unsigned long long)gpa, (unsigned long long)(rec & RAM_FLAGS & ~RAM_ZERO));
			return -EBADMSG;
		}
		if (!(dst = gpa_ptr(&dom->mem, gpa, GUEST_PAGE_SIZE))) {
			snprintf(why, whylen, "a RAM record names page %#llx, which is not this guest's RAM",
				 (unsigned long long)gpa);
			return -EBADMSG;
		}
		if (++ld->records > ld->max_records) {
			snprintf(why, whylen, "more page records than a stream of this guest's size can hold (%llu)",
				 (unsigned long long)ld->max_records);
			return -EBADMSG;
		}
		pg = gpa_page(dom, gpa);
		if (ld->seen) {
			if (ld->seen[pg / 64] & (1ULL << (pg % 64))) {
				snprintf(why, whylen, "page %#llx is in the saved file twice",
					 (unsigned long long)gpa);
				return -EBADMSG;
			}
			ld->seen[pg / 64] |= 1ULL << (pg % 64);
		}
		if (rec & RAM_ZERO) {
			/* Reading a page never touched costs nothing; writing would. */
			if (!page_is_zero(dst))
				memset(dst, 0, GUEST_PAGE_SIZE);
			continue;
		}
		if (len - off < GUEST_PAGE_SIZE) {
			snprintf(why, whylen, "a RAM record's page is cut short");
			return -EBADMSG;
		}
		memcpy(dst, p + off, GUEST_PAGE_SIZE);
		off += GUEST_PAGE_SIZE;
	}
	return 0;
}
