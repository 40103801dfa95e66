/* Free RAM as 4 KiB pages: a set with one bit per page.  The balloon,
 * `touch` and kalloc all draw on the one free set, so memory ballooned
 * away is memory no one else gets; the balloon keeps its own set of the
 * pages it gave the host, to give back the same ones.  Pages are taken up
 * to 64 at a time, one bitmap word, from the top of RAM down, and kalloc
 * grows from the bottom up: the two meet only when memory is exhausted.
 * A free page is never written (no free list threaded through it), so an
 * idle guest's free memory stays untouched and costs its host nothing.
 * Every instruction here may be emulated (PVM): the hot paths work on
 * whole words. */
#include "minios.h"

#define PAGE_SHIFT   12

static uint64_t free_bits[PAGESET_WORDS], balloon_bits[PAGESET_WORDS];   /* .bss */
struct pageset free_pages = { free_bits, -1, 0 };
struct pageset balloon_set = { balloon_bits, -1, 0 };
uint64_t pages_total;

static unsigned popcount64(uint64_t x)
{
	/* No popcnt instruction assumed and no libgcc: the classic bit trick. */
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (x * 0x0101010101010101ULL) >> 56;
}

void page_add_range(uint64_t start, uint64_t end)
{
	uint64_t pfn, last, *bits = free_pages.bits;

	if (end > LOW_RAM_MAX)
		end = LOW_RAM_MAX;       /* only the low GiBs are mapped cacheable */
	pfn = (start + 4095) >> PAGE_SHIFT;
	last = end >> PAGE_SHIFT;
	if (pfn >= last)
		return;
	pages_total += last - pfn;
	free_pages.count += last - pfn;
	if ((long)((last - 1) / 64) > free_pages.top)
		free_pages.top = (last - 1) / 64;
	for (; pfn < last && (pfn & 63); pfn++)
		bits[pfn / 64] |= 1ULL << (pfn & 63);
	if (pfn + 64 <= last) {           /* whole words: one rep stosb */
		uint64_t words = (last - pfn) / 64;

		memset(&bits[pfn / 64], 0xff, words * 8);
		pfn += words * 64;
	}
	for (; pfn < last; pfn++)
		bits[pfn / 64] |= 1ULL << (pfn & 63);
}

uint64_t pageset_take(struct pageset *s, unsigned want, uint64_t *base_pfn)
{
	uint64_t bits, taken = 0;

	while (s->top >= 0 && !s->bits[s->top])
		s->top--;
	if (s->top < 0 || !want)
		return 0;
	bits = s->bits[s->top];
	if (want >= 64) {
		taken = bits;
	} else {
		while (want-- && bits) {      /* the highest pages first */
			uint64_t b = 1ULL << (63 - __builtin_clzll(bits));

			taken |= b;
			bits &= ~b;
		}
	}
	s->bits[s->top] &= ~taken;
	s->count -= popcount64(taken);
	*base_pfn = (uint64_t)s->top * 64;
	return taken;
}

void pageset_give(struct pageset *s, uint64_t base_pfn, uint64_t mask)
{
	long w = base_pfn / 64;

	s->bits[w] |= mask;
	s->count += popcount64(mask);
	if (w > s->top)
		s->top = w;
}

int page_reserve(uint64_t start, uint64_t end)
{
	uint64_t pfn;

	for (pfn = start >> PAGE_SHIFT; pfn < (end + 4095) >> PAGE_SHIFT; pfn++)
		if (pfn >= PAGESET_WORDS * 64 || !(free_bits[pfn / 64] & (1ULL << (pfn & 63))))
			return -1;
	for (pfn = start >> PAGE_SHIFT; pfn < (end + 4095) >> PAGE_SHIFT; pfn++)
		free_bits[pfn / 64] &= ~(1ULL << (pfn & 63));
	free_pages.count -= ((end + 4095) >> PAGE_SHIFT) - (start >> PAGE_SHIFT);
	return 0;
}

uint64_t page_touch_free(uint64_t npages)
{
	uint64_t done = 0;
	long w;

	/* Free pages stay free: this only writes them, top down, the order
	 * the balloon will take them in. */
	for (w = free_pages.top; w >= 0 && done < npages; w--) {
		uint64_t bits = free_bits[w], a = (uint64_t)w << 18;   /* 64 pages of 4 KiB */

		if (bits == ~0ULL && npages - done >= 64) {
			uint64_t end = a + (64 << PAGE_SHIFT);

			for (; a < end; a += 4096)
				*(volatile uint64_t *)a = a;
			done += 64;
			continue;
		}
		for (; bits && done < npages; bits &= bits - 1, done++) {
			uint64_t p = a + ((uint64_t)__builtin_ctzll(bits) << PAGE_SHIFT);

			*(volatile uint64_t *)p = p;
		}
	}
	return done;
}

uint64_t page_take_run(uint64_t npages)
{
	uint64_t words = (npages + 63) / 64, run = 0;
	long w;

	if (!words)
		return 0;
	/* Whole free words only, top down: the first run of enough is taken. */
	for (w = free_pages.top; w >= 0; w--) {
		if (free_bits[w] != ~0ULL) {
			run = 0;
			continue;
		}
		if (++run == words) {
			memset(&free_bits[w], 0, words * 8);
			free_pages.count -= words * 64;
			return (uint64_t)w << 18;
		}
	}
	return 0;
}

void page_give_run(uint64_t addr, uint64_t npages)
{
	uint64_t w, words = (npages + 63) / 64;

	for (w = 0; w < words; w++)
		pageset_give(&free_pages, (addr >> PAGE_SHIFT) + w * 64, ~0ULL);
}
