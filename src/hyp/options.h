/* lodge-hyp's command line (options.c): what the caller asked for, checked
 * as far as it can be without the host (KVM's vCPU limit, the host's
 * memory and CPUs are checked when the domain is built, build.c). */
#ifndef LODGE_OPTIONS_H
#define LODGE_OPTIONS_H

#include "backend/disk.h"
#include "backend/tap.h"
#include "ctl/ctl.h"
#include "platform.h"
#include "schema.h"

#include <stdio.h>

struct options {
	const char *kernel, *initrd, *cmdline;
	/* --bootloader-disk DISK: kernel and initrd read from the filesystem
	 * on DISK at each boot instead (bootload.h); --cmdline is then the
	 * config's, which bootdisk_cmdline completes. */
	const char *bootloader_disk;
	unsigned long memory_mib;
	unsigned long maxmem_mib;      /* 0: = memory_mib */
	int ksm, hugepages;            /* madvise guest RAM MERGEABLE, HUGEPAGE */
	unsigned long vcpus;
	unsigned long max_vcpus;       /* vcpu-set's ceiling: vCPUs made, those past vcpus held offline */
	int probe;
	/* --disk and --net, each parsed once as it entered (a bad one is
	 * refused before anything starts), not yet opened: each boot's
	 * domain copies them and opens its own (build.c).  A disk's given_fd
	 * (fd=N) was opened once by liblodge and is held by the supervisor
	 * for the domain's life, dup'd by each boot; -1: opened by path. */
	unsigned ndisks, nnics;
	struct disk disks[DOMAIN_DISKS_MAX];
	struct tap nics[DOMAIN_VIFS_MAX];
	/* --bootloader-disk's descriptor: the fd= of the --disk of the same
	 * path, or -1 (opened by path: lodge-hyp run by hand). */
	int bootloader_fd;
	/* Managed mode (the agent's): a runtime directory with the control
	 * socket and console log; detached from the caller's terminal. */
	const char *name, *runtime_dir;
	unsigned long id, console_log_kib;
	int detach;
	enum domain_action on_poweroff, on_reboot, on_crash;
	/* --crash-dir: where the supervisor keeps each crash's evidence
	 * (NULL: nowhere; crash.h). */
	const char *crash_dir;
	/* CPU scheduling: the vCPUs' affinity, and a cgroup for weight and cap. */
	const char *cpus, *cgroup;
	const char *vcpu_cpus[DOMAIN_VCPUS_MAX];   /* --vcpu-cpus N=LIST, by N */
	unsigned long cpu_weight, cap;
	int sched_given;           /* --cpu-weight or --cap was given */
	/* Groups granted the control socket besides root (-1: none). */
	struct ctl_access access;
	/* --incoming FD: restore from a stream on FD instead of booting. */
	long incoming_fd;
	long id_lock_fd;           /* --id-lock: held for our life, so no other start takes --id (or -1) */
	/* --paused: the vCPUs stay parked until unpause (xl create -p). */
	int paused;
	/* The sandbox's user (NULL: lodge, else nobody), or none at all. */
	const char *user;
	int no_sandbox;
	/* --event-log DIR: lifecycle events to DIR/lodge.log and syslog
	 * (events.h); --via FACE: the face that asked for the domain. */
	const char *event_log, *via;
	char creator[80];          /* WHO of the created event: lodge-hyp's caller (main.c) */
};

/* Fill o from argv: 0, or -EINVAL with one message logged.  --help and
 * --version print and exit. */
int options_parse(int argc, char **argv, struct options *o);
void options_usage(FILE *f);

#endif
