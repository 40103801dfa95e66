/* The status and peers replies: what `lodge list`, `lodge top` and the
 * dashboard read of a domain, every second for each of 50 domains, so
 * nothing here walks more than it must. */
#include "ctl/ctl-loop.h"
#include "domain.h"
#include "hotplug.h"
#include "log.h"
#include "netwatch/netwatch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *ctl_state(struct ctl *c)
{
	int end = atomic_load(&c->dom->end);

	if (end == DOMAIN_RUNNING)
		return domain_state_name(c->dom->paused ? DOMAIN_STATE_PAUSED : DOMAIN_STATE_RUNNING);
	return domain_state_name(end == DOMAIN_CRASH ? DOMAIN_STATE_CRASHED : DOMAIN_STATE_SHUTDOWN);
}

/* Per-device lines ("disk0 ...", "vif0 ...") and the sums over each kind. */
static void format_io(const struct domain *dom, char *buf, size_t len)
{
	static const char *const kind_name[] = { [IO_DISK] = "disk", [IO_VIF] = "vif" };
	static const char *const sum_keys[][4] = {
		[IO_DISK] = { "disk_rd_ops", "disk_rd_bytes", "disk_wr_ops", "disk_wr_bytes" },
		[IO_VIF] = { "net_rx_packets", "net_rx_bytes", "net_tx_packets", "net_tx_bytes" },
	};
	uint64_t sum[2][4] = { { 0 } };
	unsigned count[2] = { 0, 0 }, i, k;
	size_t n = 0;

	buf[0] = '\0';
	/* Each disk's PCI slot, in guest order ("-": no disk): a detach
	 * names the slot. */
	n += snprintf(buf + n, len - n, "disk_slots");
	for (i = k = 0; i < dom->nio && n < len; i++)
		if (dom->io[i].kind == IO_DISK && ++k)
			n += snprintf(buf + n, len - n, " %u", dom->io[i].slot);
	if (n < len)
		n += snprintf(buf + n, len - n, "%s\n", k ? "" : " -");
	n += snprintf(buf + n, len > n ? len - n : 0, "vif_slots");
	for (i = k = 0; i < dom->nio && n < len; i++)
		if (dom->io[i].kind == IO_VIF && ++k)
			n += snprintf(buf + n, len - n, " %u", dom->io[i].slot);
	if (n < len)
		n += snprintf(buf + n, len - n, "%s\n", k ? "" : " -");
	for (i = 0; i < dom->nio && n < len; i++) {
		const struct io_counters *c = dom->io[i].counters;
		enum io_kind kind = dom->io[i].kind;
		uint64_t v[5] = {
			atomic_load_explicit(&c->in_ops, memory_order_relaxed),
			atomic_load_explicit(&c->in_bytes, memory_order_relaxed),
			atomic_load_explicit(&c->out_ops, memory_order_relaxed),
			atomic_load_explicit(&c->out_bytes, memory_order_relaxed),
			atomic_load_explicit(&c->errors, memory_order_relaxed),
		};

		for (k = 0; k < 4; k++)
			sum[kind][k] += v[k];
		n += snprintf(buf + n, len - n, "%s%u %llu %llu %llu %llu %llu\n", kind_name[kind], count[kind]++,
			      (unsigned long long)v[0], (unsigned long long)v[1], (unsigned long long)v[2],
			      (unsigned long long)v[3], (unsigned long long)v[4]);
	}
	for (i = 0; i < 2; i++)
		for (k = 0; k < 4 && n < len; k++)
			n += snprintf(buf + n, len - n, "%s %llu\n", sum_keys[i][k], (unsigned long long)sum[i][k]);
}

/* Resident pages: guest RAM the host holds (ballooned pages leave it at
 * once) plus lodge-hyp's own.  /proc/self/statm through a descriptor kept
 * open: one pread per status, no smaps walk, cheap for 50 domains asked
 * every second.
 *
 * statm's resident count still holds the pages KSM merged (each process
 * mapping a merged page counts it), so the resident figure is net of
 * /proc/self/ksm_merging_pages (Linux 5.19; a counter the kernel keeps,
 * O(1) to read): what KSM saved shows there, and as ksm_shared_kib.
 * Transparent huge pages: AnonHugePages of /proc/self/smaps_rollup, which
 * walks the page tables (the guest's RAM is nearly all of them): read at
 * most every THP_REFRESH_S seconds, the figure cached between.  All three
 * are opened before the sandbox (ctl_keep_open); the two optional ones
 * read as 0 on a kernel without them. */
#define THP_REFRESH_S 5
static int statm_fd = -1, ksm_fd = -1, rollup_fd = -1;

int ctl_keep_open(void)
{
	if (ksm_fd < 0)
		ksm_fd = open("/proc/self/ksm_merging_pages", O_RDONLY | O_CLOEXEC);
	if (rollup_fd < 0)
		rollup_fd = open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);
	if (statm_fd < 0 && (statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	return 0;
}

/* The whole of a kept /proc file, from its start, into buf. */
static bool read_kept(int fd, char *buf, size_t len)
{
	ssize_t n;

	if (fd < 0 || (n = pread(fd, buf, len - 1, 0)) <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

static unsigned long resident_pages(void)
{
	unsigned long size, rss;
	char buf[128];

	if (statm_fd < 0)
		ctl_keep_open();
	if (!read_kept(statm_fd, buf, sizeof(buf)))
		return 0;
	return sscanf(buf, "%lu %lu", &size, &rss) == 2 ? rss : 0;
}

static unsigned long ksm_merged_pages(void)
{
	char buf[32];

	return read_kept(ksm_fd, buf, sizeof(buf)) ? strtoul(buf, NULL, 10) : 0;
}

static unsigned long thp_kib(uint64_t now_ns)
{
	static unsigned long kib;
	static uint64_t read_ns;
	static bool have;
	char buf[2048], *p;

	if (have && now_ns - read_ns < THP_REFRESH_S * 1000000000ULL)
		return kib;
	have = true;
	read_ns = now_ns;
	kib = 0;
	if (read_kept(rollup_fd, buf, sizeof(buf)) && (p = strstr(buf, "\nAnonHugePages:")))
		kib = strtoul(p + 16, NULL, 10);
	return kib;
}

void ctl_status(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	struct domain *dom = c->dom;
	char vcpu_ns[DOMAIN_VCPUS_MAX * 21 + 1] = "", vcpu_wait_ns[DOMAIN_VCPUS_MAX * 21 + 1] = "";
	char io[LODGE_MAX_IO_DEVICES * 112 + 8 * 32], addrs[4096];
	uint64_t total = 0, total_wait = 0, now_ns;
	struct timespec ts;
	unsigned long rss_pages, ksm_pages, page_kib = sysconf(_SC_PAGESIZE) / 1024;
	char mem_keys[512], migrate_keys[256], kernel[4096];
	unsigned i;

	text_escape(kernel, sizeof(kernel), dom->kernel);     /* a value never holds a newline */
	for (i = 0; i < dom->nvcpus; i++) {
		uint64_t ns = vcpu_cpu_ns(&dom->vcpus[i]);
		size_t len = strlen(vcpu_ns);

		total += ns;
		snprintf(vcpu_ns + len, sizeof(vcpu_ns) - len, "%s%llu", i ? " " : "", (unsigned long long)ns);
		ns = sched_vcpu_wait_ns(&dom->vcpus[i]);
		len = strlen(vcpu_wait_ns);
		total_wait += ns;
		snprintf(vcpu_wait_ns + len, sizeof(vcpu_wait_ns) - len, "%s%llu", i ? " " : "",
			 (unsigned long long)ns);
	}
	rss_pages = resident_pages();
	ksm_pages = ksm_merged_pages();
	rss_pages = ksm_pages < rss_pages ? rss_pages - ksm_pages : 0;
	format_io(dom, io, sizeof(io));
	{
		const char *vifs[DOMAIN_VIFS_MAX];
		unsigned nvifs = hotplug_vif_names(dom, vifs, DOMAIN_VIFS_MAX);

		netwatch_format_addrs(dom->netwatch, vifs, nvifs, addrs, sizeof(addrs));
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now_ns = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	domain_mem_status(dom, mem_keys, sizeof(mem_keys));
	migrate_keys[0] = '\0';
	if (c->has_last) {
		static const char *const phases[] = { "precopy", "stopcopy", "done", "failed" };

		snprintf(migrate_keys, sizeof(migrate_keys),
			 "save_kind %s\nsave_phase %s\nsave_round %u\nsave_pages %llu\nsave_dirty %llu\n"
			 "save_rate_kib %llu\n", c->job_mode == SAVE_LIVE ? "migrate" : "save",
			 phases[c->last.phase], c->last.round, (unsigned long long)c->last.pages,
			 (unsigned long long)c->last.dirty, (unsigned long long)c->last.rate_kib);
	}
	client_send(cl, "ok\nname %s\nid %u\npid %d\nstate %s\nvcpus %u\nmax_vcpus %u\nmemory_mib %lu\n%s"
		    "cpu_ns %llu\nvcpu_ns %s\nrss_kib %lu\nksm_shared_kib %lu\nthp_kib %lu\n"
		    "start_time %ld\nuptime_s %llu\nkernel %s\nend_reason %s\ncpu_wait_ns %llu\nvcpu_wait_ns %s\n"
		    "cpu_weight %u\ncpu_cap %u\ncgroup %s\n%s%s%s\n",
		    dom->name, dom->id, (int)getpid(), ctl_state(c), vcpu_online_count(dom), dom->nvcpus, dom->memory_mib, mem_keys,
		    (unsigned long long)total, vcpu_ns, rss_pages * page_kib, ksm_pages * page_kib, thp_kib(now_ns),
		    dom->start_time, (unsigned long long)((now_ns - dom->start_ns) / 1000000000ULL),
		    kernel, dom->end_reason[0] ? dom->end_reason : "-",
		    (unsigned long long)total_wait, vcpu_wait_ns, dom->cpu_weight, dom->cpu_cap,
		    dom->has_cgroup ? dom->cgroup.dir : "-", io, addrs, migrate_keys);
}

/* What the vifs' watcher saw: `lodge addr` and the dashboard's detail view. */
void ctl_peers(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	const char *vifs[DOMAIN_VIFS_MAX];
	unsigned nvifs = hotplug_vif_names(c->dom, vifs, DOMAIN_VIFS_MAX);
	char buf[8192];

	if (!c->dom->netwatch) {
		client_send(cl, "error domain %s has no watched vifs\n", c->dom->name);
		return;
	}
	netwatch_format_peers(c->dom->netwatch, vifs, nvifs, buf, sizeof(buf));
	client_send(cl, "ok\n%s\n", buf);
}
