/* lodge info: the host as a domain's home: CPUs, memory, KVM. */
#include "agent.h"

#include <stdio.h>

int cmd_info(struct cli *c)
{
	const struct host_config *hc = &c->lg.hc;
	unsigned long assigned = 0, resident = 0, target = 0, ballooned = 0, maxmem = 0;
	struct lodge_host_info hi;
	struct lodge_list l;
	struct lodge_err err;
	unsigned i;

	lodge_host_info(&hi);
	if (lodge_list(&c->lg, &l, &err))
		return cli_fail(&err);
	for (i = 0; i < l.n; i++) {
		assigned += l.dom[i].memory_mib;
		resident += l.dom[i].rss_kib / 1024;
		target += l.dom[i].target_mib;
		ballooned += l.dom[i].balloon_mib;
		maxmem += l.dom[i].maxmem_mib;
	}
	printf("host                   : %s\n", hi.model);
	printf("nr_cpus                : %u\n", hi.ncpus);
	printf("total_memory           : %lu MiB\n", hi.mem_total_mib);
	printf("free_memory            : %lu MiB\n", hi.mem_avail_mib);
	printf("kvm_backend            : %s\n", hi.kvm_backend);
	printf("max_vcpus_per_domain   : %d\n", hi.max_vcpus);
	printf("domains                : %u\n", l.n);
	printf("domain_memory_assigned : %lu MiB\n", assigned);
	printf("domain_memory_target   : %lu MiB\n", target);
	printf("domain_memory_maxmem   : %lu MiB\n", maxmem);
	printf("domain_memory_ballooned: %lu MiB\n", ballooned);
	printf("domain_memory_resident : %lu MiB\n", resident);
	printf("runtime_dir            : %s\n", hc->runtime_dir);
	printf("domains_dir            : %s\n", hc->domains_dir);
	printf("default_bridge         : %s\n", hc->default_bridge);
	lodge_list_free(&l);
	return 0;
}
