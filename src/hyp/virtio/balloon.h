/* virtio-balloon: the host asks the guest to give back (or take again)
 * memory; see balloon.c. */
#ifndef LODGE_VIRTIO_BALLOON_H
#define LODGE_VIRTIO_BALLOON_H

#include <stdbool.h>
#include <stdint.h>

struct domain;
struct guest_mem;
struct virtio_balloon;

#define BALLOON_PAGE_SHIFT 12          /* PFNs are 4 KiB frames whatever the host's page size */

/* What the control socket reports: pages the device wants in the balloon,
 * pages the driver says it holds there, and the guest's own figures from
 * the stats queue (stats_valid once the driver has reported any). */
struct balloon_info {
	uint32_t target_pages;
	uint32_t actual_pages;
	bool stats_valid;
	uint64_t guest_total, guest_free, guest_avail;   /* bytes, as the guest counts */
	uint64_t inflated_pages, deflated_pages;         /* PFNs received, for the log */
};

/* A balloon whose device starts wanting target_pages (maxmem - memory). */
int virtio_balloon_create(struct domain *dom, uint32_t target_pages, struct virtio_balloon **out);
/* Ask for target_pages in the balloon and tell the driver (config change). */
void virtio_balloon_set_target(struct virtio_balloon *b, uint32_t target_pages);
void virtio_balloon_info(struct virtio_balloon *b, struct balloon_info *out);

/* The host address of 4 KiB guest frame pfn, or NULL unless the whole
 * frame is guest RAM.  Every PFN the guest sends goes through this. */
void *balloon_pfn_ptr(const struct guest_mem *mem, uint32_t pfn);

#endif
