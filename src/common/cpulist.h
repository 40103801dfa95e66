/* Host CPU lists as Xen writes them: "0", "0-3", "0,2-3", "all", with
 * "^N" to leave a CPU out ("0-3,^1"), as xl's vcpu-pin and cpus = take. */
#ifndef LODGE_CPULIST_H
#define LODGE_CPULIST_H

#include <sched.h>
#include <stddef.h>

/* The CPUs this host has online (from /sys/devices/system/cpu/online, else
 * sched_getaffinity of this process). Returns 0 or -errno. */
int cpulist_host(cpu_set_t *online);
/* Keep the host's online-CPU file open, for a process about to lose
 * sight of /sys (lodge-hyp's sandbox). */
int cpulist_host_keep_open(void);
/* Parse text into set. Every CPU named must be in host (NULL: any CPU
 * below CPU_SETSIZE); "all" means all of host. Returns 0, or -EINVAL /
 * -ERANGE with one sentence in why. An empty result is an error. */
int cpulist_parse(const char *text, const cpu_set_t *host, cpu_set_t *set, char *why, size_t whylen);
/* The shortest list for set ("0-3,6"), "" if empty; truncated to fit. */
void cpulist_format(const cpu_set_t *set, char *out, size_t len);

#endif
