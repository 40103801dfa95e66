/* footprint_trim() (src/hyp/footprint.c): the read-only segments' pages it
 * unmaps are given back, and nothing this process wrote goes with them. */
#include "footprint.h"
#include "unit.h"

#include <fcntl.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct count {
	int pagemap;
	long present, pages;
};

/* Pages of read-only PT_LOAD segments mapped in this process, from the
 * present bit of /proc/self/pagemap (readable without privilege). */
static int count_read_only(struct dl_phdr_info *info, size_t size, void *data)
{
	struct count *c = data;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t va = (info->dlpi_addr + ph->p_vaddr) & ~(uintptr_t)4095;
		uintptr_t end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;

		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W) || strstr(info->dlpi_name, "vdso"))
			continue;
		for (; va < end; va += 4096) {
			uint64_t e = 0;

			if (pread(c->pagemap, &e, sizeof(e), (off_t)(va / 4096 * 8)) == sizeof(e) && (e >> 63))
				c->present++;
			c->pages++;
		}
	}
	return 0;
}

static long read_only_present(void)
{
	struct count c = { open("/proc/self/pagemap", O_RDONLY), 0, 0 };

	if (c.pagemap < 0)
		return -1;
	dl_iterate_phdr(count_read_only, &c);
	close(c.pagemap);
	return c.present;
}

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
/* Relocated at load (a pointer in a read-only table): in RELRO, a
 * private copy made writable once, then read-only. */
static const char *const table[] = { "relocated", "pointers" };

static int add(int a, int b)
{
	return a + b;
}

int main(void)
{
	int (*volatile fn)(int, int) = add;
	long before, after;
	uintptr_t deep;
	bool deep_was;
	char buf[64], *big;

	/* Run a good part of libc first, as lodge-hyp's start-up does. */
	snprintf(buf, sizeof(buf), "%s %d %.2f", table[0], 42, 3.5);
	big = malloc(4 << 20);
	memset(big, 1, 4 << 20);
	free(big);
	strcpy(written, "after");
	deep = deep_call();
	deep_was = page_present(deep);
	before = read_only_present();

	footprint_trim();
	after = read_only_present();

	CHECK("pagemap is readable", before > 0);
	CHECK("the read-only segments' pages are given back (at most half left)", after >= 0 && after * 2 <= before);
	if (after * 2 > before)
		printf("   read-only pages present: %ld before, %ld after\n", before, after);
	CHECK("the main stack's pages under where it runs are given back", deep_was && !page_present(deep));
	CHECK("what the process wrote is kept", strcmp(written, "after") == 0);
	CHECK("relocated read-only data is kept", strcmp(table[1], "pointers") == 0);
	CHECK("code runs again from the file", fn(2, 3) == 5 && snprintf(buf, sizeof(buf), "%d", 7) == 1 &&
	      strcmp(buf, "7") == 0);
	big = malloc(1 << 20);
	CHECK("malloc works after the heap is trimmed", big != NULL);
	free(big);
	UNIT_EXIT();
}
