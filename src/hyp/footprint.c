/* Giving back what start-up used (footprint.h). */
#include "footprint.h"

#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

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
	malloc_trim(0);
	drop_stack_below((uintptr_t)sysconf(_SC_PAGESIZE));
}
