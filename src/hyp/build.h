/* Building a domain (build.c): from lodge-hyp's options to a VM whose
 * vCPUs exist but have not run, with its devices on the buses. */
#ifndef LODGE_BUILD_H
#define LODGE_BUILD_H

#include "domain.h"
#include "options.h"

struct uart;

/* Check o against this host, open the backends into dom, join the cgroup
 * (its path noted in the runtime directory dir, "" standalone), make guest
 * memory, the VM, the vCPUs and the devices, and load the kernel unless a
 * stream brings the guest (--incoming).  com1: the serial console's UART.
 * 0, or -errno with one message logged. */
int domain_build(struct domain *dom, const struct options *o, const char *dir, struct uart **com1);
/* lodge-hyp --probe: one sentence on this host's KVM; the exit status. */
int domain_probe(void);

#endif
