/* Giving back what start-up mapped (footprint.h). */
#include "footprint.h"

#include <link.h>
#include <malloc.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Enough for lodge-hyp and its libraries' read-only segments (3 or 4 each). */
#define RANGES_MAX 64

struct ranges {
	uintptr_t page;
	unsigned n;
	struct { uintptr_t start, end; } r[RANGES_MAX];
};

/* Only collected here: the program headers read are in the first segment,
 * and unmapping it before the last is read would fault it back at once. */
static int collect_read_only(struct dl_phdr_info *info, size_t size, void *data)
{
	struct ranges *rs = data;
	int i;

	(void)size;
	if (info->dlpi_name && strstr(info->dlpi_name, "vdso"))
		return 0;
	for (i = 0; i < info->dlpi_phnum && rs->n < RANGES_MAX; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;

		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
			continue;
		start = (start + rs->page - 1) & ~(rs->page - 1);
		end &= ~(rs->page - 1);
		if (end > start) {
			rs->r[rs->n].start = start;
			rs->r[rs->n++].end = end;
		}
	}
	return 0;
}

/* The main thread's stack below where it runs now is dead (start-up's
 * deeper calls, its large buffers).  Only this far down: the kernel keeps
 * 1 MiB (stack_guard_gap) free under the stack, so nothing else is mapped
 * there, and a hole in the range is skipped.  A thread's stack has other
 * mappings under it: not touched. */
#define STACK_DROP_MAX (256 << 10)

static void drop_stack_below(uintptr_t page)
{
	uintptr_t here = ((uintptr_t)__builtin_frame_address(0) & ~(page - 1)) - page;

	if (gettid() == getpid() && here > STACK_DROP_MAX)
		madvise((void *)(here - STACK_DROP_MAX), STACK_DROP_MAX, MADV_DONTNEED);
}

void footprint_trim(void)
{
	static struct ranges rs;
	unsigned i;

	malloc_trim(0);
	rs.page = (uintptr_t)sysconf(_SC_PAGESIZE);
	rs.n = 0;
	dl_iterate_phdr(collect_read_only, &rs);
	for (i = 0; i < rs.n; i++)
		madvise((void *)rs.r[i].start, rs.r[i].end - rs.r[i].start, MADV_DONTNEED);
	drop_stack_below(rs.page);
}
