/* The host's memory, from /proc/meminfo: the one reader of it, for the
 * config checks (a domain the host cannot hold) and the library's host
 * sampling (lodge info, the dashboard, Domain-0). */
#ifndef LODGE_HOST_H
#define LODGE_HOST_H

struct host_meminfo {
	unsigned long total_kib;       /* MemTotal */
	unsigned long available_kib;   /* MemAvailable: what a new domain can have without swapping */
};

/* 0, or -errno (the figures 0). */
int host_meminfo_read(struct host_meminfo *m);
/* MemAvailable in MiB (0 if unknown). */
unsigned long host_mem_available_mib(void);

#endif
