/* Guest memory: one host mapping of the guest's RAM, shown to the guest as
 * up to two ranges (below GPA_LOW_RAM_MAX, and from 4 GiB).  Every access a
 * device or loader makes goes through gpa_ptr(), which takes a length and
 * returns NULL unless the whole range is RAM: a guest address is never
 * turned into a pointer any other way. */
#ifndef LODGE_MEM_H
#define LODGE_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdatomic.h>

#define GUEST_PAGE_SHIFT 12
#define GUEST_PAGE_SIZE  (1u << GUEST_PAGE_SHIFT)

struct guest_mem {
	uint8_t *host;       /* ram_size bytes, MAP_NORESERVE */
	uint64_t ram_size;   /* total guest RAM */
	uint64_t low_size;   /* RAM at GPA 0 .. low_size */
	uint64_t high_size;  /* RAM at GPA 4 GiB .. 4 GiB + high_size */
	/* While a live migration runs (save/ram.c): a bit per page of RAM,
	 * by offset into host[], for pages lodge-hyp itself writes on the
	 * guest's behalf (KVM's dirty log sees only the guest's own writes).
	 * round is cleared each pre-copy round; all never is.  NULL when no
	 * migration tracks them. */
	_Atomic(_Atomic uint64_t *) dirty_round;
	_Atomic uint64_t *dirty_all;
};

/* Note that lodge-hyp is about to write [host, host+len) of guest RAM (a
 * device-writable buffer, a used ring, a discarded page): one load when no
 * migration runs. */
static inline void guest_mem_mark_dirty(const struct guest_mem *m, const void *host, uint64_t len)
{
	_Atomic uint64_t *round = atomic_load_explicit(&((struct guest_mem *)m)->dirty_round,
						       memory_order_acquire);
	uint64_t first, last, pg;

	if (!round || !len)
		return;
	first = (uint64_t)((const uint8_t *)host - m->host) >> GUEST_PAGE_SHIFT;
	last = ((uint64_t)((const uint8_t *)host - m->host) + len - 1) >> GUEST_PAGE_SHIFT;
	for (pg = first; pg <= last; pg++) {
		atomic_fetch_or_explicit(&round[pg / 64], 1ULL << (pg % 64), memory_order_relaxed);
		atomic_fetch_or_explicit(&m->dirty_all[pg / 64], 1ULL << (pg % 64), memory_order_relaxed);
	}
}

/* Map ram_size bytes lazily. Returns 0 or -errno. */
int guest_mem_init(struct guest_mem *m, uint64_t ram_size);
/* For tests and tools: wrap an existing buffer as guest RAM from GPA 0. */
void guest_mem_wrap(struct guest_mem *m, void *buf, uint64_t size);
void guest_mem_free(struct guest_mem *m);

/* Host pointer for [gpa, gpa+len), or NULL if any byte of it is not RAM. */
void *gpa_ptr(const struct guest_mem *m, uint64_t gpa, uint64_t len);
int gpa_read(const struct guest_mem *m, uint64_t gpa, void *dst, size_t len);
int gpa_write(const struct guest_mem *m, uint64_t gpa, const void *src, size_t len);
/* Give [host, host+len) of guest RAM back to the host (a ballooned page):
 * the guest's next touch of it reads zeros.  0 or -errno. */
int guest_mem_discard(const struct guest_mem *m, void *host, size_t len);
/* Optional host treatment of all guest RAM: same-page merging (KSM) and
 * transparent huge pages.  0 or -errno (e.g. -EINVAL: kernel without it). */
int guest_mem_advise(const struct guest_mem *m, bool mergeable, bool hugepages);
/* The highest GPA + 1 that is RAM. */
uint64_t guest_mem_end(const struct guest_mem *m);

#endif
