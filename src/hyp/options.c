/* lodge-hyp's command line (options.h): one row an option, its limits the
 * schema's, so a number is checked once, here, as it enters. */
#include "options.h"
#include "backend/disk.h"
#include "backend/tap.h"
#include "log.h"
#include "proto.h"
#include "version.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What an option's argument becomes. */
enum opt_kind {
	OPT_FLAG,       /* no argument: the int field set to 1 */
	OPT_TEXT,       /* the argument itself, as const char * */
	OPT_ULONG,      /* a whole number in [min, max], into an unsigned long */
	OPT_UINT,       /* the same, into an unsigned */
	OPT_GID,        /* the same, into a long (a group id; -1 is "none") */
	OPT_FD,         /* an open descriptor, into a long */
	OPT_ACTION,     /* a domain_action's word */
	OPT_CALL,       /* its own parser */
};

struct hyp_option {
	const char *name;
	char short_name;              /* 0: long only */
	enum opt_kind kind;
	size_t field;                 /* offsetof(struct options, ...) */
	unsigned long min, max;       /* OPT_ULONG, OPT_UINT, OPT_GID */
	const char *unit;             /* in messages: "MiB", "seconds" */
	int (*call)(char *arg, struct options *o);
	bool takes_arg;               /* OPT_CALL */
};

#define FIELD(f) offsetof(struct options, f)
#define FLAG(n, s, f)           { .name = n, .short_name = s, .kind = OPT_FLAG, .field = FIELD(f) }
#define TEXT(n, s, f)           { .name = n, .short_name = s, .kind = OPT_TEXT, .field = FIELD(f) }
#define ULONG(n, s, f, lo, hi, u) { .name = n, .short_name = s, .kind = OPT_ULONG, .field = FIELD(f), \
				    .min = lo, .max = hi, .unit = u }
#define UINT(n, f, lo, hi, u)   { .name = n, .kind = OPT_UINT, .field = FIELD(f), .min = lo, .max = hi, .unit = u }
#define GID(n, f)               { .name = n, .kind = OPT_GID, .field = FIELD(f), .max = INT_MAX }
#define FD(n, f)                { .name = n, .kind = OPT_FD, .field = FIELD(f) }
#define ACTION(n, f)            { .name = n, .kind = OPT_ACTION, .field = FIELD(f) }
#define CALL(n, s, fn, arg)     { .name = n, .short_name = s, .kind = OPT_CALL, .call = fn, .takes_arg = arg }

static int parse_disk(char *arg, struct options *o);
static int parse_net(char *arg, struct options *o);
static int parse_vcpu_cpus(char *arg, struct options *o);
static int parse_via(char *arg, struct options *o);
static int parse_debug(char *arg, struct options *o);
static int print_version(char *arg, struct options *o);
static int print_help(char *arg, struct options *o);

static const struct hyp_option hyp_options[] = {
	TEXT("kernel", 'k', kernel),
	TEXT("initrd", 'i', initrd),
	TEXT("cmdline", 'c', cmdline),
	TEXT("bootloader-disk", 0, bootloader_disk),
	/* The host's RAM and KVM's vCPU limit are the host's: build.c. */
	ULONG("memory", 'm', memory_mib, DOMAIN_MEMORY_MIN_MIB, DOMAIN_MEMORY_MAX_MIB, "MiB"),
	ULONG("maxmem", 0, maxmem_mib, DOMAIN_MEMORY_MIN_MIB, DOMAIN_MEMORY_MAX_MIB, "MiB"),
	FLAG("ksm", 0, ksm),
	FLAG("hugepages", 0, hugepages),
	ULONG("vcpus", 'n', vcpus, DOMAIN_VCPUS_MIN, DOMAIN_VCPUS_MAX, NULL),
	ULONG("max-vcpus", 0, max_vcpus, DOMAIN_VCPUS_MIN, DOMAIN_VCPUS_MAX, NULL),
	CALL("disk", 0, parse_disk, true),
	CALL("net", 0, parse_net, true),
	FLAG("probe", 'p', probe),
	TEXT("name", 0, name),
	ULONG("id", 0, id, 0, ULONG_MAX, NULL),
	TEXT("runtime-dir", 0, runtime_dir),
	ULONG("console-log-size", 0, console_log_kib, HOST_CONSOLE_LOG_MIN_KIB, HOST_CONSOLE_LOG_MAX_KIB, "KiB"),
	FLAG("detach", 0, detach),
	ACTION("on-poweroff", on_poweroff),
	ACTION("on-reboot", on_reboot),
	ACTION("on-crash", on_crash),
	TEXT("crash-dir", 0, crash_dir),
	TEXT("cpus", 0, cpus),
	CALL("vcpu-cpus", 0, parse_vcpu_cpus, true),
	TEXT("cgroup", 0, cgroup),
	ULONG("cpu-weight", 0, cpu_weight, DOMAIN_CPU_WEIGHT_MIN, DOMAIN_CPU_WEIGHT_MAX, NULL),
	/* Its maximum depends on --vcpus: options_parse's end. */
	ULONG("cap", 0, cap, 0, ULONG_MAX, "%"),
	GID("control-group", access.control_gid),
	GID("stats-group", access.stats_gid),
	UINT("control-idle-timeout", access.idle_timeout_s, CTL_IDLE_TIMEOUT_MIN_S, CTL_IDLE_TIMEOUT_MAX_S, "seconds"),
	UINT("watchdog", access.watchdog_s, CTL_WATCHDOG_MIN_S, CTL_WATCHDOG_MAX_S, "seconds"),
	FD("incoming", incoming_fd),
	FD("id-lock", id_lock_fd),
	FLAG("paused", 0, paused),
	TEXT("user", 0, user),
	FLAG("no-sandbox", 0, no_sandbox),
	TEXT("event-log", 0, event_log),
	CALL("via", 0, parse_via, true),
	CALL("debug", 'd', parse_debug, false),
	CALL("version", 'V', print_version, false),
	CALL("help", 'h', print_help, false),
};
#define NOPTIONS (sizeof(hyp_options) / sizeof(hyp_options[0]))
#define LONG_ONLY_VAL 0x100           /* getopt's val of a long-only row: this plus its index */

void options_usage(FILE *f)
{
	fprintf(f,
		"usage: lodge-hyp {--kernel FILE [--initrd FILE] | --bootloader-disk DISK} [--cmdline TEXT]\n"
		"                 [--memory MiB] [--maxmem MiB] [--ksm] [--hugepages] [--vcpus N]\n"
		"                 [--max-vcpus N]\n"
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
		"Defaults: --memory %d (MiB), --vcpus %d, --console-log-size %d (KiB),\n"
		"--cpu-weight %d, --control-idle-timeout %d (seconds), --on-* %s.\n"
		"Ctrl-] stops the domain. Exit status: 0 guest powered off, 1 error,\n"
		"2 guest rebooted, 3 guest crashed, 4 stopped from the host.\n",
		DOMAIN_MEMORY_DEFAULT_MIB, DOMAIN_VCPUS_DEFAULT, HOST_CONSOLE_LOG_DEFAULT_KIB,
		DOMAIN_CPU_WEIGHT_DEFAULT, CTL_IDLE_TIMEOUT_S, domain_action_name(ACTION_DESTROY));
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

static int parse_ranged(const struct hyp_option *opt, const char *arg, unsigned long *out)
{
	char what[40];

	snprintf(what, sizeof(what), "--%s", opt->name);
	if (parse_number(arg, what, out))
		return -EINVAL;
	if (*out < opt->min || *out > opt->max) {
		log_err("--%s %s is out of range (%lu to %lu%s%s)", opt->name, arg, opt->min, opt->max,
			opt->unit && opt->unit[0] != '%' ? " " : "", opt->unit ? opt->unit : "");
		return -EINVAL;
	}
	return 0;
}

static int parse_disk(char *arg, struct options *o)
{
	struct disk *disk = &o->disks[o->ndisks];
	char err[256];

	if (o->ndisks == DOMAIN_DISKS_MAX) {
		log_err("too many disks (at most %d)", DOMAIN_DISKS_MAX);
		return -EINVAL;
	}
	if (disk_parse(arg, disk, err, sizeof(err))) {
		log_err("%s", err);
		return -EINVAL;
	}
	if (disk->given_fd >= 0 && fcntl(disk->given_fd, F_GETFD) < 0) {
		log_err("--disk %s: fd=%d is not an open descriptor", arg, disk->given_fd);
		return -EINVAL;
	}
	if (disk->given_fd >= 0)
		fcntl(disk->given_fd, F_SETFD, FD_CLOEXEC);   /* ours alone */
	o->ndisks++;
	return 0;
}

static int parse_net(char *arg, struct options *o)
{
	char err[256];

	if (o->nnics == DOMAIN_VIFS_MAX) {
		log_err("too many network interfaces (at most %d)", DOMAIN_VIFS_MAX);
		return -EINVAL;
	}
	if (tap_parse(arg, &o->nics[o->nnics], err, sizeof(err))) {
		log_err("%s", err);
		return -EINVAL;
	}
	o->nnics++;
	return 0;
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
	if (n >= DOMAIN_VCPUS_MAX) {
		log_err("--vcpu-cpus: vCPU %lu is beyond %d", n, DOMAIN_VCPUS_MAX - 1);
		return -EINVAL;
	}
	o->vcpu_cpus[n] = eq + 1;
	return 0;
}

/* A word in every event's WHO: a face's name, nothing more. */
static int parse_via(char *arg, struct options *o)
{
	if (!arg[0] || strlen(arg) > PROTO_FACE_MAX || strspn(arg, PROTO_FACE_CHARS) != strlen(arg)) {
		log_err("--via '%s' is not a face's name (1 to 16 of a-z and -)", arg);
		return -EINVAL;
	}
	o->via = arg;
	return 0;
}

static int parse_debug(char *arg, struct options *o)
{
	log_set_level(LOG_DEBUG);
	return 0;
}

static int print_version(char *arg, struct options *o)
{
	printf("lodge-hyp %s\n", LODGE_VERSION);
	exit(0);
}

static int print_help(char *arg, struct options *o)
{
	options_usage(stdout);
	exit(0);
}

static int parse_one(const struct hyp_option *opt, char *arg, struct options *o)
{
	void *field = (char *)o + opt->field;
	unsigned long n;

	switch (opt->kind) {
	case OPT_FLAG:
		*(int *)field = 1;
		return 0;
	case OPT_TEXT:
		*(const char **)field = arg;
		return 0;
	case OPT_ULONG:
		return parse_ranged(opt, arg, (unsigned long *)field);
	case OPT_UINT:
	case OPT_GID:
		if (parse_ranged(opt, arg, &n))
			return -EINVAL;
		if (opt->kind == OPT_UINT)
			*(unsigned *)field = (unsigned)n;
		else
			*(long *)field = (long)n;
		return 0;
	case OPT_FD:
		if (parse_number(arg, opt->name, &n))
			return -EINVAL;
		if (n > INT_MAX || fcntl((int)n, F_GETFD) < 0) {
			log_err("--%s %s is not an open descriptor", opt->name, arg);
			return -EINVAL;
		}
		*(long *)field = (long)n;
		return 0;
	case OPT_ACTION:
		if (domain_action_parse(arg, field) == 0)
			return 0;
		log_err("--%s must be one of %s, not '%s'", opt->name, domain_action_list(), arg);
		return -EINVAL;
	case OPT_CALL:
		return opt->call(arg, o);
	}
	return -EINVAL;
}

/* What a combination of options means, once each is parsed. */
static int check_together(struct options *o)
{
	unsigned i;

	if (!o->probe && !o->kernel && !o->bootloader_disk) {
		log_err("no kernel given (--kernel FILE, or --bootloader-disk DISK)");
		return -EINVAL;
	}
	/* The disk to boot from, when it came as a descriptor: that one. */
	for (i = 0; o->bootloader_disk && o->bootloader_fd < 0 && i < o->ndisks; i++)
		if (o->disks[i].given_fd >= 0 && strcmp(o->disks[i].path, o->bootloader_disk) == 0)
			o->bootloader_fd = o->disks[i].given_fd;
	if (o->bootloader_disk && (o->kernel || o->initrd)) {
		log_err("--bootloader-disk reads the kernel and initrd from the disk: not with --kernel or --initrd");
		return -EINVAL;
	}
	if (o->maxmem_mib && o->maxmem_mib < o->memory_mib) {
		log_err("--maxmem %lu MiB is below --memory (%lu MiB)", o->maxmem_mib, o->memory_mib);
		return -EINVAL;
	}
	if (!o->max_vcpus)
		o->max_vcpus = o->vcpus;
	if (o->max_vcpus < o->vcpus) {
		log_err("--max-vcpus %lu is below --vcpus (%lu)", o->max_vcpus, o->vcpus);
		return -EINVAL;
	}
	/* One list per vCPU there may be (the schema's cpus rule). */
	for (i = o->max_vcpus; i < DOMAIN_VCPUS_MAX; i++)
		if (o->vcpu_cpus[i]) {
			log_err("--vcpu-cpus: vCPU %u is out of range (0 to %lu)", i, o->max_vcpus - 1);
			return -EINVAL;
		}
	if (o->cap > DOMAIN_CAP_MAX(o->vcpus)) {
		log_err("--cap %lu%% is more than %lu vCPUs can use (0 to %lu, 0: no cap)", o->cap, o->vcpus,
			(unsigned long)DOMAIN_CAP_MAX(o->vcpus));
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

int options_parse(int argc, char **argv, struct options *o)
{
	static struct option longopts[NOPTIONS + 1];
	static char shortopts[2 + 2 * NOPTIONS + 1];
	const struct hyp_option *opt;
	size_t i, s = 0;
	int c;

	shortopts[s++] = ':';
	for (i = 0; i < NOPTIONS; i++) {
		opt = &hyp_options[i];
		bool takes_arg = opt->kind == OPT_CALL ? opt->takes_arg : opt->kind != OPT_FLAG;

		longopts[i] = (struct option){ opt->name, takes_arg ? required_argument : no_argument, NULL,
					       opt->short_name ? opt->short_name : (int)(LONG_ONLY_VAL + i) };
		if (opt->short_name) {
			shortopts[s++] = opt->short_name;
			if (longopts[i].has_arg == required_argument)
				shortopts[s++] = ':';
		}
	}
	shortopts[s] = '\0';

	memset(o, 0, sizeof(*o));
	o->cmdline = "";
	o->memory_mib = DOMAIN_MEMORY_DEFAULT_MIB;
	o->vcpus = DOMAIN_VCPUS_DEFAULT;
	o->name = "domain";
	o->console_log_kib = HOST_CONSOLE_LOG_DEFAULT_KIB;
	o->cpu_weight = DOMAIN_CPU_WEIGHT_DEFAULT;
	o->access = (struct ctl_access){ .control_gid = -1, .stats_gid = -1 };
	o->incoming_fd = -1;
	o->id_lock_fd = -1;
	o->bootloader_fd = -1;
	opterr = 0;   /* one message of our own, not getopt's plus usage */
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == ':') {
			log_err("option '%s' needs a value", argv[optind - 1]);
			return -EINVAL;
		}
		for (i = 0; i < NOPTIONS; i++)
			if (longopts[i].val == c)
				break;
		if (i == NOPTIONS) {
			log_err("unknown option '%s' (see --help)", argv[optind - 1]);
			return -EINVAL;
		}
		opt = &hyp_options[i];
		/* Paths and names go into control replies, file names, logs. */
		if (optarg && text_find_control(optarg)) {
			log_err("--%s '%s': control characters are not allowed", opt->name, optarg);
			return -EINVAL;
		}
		if (parse_one(opt, optarg, o))
			return -EINVAL;
		if (opt->kind == OPT_ULONG && (opt->field == FIELD(cpu_weight) || opt->field == FIELD(cap)))
			o->sched_given = 1;
	}
	if (o->id_lock_fd >= 0)
		fcntl((int)o->id_lock_fd, F_SETFD, FD_CLOEXEC);   /* ours alone, never a program's we run */
	if (optind < argc) {
		log_err("unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	return check_together(o);
}
