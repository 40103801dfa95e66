/* The host as the faces show it: Domain-0's row, the dashboard's header,
 * lodge info.  Memory comes from host.c, the one /proc/meminfo reader. */
#include "host.h"
#include "internal.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static unsigned long uptime_s(void)
{
	FILE *f = fopen("/proc/uptime", "r");
	double up = 0;

	if (f) {
		if (fscanf(f, "%lf", &up) != 1)
			up = 0;
		fclose(f);
	}
	return (unsigned long)up;
}

void lodge_host_status(struct lodge_status *st)
{
	FILE *f = fopen("/proc/stat", "r");
	unsigned long long user = 0, nice = 0, sys = 0;
	long tck = sysconf(_SC_CLK_TCK);

	memset(st, 0, sizeof(*st));
	snprintf(st->name, sizeof(st->name), "%s", DOMAIN_HOST_NAME);
	st->state = DOMAIN_STATE_RUNNING;
	st->vcpus = sysconf(_SC_NPROCESSORS_ONLN);
	st->memory_mib = (unsigned long)((uint64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGE_SIZE) >> 20);
	st->target_mib = st->maxmem_mib = st->memory_mib;
	if (f && fscanf(f, "cpu %llu %llu %llu", &user, &nice, &sys) == 3)
		st->cpu_ns = (user + nice + sys) * (1000000000ULL / (tck > 0 ? tck : 100));
	if (f)
		fclose(f);
	st->uptime_s = uptime_s();
	st->pid = 1;
	snprintf(st->cgroup, sizeof(st->cgroup), "-");
}

void lodge_host_sample(struct lodge_host *h)
{
	unsigned long long v[8] = { 0 };
	struct host_mem m;
	FILE *f;

	h->ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	if ((f = fopen("/proc/loadavg", "r"))) {
		if (fscanf(f, "%lf %lf %lf", &h->load1, &h->load5, &h->load15) != 3)
			h->load1 = h->load5 = h->load15 = 0;
		fclose(f);
	}
	if (host_mem_read(&m) == 0) {
		h->mem_total_mib = m.total_mib;
		h->mem_avail_mib = m.available_mib;
	}
	h->uptime_s = uptime_s();
	if ((f = fopen("/proc/stat", "r"))) {
		if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
			uint64_t busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
			uint64_t total = busy + v[3] + v[4];

			if (h->total_ticks && total > h->total_ticks)
				h->cpu_pct = (double)(busy - h->busy_ticks) * 100.0 * h->ncpus /
					     (double)(total - h->total_ticks);
			h->busy_ticks = busy;
			h->total_ticks = total;
		}
		fclose(f);
	}
}

void lodge_host_info(struct lodge_host_info *hi)
{
	struct host_mem m = { 0 };
	char line[512];
	FILE *f;
	int kvm;

	memset(hi, 0, sizeof(*hi));
	snprintf(hi->model, sizeof(hi->model), "unknown");
	if ((f = fopen("/proc/cpuinfo", "r"))) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "model name : %255[^\n]", hi->model) == 1)
				break;
		fclose(f);
	}
	hi->ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	host_mem_read(&m);
	hi->mem_total_mib = m.total_mib;
	hi->mem_avail_mib = m.available_mib;
	hi->kvm_backend = "none (no /dev/kvm)";
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm >= 0) {
		hi->max_vcpus = ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
		close(kvm);
		if (hi->max_vcpus > DOMAIN_VCPUS_MAX)
			hi->max_vcpus = DOMAIN_VCPUS_MAX;
		hi->kvm_backend = access("/sys/module/kvm_pvm", F_OK) == 0 ? "PVM (software; guest kernel code emulated)"
			: access("/sys/module/kvm_intel", F_OK) == 0 ? "hardware (Intel VT-x)"
			: access("/sys/module/kvm_amd", F_OK) == 0 ? "hardware (AMD-V)" : "unknown";
	}
}
