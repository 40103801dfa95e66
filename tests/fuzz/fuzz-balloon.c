/* virtio-balloon (src/hyp/virtio/balloon.c) through the virtio-pci
 * transport, served by its I/O thread as in lodge-hyp: PFN arrays on the
 * inflate and deflate queues (any PFN: RAM, past it, the MMIO hole; any
 * length, any chain shape, vring.h) and buffers of (tag, value) pairs on
 * the stats queue.  Inflated frames really are discarded from the guest
 * RAM mapping, rings included if the input says so.
 * Input: one byte (bit 0: INDIRECT_DESC, bit 1: EVENT_IDX, bit 2:
 * STATS_VQ, bits 4-6: queue size 2 << n, at most 64), a le32 for `actual`
 * in the config space, then chains on queues 0-2.
 * Properties: as vring.h; every inflate and deflate chain comes back or
 * NEEDS_RESET, the stats queue keeps exactly one buffer of those posted,
 * and a reset leaves the driver holding no pages. */
#include "vring.h"
#include "virtio/balloon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	static struct virtio_balloon *b;
	struct vr_in in = { data + 5, size > 5 ? size - 5 : 0 };
	struct balloon_info after;
	uint64_t want = 1ULL << 2;             /* DEFLATE_ON_OOM */
	uint32_t actual;
	unsigned q;
	bool stats;

	if (!ready) {
		log_init("fuzz-balloon");
		log_set_level(LOG_ERR);
		vr_init_ram();
		FUZZ_CHECK(pci_init() == 0, "pci_init");
		FUZZ_CHECK(virtio_balloon_create(&vr_dom, 0, &b) == 0, "virtio_balloon_create");
		FUZZ_CHECK(probe_device(DOMAIN_BALLOON_SLOT, 0x1045) == 0, "virtio-balloon on its slot");
		ready = true;
	}
	if (size < 5)
		return 0;
	stats = data[0] & 4;
	if (data[0] & 1)
		want |= 1ULL << VIRTIO_F_INDIRECT_DESC;
	if (data[0] & 2)
		want |= 1ULL << VIRTIO_F_EVENT_IDX;
	if (stats)
		want |= 1ULL << 1;
	FUZZ_CHECK(vr_driver_init(stats ? 3 : 2, 2u << ((data[0] >> 4) % 6), want) == 0, "FEATURES_OK refused");
	memcpy(&actual, data + 1, 4);
	mmio_write(bar0 + device_off + 4, 4, actual);
	virtio_balloon_set_target(b, actual ^ 0x5a5a);
	vr_build(&in);
	for (q = 0; q < 2; q++)
		vr_q[q].expect = vr_q[q].avail_idx;
	if (stats)
		vr_q[2].expect = vr_q[2].avail_idx ? vr_q[2].avail_idx - 1 : 0;
	vr_go(NULL);
	SET_COMMON(0x14, 1, 0);             /* joins the I/O thread */
	FUZZ_CHECK(COMMON(0x14, 1) == 0, "the device did not reset");
	virtio_balloon_info(b, &after);
	FUZZ_CHECK(after.actual_pages == 0, "a reset driver still holds pages");
	return 0;
}
