/* The CPU hot-plug controller (cpuhp.c): the registers of
 * src/common/cpuhp.h, raising GPE CPUHP_GPE_BIT through the ACPI PM
 * block's GPE0.  A plug lets a held vCPU run at once and tells the guest,
 * which starts it (INIT, SIPI); an unplug only asks: the vCPU goes
 * offline when the guest ejects it, and a guest that does not keeps it,
 * as with disks. */
#ifndef LODGE_DEV_CPU_HOTPLUG_H
#define LODGE_DEV_CPU_HOTPLUG_H

#include <stddef.h>

struct domain;

/* Register the ports and the save/restore entry: 0 or -errno. */
int cpuhp_init(struct domain *dom);
/* vcpu-set N: bring vCPUs 0..n-1 online and ask the guest to give up the
 * rest.  0, or -ERANGE with why (n outside 1..maxvcpus). */
int cpuhp_set(struct domain *dom, unsigned long n, char *why, size_t whylen);
/* vCPUs the host asked the guest to give up and it has not yet. */
unsigned cpuhp_pending_removal(void);

#endif
