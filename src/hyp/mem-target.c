/* The memory a domain should have, Xen-style: the guest's RAM is maxmem,
 * and the balloon holds back what is above the target.  mem-set moves the
 * target between a floor and maxmem; the guest's driver follows it. */
#include "domain.h"
#include "virtio/balloon.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define PAGES_PER_MIB (1u << (20 - BALLOON_PAGE_SHIFT))

/* A guest needs its kernel, stacks and rings: never balloon below 32 MiB,
 * or below what it booted with when that was less (a tiny Mini-OS). */
unsigned long domain_mem_floor(const struct domain *dom)
{
	return dom->memory_mib < MEM_FLOOR_MIB ? dom->memory_mib : MEM_FLOOR_MIB;
}

int domain_mem_set(struct domain *dom, const char *arg, char *why, size_t whylen)
{
	unsigned long floor = domain_mem_floor(dom), mib;
	char *end;

	errno = 0;
	mib = arg ? strtoul(arg, &end, 10) : 0;
	if (!arg || errno || end == arg || *end || arg[0] == '-') {
		snprintf(why, whylen, "mem-set needs a whole number of MiB, not '%s'", arg ? arg : "");
		return -EINVAL;
	}
	if (mib > dom->maxmem_mib) {
		snprintf(why, whylen, "%lu MiB is above domain %s's maxmem (%lu MiB)", mib, dom->name,
			 dom->maxmem_mib);
		return -ERANGE;
	}
	if (mib < floor) {
		snprintf(why, whylen, "%lu MiB is below the floor of %lu MiB that keeps domain %s alive",
			 mib, floor, dom->name);
		return -ERANGE;
	}
	virtio_balloon_set_target(dom->balloon, (uint32_t)((dom->maxmem_mib - mib) * PAGES_PER_MIB));
	return 0;
}

void domain_mem_status(struct domain *dom, char *buf, size_t len)
{
	struct balloon_info bi;
	unsigned long target;
	int n;

	virtio_balloon_info(dom->balloon, &bi);
	target = dom->maxmem_mib - bi.target_pages / PAGES_PER_MIB;
	n = snprintf(buf, len, "maxmem_mib %lu\ntarget_mib %lu\nballoon_mib %lu\n", dom->maxmem_mib,
		     target, (unsigned long)(bi.actual_pages / PAGES_PER_MIB));
	if (bi.stats_valid && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - n, "guest_total_kib %llu\nguest_free_kib %llu\nguest_avail_kib %llu\n",
			 (unsigned long long)(bi.guest_total >> 10), (unsigned long long)(bi.guest_free >> 10),
			 (unsigned long long)(bi.guest_avail >> 10));
}
