/* Guest RAM in the saved-state stream: the pages a guest ever touched, and
 * for live migration the pages dirtied since they were last sent, found
 * with KVM's dirty log (the guest's own writes) and guest_mem's dirty
 * bitmaps (lodge-hyp's writes on its behalf). */
#ifndef LODGE_SAVE_RAM_H
#define LODGE_SAVE_RAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct domain;

struct ram_stats {
	uint64_t pages;        /* page records written, data or zero */
	uint64_t bytes;        /* stream bytes written */
};

/* Open what finding touched pages needs (/proc/self/pagemap), while the
 * process may still open files.  0 or -errno. */
int ram_init(struct domain *dom);

/* Write every page the guest has touched (resident or swapped), skipping
 * those that hold only zeros: the receiver's RAM starts zeroed. */
int ram_send_touched(struct domain *dom, int fd, struct ram_stats *st);

/* Live migration: start tracking dirty pages (KVM_MEM_LOG_DIRTY_PAGES on
 * every slot, guest_mem's bitmaps), stop again. */
int ram_track_start(struct domain *dom);
void ram_track_stop(struct domain *dom);
/* Collect the pages dirtied since the last call into the caller's bitmap
 * (a bit per page of RAM, ram_bitmap_words() words); final: also every
 * page lodge-hyp wrote since tracking began (a device write that was in
 * flight when its page was last sent).  Returns the page count or -errno. */
long ram_collect_dirty(struct domain *dom, uint64_t *bitmap, bool final);
uint64_t ram_bitmap_words(const struct domain *dom);
/* Write the pages in bitmap (a zero page as a record without data). */
int ram_send_bitmap(struct domain *dom, int fd, const uint64_t *bitmap, struct ram_stats *st);

/* Receiving.  A stream is untrusted: what it may put in RAM is bounded by
 * the guest's size.  A saved file holds each page at most once; a live
 * migration sends a page again in each round it was dirtied, so at most
 * max_passes times the guest's pages in all. */
struct ram_loader {
	uint64_t *seen;            /* a bit per page (max_passes 1), else NULL */
	uint64_t records, max_records;
};
int ram_loader_init(struct ram_loader *ld, const struct domain *dom, unsigned max_passes);
void ram_loader_free(struct ram_loader *ld);
/* Apply one RAM section's records to guest memory. 0, or -EBADMSG with why. */
int ram_load_section(struct domain *dom, struct ram_loader *ld, const uint8_t *p, uint64_t len,
		     char *why, size_t whylen);

#endif
