/* Guest RAM and the only way to reach it: bounds-checked accessors. */
#include "mem.h"
#include "platform.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

int guest_mem_init(struct guest_mem *m, uint64_t ram_size)
{
	const uint64_t huge = 2ULL << 20;
	uint8_t *p, *start;
	uint64_t head, map_size = ram_size + huge;

	/* MAP_NORESERVE: an idle guest costs only the pages it touches.
	 * Aligned to 2 MiB (mapped 2 MiB larger, the ends cut off): guest
	 * physical 2 MiB frames then fall on host 2 MiB frames, so that
	 * transparent huge pages (hugepages = 1) can back them, and KVM can
	 * map them huge, on kernels that do not align large mappings. */
	p = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	start = (uint8_t *)(((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1));
	head = start - p;
	if (head)
		munmap(p, head);
	if (map_size - head - ram_size)
		munmap(start + ram_size, map_size - head - ram_size);
	*m = (struct guest_mem){ 0 };
	m->host = start;
	m->ram_size = ram_size;
	m->low_size = ram_size < GPA_LOW_RAM_MAX ? ram_size : GPA_LOW_RAM_MAX;
	m->high_size = ram_size - m->low_size;
	return 0;
}

void guest_mem_wrap(struct guest_mem *m, void *buf, uint64_t size)
{
	*m = (struct guest_mem){ 0 };     /* no migration tracks it */
	m->host = buf;
	m->ram_size = size;
	m->low_size = size;
	m->high_size = 0;
}

void guest_mem_free(struct guest_mem *m)
{
	if (m->host)
		munmap(m->host, m->ram_size);
	m->host = NULL;
}

void *gpa_ptr(const struct guest_mem *m, uint64_t gpa, uint64_t len)
{
	/* Written so that no sum can overflow: compare against what is left. */
	if (gpa < m->low_size) {
		if (len > m->low_size - gpa)
			return NULL;
		return m->host + gpa;
	}
	if (gpa >= GPA_HIGH_RAM_BASE && gpa - GPA_HIGH_RAM_BASE < m->high_size) {
		uint64_t off = gpa - GPA_HIGH_RAM_BASE;

		if (len > m->high_size - off)
			return NULL;
		return m->host + m->low_size + off;
	}
	return NULL;
}

int gpa_read(const struct guest_mem *m, uint64_t gpa, void *dst, size_t len)
{
	const void *p = gpa_ptr(m, gpa, len);

	if (!p)
		return -EFAULT;
	memcpy(dst, p, len);
	return 0;
}

int gpa_write(const struct guest_mem *m, uint64_t gpa, const void *src, size_t len)
{
	void *p = gpa_ptr(m, gpa, len);

	if (!p)
		return -EFAULT;
	memcpy(p, src, len);
	return 0;
}

uint64_t guest_mem_end(const struct guest_mem *m)
{
	return m->high_size ? GPA_HIGH_RAM_BASE + m->high_size : m->low_size;
}

int guest_mem_discard(const struct guest_mem *m, void *host, size_t len)
{
	/* RAM is a private anonymous mapping (guest_mem_init): MADV_DONTNEED
	 * frees the pages at once and a later touch faults in zeros.  Were it
	 * ever a shared or memfd mapping, this would have to be MADV_REMOVE,
	 * which punches the hole in the backing object too. */
	guest_mem_mark_dirty(m, host, len);     /* it reads zeros now: a migration must say so */
	if (madvise(host, len, MADV_DONTNEED) < 0)
		return -errno;
	return 0;
}

int guest_mem_advise(const struct guest_mem *m, bool mergeable, bool hugepages)
{
	if (mergeable && madvise(m->host, m->ram_size, MADV_MERGEABLE) < 0)
		return -errno;
	if (hugepages && madvise(m->host, m->ram_size, MADV_HUGEPAGE) < 0)
		return -errno;
	return 0;
}
