/* lodge info: the host as a domain's home: CPUs, memory, KVM. */
#include "agent.h"
#include "output.h"

#include <stdio.h>

struct info {
	struct lodge_host_info hi;
	const struct host_config *hc;
	unsigned domains;
	unsigned long assigned, resident, target, ballooned, maxmem;
};

OUT_GETTER(get_model, struct info, out_str(v, r->hi.model))
OUT_GETTER(get_ncpus, struct info, out_uint(v, r->hi.ncpus))
OUT_GETTER(get_total, struct info, out_uint(v, r->hi.mem_total_mib))
OUT_GETTER(get_free, struct info, out_uint(v, r->hi.mem_avail_mib))
OUT_GETTER(get_backend, struct info, out_str(v, r->hi.kvm_backend))
OUT_GETTER(get_max_vcpus, struct info, out_int(v, r->hi.max_vcpus))
OUT_GETTER(get_domains, struct info, out_uint(v, r->domains))
OUT_GETTER(get_assigned, struct info, out_uint(v, r->assigned))
OUT_GETTER(get_target, struct info, out_uint(v, r->target))
OUT_GETTER(get_maxmem, struct info, out_uint(v, r->maxmem))
OUT_GETTER(get_ballooned, struct info, out_uint(v, r->ballooned))
OUT_GETTER(get_resident, struct info, out_uint(v, r->resident))
OUT_GETTER(get_runtime_dir, struct info, out_str(v, r->hc->runtime_dir))
OUT_GETTER(get_domains_dir, struct info, out_str(v, r->hc->domains_dir))
OUT_GETTER(get_bridge, struct info, out_str(v, r->hc->default_bridge))

static const struct out_col info_cols[] = {
	{ "host", "host", 0, 0, 0, get_model, NULL },
	{ "nr_cpus", "nr_cpus", 0, 0, 0, get_ncpus, NULL },
	{ "total_memory", "total_memory_mib", 0, 0, 0, get_total, "MiB" },
	{ "free_memory", "free_memory_mib", 0, 0, 0, get_free, "MiB" },
	{ "kvm_backend", "kvm_backend", 0, 0, 0, get_backend, NULL },
	{ "max_vcpus_per_domain", "max_vcpus_per_domain", 0, 0, 0, get_max_vcpus, NULL },
	{ "domains", "domains", 0, 0, 0, get_domains, NULL },
	{ "domain_memory_assigned", "domain_memory_assigned_mib", 0, 0, 0, get_assigned, "MiB" },
	{ "domain_memory_target", "domain_memory_target_mib", 0, 0, 0, get_target, "MiB" },
	{ "domain_memory_maxmem", "domain_memory_maxmem_mib", 0, 0, 0, get_maxmem, "MiB" },
	{ "domain_memory_ballooned", "domain_memory_ballooned_mib", 0, 0, 0, get_ballooned, "MiB" },
	{ "domain_memory_resident", "domain_memory_resident_mib", 0, 0, 0, get_resident, "MiB" },
	{ "runtime_dir", "runtime_dir", 0, 0, 0, get_runtime_dir, NULL },
	{ "domains_dir", "domains_dir", 0, 0, 0, get_domains_dir, NULL },
	{ "default_bridge", "default_bridge", 0, 0, 0, get_bridge, NULL },
};

int cmd_info(struct cli *c)
{
	struct info in = { .hc = &c->lg.hc };
	struct lodge_list l;
	struct lodge_err err;
	struct out o;
	unsigned i;
	int rc;

	if ((rc = out_begin_record(&o, c, info_cols, OUT_NCOLS(info_cols))))
		return rc;
	lodge_host_info(&in.hi);
	if (lodge_list(&c->lg, &l, &err))
		return cli_fail(&err);
	in.domains = l.n;
	for (i = 0; i < l.n; i++) {
		in.assigned += l.dom[i].memory_mib;
		in.resident += l.dom[i].rss_kib / 1024;
		in.target += l.dom[i].target_mib;
		in.ballooned += l.dom[i].balloon_mib;
		in.maxmem += l.dom[i].maxmem_mib;
	}
	out_record(&o, &in);
	out_end(&o);
	lodge_list_free(&l);
	return 0;
}
