/* lodge info: the host as a domain's home: CPUs, memory, KVM. */
#include "agent.h"
#include "domains.h"
#include "log.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static unsigned long meminfo(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long v = 0;
	size_t klen = strlen(key);

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			sscanf(line + klen + 1, "%lu", &v);
			break;
		}
	if (f)
		fclose(f);
	return v / 1024;
}

static void sum_memory(const struct dom_status *st, void *arg)
{
	unsigned long *sum = arg;

	sum[0] += st->memory_mib;
	sum[1] += st->rss_kib / 1024;
	sum[2]++;
	sum[3] += st->target_mib;
	sum[4] += st->balloon_mib;
	sum[5] += st->maxmem_mib;
}

int cmd_info(int argc, char **argv)
{
	struct host_config hc;
	unsigned long sum[6] = { 0 };
	const char *backend = "none (no /dev/kvm)";
	int kvm, max_vcpus = 0;
	char model[256] = "unknown", line[512];
	FILE *f;

	if (argc != 1)
		return EXIT_USAGE;
	if (agent_host_config(&hc))
		return 1;
	if ((f = fopen("/proc/cpuinfo", "r"))) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "model name : %255[^\n]", model) == 1)
				break;
		fclose(f);
	}
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm >= 0) {
		max_vcpus = ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
		close(kvm);
		backend = access("/sys/module/kvm_pvm", F_OK) == 0 ? "PVM (software; guest kernel code emulated)"
			: access("/sys/module/kvm_intel", F_OK) == 0 ? "hardware (Intel VT-x)"
			: access("/sys/module/kvm_amd", F_OK) == 0 ? "hardware (AMD-V)" : "unknown";
	}
	domains_scan(hc.runtime_dir, sum_memory, sum);
	printf("host                   : %s\n", model);
	printf("nr_cpus                : %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	printf("total_memory           : %lu MiB\n", meminfo("MemTotal"));
	printf("free_memory            : %lu MiB\n", meminfo("MemAvailable"));
	printf("kvm_backend            : %s\n", backend);
	printf("max_vcpus_per_domain   : %d\n", max_vcpus > DOMAIN_VCPUS_MAX ? DOMAIN_VCPUS_MAX : max_vcpus);
	printf("domains                : %lu\n", sum[2]);
	printf("domain_memory_assigned : %lu MiB\n", sum[0]);
	printf("domain_memory_target   : %lu MiB\n", sum[3]);
	printf("domain_memory_maxmem   : %lu MiB\n", sum[5]);
	printf("domain_memory_ballooned: %lu MiB\n", sum[4]);
	printf("domain_memory_resident : %lu MiB\n", sum[1]);
	printf("runtime_dir            : %s\n", hc.runtime_dir);
	printf("domains_dir            : %s\n", hc.domains_dir);
	printf("default_bridge         : %s\n", hc.default_bridge);
	return 0;
}
