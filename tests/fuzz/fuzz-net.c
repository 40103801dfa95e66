/* virtio-net's transmit path (src/hyp/virtio/net.c) through the virtio-pci
 * transport, served by its I/O thread as in lodge-hyp: frames with their
 * virtio_net_hdr (flags, GSO type and sizes, checksum offsets) in any
 * chain shape (vring.h), written to a pipe standing in for the tap (the
 * harness drains it).  Chains on the receive queue are posted too; the
 * pipe gives the device nothing to receive.
 * Input: one byte (bit 0: INDIRECT_DESC, bit 1: EVENT_IDX, bit 2: the
 * offloads CSUM, HOST_TSO4/6, MRG_RXBUF; bits 4-6: queue size 2 << n),
 * then chains; those on queue 1 (tx) must each come back, or NEEDS_RESET.
 * Properties: as vring.h (a device-readable chain: nothing written). */
#include "vring.h"
#include "backend/tap.h"
#include "virtio/net.h"

#include <fcntl.h>
#include <unistd.h>

static struct tap tap = { .name = "fuzz0", .mac = { 0x52, 0x54, 0, 0x12, 0x34, 0x56 } };
static int tap_peer;

static void drain(void)
{
	static uint8_t buf[1 << 16];

	while (read(tap_peer, buf, sizeof(buf)) > 0)
		;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct vr_in in = { data + 1, size ? size - 1 : 0 };
	uint64_t want = 1ULL << 5 | 1ULL << 16;      /* MAC, STATUS */

	if (!ready) {
		int p[2];

		log_init("fuzz-net");
		log_set_level(LOG_ERR);
		vr_init_ram();
		FUZZ_CHECK(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0, "pipe");
		fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
		tap.fd = p[1];
		tap_peer = p[0];
		FUZZ_CHECK(pci_init() == 0, "pci_init");
		FUZZ_CHECK(virtio_net_create(&vr_dom, &tap) == 0, "virtio_net_create");
		FUZZ_CHECK(probe_device(1, 0x1041) == 0, "virtio-net on slot 1");
		ready = true;
	}
	if (size < 1)
		return 0;
	if (data[0] & 1)
		want |= 1ULL << VIRTIO_F_INDIRECT_DESC;
	if (data[0] & 2)
		want |= 1ULL << VIRTIO_F_EVENT_IDX;
	if (data[0] & 4)
		want |= 1ULL << 0 | 1ULL << 11 | 1ULL << 12 | 1ULL << 15;
	FUZZ_CHECK(vr_driver_init(2, 2u << ((data[0] >> 4) % 7), want) == 0, "FEATURES_OK refused");
	vr_build(&in);
	vr_q[1].expect = vr_q[1].avail_idx;
	vr_q[0].expect = 0;
	vr_go(drain);
	SET_COMMON(0x14, 1, 0);             /* joins the I/O thread */
	FUZZ_CHECK(COMMON(0x14, 1) == 0, "the device did not reset");
	drain();
	return 0;
}
