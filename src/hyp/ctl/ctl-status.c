/* The status and peers replies: what `lodge list`, `lodge top` and the
 * dashboard read of a domain, every second for each of 50 domains, so
 * nothing here walks more than it must. */
#include "ctl/ctl-loop.h"
#include "domain.h"
#include "hotplug.h"
#include "log.h"
#include "netwatch/netwatch.h"
#include "proto.h"

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

/* Per-device lines ("disk0 ...", "vif0 ...") and the sums over each kind,
 * appended at buf + n: the new length. */
static size_t format_io(const struct domain *dom, char *buf, size_t len, size_t n)
{
	static const enum proto_status_key dev_key[] = { [IO_DISK] = PROTO_KEY_DISK, [IO_VIF] = PROTO_KEY_VIF };
	static const enum proto_status_key slots_key[] = { [IO_DISK] = PROTO_KEY_DISK_SLOTS, [IO_VIF] = PROTO_KEY_VIF_SLOTS };
	static const enum proto_status_key sum_keys[][4] = {
		[IO_DISK] = { PROTO_KEY_DISK_RD_OPS, PROTO_KEY_DISK_RD_BYTES, PROTO_KEY_DISK_WR_OPS, PROTO_KEY_DISK_WR_BYTES },
		[IO_VIF] = { PROTO_KEY_NET_RX_PACKETS, PROTO_KEY_NET_RX_BYTES, PROTO_KEY_NET_TX_PACKETS,
			     PROTO_KEY_NET_TX_BYTES },
	};
	uint64_t sum[2][4] = { { 0 } };
	unsigned count[2] = { 0, 0 }, i, k;

	/* Each disk's and vif's PCI slot, in guest order ("-": none): a
	 * detach names the slot. */
	for (k = 0; k < 2; k++) {
		char slots[LODGE_MAX_IO_DEVICES * 4 + 2] = "";
		size_t m = 0;

		for (i = 0; i < dom->nio && m < sizeof(slots); i++)
			if (dom->io[i].kind == (enum io_kind)k)
				m += (size_t)snprintf(slots + m, sizeof(slots) - m, "%s%u", m ? " " : "", dom->io[i].slot);
		n = proto_key_printf(buf, len, n, slots_key[k], 0, "%s", m ? slots : "-");
	}
	for (i = 0; i < dom->nio; i++) {
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
		n = proto_key_printf(buf, len, n, dev_key[kind], count[kind]++, "%llu %llu %llu %llu %llu",
				     (unsigned long long)v[0], (unsigned long long)v[1], (unsigned long long)v[2],
				     (unsigned long long)v[3], (unsigned long long)v[4]);
	}
	for (i = 0; i < 2; i++)
		for (k = 0; k < 4; k++)
			n = proto_key_printf(buf, len, n, sum_keys[i][k], 0, "%llu", (unsigned long long)sum[i][k]);
	return n;
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

/* Each key as proto.h's table names it, into one reply. */
void ctl_status(struct ctl *c, struct ctl_client *cl, int argc, char **argv)
{
	struct domain *dom = c->dom;
	char vcpu_ns[DOMAIN_VCPUS_MAX * 21 + 1] = "", vcpu_wait_ns[DOMAIN_VCPUS_MAX * 21 + 1] = "";
	char kernel[4096], *buf;
	uint64_t total = 0, total_wait = 0, now_ns;
	struct timespec ts;
	unsigned long rss_pages, ksm_pages, page_kib = sysconf(_SC_PAGESIZE) / 1024;
	const size_t len = 2 * sizeof(vcpu_ns) + sizeof(kernel) + LODGE_MAX_IO_DEVICES * 112 + 8 * 32 + 4096 + 2048;
	size_t n = 0;
	unsigned i;

	if (!(buf = malloc(len))) {
		client_send(cl, "error out of memory\n");
		return;
	}
	buf[0] = '\0';
	text_escape(kernel, sizeof(kernel), dom->kernel);     /* a value never holds a newline */
	for (i = 0; i < dom->nvcpus; i++) {
		uint64_t ns = vcpu_cpu_ns(&dom->vcpus[i]);
		size_t vlen = strlen(vcpu_ns);

		total += ns;
		snprintf(vcpu_ns + vlen, sizeof(vcpu_ns) - vlen, "%s%llu", i ? " " : "", (unsigned long long)ns);
		ns = sched_vcpu_wait_ns(&dom->vcpus[i]);
		vlen = strlen(vcpu_wait_ns);
		total_wait += ns;
		snprintf(vcpu_wait_ns + vlen, sizeof(vcpu_wait_ns) - vlen, "%s%llu", i ? " " : "",
			 (unsigned long long)ns);
	}
	rss_pages = resident_pages();
	ksm_pages = ksm_merged_pages();
	rss_pages = ksm_pages < rss_pages ? rss_pages - ksm_pages : 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now_ns = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	n = proto_key_printf(buf, len, n, PROTO_KEY_NAME, 0, "%s", dom->name);
	n = proto_key_printf(buf, len, n, PROTO_KEY_ID, 0, "%u", dom->id);
	n = proto_key_printf(buf, len, n, PROTO_KEY_PID, 0, "%d", (int)getpid());
	n = proto_key_printf(buf, len, n, PROTO_KEY_STATE, 0, "%s", ctl_state(c));
	n = proto_key_printf(buf, len, n, PROTO_KEY_VCPUS, 0, "%u", vcpu_online_count(dom));
	n = proto_key_printf(buf, len, n, PROTO_KEY_MAX_VCPUS, 0, "%u", dom->nvcpus);
	n = proto_key_printf(buf, len, n, PROTO_KEY_MEMORY_MIB, 0, "%lu", dom->memory_mib);
	domain_mem_status(dom, buf + n, len - n);
	n += strlen(buf + n);
	n = proto_key_printf(buf, len, n, PROTO_KEY_CPU_NS, 0, "%llu", (unsigned long long)total);
	n = proto_key_printf(buf, len, n, PROTO_KEY_VCPU_NS, 0, "%s", vcpu_ns);
	n = proto_key_printf(buf, len, n, PROTO_KEY_RSS_KIB, 0, "%lu", rss_pages * page_kib);
	n = proto_key_printf(buf, len, n, PROTO_KEY_KSM_SHARED_KIB, 0, "%lu", ksm_pages * page_kib);
	n = proto_key_printf(buf, len, n, PROTO_KEY_THP_KIB, 0, "%lu", thp_kib(now_ns));
	n = proto_key_printf(buf, len, n, PROTO_KEY_START_TIME, 0, "%ld", (long)dom->start_time);
	n = proto_key_printf(buf, len, n, PROTO_KEY_UPTIME_S, 0, "%llu",
			     (unsigned long long)((now_ns - dom->start_ns) / 1000000000ULL));
	n = proto_key_printf(buf, len, n, PROTO_KEY_KERNEL, 0, "%s", kernel);
	n = proto_key_printf(buf, len, n, PROTO_KEY_END_REASON, 0, "%s", dom->end_reason[0] ? dom->end_reason : "-");
	n = proto_key_printf(buf, len, n, PROTO_KEY_CPU_WAIT_NS, 0, "%llu", (unsigned long long)total_wait);
	n = proto_key_printf(buf, len, n, PROTO_KEY_VCPU_WAIT_NS, 0, "%s", vcpu_wait_ns);
	n = proto_key_printf(buf, len, n, PROTO_KEY_CPU_WEIGHT, 0, "%u", dom->cpu_weight);
	n = proto_key_printf(buf, len, n, PROTO_KEY_CPU_CAP, 0, "%u", dom->cpu_cap);
	n = proto_key_printf(buf, len, n, PROTO_KEY_CGROUP, 0, "%s", dom->has_cgroup ? dom->cgroup.dir : "-");
	n = format_io(dom, buf, len, n);
	{
		const char *vifs[DOMAIN_VIFS_MAX];
		unsigned nvifs = hotplug_vif_names(dom, vifs, DOMAIN_VIFS_MAX);

		netwatch_format_addrs(dom->netwatch, vifs, nvifs, buf + n, len - n);
		n += strlen(buf + n);
	}
	if (c->has_last) {
		n = proto_key_printf(buf, len, n, PROTO_KEY_SAVE_KIND, 0, "%s",
				     proto_save_kind_name(c->job_mode == SAVE_LIVE ? PROTO_SAVE_KIND_MIGRATE
									      : PROTO_SAVE_KIND_SAVE));
		/* save.h's phases follow proto.h's, word for word */
		n = proto_key_printf(buf, len, n, PROTO_KEY_SAVE_PHASE, 0, "%s",
				     proto_save_phase_name((enum proto_save_phase)c->last.phase));
		n = proto_key_printf(buf, len, n, PROTO_KEY_SAVE_ROUND, 0, "%u", c->last.round);
		n = proto_key_printf(buf, len, n, PROTO_KEY_SAVE_PAGES, 0, "%llu", (unsigned long long)c->last.pages);
		n = proto_key_printf(buf, len, n, PROTO_KEY_SAVE_DIRTY, 0, "%llu", (unsigned long long)c->last.dirty);
		proto_key_printf(buf, len, n, PROTO_KEY_SAVE_RATE_KIB, 0, "%llu", (unsigned long long)c->last.rate_kib);
	}
	client_send(cl, "ok\n%s\n", buf);
	free(buf);
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
