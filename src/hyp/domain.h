/* One domain: the KVM VM, its memory, its vCPUs and how it ended. */
#ifndef LODGE_DOMAIN_H
#define LODGE_DOMAIN_H

#include "schema.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/disk.h"
#include "backend/tap.h"
#include "cgroup.h"
#include "emulate.h"
#include "mem.h"
#include "platform.h"

/* How a domain ended; also lodge-hyp's exit status (see lodge-hyp(8)). */
enum domain_end {
	DOMAIN_RUNNING  = -1,
	DOMAIN_POWEROFF = 0,   /* the guest powered itself off */
	DOMAIN_ERROR    = 1,   /* lodge-hyp itself failed */
	DOMAIN_REBOOT   = 2,   /* the guest asked for a reset */
	DOMAIN_CRASH    = 3,   /* triple fault or KVM internal error */
	DOMAIN_STOPPED  = 4,   /* stopped from the host (console escape, signal) */
};

struct vcpu {
	struct domain *dom;
	unsigned id;
	int fd;
	struct kvm_run *run;
	size_t run_size;
	pthread_t thread;
	_Atomic pid_t tid;     /* the thread's id, once it runs; for /proc/self/task */
	bool pinned;           /* start on these host CPUs only (--cpus, --vcpu-cpus) */
	cpu_set_t pin;
	/* Its /proc/self/task/TID stat and schedstat, kept open by
	 * sched_vcpu_keep_open() for the sandbox (stats_kept: fds valid). */
	bool stats_kept;
	int stat_fd, schedstat_fd;
	struct syscall_trap syscall_trap;   /* PVM only: emulate/syscall.c */
};

/* I/O counters of one device, as the guest sees it: "in" is toward the
 * guest (disk reads, packets received), "out" away from it (disk writes,
 * packets sent).  Only the device's I/O thread writes them; the control
 * socket reads them, so each is an atomic word and no lock is taken. */
struct io_counters {
	_Atomic uint64_t in_ops, in_bytes, out_ops, out_bytes, errors;
};

static inline void io_count(_Atomic uint64_t *c, uint64_t n)
{
	/* One writer: a relaxed load and store, not a locked add. */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

enum io_kind { IO_DISK, IO_VIF };
#define LODGE_MAX_IO_DEVICES 32
_Static_assert(DOMAIN_DISKS_MAX + DOMAIN_VIFS_MAX <= LODGE_MAX_IO_DEVICES, "every device has counters");

struct io_device {
	enum io_kind kind;
	const struct io_counters *counters;
	unsigned slot;          /* its PCI slot: detach names a device by it */
};

/* What a domain does when the guest powers off, reboots or crashes:
 * enum domain_action, schema.h. */

struct domain {
	/* Identity, for status replies. */
	char name[DOMAIN_NAME_MAX];
	unsigned id;
	const char *kernel;
	unsigned long memory_mib;     /* at boot; the rest of maxmem starts ballooned */
	unsigned long maxmem_mib;     /* guest RAM: the most mem-set may give it */
	unsigned long mem_max_mib;    /* lodge mem-max's lower ceiling for mem-set (0: none) */
	uint64_t start_ns;     /* CLOCK_MONOTONIC at start */
	long start_time;       /* wall clock at start, seconds */
	enum domain_action on_poweroff, on_reboot, on_crash;

	int kvm_fd, vm_fd;
	struct guest_mem mem;
	struct virtio_balloon *balloon;   /* always present: mem-set works on any domain */
	unsigned nvcpus;              /* made: maxvcpus; the guest runs those online */
	struct vcpu vcpus[DOMAIN_VCPUS_MAX];
	/* Bit N: vCPU N runs (dev/cpuhp.c moves it, under pause_lock); the
	 * others are made and their threads held parked (vcpu.c), so a plug
	 * needs no KVM_CREATE_VCPU, thread or host file from the sandbox. */
	_Atomic uint64_t online;

	/* Its disks and vifs' backends, in the order the guest sees them (vda,
	 * vdb, ...; the first vif, ...): opened and locked before any device
	 * exists, held for the domain's life, handed over by a migration. */
	struct disk disks[DOMAIN_DISKS_MAX];
	unsigned ndisks;
	struct tap nics[DOMAIN_VIFS_MAX];
	unsigned nnics;

	/* The vifs' watcher (netwatch/netwatch.h); NULL in standalone mode. */
	struct netwatch *netwatch;

	/* Every disk and vif, in the order the guest sees them. */
	struct io_device io[LODGE_MAX_IO_DEVICES];
	unsigned nio;

	/* CPU scheduling (sched.c): the cgroup with Xen's weight and cap. */
	bool has_cgroup;
	struct cgroup_cpu cgroup;
	unsigned cpu_weight, cpu_cap;

	/* Pausing: vCPUs park between KVM_RUN calls while paused is set. */
	pthread_mutex_t pause_lock;
	pthread_cond_t pause_cond;
	bool paused;
	unsigned parked;

	/* Set once, by the first vCPU or thread that ends the domain
	 * (domain_end: end_claimed first, then end_reason, then end). */
	_Atomic bool end_claimed;
	_Atomic int end;
	char end_reason[256];
	int end_eventfd;       /* readable once end is set; -1: none */
};

/* The fields of a domain that is not set up yet: no descriptors, running,
 * unpaused.  Static domains (tests) start from these:
 *   static struct domain dom = { DOMAIN_DEFAULTS, .name = "x" };
 * domain_init() is the same at run time.  (lodge-hyp's own is zero and
 * initialised at run time: a domain is 100 KiB, mostly its disks, that an
 * initialiser would put in the program's data, resident or not.) */
#define DOMAIN_DEFAULTS .kvm_fd = -1, .vm_fd = -1, .end = DOMAIN_RUNNING, .end_eventfd = -1, \
			.pause_lock = PTHREAD_MUTEX_INITIALIZER, .pause_cond = PTHREAD_COND_INITIALIZER

/* mem-target.c: the memory the host steers the guest to (mem-set). */
#define MEM_FLOOR_MIB 32              /* no mem-set below this (or boot memory, if less) */
unsigned long domain_mem_floor(const struct domain *dom);
/* mem-max MIB: the ceiling mem-set may balloon up to, from the current
 * target to maxmem_mib; 0 or -ERANGE/-EINVAL with why. */
int domain_mem_max(struct domain *dom, const char *arg, char *why, size_t whylen);
/* Set the balloon so the guest keeps target_mib; 0 or -ERANGE with why. */
int domain_mem_set(struct domain *dom, const char *arg, char *why, size_t whylen);
/* The status reply's memory keys, "KEY VALUE\n" lines, into buf. */
void domain_mem_status(struct domain *dom, char *buf, size_t len);

/* kvm.c */
int kvm_open(struct domain *dom);
/* The VM with dom->mem mapped as its RAM, its irqchip and PIT. */
int kvm_create_vm(struct domain *dom);
int kvm_irq_line(struct domain *dom, unsigned gsi, int level);
int kvm_max_vcpus(struct domain *dom);

/* vcpu.c */
int vcpu_create(struct domain *dom, unsigned id);
int vcpu_start_all(struct domain *dom);
void vcpu_stop_all(struct domain *dom);
/* Park every vCPU outside the guest (returns once all are parked), or let
 * them run again. */
void vcpu_pause_all(struct domain *dom);
void vcpu_unpause_all(struct domain *dom);
/* Its registers as lines of text into buf (snprintf's count). */
int vcpu_registers_text(struct vcpu *v, char *buf, size_t len);
/* An NMI on vCPU id (lodge trigger DOMAIN nmi): 0 or -errno. */
int vcpu_nmi(struct domain *dom, unsigned id);
/* Let vCPU id run (true) or hold its thread parked outside the guest. */
void vcpu_set_online(struct domain *dom, unsigned id, bool online);
unsigned vcpu_online_count(const struct domain *dom);
/* CPU time a vCPU thread has used, in nanoseconds. */
uint64_t vcpu_cpu_ns(struct vcpu *v);
/* Registers of the boot vCPU, chosen by the kernel loader. */
struct boot_entry;
int vcpu_set_boot_state(struct vcpu *v, const struct boot_entry *entry);

/* List a device's counters in the status reply (DOMAIN_DISKS_MAX and
 * DOMAIN_VIFS_MAX keep the devices within LODGE_MAX_IO_DEVICES). */
static inline void domain_add_io(struct domain *dom, enum io_kind kind, const struct io_counters *c,
				 unsigned slot)
{
	if (dom->nio < LODGE_MAX_IO_DEVICES)
		dom->io[dom->nio++] = (struct io_device){ kind, c, slot };
}

/* A device hot-unplugged: its counters leave the status reply (the rest
 * keep their order). */
static inline void domain_remove_io(struct domain *dom, const struct io_counters *c)
{
	unsigned i;

	for (i = 0; i < dom->nio; i++)
		if (dom->io[i].counters == c) {
			for (; i + 1 < dom->nio; i++)
				dom->io[i] = dom->io[i + 1];
			dom->nio--;
			return;
		}
}

/* sched.c */
/* A cap above 100% per vCPU could never bind. */
#define SCHED_CAP_MAX(dom) (100u * (dom)->nvcpus)
struct vcpu_sched_stats {
	pid_t tid;
	char state;            /* /proc's R, S, ... ('-': no thread) */
	int cpu;               /* host CPU it last ran on, -1 unknown */
	uint64_t run_ns, wait_ns;   /* on a CPU; runnable, waiting for one */
	cpu_set_t affinity;
};
int sched_vcpu_stats(struct vcpu *v, struct vcpu_sched_stats *s);
/* Time the vCPU thread was runnable but not running (the guest's steal). */
uint64_t sched_vcpu_wait_ns(struct vcpu *v);
int sched_vcpu_pin(struct vcpu *v, const cpu_set_t *set);
/* Open the running vCPU thread's stat files now: the sandboxed process
 * reads them through these descriptors. */
int sched_vcpu_keep_open(struct vcpu *v);
/* Create the domain's cgroup rel under the CPU controller and move this
 * process in: 0, or -errno with one sentence in why (-ENODEV: no CPU
 * controller; -EBUSY: another process is in that cgroup). */
int sched_cgroup_join(struct domain *dom, const char *rel, char *why, size_t whylen);
/* Weight and cap together, or neither: 0, -ENODEV (no cgroup), -ERANGE. */
int sched_set(struct domain *dom, unsigned weight, unsigned cap);
void sched_cgroup_leave(struct domain *dom);

/* The configured action for how the domain ended (destroy if still
 * running, or stopped from the host). */
static inline enum domain_action domain_action_for(struct domain *dom)
{
	switch (atomic_load(&dom->end)) {
	case DOMAIN_POWEROFF: return dom->on_poweroff;
	case DOMAIN_REBOOT:   return dom->on_reboot;
	case DOMAIN_CRASH:    return dom->on_crash;
	default:              return ACTION_DESTROY;
	}
}

/* domain.c: what every part of lodge-hyp that can end a domain (its
 * vCPUs, devices, the control loop) calls, so none of them calls into
 * the program that runs it. */
/* Give a zeroed dom (static, or calloc'd) DOMAIN_DEFAULTS. */
void domain_init(struct domain *dom);
/* Ends the domain with the given status and one-line reason; the first
 * call wins. Safe from any thread. */
void domain_end(struct domain *dom, enum domain_end how, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
