/* lodge-hyp: one process per domain.  Standalone mode: the guest's serial
 * console is this terminal; the exit status says how the domain ended. */
#include "acpi/acpi.h"
#include "backend/disk.h"
#include "backend/tap.h"
#include "boot/boot.h"
#include "console.h"
#include "cpulist.h"
#include "ctl.h"
#include "dev/devices.h"
#include "dev/pci.h"
#include "domain.h"
#include "log.h"
#include "netwatch/netwatch.h"
#include "save/announce.h"
#include "save/cpu.h"
#include "save/ram.h"
#include "save/save.h"
#include "version.h"
#include "runtime.h"
#include "sandbox.h"
#include "virtio/balloon.h"
#include "virtio/blk.h"
#include "virtio/net.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIN_MEMORY_MIB DOMAIN_MEMORY_MIN_MIB
#define MAX_DISKS DOMAIN_DISKS_MAX
#define MAX_NICS DOMAIN_VIFS_MAX
_Static_assert(MAX_DISKS + MAX_NICS <= LODGE_MAX_IO_DEVICES, "every device has counters");

struct options {
	const char *kernel, *initrd, *cmdline;
	unsigned long memory_mib;
	unsigned long maxmem_mib;      /* 0: = memory_mib */
	int ksm, hugepages;            /* madvise guest RAM MERGEABLE, HUGEPAGE */
	unsigned long vcpus;
	int probe;
	unsigned ndisks;
	struct disk disks[MAX_DISKS];
	unsigned nnics;
	struct tap nics[MAX_NICS];
	/* Managed mode (the agent's): a runtime directory with the control
	 * socket and console log; detached from the caller's terminal. */
	const char *name, *runtime_dir;
	unsigned long id, console_log_kib;
	int detach;
	enum domain_action on_poweroff, on_reboot, on_crash;
	/* CPU scheduling: the vCPUs' affinity, and a cgroup for weight and cap. */
	const char *cpus, *cgroup;
	const char *vcpu_cpus[LODGE_MAX_VCPUS];   /* --vcpu-cpus N=LIST, by N */
	unsigned long cpu_weight, cap;
	int sched_given;           /* --cpu-weight or --cap was given */
	/* Groups granted the control socket besides root (-1: none). */
	struct ctl_access access;
	/* --incoming FD: restore from a stream on FD instead of booting. */
	long incoming_fd;
	/* --paused: the vCPUs stay parked until unpause (xl create -p). */
	int paused;
	/* The sandbox's user (NULL: lodge, else nobody), or none at all. */
	const char *user;
	int no_sandbox;
};

static struct domain the_domain = { .kvm_fd = -1, .vm_fd = -1, .end = DOMAIN_RUNNING,
				    .end_eventfd = -1 };

void domain_end(struct domain *dom, enum domain_end how, const char *fmt, ...)
{
	int expected = DOMAIN_RUNNING;
	uint64_t one = 1;
	va_list ap;

	/* The reason is written before end is published, so whoever sees
	 * end set also sees the reason. */
	static atomic_flag claimed = ATOMIC_FLAG_INIT;
	if (atomic_flag_test_and_set(&claimed))
		return;
	char reason[sizeof(dom->end_reason)];

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	/* It goes out as a line of status replies: it may quote a save image. */
	text_escape(dom->end_reason, sizeof(dom->end_reason), reason);
	atomic_compare_exchange_strong(&dom->end, &expected, how);
	if (dom->end_eventfd >= 0 && write(dom->end_eventfd, &one, sizeof(one)) < 0) {
		/* the eventfd cannot overflow with one write */
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lodge-hyp --kernel FILE [--initrd FILE] [--cmdline TEXT]\n"
		"                 [--memory MiB] [--maxmem MiB] [--ksm] [--hugepages] [--vcpus N]\n"
		"                 [--disk PATH[,ro][,id=NAME][,direct]]...\n"
		"                 [--net tap=NAME[,mac=MAC][,bridge=BR]]...\n"
		"                 [--name NAME --runtime-dir DIR [--id N] [--detach]\n"
		"                  [--console-log-size KiB] [--control-group GID] [--stats-group GID]\n"
		"                  [--control-idle-timeout SECONDS]\n"
		"                  [--on-poweroff|--on-reboot|--on-crash\n"
		"                  destroy|restart|preserve]]\n"
		"                 [--cpus LIST] [--vcpu-cpus N=LIST]... [--cgroup PATH [--cpu-weight W] [--cap PCT]]\n"
		"                 [--incoming FD] [--paused]\n"
		"                 [--user NAME | --no-sandbox]\n"
		"       lodge-hyp --probe\n"
		"Runs one domain with its serial console on this terminal.\n"
		"Ctrl-] stops the domain. Exit status: 0 guest powered off, 1 error,\n"
		"2 guest rebooted, 3 guest crashed, 4 stopped from the host.\n");
}

static int parse_number(const char *arg, const char *what, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-') {
		log_err("%s must be a whole number, not '%s'", what, arg);
		return -EINVAL;
	}
	return 0;
}

static int parse_action(const char *arg, const char *what, enum domain_action *out)
{
	if (domain_action_parse(arg, out) == 0)
		return 0;
	log_err("%s must be one of %s, not '%s'", what, domain_action_list(), arg);
	return -EINVAL;
}

/* --vcpu-cpus N=LIST: one vCPU's host CPUs (xl's list form of cpus). */
static int parse_vcpu_cpus(char *arg, struct options *o)
{
	char *eq = strchr(arg, '=');
	unsigned long n;

	if (!eq) {
		log_err("--vcpu-cpus '%s' is not VCPU=CPUS like 1=0-3", arg);
		return -EINVAL;
	}
	*eq = '\0';
	if (parse_number(arg, "--vcpu-cpus VCPU", &n))
		return -EINVAL;
	if (n >= LODGE_MAX_VCPUS) {
		log_err("--vcpu-cpus: vCPU %lu is beyond %d", n, LODGE_MAX_VCPUS - 1);
		return -EINVAL;
	}
	o->vcpu_cpus[n] = eq + 1;
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "kernel", required_argument, NULL, 'k' },
		{ "initrd", required_argument, NULL, 'i' },
		{ "cmdline", required_argument, NULL, 'c' },
		{ "memory", required_argument, NULL, 'm' },
		{ "maxmem", required_argument, NULL, 'M' },
		{ "ksm", no_argument, NULL, 'K' },
		{ "hugepages", no_argument, NULL, 'H' },
		{ "vcpus", required_argument, NULL, 'n' },
		{ "disk", required_argument, NULL, 'D' },
		{ "net", required_argument, NULL, 'N' },
		{ "probe", no_argument, NULL, 'p' },
		{ "name", required_argument, NULL, 'a' },
		{ "id", required_argument, NULL, 'I' },
		{ "runtime-dir", required_argument, NULL, 'R' },
		{ "console-log-size", required_argument, NULL, 'L' },
		{ "detach", no_argument, NULL, 'X' },
		{ "on-poweroff", required_argument, NULL, 'P' },
		{ "on-reboot", required_argument, NULL, 'B' },
		{ "on-crash", required_argument, NULL, 'C' },
		{ "cpus", required_argument, NULL, 'U' },
		{ "vcpu-cpus", required_argument, NULL, 'u' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "cpu-weight", required_argument, NULL, 'W' },
		{ "cap", required_argument, NULL, 'A' },
		{ "control-group", required_argument, NULL, 'g' },
		{ "stats-group", required_argument, NULL, 'r' },
		{ "control-idle-timeout", required_argument, NULL, 'T' },
		{ "incoming", required_argument, NULL, 'J' },
		{ "paused", no_argument, NULL, 'Q' },
		{ "user", required_argument, NULL, 'Y' },
		{ "no-sandbox", no_argument, NULL, 'Z' },
		{ "debug", no_argument, NULL, 'd' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	char err[256];

	memset(o, 0, sizeof(*o));
	o->cmdline = "";
	o->memory_mib = 256;
	o->vcpus = 1;
	o->name = "domain";
	o->console_log_kib = 1024;
	o->cpu_weight = CGROUP_WEIGHT_DEFAULT;
	o->access = (struct ctl_access){ .control_gid = -1, .stats_gid = -1 };
	o->incoming_fd = -1;
	opterr = 0;   /* one message of our own, not getopt's plus usage */
	while ((c = getopt_long(argc, argv, ":k:i:c:m:n:pdVh", longopts, NULL)) != -1) {
		const struct option *lo = longopts;

		/* Paths and names go into control replies, file names, logs. */
		while (lo->name && lo->val != c)
			lo++;
		if (optarg && text_find_control(optarg)) {
			log_err("--%s '%s': control characters are not allowed", lo->name ? lo->name : "?", optarg);
			return -EINVAL;
		}
		switch (c) {
		case 'k': o->kernel = optarg; break;
		case 'i': o->initrd = optarg; break;
		case 'c': o->cmdline = optarg; break;
		case 'm': if (parse_number(optarg, "--memory", &o->memory_mib)) return -EINVAL; break;
		case 'M': if (parse_number(optarg, "--maxmem", &o->maxmem_mib)) return -EINVAL; break;
		case 'K': o->ksm = 1; break;
		case 'H': o->hugepages = 1; break;
		case 'n': if (parse_number(optarg, "--vcpus", &o->vcpus)) return -EINVAL; break;
		case 'D':
			if (o->ndisks == MAX_DISKS) {
				log_err("too many disks (at most %d)", MAX_DISKS);
				return -EINVAL;
			}
			if (disk_parse(optarg, &o->disks[o->ndisks], err, sizeof(err))) {
				log_err("%s", err);
				return -EINVAL;
			}
			o->ndisks++;
			break;
		case 'N':
			if (o->nnics == MAX_NICS) {
				log_err("too many network interfaces (at most %d)", MAX_NICS);
				return -EINVAL;
			}
			if (tap_parse(optarg, &o->nics[o->nnics], err, sizeof(err))) {
				log_err("%s", err);
				return -EINVAL;
			}
			o->nnics++;
			break;
		case 'p': o->probe = 1; break;
		case 'a': o->name = optarg; break;
		case 'I': if (parse_number(optarg, "--id", &o->id)) return -EINVAL; break;
		case 'R': o->runtime_dir = optarg; break;
		case 'L': if (parse_number(optarg, "--console-log-size", &o->console_log_kib)) return -EINVAL; break;
		case 'X': o->detach = 1; break;
		case 'P': if (parse_action(optarg, "--on-poweroff", &o->on_poweroff)) return -EINVAL; break;
		case 'B': if (parse_action(optarg, "--on-reboot", &o->on_reboot)) return -EINVAL; break;
		case 'C': if (parse_action(optarg, "--on-crash", &o->on_crash)) return -EINVAL; break;
		case 'U': o->cpus = optarg; break;
		case 'u': if (parse_vcpu_cpus(optarg, o)) return -EINVAL; break;
		case 'G': o->cgroup = optarg; break;
		case 'W': if (parse_number(optarg, "--cpu-weight", &o->cpu_weight)) return -EINVAL; o->sched_given = 1; break;
		case 'A': if (parse_number(optarg, "--cap", &o->cap)) return -EINVAL; o->sched_given = 1; break;
		case 'g':
		case 'r': {
			unsigned long gid;

			if (parse_number(optarg, c == 'g' ? "--control-group" : "--stats-group", &gid))
				return -EINVAL;
			*(c == 'g' ? &o->access.control_gid : &o->access.stats_gid) = (long)gid;
			break;
		}
		case 'T': {
			unsigned long s;

			if (parse_number(optarg, "--control-idle-timeout", &s))
				return -EINVAL;
			if (s < CTL_IDLE_TIMEOUT_MIN_S || s > CTL_IDLE_TIMEOUT_MAX_S) {
				log_err("--control-idle-timeout %s is out of range (%d to %d seconds)", optarg,
					CTL_IDLE_TIMEOUT_MIN_S, CTL_IDLE_TIMEOUT_MAX_S);
				return -EINVAL;
			}
			o->access.idle_timeout_s = s;
			break;
		}
		case 'J': {
			unsigned long fd;

			if (parse_number(optarg, "--incoming", &fd))
				return -EINVAL;
			if (fd > INT_MAX || fcntl((int)fd, F_GETFD) < 0) {
				log_err("--incoming %s is not an open descriptor", optarg);
				return -EINVAL;
			}
			o->incoming_fd = (long)fd;
			break;
		}
		case 'Q': o->paused = 1; break;
		case 'Y': o->user = optarg; break;
		case 'Z': o->no_sandbox = 1; break;
		case 'd': log_set_level(LOG_DEBUG); break;
		case 'V': printf("lodge-hyp %s\n", LODGE_VERSION); exit(0);
		case 'h': usage(stdout); exit(0);
		case ':':
			log_err("option '%s' needs a value", argv[optind - 1]);
			return -EINVAL;
		default:
			log_err("unknown option '%s' (see --help)", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		log_err("unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	if (!o->probe && !o->kernel) {
		log_err("no kernel given (--kernel FILE)");
		return -EINVAL;
	}
	if (!o->runtime_dir && (o->detach || o->on_poweroff == ACTION_PRESERVE ||
				o->on_reboot == ACTION_PRESERVE || o->on_crash == ACTION_PRESERVE)) {
		log_err("--detach and preserve need --runtime-dir (somewhere to reach the domain)");
		return -EINVAL;
	}
	if (o->sched_given && !o->cgroup) {
		log_err("--cpu-weight and --cap need --cgroup (the domain's cgroup under the CPU controller)");
		return -EINVAL;
	}
	if (o->cgroup && (!o->cgroup[0] || o->cgroup[0] == '/' || strstr(o->cgroup, "..") ||
			  strstr(o->cgroup, "//") || o->cgroup[strlen(o->cgroup) - 1] == '/')) {
		log_err("--cgroup '%s' is not a relative path like lodge/web", o->cgroup);
		return -EINVAL;
	}
	if (o->runtime_dir && !domain_name_valid(o->name)) {
		log_err("--name '%s' is not a valid domain name (%s)", o->name, domain_name_rule());
		return -EINVAL;
	}
	return 0;
}

/* Descriptors the caller left open (a shell's redirections, an agent's
 * pipes) are none of the domain's business: neither the supervisor nor
 * the sandboxed child may hold them.  Only stdio and --incoming's stream
 * stay.  Done once the options are read (they name that stream) and
 * before anything of our own is opened. */
static void close_inherited(long keep)
{
	struct rlimit rl;
	unsigned lo = 3;
	int fd;

	if (keep > (long)lo) {
		if (close_range(lo, (unsigned)keep - 1, 0) < 0)
			goto by_hand;
		lo = (unsigned)keep + 1;
	} else if (keep == (long)lo) {
		lo++;
	}
	if (close_range(lo, ~0U, 0) == 0)
		return;
by_hand:
	/* A kernel before 5.9 has no close_range. */
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > INT_MAX)
		rl.rlim_cur = 1 << 20;
	for (fd = 3; fd < (int)rl.rlim_cur; fd++)
		if (fd != keep)
			close(fd);
}

/* Map a whole file read-only; the caller unmaps it once loaded. */
static int map_file(const char *path, const char *what, struct boot_image *img)
{
	struct stat st;
	void *p;
	/* O_NONBLOCK: a FIFO given as a kernel must be refused, not waited on. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0) {
		log_err("cannot open %s %s: %s", what, path, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		log_err("%s %s is not a non-empty regular file", what, path);
		close(fd);
		return -EINVAL;
	}
	p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		log_err("cannot read %s %s: %s", what, path, strerror(errno));
		return -errno;
	}
	*img = (struct boot_image){ .data = p, .size = st.st_size, .path = path };
	return 0;
}

static void unmap_file(struct boot_image *img)
{
	if (img->data)
		munmap((void *)img->data, img->size);
	img->data = NULL;
}

static int open_kvm(struct domain *dom)
{
	int rc = kvm_open(dom);

	if (rc == -ENOENT || rc == -ENXIO || rc == -ENODEV)
		log_err("cannot open /dev/kvm: %s (is KVM available on this host?)", strerror(-rc));
	else if (rc == -EACCES || rc == -EPERM)
		log_err("cannot open /dev/kvm: permission denied (run as root or join the kvm group)");
	else if (rc == -EPROTO)
		log_err("/dev/kvm speaks an unsupported KVM API version");
	else if (rc)
		log_err("cannot open /dev/kvm: %s", strerror(-rc));
	return rc;
}

/* One plain sentence on what this host's KVM means for guests. */
static int probe(void)
{
	struct domain dom = { .kvm_fd = -1 };

	if (open_kvm(&dom))
		return 1;
	if (access("/sys/module/kvm_pvm", F_OK) == 0)
		printf("KVM backend: PVM (software, for nested clouds): guest kernel code is emulated "
		       "at about 2,400 ns per instruction, so Lodge Mini-OS runs well but a stock "
		       "Linux kernel gets only through its early boot.\n");
	else if (access("/sys/module/kvm_intel", F_OK) == 0)
		printf("KVM backend: hardware (Intel VT-x): unmodified guests, stock Linux "
		       "kernels included, run at native speed.\n");
	else if (access("/sys/module/kvm_amd", F_OK) == 0)
		printf("KVM backend: hardware (AMD-V): unmodified guests, stock Linux "
		       "kernels included, run at native speed.\n");
	else
		printf("KVM backend: unknown (no kvm_intel, kvm_amd or kvm_pvm module): "
		       "guests may run, at a speed Lodge cannot predict.\n");
	printf("vCPUs per domain: up to %d\n", kvm_max_vcpus(&dom));
	return 0;
}

/* Each vCPU's starting host CPUs: its --vcpu-cpus, else --cpus, else any. */
static int pin_vcpus(struct domain *dom, const struct options *o)
{
	cpu_set_t host;
	char why[256];
	unsigned i;

	for (i = o->vcpus; i < LODGE_MAX_VCPUS; i++)
		if (o->vcpu_cpus[i]) {
			log_err("--vcpu-cpus: vCPU %u is out of range (0 to %lu)", i, o->vcpus - 1);
			return -EINVAL;
		}
	if (cpulist_host(&host)) {
		log_err("cannot read this host's CPUs");
		return -EIO;
	}
	for (i = 0; i < o->vcpus; i++) {
		const char *list = o->vcpu_cpus[i] ? o->vcpu_cpus[i] : o->cpus;
		struct vcpu *v = &dom->vcpus[i];

		if (!list)
			continue;
		if (cpulist_parse(list, &host, &v->pin, why, sizeof(why))) {
			log_err("%s: %s", o->vcpu_cpus[i] ? "--vcpu-cpus" : "--cpus", why);
			return -EINVAL;
		}
		v->pinned = true;
	}
	return 0;
}

static int check_limits(struct domain *dom, const struct options *o)
{
	unsigned long host_mib = (unsigned long)((uint64_t)sysconf(_SC_PHYS_PAGES) *
						 sysconf(_SC_PAGE_SIZE) >> 20);
	int max = kvm_max_vcpus(dom);

	if (o->memory_mib < MIN_MEMORY_MIB) {
		log_err("--memory %lu MiB is too small: at least %d MiB", o->memory_mib, MIN_MEMORY_MIB);
		return -EINVAL;
	}
	if (o->memory_mib > host_mib) {
		log_err("--memory %lu MiB is more than this host has (%lu MiB)", o->memory_mib, host_mib);
		return -EINVAL;
	}
	if (o->maxmem_mib && o->maxmem_mib < o->memory_mib) {
		log_err("--maxmem %lu MiB is below --memory (%lu MiB)", o->maxmem_mib, o->memory_mib);
		return -EINVAL;
	}
	if (o->maxmem_mib > host_mib) {
		log_err("--maxmem %lu MiB is more than this host has (%lu MiB)", o->maxmem_mib, host_mib);
		return -EINVAL;
	}
	if (o->vcpus == 0 || o->vcpus > (unsigned long)max) {
		log_err("--vcpus %lu is out of range: 1 to %d on this host", o->vcpus, max);
		return -EINVAL;
	}
	if (o->cpu_weight < CGROUP_WEIGHT_MIN || o->cpu_weight > CGROUP_WEIGHT_MAX) {
		log_err("--cpu-weight %lu is out of range: %d to %d", o->cpu_weight, CGROUP_WEIGHT_MIN,
			CGROUP_WEIGHT_MAX);
		return -EINVAL;
	}
	if (o->cap > 100 * o->vcpus) {
		log_err("--cap %lu%% is more than %lu vCPUs can use (0 to %lu, 0: no cap)", o->cap,
			o->vcpus, 100 * o->vcpus);
		return -EINVAL;
	}
	return pin_vcpus(dom, o);
}

/* Open every disk and tap first, so one that is missing or in use stops
 * us before any device exists. */
static int open_backends(struct options *o)
{
	char err[512];
	unsigned i;
	int rc;

	for (i = 0; i < o->ndisks; i++) {
		/* Migrating in: the sender writes the disk until it lets go. */
		o->disks[i].lock_later = o->incoming_fd >= 0;
		rc = disk_open(&o->disks[i], err, sizeof(err));
		if (rc) {
			log_err("%s", err);
			return rc;
		}
	}
	for (i = 0; i < o->nnics; i++) {
		rc = tap_open(&o->nics[i], err, sizeof(err));
		if (rc) {
			log_err("%s", err);
			return rc;
		}
	}
	return 0;
}

static int setup_devices(struct domain *dom, struct options *o, struct uart **com1)
{
	uint32_t ballooned = (uint32_t)((dom->maxmem_mib - dom->memory_mib) << (20 - BALLOON_PAGE_SHIFT));
	unsigned i;
	int rc;

	*com1 = uart_create(dom, PORT_COM1, IRQ_COM1);
	if (!*com1)
		return -ENOMEM;
	if ((rc = acpi_pm_init(dom)) || (rc = i8042_init(dom)) ||
	    (rc = rtc_init(dom)) || (rc = post_init(dom)) || (rc = pci_init()))
		return rc;
	/* In order: the guest sees them as vda, vdb, ... */
	for (i = 0; i < o->ndisks; i++)
		if ((rc = virtio_blk_create(dom, &o->disks[i])))
			return rc;
	for (i = 0; i < o->nnics; i++)
		if ((rc = virtio_net_create(dom, &o->nics[i])))
			return rc;
	/* Last, so disks and NICs keep their slots. The guest boots with
	 * maxmem of RAM and the balloon asks at once for all above memory. */
	if ((rc = virtio_balloon_create(dom, ballooned, &dom->balloon)))
		return rc;
	save_set_disks(o->disks, o->ndisks);
	return announce_register(dom, o->nics, o->nnics);
}

/* Load the kernel (and initrd) and the ACPI tables; set vCPU 0 to enter. */
static int load_guest(struct domain *dom, const struct options *o)
{
	struct boot_params_in in = { .cmdline = o->cmdline };
	struct boot_entry entry;
	char err[256] = "";
	int rc;

	rc = acpi_build(&dom->mem, &(struct acpi_platform){ .ncpus = dom->nvcpus }, &in.rsdp_gpa);
	if (rc) {
		log_err("cannot build the ACPI tables: %s", strerror(-rc));
		return rc;
	}
	if ((rc = map_file(o->kernel, "kernel", &in.kernel)))
		return rc;
	if (o->initrd && (rc = map_file(o->initrd, "initrd", &in.initrd))) {
		unmap_file(&in.kernel);
		return rc;
	}
	rc = boot_load(&dom->mem, &in, &entry, err, sizeof(err));
	unmap_file(&in.kernel);
	unmap_file(&in.initrd);
	if (rc) {
		log_err("%s", err[0] ? err : strerror(-rc));
		return rc;
	}
	rc = vcpu_set_boot_state(&dom->vcpus[0], &entry);
	if (rc)
		log_err("cannot set the boot vCPU's registers: %s", strerror(-rc));
	return rc;
}

/* What the caller of a --detach start hears on the ready pipe: one byte,
 * or nothing at all (end of file: every process of the start died
 * without a word, SIGKILL most likely). */
enum {
	READY_RUNNING = 'r',    /* the domain runs */
	READY_FAILED = 'f',     /* it did not start; it said why on the caller's terminal */
	READY_SAYS = 's',       /* it did not start; the rest, to end of file, says why */
};

/* The caller's side: its exit status, with one line on stderr unless the
 * domain's processes wrote theirs there already.  (Until the domain runs,
 * they write to the caller's terminal, not to lodge-hyp.log: there is
 * nothing more to see there.) */
static int detach_wait(int fd, const char *name)
{
	char why[512];
	size_t len = 0;
	ssize_t n;
	char c;

	while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
		;
	if (n == 1 && c == READY_RUNNING)
		return 0;
	if (n == 1 && c == READY_FAILED)
		return DOMAIN_ERROR;
	if (n == 1 && c == READY_SAYS) {
		while (len < sizeof(why) - 1) {
			n = read(fd, why + len, sizeof(why) - 1 - len);
			if (n > 0)
				len += (size_t)n;
			else if (n == 0 || errno != EINTR)
				break;
		}
		why[len] = '\0';
		log_err("%s", why);
		return DOMAIN_ERROR;
	}
	log_err("domain %s ended during start-up without a word (killed by a signal?)", name);
	return DOMAIN_ERROR;
}

/* Tell a caller still waiting how the start went (it may have gone: a
 * pipe without a reader, ignored). */
static void detach_tell(int ready_fd, char what, const char *why)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%c%s", what, why ? why : "");
	if (ready_fd >= 0 && write(ready_fd, msg, strlen(msg)) < 0) {
		/* nobody waits any more */
	}
}

/* --detach: the caller waits until the domain runs (or failed, and says
 * why) and then returns; the domain lives on in its own session, taking
 * no terminal with it.  Must happen before KVM_CREATE_VM, which binds the
 * VM to this address space. */
static int detach_early(int *ready_fd, const char *name)
{
	int pipefd[2];
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		int st;

		close(pipefd[1]);
		waitpid(pid, &st, 0);     /* the middle process exits at once */
		exit(detach_wait(pipefd[0], name));
	}
	/* Whoever writes to a caller that has gone gets EPIPE, not SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	close(pipefd[0]);
	setsid();
	pid = fork();                     /* not a session leader: no controlling tty ever */
	if (pid < 0) {
		log_err("cannot detach: %s", strerror(errno));
		detach_tell(pipefd[1], READY_FAILED, NULL);
		_exit(DOMAIN_ERROR);
	}
	if (pid > 0)
		_exit(0);
	*ready_fd = pipefd[1];
	return 0;
}

/* Where a detached domain's messages go once it runs: its runtime
 * directory's lodge-hyp.log (opened before the sandbox, used after). */
struct detached_io {
	int null_fd, log_fd;
};

static void detached_io_open(struct detached_io *io, const char *dir)
{
	char path[4200];

	runtime_file_path(path, sizeof(path), dir, RT_HYP_LOG);
	io->null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	io->log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

static void detached_io_switch(struct detached_io *io)
{
	if (io->null_fd >= 0) {
		dup2(io->null_fd, STDIN_FILENO);
		dup2(io->null_fd, STDOUT_FILENO);
		close(io->null_fd);
	}
	if (io->log_fd >= 0) {
		dup2(io->log_fd, STDERR_FILENO);
		close(io->log_fd);
	}
	io->null_fd = io->log_fd = -1;
}

/* The domain runs: tell the waiting caller, and from now on log to the
 * runtime directory instead of the caller's terminal. */
static void detach_ready(int ready_fd, struct detached_io *io)
{
	detached_io_switch(io);
	detach_tell(ready_fd, READY_RUNNING, NULL);
	close(ready_fd);
}

static void remove_runtime_dir(const char *dir)
{
	runtime_dir_remove(dir);
}

/* Name the cgroup in the runtime directory's cgroup file (root's only):
 * the agent removes it from there if this process is killed. */
static void note_cgroup(const char *dir, const char *cgroup_dir)
{
	char path[4200];
	FILE *f;
	int fd;

	runtime_file_path(path, sizeof(path), dir, RT_CGROUP);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		return;
	if ((f = fdopen(fd, "w"))) {
		fprintf(f, "%s\n", cgroup_dir);
		fclose(f);
	} else {
		close(fd);
	}
}

/* The domain's cgroup, with the weight and cap asked for.  Its path goes in
 * the runtime directory before it is made, so that a kill at any moment
 * leaves nothing the agent does not know of. */
static int join_cgroup(struct domain *dom, const struct options *o, const char *dir)
{
	struct cgroup_cpu where;
	char path[4200], why[512];
	int rc;

	if (dir[0] && cgroup_cpu_open(&where, o->cgroup) == 0)
		note_cgroup(dir, where.dir);
	if ((rc = sched_cgroup_join(dom, o->cgroup, why, sizeof(why)))) {
		if (dir[0]) {
			runtime_file_path(path, sizeof(path), dir, RT_CGROUP);
			unlink(path);
		}
		/* No controller, or not ours to use: without a weight or cap
		 * asked for, the domain runs without (lodge sched says so). */
		if (!o->sched_given && (rc == -ENODEV || rc == -EACCES || rc == -EPERM || rc == -EROFS)) {
			log_warn("domain %s runs without weight or cap: %s", dom->name, why);
			return 0;
		}
		log_err("%s", why);
		return rc;
	}
	if ((rc = sched_set(dom, o->cpu_weight, o->cap))) {
		log_err("cannot set weight %lu and cap %lu%% in %s: %s", o->cpu_weight, o->cap,
			dom->cgroup.dir, strerror(-rc));
		return rc;
	}
	/* lodge sched writes them later, from inside the sandbox. */
	if ((rc = cgroup_cpu_keep_open(&dom->cgroup))) {
		log_err("cannot open the knobs of %s: %s", dom->cgroup.dir, strerror(-rc));
		return rc;
	}
	return 0;
}

/* The exit status by which a domain process asks its supervisor to boot
 * the domain again (on_reboot/on_crash = restart); internal, never the
 * status of lodge-hyp itself. */
#define EXIT_RESTART 100

/* Open what the running domain needs, start its vCPUs parked, confine the
 * process, then let the guest run: no guest instruction runs before the
 * sandbox is up.  dir: the runtime directory ("" standalone). */
static int run_domain(struct options *o, struct sandbox *sb, const char *dir, int listen_fd, int ready_fd)
{
	struct domain *dom = &the_domain;
	struct detached_io io = { -1, -1 };
	struct uart *com1;
	struct timespec ts;
	char log_path[4200];
	sigset_t sigs;
	int sig_fd, status;
	bool destroyed, incoming_live = false;
	unsigned i;

	sandbox_early(sb);
	if (open_kvm(dom) || check_limits(dom, o) || open_backends(o))
		return DOMAIN_ERROR;
	dom->nvcpus = o->vcpus;
	snprintf(dom->name, sizeof(dom->name), "%s", o->name);
	dom->id = o->id;
	dom->kernel = o->kernel;
	dom->memory_mib = o->memory_mib;
	dom->maxmem_mib = o->maxmem_mib ? o->maxmem_mib : o->memory_mib;
	dom->on_poweroff = o->on_poweroff;
	dom->on_reboot = o->on_reboot;
	dom->on_crash = o->on_crash;
	pthread_mutex_init(&dom->pause_lock, NULL);
	pthread_cond_init(&dom->pause_cond, NULL);
	dom->cpu_weight = CGROUP_WEIGHT_DEFAULT;
	if (o->cgroup && join_cgroup(dom, o, dir))
		return DOMAIN_ERROR;

	if (guest_mem_init(&dom->mem, (uint64_t)dom->maxmem_mib << 20)) {
		log_err("cannot map %lu MiB of guest memory: %s", dom->maxmem_mib, strerror(errno));
		return DOMAIN_ERROR;
	}
	if ((status = guest_mem_advise(&dom->mem, o->ksm, o->hugepages))) {
		log_err("cannot ask for %s on guest memory: %s (is it built into this kernel?)",
			o->ksm ? "same-page merging (--ksm)" : "transparent huge pages (--hugepages)",
			strerror(-status));
		return DOMAIN_ERROR;
	}
	if ((status = kvm_create_vm(dom)) || (status = kvm_map_memory(dom))) {
		log_err("cannot create the KVM virtual machine: %s", strerror(-status));
		return DOMAIN_ERROR;
	}
	for (i = 0; i < dom->nvcpus; i++)
		if ((status = vcpu_create(dom, i))) {
			log_err("cannot create vcpu%u: %s", i, strerror(-status));
			return DOMAIN_ERROR;
		}
	if ((status = cpu_state_register(dom))) {
		log_err("cannot register the CPU state for save/restore: %s", strerror(-status));
		return DOMAIN_ERROR;
	}
	if (o->incoming_fd < 0 && load_guest(dom, o))
		return DOMAIN_ERROR;
	if ((status = setup_devices(dom, o, &com1))) {
		log_err("cannot set up devices: %s", strerror(-status));
		return DOMAIN_ERROR;
	}
	if ((status = ram_init(dom)))
		log_warn("cannot open /proc/self/pagemap (%s): a save will look at every page",
			 strerror(-status));

	/* Signals that end the domain arrive through a signalfd in the main
	 * loop; blocked before any thread starts so every thread inherits it. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	sig_fd = signalfd(-1, &sigs, SFD_CLOEXEC);
	dom->end_eventfd = eventfd(0, EFD_CLOEXEC);
	if (sig_fd < 0 || dom->end_eventfd < 0) {
		log_err("cannot create event descriptors: %s", strerror(errno));
		return DOMAIN_ERROR;
	}
	runtime_file_path(log_path, sizeof(log_path), dir, RT_CONSOLE_LOG);
	status = o->runtime_dir
		? console_init(-1, -1, log_path, (size_t)o->console_log_kib << 10)
		: console_init(STDIN_FILENO, STDOUT_FILENO, NULL, 0);
	if (status) {
		log_err("cannot start the console: %s", strerror(-status));
		return DOMAIN_ERROR;
	}
	if ((status = ctl_keep_open()) || (status = cpulist_host_keep_open())) {
		log_err("cannot open /proc/self/statm or the host's CPU list: %s", strerror(-status));
		return DOMAIN_ERROR;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	dom->start_ns = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	dom->start_time = time(NULL);
	/* Parked from the start: each thread exists (its /proc entry too)
	 * but enters the guest only once unpaused, after the sandbox. */
	dom->paused = true;
	if (vcpu_start_all(dom))
		return DOMAIN_ERROR;
	vcpu_pause_all(dom);
	for (i = 0; i < dom->nvcpus; i++)
		if ((status = sched_vcpu_keep_open(&dom->vcpus[i]))) {
			domain_end(dom, DOMAIN_ERROR, "cannot open vcpu%u's /proc files: %s", i, strerror(-status));
			break;
		}
	/* Only a managed domain has a control socket to be asked for what the
	 * watcher learns; standalone, it would watch for nobody.  Before the
	 * sandbox: capturing needs CAP_NET_RAW. */
	if (!status && o->runtime_dir && o->nnics)
		dom->netwatch = netwatch_start(o->nics, o->nnics);
	if (ready_fd >= 0)
		detached_io_open(&io, dir);
	if (o->incoming_fd >= 0)
		save_load_prepare((int)o->incoming_fd);
	if (!status && (status = sandbox_enter(sb)))
		domain_end(dom, DOMAIN_ERROR, "cannot enter the sandbox: %s", strerror(-status));
	if (!status && o->incoming_fd >= 0) {
		char why[512];

		/* Everything the guest was, instead of a boot: its RAM, its
		 * vCPUs, its devices, before any vCPU runs.  Read inside the
		 * sandbox (the stream is untrusted input), and with everything
		 * else ready, so that a migration's downtime is the load alone. */
		if ((status = save_load(dom, (int)o->incoming_fd, &incoming_live, why, sizeof(why))))
			domain_end(dom, DOMAIN_ERROR, "cannot restore domain %s: %s", dom->name, why);
	}
	if (status) {
		log_err("%s", dom->end_reason);
		vcpu_stop_all(dom);
		return DOMAIN_ERROR;
	}
	/* --paused: not one guest instruction before the host says unpause. */
	if (!o->paused)
		vcpu_unpause_all(dom);
	if (o->incoming_fd >= 0) {
		/* Migrated in: tell the sender the guest runs (its downtime
		 * ends here), and the network where the guest is now. */
		if (incoming_live && send((int)o->incoming_fd, &(char){ SAVE_RUNNING }, 1, MSG_NOSIGNAL) != 1)
			log_debug("the sender did not hear that the guest runs: %s", strerror(errno));
		close((int)o->incoming_fd);
		announce_send();
	}
	if (ready_fd >= 0)
		detach_ready(ready_fd, &io);
	if (o->incoming_fd >= 0)
		log_info("domain %s restored%s", dom->name, incoming_live ? " from a live migration" : "");
	sandbox_test_forbidden(sb);
	destroyed = ctl_run(dom, com1, o->runtime_dir ? -1 : STDIN_FILENO, listen_fd, sig_fd);
	vcpu_stop_all(dom);
	netwatch_stop(dom->netwatch);
	dom->netwatch = NULL;
	console_flush(1000);
	console_restore();

	status = atomic_load(&dom->end);
	if (status == DOMAIN_POWEROFF || status == DOMAIN_REBOOT)
		log_info("%s", dom->end_reason);
	else
		log_err("%s", dom->end_reason);
	/* A fresh process is a fresh machine: new memory, new vCPUs,
	 * devices reset, the same runtime directory, socket and log. */
	if (!destroyed && domain_action_for(dom) == ACTION_RESTART)
		return EXIT_RESTART;
	return status;
}

/* Wait for the domain process, passing on the signals that would have
 * ended it had it been this process (the terminal's, the agent's kill). */
static int wait_domain(pid_t pid, const sigset_t *sigs)
{
	siginfo_t si;
	int st;

	for (;;) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		if (sigwaitinfo(sigs, &si) < 0)
			continue;
		if (si.si_signo != SIGCHLD)
			kill(pid, si.si_signo);
	}
}

/* The supervisor: lodge-hyp's first process stays privileged and outside
 * the sandbox, owning only the control socket.  Each boot of the domain
 * is a child process that sandboxes itself; a restart is a new child.
 * What a sandboxed process cannot do, this one does once the child is
 * gone: remove the cgroup and the runtime directory.  A child killed by
 * a signal (SIGKILL, the seccomp filter's SIGSYS) leaves both, as a
 * killed lodge-hyp always has, for lodge list to report and clean. */
static int supervise(struct options *o, struct sandbox *sb, const char *dir, int listen_fd, int ready_fd)
{
	struct detached_io io;
	struct cgroup_cpu cg;
	char killed[400] = "";
	sigset_t sigs;
	pid_t self = getpid(), pid;
	int st, status;
	bool first = true;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGCHLD);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	for (;;) {
		pid = fork();
		if (pid < 0) {
			log_err("cannot start the domain's process: %s", strerror(errno));
			st = DOMAIN_ERROR << 8;
			break;
		}
		if (pid == 0) {
			/* The domain goes with a killed supervisor. */
			prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
			if (getppid() != self)
				_exit(DOMAIN_ERROR);
			exit(run_domain(o, sb, dir, listen_fd, ready_fd));
		}
		if (first && ready_fd >= 0) {
			/* The caller's terminal is the child's to use until it
			 * runs; this process writes to the log from now on. */
			detached_io_open(&io, dir);
			detached_io_switch(&io);
			if (sb->off)
				log_warn("THE SANDBOX IS OFF (--no-sandbox) for domain %s", o->name);
		}
		first = false;
		/* Only the first boot is restored from a stream or held
		 * paused; a restart boots afresh and runs. */
		o->paused = 0;
		if (o->incoming_fd >= 0) {
			close((int)o->incoming_fd);
			o->incoming_fd = -1;
		}
		st = wait_domain(pid, &sigs);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != EXIT_RESTART)
			break;
		log_info("restarting domain %s", o->name);
		if (ready_fd >= 0) {
			close(ready_fd);       /* the caller heard "running" already */
			ready_fd = -1;
		}
	}
	if (WIFSIGNALED(st)) {
		snprintf(killed, sizeof(killed), "domain %s: its lodge-hyp (pid %d) was killed by signal %s%s",
			 o->name, (int)pid, strsignal(WTERMSIG(st)),
			 WTERMSIG(st) == SIGSYS ? " (the sandbox's seccomp filter)" : "");
		log_err("%s", killed);
		status = DOMAIN_ERROR;
	} else {
		status = WIFEXITED(st) ? WEXITSTATUS(st) : DOMAIN_ERROR;
		/* Out of the cgroup it is already (its tasks are gone): the
		 * cgroup goes before the runtime directory, since once that is
		 * gone the agent may start a domain of the same name. */
		if (o->cgroup && cgroup_cpu_open(&cg, o->cgroup) == 0)
			cgroup_cpu_remove(&cg);
		if (dir[0])
			remove_runtime_dir(dir);
	}
	/* Nobody may reach a domain that is no more: a caller told of its end
	 * finds the socket refusing (so the agent may remove what is left). */
	if (listen_fd >= 0)
		close(listen_fd);
	/* Held until now so a caller waiting on a failed start returns only
	 * once the runtime directory is gone.  A child that failed said why on
	 * the caller's terminal; a killed one could not, so this says it.  (A
	 * caller told "running" before has gone: nobody reads these.) */
	if (ready_fd >= 0) {
		if (killed[0]) {
			char why[sizeof(killed) + 32];

			snprintf(why, sizeof(why), "%s during start-up", killed);
			detach_tell(ready_fd, READY_SAYS, why);
		} else {
			detach_tell(ready_fd, READY_FAILED, NULL);
		}
		close(ready_fd);
	}
	return status;
}

int main(int argc, char **argv)
{
	struct sandbox sb;
	struct options o;
	char dir[4096] = "";
	int listen_fd = -1, ready_fd = -1;

	log_init(argv[0]);
	if (parse_options(argc, argv, &o))
		return DOMAIN_ERROR;
	close_inherited(o.incoming_fd);
	if (o.probe)
		return probe();
	if (sandbox_init(&sb, o.user, o.no_sandbox))
		return DOMAIN_ERROR;
	if (o.detach && detach_early(&ready_fd, o.name)) {
		log_err("cannot detach: %s", strerror(errno));
		return DOMAIN_ERROR;
	}
	if (o.runtime_dir) {
		mkdir(o.runtime_dir, 0755);
		snprintf(dir, sizeof(dir), "%s/%s", o.runtime_dir, o.name);
		if ((listen_fd = ctl_listen(dir, &o.access)) < 0) {
			detach_tell(ready_fd, READY_FAILED, NULL);     /* it said why */
			return DOMAIN_ERROR;
		}
	}
	return supervise(&o, &sb, dir, listen_fd, ready_fd);
}
