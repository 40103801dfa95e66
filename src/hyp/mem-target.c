/* The memory a domain should have, Xen-style: the guest's RAM is maxmem,
 * and the balloon holds back what is above the target.  mem-set moves the
 * target between a floor and maxmem; the guest's driver follows it. */
#include "domain.h"
#include "proto.h"
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

/* The ceiling mem-set may balloon up to: mem-max's, else all guest RAM. */
static unsigned long mem_ceiling(const struct domain *dom)
{
	return dom->mem_max_mib ? dom->mem_max_mib : dom->maxmem_mib;
}

static unsigned long mem_target(const struct domain *dom)
{
	struct balloon_info bi;

	virtio_balloon_info(dom->balloon, &bi);
	return dom->maxmem_mib - bi.target_pages / PAGES_PER_MIB;
}

static int parse_mib(const char *verb, const char *arg, unsigned long *mib, char *why, size_t whylen)
{
	char *end;

	errno = 0;
	*mib = arg ? strtoul(arg, &end, 10) : 0;
	if (!arg || errno || end == arg || *end || arg[0] == '-') {
		snprintf(why, whylen, "%s needs a whole number of MiB, not '%s'", verb, arg ? arg : "");
		return -EINVAL;
	}
	return 0;
}

int domain_mem_set(struct domain *dom, const char *arg, char *why, size_t whylen)
{
	unsigned long floor = domain_mem_floor(dom), mib;
	int rc;

	if ((rc = parse_mib("mem-set", arg, &mib, why, whylen)))
		return rc;
	if (mib > dom->maxmem_mib) {
		snprintf(why, whylen, "%lu MiB is above domain %s's maxmem (%lu MiB)", mib, dom->name,
			 dom->maxmem_mib);
		return -ERANGE;
	}
	if (mib > mem_ceiling(dom)) {
		snprintf(why, whylen, "%lu MiB is above domain %s's mem-max (%lu MiB; lodge mem-max raises it "
			 "up to %lu)", mib, dom->name, mem_ceiling(dom), dom->maxmem_mib);
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

/* xl's mem-max: the ceiling moves, the guest's target stays (as libxl, a
 * ceiling below the target is refused: mem-set first). */
int domain_mem_max(struct domain *dom, const char *arg, char *why, size_t whylen)
{
	unsigned long mib, target = mem_target(dom);
	int rc;

	if ((rc = parse_mib("mem-max", arg, &mib, why, whylen)))
		return rc;
	if (mib > dom->maxmem_mib) {
		snprintf(why, whylen, "%lu MiB is above domain %s's RAM (maxmem %lu MiB, fixed at its start)", mib,
			 dom->name, dom->maxmem_mib);
		return -ERANGE;
	}
	if (mib < target) {
		snprintf(why, whylen, "%lu MiB is below domain %s's current target of %lu MiB (lodge mem-set "
			 "lowers it first)", mib, dom->name, target);
		return -ERANGE;
	}
	dom->mem_max_mib = mib;
	return 0;
}

void domain_mem_status(struct domain *dom, char *buf, size_t len)
{
	struct balloon_info bi;
	unsigned long target;
	size_t n = 0;

	virtio_balloon_info(dom->balloon, &bi);
	target = dom->maxmem_mib - bi.target_pages / PAGES_PER_MIB;
	buf[0] = '\0';
	n = proto_key_printf(buf, len, n, PROTO_KEY_MAXMEM_MIB, 0, "%lu", dom->maxmem_mib);
	n = proto_key_printf(buf, len, n, PROTO_KEY_MEM_MAX_MIB, 0, "%lu", mem_ceiling(dom));
	n = proto_key_printf(buf, len, n, PROTO_KEY_TARGET_MIB, 0, "%lu", target);
	n = proto_key_printf(buf, len, n, PROTO_KEY_BALLOON_MIB, 0, "%lu", (unsigned long)(bi.actual_pages / PAGES_PER_MIB));
	if (!bi.stats_valid)
		return;
	n = proto_key_printf(buf, len, n, PROTO_KEY_GUEST_TOTAL_KIB, 0, "%llu", (unsigned long long)(bi.guest_total >> 10));
	n = proto_key_printf(buf, len, n, PROTO_KEY_GUEST_FREE_KIB, 0, "%llu", (unsigned long long)(bi.guest_free >> 10));
	proto_key_printf(buf, len, n, PROTO_KEY_GUEST_AVAIL_KIB, 0, "%llu", (unsigned long long)(bi.guest_avail >> 10));
}
