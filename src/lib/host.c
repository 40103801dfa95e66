/* The host's memory (host.h). */
#include "host.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int host_meminfo_read(struct host_meminfo *m)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long kib;

	memset(m, 0, sizeof(*m));
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemTotal: %lu kB", &kib) == 1)
			m->total_kib = kib;
		else if (sscanf(line, "MemAvailable: %lu kB", &kib) == 1)
			m->available_kib = kib;
	}
	fclose(f);
	return 0;
}

unsigned long host_mem_available_mib(void)
{
	struct host_meminfo m;

	host_meminfo_read(&m);
	return m.available_kib / 1024;
}
