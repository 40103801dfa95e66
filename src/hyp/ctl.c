#include "ctl.h"
#include "console.h"
#include "dev/devices.h"
#include "domain.h"
#include "log.h"
#include "netwatch/netwatch.h"
#include "proto.h"
#include "save/save.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CTL_MAX_CLIENTS  16
#define CTL_REPLAY_BYTES (16 * 1024)   /* console history shown on attach */

struct ctl_client {
	int fd;
	enum ctl_level level;
	char in[PROTO_LINE_MAX];
	size_t in_len;
	bool console;              /* raw console stream after "ok" */
	uint64_t con_pos;          /* next console byte to send */
	uint8_t out[4096];         /* console bytes the socket would not take yet */
	size_t out_len, out_off;
	int passed_fd;             /* a descriptor sent with the request (save, migrate), or -1 */
};

struct ctl {
	struct domain *dom;
	struct uart *com1;
	int in_fd, listen_fd, sig_fd;
	bool destroyed;
	struct ctl_client clients[CTL_MAX_CLIENTS];
	uint8_t pending[256];      /* console input the UART has not taken yet */
	size_t pending_len, pending_off;
	/* A save or migration (save/save.h): its thread, the client waiting
	 * for its end, and a snapshot's hold on the paused domain. */
	struct save_job *job;
	enum save_mode job_mode;
	struct ctl_client *job_client;
	bool snapshot_held;
	struct save_progress last;     /* for status */
	bool has_last;
	bool told_preserved;           /* the log says why a preserved domain stopped */
};

static const char *const state_names[] = { "running", "paused", "shutdown", "crashed" };

static const char *ctl_state(struct ctl *c)
{
	int end = atomic_load(&c->dom->end);

	if (end == DOMAIN_RUNNING)
		return c->dom->paused ? state_names[1] : state_names[0];
	return end == DOMAIN_CRASH ? state_names[3] : state_names[2];
}

static void client_close(struct ctl_client *cl)
{
	if (cl->fd >= 0)
		close(cl->fd);
	cl->fd = -1;
	cl->in_len = 0;
	cl->console = false;
	cl->out_len = cl->out_off = 0;
	if (cl->passed_fd >= 0)
		close(cl->passed_fd);
	cl->passed_fd = -1;
}

/* Replies are small: send them whole or drop a client that will not read.
 * 8 KiB holds a status or vcpu-list reply for 64 vCPUs. */
void client_send(struct ctl_client *cl, const char *fmt, ...)
{
	char buf[16384];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	if (send(cl->fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL) != n)
		client_close(cl);
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

static void ctl_status(struct ctl *c, struct ctl_client *cl)
{
	struct domain *dom = c->dom;
	char vcpu_ns[LODGE_MAX_VCPUS * 21 + 1] = "", vcpu_wait_ns[LODGE_MAX_VCPUS * 21 + 1] = "";
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
	netwatch_format_addrs(dom->netwatch, addrs, sizeof(addrs));
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
	client_send(cl, "ok\nname %s\nid %u\npid %d\nstate %s\nvcpus %u\nmemory_mib %lu\n%s"
		    "cpu_ns %llu\nvcpu_ns %s\nrss_kib %lu\nksm_shared_kib %lu\nthp_kib %lu\n"
		    "start_time %ld\nuptime_s %llu\nkernel %s\nend_reason %s\ncpu_wait_ns %llu\nvcpu_wait_ns %s\n"
		    "cpu_weight %u\ncpu_cap %u\ncgroup %s\n%s%s%s\n",
		    dom->name, dom->id, (int)getpid(), ctl_state(c), dom->nvcpus, dom->memory_mib, mem_keys,
		    (unsigned long long)total, vcpu_ns, rss_pages * page_kib, ksm_pages * page_kib, thp_kib(now_ns),
		    dom->start_time, (unsigned long long)((now_ns - dom->start_ns) / 1000000000ULL),
		    kernel, dom->end_reason[0] ? dom->end_reason : "-",
		    (unsigned long long)total_wait, vcpu_wait_ns, dom->cpu_weight, dom->cpu_cap,
		    dom->has_cgroup ? dom->cgroup.dir : "-", io, addrs, migrate_keys);
}

/* What the vifs' watcher saw: `lodge addr` and the dashboard's detail view. */
static void ctl_peers(struct ctl *c, struct ctl_client *cl)
{
	char buf[8192];

	if (!c->dom->netwatch) {
		client_send(cl, "error domain %s has no watched vifs\n", c->dom->name);
		return;
	}
	netwatch_format_peers(c->dom->netwatch, buf, sizeof(buf));
	client_send(cl, "ok\n%s\n", buf);
}

static void ctl_attach_console(struct ctl *c, struct ctl_client *cl, bool force)
{
	unsigned i;
	uint64_t head = console_head();

	for (i = 0; i < CTL_MAX_CLIENTS; i++) {
		struct ctl_client *other = &c->clients[i];

		if (other != cl && other->fd >= 0 && other->console) {
			if (!force) {
				client_send(cl, "error the console is in use by another client "
					    "(lodge console --force takes it over)\n");
				return;
			}
			/* Tell the one being replaced why its console ended. */
			send(other->fd, "\r\n[lodge: console taken over by another client]\r\n", 50,
			     MSG_DONTWAIT | MSG_NOSIGNAL);
			client_close(other);
		}
	}
	client_send(cl, "ok\n");
	if (cl->fd < 0)
		return;
	cl->console = true;
	cl->con_pos = head > CTL_REPLAY_BYTES ? head - CTL_REPLAY_BYTES : 0;
}

/* The last bytes of console output, then close: `lodge console --log`. */
static void ctl_console_log(struct ctl_client *cl, const char *arg)
{
	uint64_t head = console_head(), want = arg ? strtoull(arg, NULL, 10) : CONSOLE_HISTORY;
	uint64_t pos = head > want ? head - want : 0;
	uint8_t buf[4096];
	size_t n;

	client_send(cl, "ok\n");
	while (cl->fd >= 0 && (n = console_read(&pos, buf, sizeof(buf))) > 0) {
		int fl = fcntl(cl->fd, F_GETFL);

		/* Blocking for this one-shot dump: the client asked for it all. */
		fcntl(cl->fd, F_SETFL, fl & ~O_NONBLOCK);
		if (send(cl->fd, buf, n, MSG_NOSIGNAL) != (ssize_t)n)
			break;
	}
	client_close(cl);
}

/* save / migrate: the stream goes to the descriptor the agent sent with
 * the request (a pipe to the save file, a socket to the receiver); the
 * reply waits for the job's end (ctl_save_event). */
static void ctl_save_start(struct ctl *c, struct ctl_client *cl, enum save_mode mode)
{
	int rc;

	if (cl->passed_fd < 0) {
		client_send(cl, "error %s needs a descriptor sent with the request\n",
			    mode == SAVE_LIVE ? "migrate" : "save");
		return;
	}
	if ((rc = save_job_start(c->dom, cl->passed_fd, mode, &c->job))) {
		client_send(cl, "error cannot start the %s: %s\n", mode == SAVE_LIVE ? "migration" : "save",
			    strerror(-rc));
		return;
	}
	cl->passed_fd = -1;             /* the job's now */
	c->job_mode = mode;
	c->job_client = cl;
	c->has_last = false;
	log_info("%s of domain %s started", mode == SAVE_LIVE ? "live migration" : "save", c->dom->name);
}

/* After a snapshot is written: the agent says whether the domain goes
 * (the file is safe) or runs on (--keep, or the file could not be kept). */
static void ctl_save_end(struct ctl *c, struct ctl_client *cl, const char *what)
{
	if (!c->snapshot_held || cl != c->job_client) {
		client_send(cl, "error no save of this connection is waiting\n");
		return;
	}
	if (strcmp(what, "destroy") == 0) {
		c->snapshot_held = false;
		domain_end(c->dom, DOMAIN_STOPPED, "saved and destroyed");
		c->destroyed = true;
	} else if (strcmp(what, "resume") == 0) {
		c->snapshot_held = false;
		save_snapshot_release(c->dom, true);
	} else {
		client_send(cl, "error save-end takes destroy or resume\n");
		return;
	}
	c->job_client = NULL;
	client_send(cl, "ok\n");
}

/* The job made progress or ended: tell its client, and act on the end. */
static void ctl_save_event(struct ctl *c)
{
	struct ctl_client *cl = c->job_client && c->job_client->fd >= 0 ? c->job_client : NULL;
	struct save_progress p;
	char why[256];
	int rc;
	bool ended = save_job_read(c->job, &p, &rc, why, sizeof(why));

	c->last = p;
	c->has_last = true;
	if (!ended) {
		if (cl && c->job_mode == SAVE_LIVE && p.phase == SAVE_PRECOPY)
			client_send(cl, "progress round %u dirty %llu pages %llu rate_kib %llu\n", p.round,
				    (unsigned long long)p.dirty, (unsigned long long)p.pages,
				    (unsigned long long)p.rate_kib);
		return;
	}
	save_job_free(c->job);
	c->job = NULL;
	if (rc) {
		log_err("%s of domain %s failed: %s", c->job_mode == SAVE_LIVE ? "migration" : "save",
			c->dom->name, why);
		if (cl)
			client_send(cl, "error %s\n", why);
		c->job_client = NULL;
		return;
	}
	if (c->job_mode == SAVE_LIVE) {
		log_info("domain %s migrated: downtime %llu us, %u rounds, %llu pages", c->dom->name,
			 (unsigned long long)p.downtime_us, p.round, (unsigned long long)p.pages);
		if (cl)
			client_send(cl, "ok downtime_us %llu total_us %llu rounds %u pages %llu bytes %llu\n",
				    (unsigned long long)p.downtime_us, (unsigned long long)p.total_us, p.round,
				    (unsigned long long)p.pages, (unsigned long long)p.bytes);
		c->job_client = NULL;
		domain_end(c->dom, DOMAIN_STOPPED, "migrated away");
		c->destroyed = true;
		return;
	}
	/* A written snapshot holds the domain paused until the agent says
	 * what becomes of it -- or until it goes away without saying. */
	if (!cl) {
		save_snapshot_release(c->dom, true);
		c->job_client = NULL;
		return;
	}
	c->snapshot_held = true;
	client_send(cl, "ok pages %llu bytes %llu time_us %llu\n", (unsigned long long)p.pages,
		    (unsigned long long)p.bytes, (unsigned long long)p.total_us);
}

static void ctl_request(struct ctl *c, struct ctl_client *cl, char *line)
{
	char *argv[CTL_MAX_ARGS] = { 0 }, err[PROTO_LINE_MAX + 128];
	int argc = ctl_parse_request(line, argv, err, sizeof(err)), end = atomic_load(&c->dom->end);

	if (argc < 0) {
		client_send(cl, "%s", err);
		return;
	}
	if (cl->level != CTL_CONTROL && !ctl_command_reads_only(argv[1])) {
		client_send(cl, "error permission denied: '%s' needs root or the control group "
			    "(the stats group may only read)\n", argv[1]);
	} else if (strcmp(argv[1], "status") == 0) {
		ctl_status(c, cl);
	} else if (strcmp(argv[1], "destroy") == 0) {
		domain_end(c->dom, DOMAIN_STOPPED, "destroyed from the host");
		c->destroyed = true;
		client_send(cl, "ok\n");
	} else if (strcmp(argv[1], "peers") == 0) {
		ctl_peers(c, cl);
	} else if (strcmp(argv[1], "console") == 0) {
		ctl_attach_console(c, cl, argc > 2 && strcmp(argv[2], "force") == 0);
	} else if (strcmp(argv[1], "console-log") == 0) {
		ctl_console_log(cl, argc > 2 ? argv[2] : NULL);
	} else if (strcmp(argv[1], "vcpu-list") == 0) {
		ctl_vcpu_list(c->dom, cl);
	} else if (end != DOMAIN_RUNNING) {
		client_send(cl, "error domain %s is not running (%s)\n", c->dom->name, c->dom->end_reason);
	} else if (strcmp(argv[1], "save-end") == 0) {
		ctl_save_end(c, cl, argc > 2 ? argv[2] : "");
	} else if (c->job || c->snapshot_held) {
		client_send(cl, "error domain %s is being %s\n", c->dom->name,
			    c->job_mode == SAVE_LIVE ? "migrated" : "saved");
	} else if (strcmp(argv[1], "save") == 0) {
		ctl_save_start(c, cl, SAVE_SNAPSHOT);
	} else if (strcmp(argv[1], "migrate") == 0) {
		ctl_save_start(c, cl, SAVE_LIVE);
	} else if (strcmp(argv[1], "pause") == 0) {
		vcpu_pause_all(c->dom);
		client_send(cl, "ok\n");
	} else if (strcmp(argv[1], "unpause") == 0) {
		vcpu_unpause_all(c->dom);
		client_send(cl, "ok\n");
	} else if (strcmp(argv[1], "shutdown") == 0) {
		if (c->dom->paused)
			vcpu_unpause_all(c->dom);   /* a paused guest cannot hear the button */
		acpi_pm_power_button();
		client_send(cl, "ok\n");
	} else if (strcmp(argv[1], "vcpu-pin") == 0) {
		ctl_vcpu_pin(c->dom, cl, argc - 2, argv + 2);
	} else if (strcmp(argv[1], "sched") == 0) {
		ctl_sched(c->dom, cl, argc - 2, argv + 2);
	} else if (strcmp(argv[1], "reboot") == 0) {
		domain_end(c->dom, DOMAIN_REBOOT, "rebooted from the host");
		client_send(cl, "ok\n");
	} else if (strcmp(argv[1], "mem-set") == 0) {
		char why[256];

		if (domain_mem_set(c->dom, argc > 2 ? argv[2] : NULL, why, sizeof(why)))
			client_send(cl, "error %s\n", why);
		else
			client_send(cl, "ok\n");
	} else {
		client_send(cl, "error unknown command '%s'\n", argv[1]);
	}
}

/* Request bytes, and a descriptor if one came with them (SCM_RIGHTS).
 * Only the last one sent is kept; any others are closed at once. */
static ssize_t recv_request(struct ctl_client *cl, char *buf, size_t len)
{
	union { struct cmsghdr h; char b[CMSG_SPACE(4 * sizeof(int))]; } u;
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			    .msg_controllen = sizeof(u.b) };
	struct cmsghdr *h;
	ssize_t n = recvmsg(cl->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	for (h = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL; h; h = CMSG_NXTHDR(&m, h)) {
		size_t i, nfds;
		int fds[4];

		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		nfds = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (nfds > 4)
			nfds = 4;
		memcpy(fds, CMSG_DATA(h), nfds * sizeof(int));
		for (i = 0; i < nfds; i++) {
			if (cl->passed_fd >= 0)
				close(cl->passed_fd);
			cl->passed_fd = fds[i];
		}
	}
	return n;
}

/* Bytes from a client: request lines, or console input once attached. */
static void ctl_client_input(struct ctl *c, struct ctl_client *cl)
{
	char buf[PROTO_LINE_MAX];
	ssize_t n;

	if (cl->console) {
		if (c->pending_len) 
			return;                       /* the UART is still busy with earlier input */
		n = recv(cl->fd, c->pending, sizeof(c->pending), MSG_DONTWAIT);
		if (n <= 0) {
			if (n == 0 || errno != EAGAIN)
				client_close(cl);
			return;
		}
		c->pending_len = n;
		c->pending_off = 0;
		return;
	}
	n = recv_request(cl, buf, sizeof(buf) - cl->in_len);
	if (n <= 0) {
		if (n == 0 || errno != EAGAIN)
			client_close(cl);
		return;
	}
	memcpy(cl->in + cl->in_len, buf, n);
	cl->in_len += n;
	while (cl->fd >= 0 && !cl->console) {
		char *nl = memchr(cl->in, '\n', cl->in_len);
		size_t len;

		if (!nl) {
			if (cl->in_len == sizeof(cl->in)) {
				client_send(cl, "error request longer than %d bytes\n", PROTO_LINE_MAX);
				client_close(cl);
			}
			return;
		}
		*nl = '\0';
		len = nl - cl->in + 1;
		ctl_request(c, cl, cl->in);
		if (cl->fd < 0)
			return;
		memmove(cl->in, cl->in + len, cl->in_len - len);
		cl->in_len -= len;
	}
}

/* Send an attached console client what the guest printed since last time. */
static void ctl_client_output(struct ctl_client *cl)
{
	while (cl->fd >= 0) {
		ssize_t w;

		if (cl->out_off == cl->out_len) {
			cl->out_len = console_read(&cl->con_pos, cl->out, sizeof(cl->out));
			cl->out_off = 0;
			if (!cl->out_len)
				return;
		}
		w = send(cl->fd, cl->out + cl->out_off, cl->out_len - cl->out_off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0) {
			if (errno != EAGAIN)
				client_close(cl);
			return;             /* poll for POLLOUT */
		}
		cl->out_off += w;
	}
}

static struct ctl_access ctl_access = { -1, -1 };

static void ctl_accept(struct ctl *c)
{
	int fd = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	enum ctl_level level;
	char who[64], msg[160];
	unsigned i;
	int n;

	if (fd < 0)
		return;
	level = ctl_peer_level(fd, &ctl_access, who, sizeof(who));
	if (level == CTL_DENIED) {
		n = snprintf(msg, sizeof(msg), "error permission denied: %s is not root nor in the group "
			     "lodge.conf grants control or stats\n", who);
		send(fd, msg, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		close(fd);
		return;
	}
	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		if (c->clients[i].fd < 0) {
			c->clients[i].fd = fd;
			c->clients[i].level = level;
			c->clients[i].passed_fd = -1;
			return;
		}
	send(fd, "error too many clients\n", 23, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
}

static void ctl_stdin(struct ctl *c)
{
	ssize_t n = read(c->in_fd, c->pending, sizeof(c->pending));

	if (n <= 0) {
		c->in_fd = -1;            /* input closed: the guest runs on */
		return;
	}
	c->pending_len = n;
	c->pending_off = 0;
	if (console_is_tty() && memchr(c->pending, CONSOLE_ESCAPE, n))
		domain_end(c->dom, DOMAIN_STOPPED, "stopped from the console (Ctrl-])");
}

static bool ctl_done(struct ctl *c)
{
	if (atomic_load(&c->dom->end) == DOMAIN_RUNNING)
		return false;
	if (c->destroyed || domain_action_for(c->dom) != ACTION_PRESERVE)
		return true;
	/* Kept for inspection: say why now, beside any registers logged,
	 * not only once someone destroys it. */
	if (!c->told_preserved) {
		log_warn("domain %s stopped (%s): preserved until lodge destroy", c->dom->name,
			 c->dom->end_reason);
		c->told_preserved = true;
	}
	return false;
}

bool ctl_run(struct domain *dom, struct uart *com1, int in_fd, int listen_fd, int sig_fd)
{
	struct ctl c = { .dom = dom, .com1 = com1, .in_fd = in_fd, .listen_fd = listen_fd,
			 .sig_fd = sig_fd };
	enum { P_END, P_SIG, P_STDIN, P_LISTEN, P_CONSOLE, P_JOB, P_CLIENT0 };
	struct pollfd pfd[P_CLIENT0 + CTL_MAX_CLIENTS];
	unsigned i;

	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		c.clients[i].fd = c.clients[i].passed_fd = -1;
	while (!ctl_done(&c)) {
		int ended = atomic_load(&dom->end) != DOMAIN_RUNNING;

		pfd[P_END] = (struct pollfd){ ended ? -1 : dom->end_eventfd, POLLIN, 0 };
		pfd[P_SIG] = (struct pollfd){ sig_fd, POLLIN, 0 };
		pfd[P_STDIN] = (struct pollfd){ c.pending_len ? -1 : c.in_fd, POLLIN, 0 };
		pfd[P_LISTEN] = (struct pollfd){ listen_fd, POLLIN, 0 };
		pfd[P_CONSOLE] = (struct pollfd){ console_event_fd(), POLLIN, 0 };
		pfd[P_JOB] = (struct pollfd){ c.job ? save_job_event_fd(c.job) : -1, POLLIN, 0 };
		for (i = 0; i < CTL_MAX_CLIENTS; i++) {
			struct ctl_client *cl = &c.clients[i];
			short ev = (cl->console && c.pending_len) ? 0 : POLLIN;

			if (cl->console && cl->out_off < cl->out_len)
				ev |= POLLOUT;
			pfd[P_CLIENT0 + i] = (struct pollfd){ cl->fd, ev, 0 };
		}
		/* Input the UART could not take yet: retry shortly. */
		if (poll(pfd, P_CLIENT0 + CTL_MAX_CLIENTS, c.pending_len ? 10 : -1) < 0 && errno != EINTR)
			break;

		if (pfd[P_SIG].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
				domain_end(dom, DOMAIN_STOPPED, "stopped by signal %s", strsignal(si.ssi_signo));
				c.destroyed = true;
			}
		}
		if (pfd[P_STDIN].revents & (POLLIN | POLLHUP))
			ctl_stdin(&c);
		if (pfd[P_LISTEN].revents & POLLIN)
			ctl_accept(&c);
		if (pfd[P_CONSOLE].revents & POLLIN)
			console_event_drain();
		if (c.job && (pfd[P_JOB].revents & POLLIN))
			ctl_save_event(&c);
		for (i = 0; i < CTL_MAX_CLIENTS; i++) {
			struct ctl_client *cl = &c.clients[i];
			short rev = pfd[P_CLIENT0 + i].revents;

			if (cl->fd < 0 || pfd[P_CLIENT0 + i].fd != cl->fd)
				continue;
			if (rev & (POLLIN | POLLHUP | POLLERR))
				ctl_client_input(&c, cl);
			if (cl->console)
				ctl_client_output(cl);
		}
		if (c.job_client && c.job_client->fd < 0) {
			/* The agent went away: a held snapshot runs on; a job
			 * still running finishes without anyone to tell. */
			if (c.snapshot_held) {
				log_warn("the client of domain %s's save went away: the domain runs on",
					 dom->name);
				c.snapshot_held = false;
				save_snapshot_release(dom, true);
			}
			c.job_client = NULL;
		}
		if (c.pending_len) {
			c.pending_off += uart_receive(com1, c.pending + c.pending_off,
						      c.pending_len - c.pending_off);
			if (c.pending_off == c.pending_len)
				c.pending_len = 0;
		}
	}
	for (i = 0; i < CTL_MAX_CLIENTS; i++) {
		if (c.clients[i].console)
			ctl_client_output(&c.clients[i]);   /* the last words, best effort */
		client_close(&c.clients[i]);
	}
	return c.destroyed;
}

int ctl_listen(const char *dir, const struct ctl_access *access)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	bool shared = access->control_gid >= 0 || access->stats_gid >= 0;
	int fd;

	ctl_access = *access;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		log_err("cannot create %s: %s", dir, strerror(errno));
		return -errno;
	}
	/* Shared: others may reach the socket by name, never list or read. */
	if (chmod(dir, shared ? 0711 : 0700) < 0) {
		log_err("cannot set the mode of %s: %s", dir, strerror(errno));
		return -errno;
	}
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, PROTO_SOCKET) >= sizeof(sa.sun_path)) {
		log_err("runtime directory path %s is too long for a socket", dir);
		return -ENAMETOOLONG;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* A socket that answers belongs to a live domain; one that refuses
	 * was left by a lodge-hyp that died, and is replaced. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		log_err("a domain is already running in %s", dir);
		close(fd);
		return -EEXIST;
	}
	unlink(sa.sun_path);
	close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0) {
		log_err("cannot listen on %s: %s", sa.sun_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	if (shared && chmod(sa.sun_path, 0666) < 0) {
		log_err("cannot set the mode of %s: %s", sa.sun_path, strerror(errno));
		close(fd);
		return -EIO;
	}
	return fd;
}
