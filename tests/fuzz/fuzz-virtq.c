/* The virtqueue walker against a guest that writes anything it likes into
 * its rings and descriptors.  Input: one byte choosing the queue size, then
 * the first 16 KiB of guest RAM (descriptors at 0, avail ring at
 * 0x1000, used ring at 0x2000) (the rest of RAM is zeros).  Property: every
 * buffer of every chain virtq_pop() hands a device lies inside guest RAM,
 * a chain never has more than VIRTQ_MAX_SEGS buffers, and the walker ends
 * (libFuzzer's timeout catches a loop). */
#include "fuzz.h"
#include "virtio/queue.h"

#include <string.h>

#define RAM_SIZE  (1u << 20)
#define IMAGE     (16u << 10)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t ram[RAM_SIZE];
	static struct virtq_req req;
	struct guest_mem mem;
	struct virtq q = { 0 };
	unsigned pops;

	if (size < 1)
		return 0;
	memset(ram, 0, IMAGE);
	memcpy(ram, data + 1, size - 1 < IMAGE ? size - 1 : IMAGE);
	guest_mem_wrap(&mem, ram, RAM_SIZE);
	q.size = 1u << (data[0] % 9);          /* 1 .. 256 */
	q.desc_gpa = 0;
	q.avail_gpa = 0x1000;
	q.used_gpa = 0x2000;
	if (virtq_enable(&q, &mem) != 0)
		return 0;
	/* More pops than the ring holds: the avail index may run far ahead. */
	for (pops = 0; pops < 2u * q.size + 2; pops++) {
		int rc = virtq_pop(&q, &req);
		unsigned i;

		if (rc <= 0)
			break;
		FUZZ_CHECK(req.n_out + req.n_in <= VIRTQ_MAX_SEGS, "a chain longer than VIRTQ_MAX_SEGS");
		FUZZ_CHECK(req.head < q.size, "head outside the ring");
		for (i = 0; i < req.n_out + req.n_in; i++) {
			const uint8_t *b = req.iov[i].iov_base;

			FUZZ_CHECK(b >= ram && b <= ram + RAM_SIZE &&
				   req.iov[i].iov_len <= (size_t)(ram + RAM_SIZE - b),
				   "a buffer outside guest RAM");
		}
		virtq_push(&q, req.head, (uint32_t)req.in_len);
	}
	return 0;
}
