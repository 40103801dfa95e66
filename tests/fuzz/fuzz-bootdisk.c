/* bootdisk_read() (src/common/bootdisk.c): any bytes as a guest's disk,
 * read through libblkid (partition tables) and libext2fs (the filesystem,
 * its links and files).  Seeds: small ext2 and ext4 images, whole-disk and
 * MBR-partitioned, with /vmlinuz links and /boot kernels.
 * The copies go to /dev/null: a few bytes of image may name a sparse file
 * of the caps' size, which is fine to read but not to keep per input (the
 * sizes of real copies are test-bootdisk's).
 * Properties, besides no crash and no ASan or UBSan report:
 *   - a refusal says why; a success names a kernel, a UUID and where;
 *   - what is copied is within the caps, an initrd only when one is named. */
#include "fuzz.h"
#include "bootdisk.h"
#include "schema.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct bootdisk_found found;
	char why[1024] = "";
	int disk = memfd_create("disk", MFD_CLOEXEC), null = open("/dev/null", O_WRONLY | O_CLOEXEC), rc;

	FUZZ_CHECK(disk >= 0 && null >= 0, "memfd_create, /dev/null");
	FUZZ_CHECK(size == 0 || write(disk, data, size) == (ssize_t)size, "write the disk");
	rc = bootdisk_read(disk, "fuzz", null, null, &found, why, sizeof(why));
	if (rc) {
		FUZZ_CHECK(rc < 0 && why[0], "a refusal says why");
	} else {
		FUZZ_CHECK(found.kernel[0] == '/' && strlen(found.uuid) == BOOTDISK_UUID_LEN - 1 && found.where[0],
			   "a success names a kernel, a UUID and where");
		FUZZ_CHECK(found.kernel_size > 0 && found.kernel_size <= BOOTDISK_KERNEL_MAX,
			   "the kernel is within its cap");
		FUZZ_CHECK(found.initrd_size <= BOOTDISK_INITRD_MAX && (found.initrd[0] || !found.initrd_size),
			   "the initrd is within its cap, and copied only when named");
	}
	close(disk);
	close(null);
	return 0;
}
