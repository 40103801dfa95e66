/* lodge-hyp's command line (options.h). */
#include "options.h"
#include "backend/disk.h"
#include "backend/tap.h"
#include "cgroup.h"
#include "log.h"
#include "proto.h"
#include "version.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void options_usage(FILE *f)
{
	fprintf(f,
		"usage: lodge-hyp {--kernel FILE [--initrd FILE] | --bootloader-disk DISK} [--cmdline TEXT]\n"
		"                 [--memory MiB] [--maxmem MiB] [--ksm] [--hugepages] [--vcpus N]\n"
		"                 [--disk PATH[,ro][,id=NAME][,direct][,slot=N][,fd=N]]...\n"
		"                 [--net tap=NAME[,mac=MAC][,bridge=BR][,slot=N]]...\n"
		"                 [--name NAME --runtime-dir DIR [--id N [--id-lock FD]] [--detach]\n"
		"                  [--console-log-size KiB] [--control-group GID] [--stats-group GID]\n"
		"                  [--control-idle-timeout SECONDS] [--watchdog SECONDS]\n"
		"                  [--on-poweroff|--on-reboot|--on-crash\n"
		"                  destroy|restart|preserve]\n"
		"                  [--on-crash coredump-destroy|coredump-restart]\n"
		"                  [--crash-dir DIR]]\n"
		"                 [--cpus LIST] [--vcpu-cpus N=LIST]... [--cgroup PATH [--cpu-weight W] [--cap PCT]]\n"
		"                 [--incoming FD] [--paused]\n"
		"                 [--user NAME | --no-sandbox] [--event-log DIR [--via FACE]]\n"
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

int options_parse(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "kernel", required_argument, NULL, 'k' },
		{ "initrd", required_argument, NULL, 'i' },
		{ "cmdline", required_argument, NULL, 'c' },
		{ "bootloader-disk", required_argument, NULL, 'b' },
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
		{ "crash-dir", required_argument, NULL, 'e' },
		{ "cpus", required_argument, NULL, 'U' },
		{ "vcpu-cpus", required_argument, NULL, 'u' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "cpu-weight", required_argument, NULL, 'W' },
		{ "cap", required_argument, NULL, 'A' },
		{ "control-group", required_argument, NULL, 'g' },
		{ "stats-group", required_argument, NULL, 'r' },
		{ "control-idle-timeout", required_argument, NULL, 'T' },
		{ "watchdog", required_argument, NULL, 'w' },
		{ "incoming", required_argument, NULL, 'J' },
		{ "id-lock", required_argument, NULL, 'j' },
		{ "paused", no_argument, NULL, 'Q' },
		{ "user", required_argument, NULL, 'Y' },
		{ "no-sandbox", no_argument, NULL, 'Z' },
		{ "event-log", required_argument, NULL, 'E' },
		{ "via", required_argument, NULL, 'F' },
		{ "debug", no_argument, NULL, 'd' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static struct disk disk;        /* a --disk parsed to check it: 6 KiB, off the stack */
	struct tap tap;
	char err[256];
	int c;

	memset(o, 0, sizeof(*o));
	o->cmdline = "";
	o->memory_mib = 256;
	o->vcpus = 1;
	o->name = "domain";
	o->console_log_kib = 1024;
	o->cpu_weight = CGROUP_WEIGHT_DEFAULT;
	o->access = (struct ctl_access){ .control_gid = -1, .stats_gid = -1 };
	o->incoming_fd = -1;
	o->id_lock_fd = -1;
	o->bootloader_fd = -1;
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
		case 'b': o->bootloader_disk = optarg; break;
		case 'm': if (parse_number(optarg, "--memory", &o->memory_mib)) return -EINVAL; break;
		case 'M': if (parse_number(optarg, "--maxmem", &o->maxmem_mib)) return -EINVAL; break;
		case 'K': o->ksm = 1; break;
		case 'H': o->hugepages = 1; break;
		case 'n': if (parse_number(optarg, "--vcpus", &o->vcpus)) return -EINVAL; break;
		case 'D':
			if (o->ndisks == DOMAIN_DISKS_MAX) {
				log_err("too many disks (at most %d)", DOMAIN_DISKS_MAX);
				return -EINVAL;
			}
			if (disk_parse(optarg, &disk, err, sizeof(err))) {
				log_err("%s", err);
				return -EINVAL;
			}
			if (disk.given_fd >= 0 && fcntl(disk.given_fd, F_GETFD) < 0) {
				log_err("--disk %s: fd=%d is not an open descriptor", optarg, disk.given_fd);
				return -EINVAL;
			}
			if (disk.given_fd >= 0)
				fcntl(disk.given_fd, F_SETFD, FD_CLOEXEC);   /* ours alone */
			o->disk_fds[o->ndisks] = disk.given_fd;
			o->disk_specs[o->ndisks++] = optarg;
			break;
		case 'N':
			if (o->nnics == DOMAIN_VIFS_MAX) {
				log_err("too many network interfaces (at most %d)", DOMAIN_VIFS_MAX);
				return -EINVAL;
			}
			if (tap_parse(optarg, &tap, err, sizeof(err))) {
				log_err("%s", err);
				return -EINVAL;
			}
			o->nic_specs[o->nnics++] = optarg;
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
		case 'e': o->crash_dir = optarg; break;
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
		case 'w': {
			unsigned long s;

			if (parse_number(optarg, "--watchdog", &s))
				return -EINVAL;
			if (s < CTL_WATCHDOG_MIN_S || s > CTL_WATCHDOG_MAX_S) {
				log_err("--watchdog %s is out of range (%d to %d seconds)", optarg, CTL_WATCHDOG_MIN_S,
					CTL_WATCHDOG_MAX_S);
				return -EINVAL;
			}
			o->access.watchdog_s = s;
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
		case 'j': {
			unsigned long fd;

			if (parse_number(optarg, "--id-lock", &fd))
				return -EINVAL;
			if (fd > INT_MAX || fcntl((int)fd, F_GETFD) < 0) {
				log_err("--id-lock %s is not an open descriptor", optarg);
				return -EINVAL;
			}
			o->id_lock_fd = (long)fd;
			fcntl((int)fd, F_SETFD, FD_CLOEXEC);   /* ours alone, never a program's we run */
			break;
		}
		case 'Q': o->paused = 1; break;
		case 'Y': o->user = optarg; break;
		case 'Z': o->no_sandbox = 1; break;
		case 'E': o->event_log = optarg; break;
		case 'F':
			/* A word in every event's WHO: a face's name, nothing more. */
			if (!optarg[0] || strlen(optarg) > PROTO_FACE_MAX ||
			    strspn(optarg, PROTO_FACE_CHARS) != strlen(optarg)) {
				log_err("--via '%s' is not a face's name (1 to 16 of a-z and -)", optarg);
				return -EINVAL;
			}
			o->via = optarg;
			break;
		case 'd': log_set_level(LOG_DEBUG); break;
		case 'V': printf("lodge-hyp %s\n", LODGE_VERSION); exit(0);
		case 'h': options_usage(stdout); exit(0);
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
	if (!o->probe && !o->kernel && !o->bootloader_disk) {
		log_err("no kernel given (--kernel FILE, or --bootloader-disk DISK)");
		return -EINVAL;
	}
	/* The disk to boot from, when it came as a descriptor: that one. */
	for (unsigned i = 0; o->bootloader_disk && o->bootloader_fd < 0 && i < o->ndisks; i++)
		if (o->disk_fds[i] >= 0 && disk_parse(o->disk_specs[i], &disk, err, sizeof(err)) == 0 &&
		    strcmp(disk.path, o->bootloader_disk) == 0)
			o->bootloader_fd = o->disk_fds[i];
	if (o->bootloader_disk && (o->kernel || o->initrd)) {
		log_err("--bootloader-disk reads the kernel and initrd from the disk: not with --kernel or --initrd");
		return -EINVAL;
	}
	if (domain_action_dumps_core(o->on_poweroff) || domain_action_dumps_core(o->on_reboot)) {
		log_err("coredump-destroy and coredump-restart are for --on-crash only");
		return -EINVAL;
	}
	if (domain_action_dumps_core(o->on_crash) && !o->crash_dir) {
		log_err("--on-crash %s needs --crash-dir (somewhere to write the core)",
			domain_action_name(o->on_crash));
		return -EINVAL;
	}
	if (o->crash_dir && (o->crash_dir[0] != '/' || !o->runtime_dir)) {
		log_err("--crash-dir '%s' must be an absolute path, with --runtime-dir", o->crash_dir);
		return -EINVAL;
	}
	if (!o->runtime_dir && (o->detach || o->on_poweroff == ACTION_PRESERVE ||
				o->on_reboot == ACTION_PRESERVE || o->on_crash == ACTION_PRESERVE)) {
		log_err("--detach and preserve need --runtime-dir (somewhere to reach the domain)");
		return -EINVAL;
	}
	if (o->event_log && (!o->runtime_dir || o->event_log[0] != '/')) {
		log_err("--event-log needs --runtime-dir and an absolute directory, not '%s'", o->event_log);
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
