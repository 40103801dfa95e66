/* virtio-balloon driver (virtio 1.2 section 5.5).  The host's num_pages
 * says how many 4 KiB pages it wants; the driver takes them from the free
 * pool (page.c) and hands their PFNs over on the inflate queue, or gives
 * pages back to the pool after telling the host on the deflate queue, and
 * writes the count it holds to `actual`.  It follows num_pages from the
 * idle loop, woken by the config-change interrupt, and answers the stats
 * queue with free, total and available memory.  That needs MSI-X, which
 * lodge-hyp always offers; a device without it (QEMU's virtio-balloon-pci
 * has none, and Mini-OS takes no INTx) is followed whenever something else
 * wakes the idle loop, e.g. a key on the console, and its completions are
 * polled rather than waited for.
 *
 * DEFLATE_ON_OOM is not taken: Mini-OS holds the target strictly, so
 * `touch` fails when memory is ballooned away, which is what the tests
 * look for. */
#include "io.h"
#include "minios.h"
#include "pci.h"
#include "virtio.h"

#define VIRTIO_ID_BALLOON   5
#define F_STATS_VQ          1
#define CFG_NUM_PAGES       0
#define CFG_ACTUAL          4
#define PFNS_PER_REQ        1024          /* one page of le32 PFNs */
#define MAX_WORDS           (PFNS_PER_REQ / 64)   /* pool words one request draws on */
#define S_MEMFREE           4
#define S_MEMTOT            5
#define S_AVAIL             6

struct stat { uint16_t tag; uint64_t val; } __attribute__((packed));

static struct {
	struct vdev v;
	struct vq inflate, deflate, stats;
	uint32_t *pfns;
	struct stat *stat;
	int present, broken;
	int msix;                             /* interrupts come: wait with hlt */
	uint32_t shown_target;                /* last target printed, in pages */
} b;

/* Send n PFNs on q and wait for the host to take them. */
static int balloon_send(struct vq *q, unsigned n)
{
	struct vbuf buf = { (uint64_t)b.pfns, n * 4, 0 };

	if (vq_add(q, &buf, 1) < 0)
		return -1;
	vq_kick(q);
	for (;;) {
		/* Interrupts off while looking, so the completion's interrupt
		 * cannot slip in between the look and the hlt (sti;hlt). */
		irq_disable();
		if (vq_get(q, NULL) >= 0)
			break;
		if (virtio_status(&b.v) & 64) {
			irq_enable();
			printf("balloon: the device needs reset; giving up\n");
			b.broken = 1;
			return -1;
		}
		if (b.msix) {
			idle();
		} else {
			irq_enable();
			cpu_relax();
		}
	}
	irq_enable();
	return 0;
}

static void balloon_set_actual(void)
{
	mmio_write32(b.v.device + CFG_ACTUAL, (uint32_t)balloon_set.count);
}

/* Up to PFNS_PER_REQ pages moved from one set to the other, told to the
 * host on q first: inflate is free_pages to balloon_set on the inflate
 * queue, deflate the reverse on the deflate queue.  Pages the host did not
 * take go back where they came from. */
static int balloon_move(struct vq *q, struct pageset *from, struct pageset *to, uint64_t want)
{
	uint64_t masks[MAX_WORDS], bases[MAX_WORDS];
	unsigned n = 0, nw = 0, i;

	if (want > PFNS_PER_REQ)
		want = PFNS_PER_REQ;
	while (n < want && nw < MAX_WORDS) {   /* partial words: fewer than 64 pages each */
		uint64_t base, m = pageset_take(from, want - n < 64 ? want - n : 64, &base), bits;

		if (!m)
			break;
		masks[nw] = m;
		bases[nw++] = base;
		for (bits = m; bits; bits &= bits - 1)
			b.pfns[n++] = base + __builtin_ctzll(bits);
	}
	if (!n)
		return -1;                        /* nothing left to move */
	if (balloon_send(q, n))
		to = from;
	for (i = 0; i < nw; i++)
		pageset_give(to, bases[i], masks[i]);
	return to == from ? -1 : 0;
}

static void balloon_post_stats(void)
{
	struct vbuf buf = { (uint64_t)b.stat, 3 * sizeof(struct stat), 0 };
	/* Total is all the RAM the guest may use (kernel included), as mem prints it. */
	uint64_t usable = (ram_mib() << 20) - (balloon_set.count << 12), free = free_pages.count << 12;

	b.stat[0] = (struct stat){ S_MEMFREE, free };
	b.stat[1] = (struct stat){ S_MEMTOT, usable };
	b.stat[2] = (struct stat){ S_AVAIL, free };     /* no caches to drop */
	if (vq_add(&b.stats, &buf, 1) >= 0)
		vq_kick(&b.stats);
}

/* Move toward num_pages; print once the target is reached (or cannot be). */
static void balloon_follow(void)
{
	uint32_t target = mmio_read32(b.v.device + CFG_NUM_PAGES);
	int rc = 0;

	while (!b.broken && rc == 0 && balloon_set.count != target) {
		if (balloon_set.count < target)
			rc = balloon_move(&b.inflate, &free_pages, &balloon_set, target - balloon_set.count);
		else
			rc = balloon_move(&b.deflate, &balloon_set, &free_pages, balloon_set.count - target);
		balloon_set_actual();
		/* The host may have moved the target meanwhile: follow the new one. */
		target = mmio_read32(b.v.device + CFG_NUM_PAGES);
	}
	if (target != b.shown_target) {
		b.shown_target = target;
		printf("balloon: target %lu MiB, usable %lu MiB%s\n", ram_mib() - (target >> 8),
		       ram_mib() - (balloon_set.count >> 8),
		       balloon_set.count < target ? " (no more free memory to give)" : "");
	}
}

void balloon_poll(void)
{
	if (!b.present || b.broken)
		return;
	balloon_follow();
	if (b.v.features & (1ULL << F_STATS_VQ))
		while (vq_get(&b.stats, NULL) >= 0)     /* the host wants fresh figures */
			balloon_post_stats();
}

void balloon_init(void)
{
	if (virtio_find(VIRTIO_ID_BALLOON, 0, &b.v) || virtio_init(&b.v, 1ULL << F_STATS_VQ) ||
	    virtio_vq_setup(&b.v, 0, &b.inflate, 4) || virtio_vq_setup(&b.v, 1, &b.deflate, 4))
		return;
	if ((b.v.features & (1ULL << F_STATS_VQ)) && virtio_vq_setup(&b.v, 2, &b.stats, 4))
		return;
	b.pfns = kalloc(PFNS_PER_REQ * 4, 4096);
	b.stat = kalloc(3 * sizeof(struct stat), 64);
	b.msix = pci_find_cap(b.v.pci, 0x11, 0) != 0;
	if (b.msix)
		virtio_config_irq(&b.v);         /* num_pages changes wake the idle loop */
	virtio_driver_ok(&b.v);
	b.present = 1;
	b.shown_target = ~0u;
	if (b.v.features & (1ULL << F_STATS_VQ))
		balloon_post_stats();
	balloon_follow();
}
