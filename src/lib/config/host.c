/* This host's memory (host.h). */
#include "host.h"

#include <errno.h>
#include <stdio.h>

int host_mem_read(struct host_mem *m)
{
	FILE *f = fopen("/proc/meminfo", "re");
	unsigned long kib;
	unsigned found = 0;
	char line[256];

	if (!f)
		return -errno;
	while (found != 3 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemTotal: %lu kB", &kib) == 1)
			m->total_mib = kib >> 10, found |= 1;
		else if (sscanf(line, "MemAvailable: %lu kB", &kib) == 1)
			m->available_mib = kib >> 10, found |= 2;
	}
	fclose(f);
	return found == 3 ? 0 : -ENODATA;
}

unsigned long host_mem_available_mib(void)
{
	struct host_mem m;

	return host_mem_read(&m) == 0 ? m.available_mib : 0;
}
