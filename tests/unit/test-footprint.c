/* footprint_trim() (src/hyp/footprint.c): the heap's freed pages and the
 * main stack's dead pages are given back; nothing the process still uses
 * goes with them. */
#include "footprint.h"
#include "unit.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool page_present(uintptr_t va)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	uint64_t e = 0;

	if (fd >= 0 && pread(fd, &e, sizeof(e), (off_t)(va / 4096 * 8)) != sizeof(e))
		e = 0;
	if (fd >= 0)
		close(fd);
	return e >> 63;
}

/* Resident KiB of the [heap] mapping, from /proc/self/smaps; -1 if none. */
static long heap_rss_kib(void)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in_heap = false;
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') && strchr(line, '-') < strchr(line, ' '))
			in_heap = strstr(line, "[heap]") != NULL;
		else if (in_heap && sscanf(line, "Rss: %ld kB", &kib) == 1)
			break;
	}
	fclose(f);
	return kib;
}

/* A deep call, as start-up's: where its buffer was on the main stack. */
static __attribute__((noinline)) uintptr_t deep_call(void)
{
	volatile char buf[96 << 10];
	size_t i;

	for (i = 0; i < sizeof(buf); i += 4096)
		buf[i] = 1;
	return (uintptr_t)&buf[0];
}

/* Written after start: a copy of its page is this process's own. */
static char written[8192] = "before";

#define SMALL 4096

int main(void)
{
	static char *small[SMALL];
	long heap_before, heap_after;
	uintptr_t deep;
	bool deep_was;
	char *kept;
	int i;

	/* Start-up's small allocations, freed: below the mmap threshold, so
	 * on the heap, which free() alone does not give back (one is kept
	 * at the top so the heap cannot merely shrink). */
	for (i = 0; i < SMALL; i++) {
		small[i] = malloc(1000);
		memset(small[i], 1, 1000);
	}
	kept = malloc(64);
	strcpy(kept, "still here");
	for (i = 0; i < SMALL; i++)
		free(small[i]);
	strcpy(written, "after");
	deep = deep_call();
	deep_was = page_present(deep);
	heap_before = heap_rss_kib();

	footprint_trim();
	heap_after = heap_rss_kib();

#ifdef __SANITIZE_ADDRESS__
	/* ASan's allocator, not glibc's, holds what malloc gave: no [heap]. */
	(void)heap_before;
	(void)heap_after;
	printf("SKIP: the heap's freed pages are given back: ASan's allocator is not glibc's\n");
#else
	CHECK("the heap's freed pages are given back (at most half left)",
	      heap_before > 1000 && heap_after >= 0 && heap_after * 2 <= heap_before);
	if (!(heap_after * 2 <= heap_before))
		printf("   [heap] Rss: %ld KiB before, %ld KiB after\n", heap_before, heap_after);
#endif
	CHECK("the main stack's pages under where it runs are given back", deep_was && !page_present(deep));
	CHECK("what the process wrote is kept", strcmp(written, "after") == 0);
	CHECK("a live allocation is kept", strcmp(kept, "still here") == 0);
	free(kept);
	kept = malloc(1 << 20);
	CHECK("malloc works after the heap is trimmed", kept != NULL);
	free(kept);
	UNIT_EXIT();
}
