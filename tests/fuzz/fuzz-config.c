/* The domain config loader (libconfuse plus our validation) on any file.
 * Property: it loads or refuses with a message, never crashes, and what it
 * accepts is within the limits the rest of Lodge relies on: no control
 * character in a name, path or command line (they end up in protocol
 * lines and on terminals), none in a message either. */
#include "fuzz.h"
#include "config.h"
#include "log.h"

#include <string.h>
#include <unistd.h>

static char path[64];

static void remove_file(void)
{
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct domain_config dc;
	static struct host_config hc;
	char err[1024] = "";
	FILE *f;
	int rc;

	if (!path[0]) {
		int fd;

		snprintf(path, sizeof(path), "/tmp/lodge-fuzz-config.XXXXXX");
		fd = mkstemp(path);
		if (fd < 0)
			abort();
		close(fd);
		atexit(remove_file);
		host_config_load(&hc, err, sizeof(err));
	}
	if (!(f = fopen(path, "w")))
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	rc = domain_config_load(path, &hc, false, &dc, err, sizeof(err));
	if (rc == 0) {
		FUZZ_CHECK(dc.name[0] && memchr(dc.name, 0, sizeof(dc.name)), "accepted without a name");
		FUZZ_CHECK(dc.memory_mib >= 4, "accepted memory under 4 MiB");
		FUZZ_CHECK(dc.ndisks <= DOMAIN_DISKS_MAX && dc.nvifs <= DOMAIN_VIFS_MAX, "too many devices accepted");
		FUZZ_CHECK(!text_find_control(dc.name) && !text_find_control(dc.kernel) &&
			   !text_find_control(dc.ramdisk) && !text_find_control(dc.cmdline),
			   "a control character accepted");
		for (unsigned i = 0; i < dc.ndisks; i++)
			FUZZ_CHECK(!text_find_control(dc.disks[i].path), "a control character in a disk path");
	} else {
		FUZZ_CHECK(err[0], "refused without a message");
		FUZZ_CHECK(!text_find_control(err), "a control character in the message");
	}
	return 0;
}
