/* virtio-blk (src/hyp/virtio/blk.c) through the virtio-pci transport on a
 * temporary file, served by its io_uring I/O thread as in lodge-hyp: any
 * request type (IN, OUT, FLUSH, GET_ID, DISCARD, WRITE_ZEROES, unknown),
 * header, sector and size, in any descriptor chain shape (vring.h).
 * Input: one byte (bit 0: negotiate INDIRECT_DESC, bit 1: EVENT_IDX,
 * bit 2: the read-only disk, bits 4-6: queue size 2 << n), then chains.
 * Properties (vring.h): every request completes or the device enters
 * NEEDS_RESET, a completion names a head the driver gave and writes no
 * more than the chain holds, nothing outside guest RAM is touched (ASan). */
#include "vring.h"
#include "backend/disk.h"
#include "virtio/blk.h"

#include <stdlib.h>
#include <unistd.h>

#define DISK_SIZE (1u << 20)

static struct disk disks[2];

static void open_disk(struct disk *d, const char *opts)
{
	char path[] = "/tmp/lodge-fuzz-blk.XXXXXX", spec[128], err[256];
	int fd = mkstemp(path);

	FUZZ_CHECK(fd >= 0 && ftruncate(fd, DISK_SIZE) == 0, "the temporary disk");
	close(fd);
	snprintf(spec, sizeof(spec), "%s%s", path, opts);
	FUZZ_CHECK(disk_parse(spec, d, err, sizeof(err)) == 0 && disk_open(d, err, sizeof(err)) == 0, err);
	unlink(path);                 /* the open descriptors keep it */
	FUZZ_CHECK(virtio_blk_create(&vr_dom, d) == 0, "virtio_blk_create");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct vr_in in = { data + 1, size ? size - 1 : 0 };
	uint64_t want;

	if (!ready) {
		log_init("fuzz-blk");
		log_set_level(LOG_ERR);
		vr_init_ram();
		FUZZ_CHECK(pci_init() == 0, "pci_init");
		open_disk(&disks[0], ",id=fuzz-blk-rw");
		open_disk(&disks[1], ",ro,id=fuzz-blk-read-only");
		ready = true;
	}
	if (size < 1)
		return 0;
	FUZZ_CHECK(probe_device(1 + ((data[0] >> 2) & 1), 0x1042) == 0, "virtio-blk on slot 1 and 2");
	want = 0xffffffffULL & ~((1ULL << VIRTIO_F_INDIRECT_DESC) | (1ULL << VIRTIO_F_EVENT_IDX));
	if (data[0] & 1)
		want |= 1ULL << VIRTIO_F_INDIRECT_DESC;
	if (data[0] & 2)
		want |= 1ULL << VIRTIO_F_EVENT_IDX;
	FUZZ_CHECK(vr_driver_init(1, 2u << ((data[0] >> 4) % 7), want) == 0, "FEATURES_OK refused");
	vr_q[0].expect = vr_build(&in);
	vr_go(NULL);
	SET_COMMON(0x14, 1, 0);             /* joins the I/O thread */
	FUZZ_CHECK(COMMON(0x14, 1) == 0, "the device did not reset");
	return 0;
}
