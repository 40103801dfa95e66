/* This host's memory as a new domain sees it: the one reader of
 * /proc/meminfo for every face of Lodge. */
#ifndef LODGE_HOST_H
#define LODGE_HOST_H

struct host_mem {
	unsigned long total_mib;       /* MemTotal */
	unsigned long available_mib;   /* MemAvailable: what can be given without swapping */
};

/* Read /proc/meminfo: 0, or -errno (-ENODATA if it lacks either line). */
int host_mem_read(struct host_mem *m);
/* MemAvailable in MiB; 0 if /proc/meminfo cannot be read. */
unsigned long host_mem_available_mib(void);

#endif
