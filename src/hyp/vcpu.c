/* vCPUs: one thread each, running KVM_RUN and dispatching exits to the
 * buses.  Only vCPU 0 gets boot registers; the others wait in the
 * in-kernel LAPIC for the guest's INIT/SIPI, as on real hardware. */
#include "bus.h"
#include "boot/boot.h"
#include "cpuid.h"
#include "domain.h"
#include "emulate.h"
#include "log.h"

#include <errno.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define VCPU_KICK_SIGNAL SIGUSR1

#define MSR_IA32_SYSENTER_CS   0x174
#define MSR_IA32_SYSENTER_ESP  0x175
#define MSR_IA32_SYSENTER_EIP  0x176
#define MSR_IA32_MISC_ENABLE   0x1a0
#define MSR_STAR               0xc0000081
#define MSR_LSTAR              0xc0000082
#define MSR_CSTAR              0xc0000083
#define MSR_SYSCALL_MASK       0xc0000084
#define MSR_KERNEL_GS_BASE     0xc0000102
#define MSR_IA32_TSC           0x10
#define MISC_ENABLE_FAST_STRING 1

#define APIC_LVT0     0x350
#define APIC_LVT1     0x360
#define APIC_MODE_EXTINT 0x7
#define APIC_MODE_NMI    0x4

static void vcpu_kick_handler(int sig) { (void)sig; }

/* Virtual-wire mode: LINT0 delivers the 8259's ExtINT, LINT1 the NMI,
 * which is what firmware leaves and what Linux expects to find. */
static int vcpu_setup_lapic(struct vcpu *v)
{
	struct kvm_lapic_state lapic;
	uint32_t lvt;

	if (ioctl(v->fd, KVM_GET_LAPIC, &lapic) < 0)
		return -errno;
	memcpy(&lvt, lapic.regs + APIC_LVT0, 4);
	lvt = (lvt & ~0x700u & ~0x10000u) | (APIC_MODE_EXTINT << 8);
	memcpy(lapic.regs + APIC_LVT0, &lvt, 4);
	memcpy(&lvt, lapic.regs + APIC_LVT1, 4);
	lvt = (lvt & ~0x700u & ~0x10000u) | (APIC_MODE_NMI << 8);
	memcpy(lapic.regs + APIC_LVT1, &lvt, 4);
	if (ioctl(v->fd, KVM_SET_LAPIC, &lapic) < 0)
		return -errno;
	return 0;
}

static void vcpu_setup_msrs(struct vcpu *v)
{
	static const struct { uint32_t index; uint64_t data; } init[] = {
		{ MSR_IA32_SYSENTER_CS, 0 }, { MSR_IA32_SYSENTER_ESP, 0 },
		{ MSR_IA32_SYSENTER_EIP, 0 }, { MSR_STAR, 0 }, { MSR_LSTAR, 0 },
		{ MSR_CSTAR, 0 }, { MSR_SYSCALL_MASK, 0 }, { MSR_KERNEL_GS_BASE, 0 },
		{ MSR_IA32_TSC, 0 }, { MSR_IA32_MISC_ENABLE, MISC_ENABLE_FAST_STRING },
	};
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e[sizeof(init) / sizeof(init[0])];
	} msrs = { .hdr.nmsrs = sizeof(init) / sizeof(init[0]) };
	unsigned i;
	int n;

	for (i = 0; i < msrs.hdr.nmsrs; i++)
		msrs.e[i] = (struct kvm_msr_entry){ .index = init[i].index, .data = init[i].data };
	/* KVM_SET_MSRS returns how many it set; a backend that refuses some
	 * (PVM owns the syscall MSRs) is not an error for booting. */
	n = ioctl(v->fd, KVM_SET_MSRS, &msrs);
	if (n != (int)msrs.hdr.nmsrs)
		log_debug("vcpu%u: set %d of %u MSRs", v->id, n, msrs.hdr.nmsrs);
}

int vcpu_create(struct domain *dom, unsigned id)
{
	struct vcpu *v = &dom->vcpus[id];
	int size, rc;

	v->dom = dom;
	v->id = id;
	v->fd = ioctl(dom->vm_fd, KVM_CREATE_VCPU, id);
	if (v->fd < 0)
		return -errno;
	size = ioctl(dom->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (size < (int)sizeof(struct kvm_run))
		return -EPROTO;
	v->run_size = size;
	v->run = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->run == MAP_FAILED) {
		v->run = NULL;
		return -errno;
	}
	emulate_host_is_pvm();     /* looked up now: the sandbox has no /sys */
	rc = cpuid_setup(v);
	if (rc)
		return rc;
	vcpu_setup_msrs(v);
	return vcpu_setup_lapic(v);
}

static struct kvm_segment flat_segment(uint16_t sel, uint8_t type, int code64)
{
	return (struct kvm_segment){
		.base = 0, .limit = 0xffffffff, .selector = sel, .type = type,
		.present = 1, .dpl = 0, .db = !code64, .s = 1, .l = code64, .g = 1,
	};
}

int vcpu_set_boot_state(struct vcpu *v, const struct boot_entry *entry)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs = { .rflags = 0x2, .rip = entry->rip };
	int code64 = entry->mode == BOOT_LINUX64;

	if (ioctl(v->fd, KVM_GET_SREGS, &sregs) < 0)
		return -errno;
	sregs.cs = flat_segment(0x10, 0xb, code64);          /* execute/read, accessed */
	sregs.ds = sregs.es = sregs.fs = sregs.gs = sregs.ss = flat_segment(0x18, 0x3, 0);
	sregs.tr = (struct kvm_segment){ .selector = 0x20, .limit = 0x67, .type = 0xb,
					 .present = 1, .s = 0 };  /* busy 32-bit TSS */
	if (entry->mode == BOOT_LINUX64) {
		sregs.gdt.base = GPA_BOOT_GDT;
		sregs.gdt.limit = 4 * 8 - 1;
		sregs.cr3 = GPA_BOOT_PML4;
		sregs.cr4 = 0x20;                      /* PAE */
		sregs.cr0 = 0x80000011;                /* PG | ET | PE */
		sregs.efer = 0x500;                    /* LMA | LME */
		regs.rsi = entry->arg;
	} else {
		sregs.cr0 = 0x11;                      /* ET | PE, paging off */
		sregs.cr4 = 0;
		sregs.efer = 0;
		regs.rbx = entry->arg;
	}
	if (ioctl(v->fd, KVM_SET_SREGS, &sregs) < 0)
		return -errno;
	if (ioctl(v->fd, KVM_SET_REGS, &regs) < 0)
		return -errno;
	return 0;
}

int vcpu_registers_text(struct vcpu *v, char *buf, size_t len)
{
	struct kvm_regs r;
	struct kvm_sregs s;
	int n;

	if (ioctl(v->fd, KVM_GET_REGS, &r) < 0 || ioctl(v->fd, KVM_GET_SREGS, &s) < 0)
		return snprintf(buf, len, "vcpu%u: cannot read the registers: %s\n", v->id, strerror(errno));
	n = snprintf(buf, len,
		     "vcpu%u: rip %016llx rsp %016llx rflags %08llx\n"
		     "vcpu%u: rax %016llx rbx %016llx rcx %016llx rdx %016llx\n"
		     "vcpu%u: rsi %016llx rdi %016llx rbp %016llx\n"
		     "vcpu%u: r8  %016llx r9  %016llx r10 %016llx r11 %016llx\n"
		     "vcpu%u: r12 %016llx r13 %016llx r14 %016llx r15 %016llx\n"
		     "vcpu%u: cr0 %08llx cr2 %016llx cr3 %016llx cr4 %08llx efer %llx\n"
		     "vcpu%u: cs %04x (base %llx, l %d, db %d) ss %04x idt %llx+%x gdt %llx+%x\n",
		     v->id, r.rip, r.rsp, r.rflags, v->id, r.rax, r.rbx, r.rcx, r.rdx, v->id, r.rsi, r.rdi, r.rbp,
		     v->id, r.r8, r.r9, r.r10, r.r11, v->id, r.r12, r.r13, r.r14, r.r15,
		     v->id, s.cr0, s.cr2, s.cr3, s.cr4, s.efer, v->id, s.cs.selector, s.cs.base, s.cs.l, s.cs.db,
		     s.ss.selector, s.idt.base, s.idt.limit, s.gdt.base, s.gdt.limit);
	return n;
}

static void vcpu_log_registers(struct vcpu *v)
{
	char text[1024], *line, *save = NULL;

	vcpu_registers_text(v, text, sizeof(text));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		log_err("%s", line);
}

static void vcpu_handle_io(struct kvm_run *run)
{
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	uint32_t i;

	for (i = 0; i < run->io.count; i++) {
		bus_access(BUS_PIO, run->io.port, run->io.size,
			   run->io.direction == KVM_EXIT_IO_OUT, data);
		data += run->io.size;
	}
}

/* An exit lodge-hyp completes for the host's KVM (emulate/): 0 when it
 * was, and the guest goes on; else the registers logged and the domain
 * ended as crashed, with why. */
static int vcpu_complete(struct vcpu *v, int (*complete)(struct vcpu *v, char *why, size_t whylen))
{
	char why[256];

	if (complete(v, why, sizeof(why)) == 0)
		return 0;
	vcpu_log_registers(v);
	domain_end(v->dom, DOMAIN_CRASH, "vcpu%u %s", v->id, why);
	return 1;
}

/* Returns 0 to keep running, 1 when the domain has ended. */
static int vcpu_handle_exit(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	struct domain *dom = v->dom;

	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		vcpu_handle_io(run);
		return 0;
	case KVM_EXIT_MMIO:
		bus_access(BUS_MMIO, run->mmio.phys_addr, run->mmio.len,
			   run->mmio.is_write, run->mmio.data);
		return 0;
	case KVM_EXIT_INTR:
		return 0;
	case KVM_EXIT_HLT:
		/* With the in-kernel irqchip HLT stays in the kernel; seeing it
		 * means the vCPU halted with nothing able to wake it. */
		domain_end(dom, DOMAIN_CRASH, "vcpu%u halted with interrupts off", v->id);
		return 1;
	case KVM_EXIT_SHUTDOWN:
		vcpu_log_registers(v);
		domain_end(dom, DOMAIN_CRASH, "vcpu%u triple fault", v->id);
		return 1;
	case KVM_EXIT_SYSTEM_EVENT:
		switch (run->system_event.type) {
		case KVM_SYSTEM_EVENT_SHUTDOWN:
			domain_end(dom, DOMAIN_POWEROFF, "guest powered off");
			return 1;
		case KVM_SYSTEM_EVENT_RESET:
			domain_end(dom, DOMAIN_REBOOT, "guest rebooted");
			return 1;
		default:
			domain_end(dom, DOMAIN_CRASH, "vcpu%u system event %u", v->id,
				   run->system_event.type);
			return 1;
		}
	case KVM_EXIT_INTERNAL_ERROR:
		/* On a PVM host, an instruction its emulator refused: finished
		 * here, and the guest goes on. */
		return vcpu_complete(v, emulate_vcpu);
	case KVM_EXIT_DEBUG:
		/* Only lodge-hyp's own breakpoint (PVM: a system call from
		 * user mode), never the guest's: it cannot ask for one. */
		return vcpu_complete(v, emulate_syscall_debug);
	case KVM_EXIT_FAIL_ENTRY:
		vcpu_log_registers(v);
		domain_end(dom, DOMAIN_CRASH, "vcpu%u failed to enter the guest (reason %#llx)",
			   v->id, (unsigned long long)run->fail_entry.hardware_entry_failure_reason);
		return 1;
	default:
		vcpu_log_registers(v);
		domain_end(dom, DOMAIN_CRASH, "vcpu%u unexpected exit reason %u", v->id,
			   run->exit_reason);
		return 1;
	}
}

/* After a PIO or MMIO exit KVM has not finished the instruction: an IN's
 * or MMIO read's data is still in the run page, a string I/O's RIP and
 * counts not yet advanced.  It does so at the start of the next KVM_RUN,
 * so state read before that (a save while paused) would be mid-instruction
 * and lose the access.  One KVM_RUN with immediate_exit set completes it
 * and returns EINTR without entering the guest.  Completing may exit
 * again (the next piece of a string I/O or split MMIO): handle and repeat.
 * Returns 1 if the domain ended meanwhile. */
static int vcpu_complete_io(struct vcpu *v)
{
	for (;;) {
		v->run->immediate_exit = 1;
		if (ioctl(v->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				return 0;
			domain_end(v->dom, DOMAIN_ERROR, "vcpu%u: KVM_RUN: %s", v->id, strerror(errno));
			return 1;
		}
		if (vcpu_handle_exit(v))
			return 1;
	}
}

static bool vcpu_held(const struct vcpu *v)
{
	return !(atomic_load(&v->dom->online) & (1ull << v->id));
}

/* Wait outside the guest while the domain is paused or this vCPU is
 * offline (or until the domain ends).
 * io_pending: the last KVM_RUN exited for PIO or MMIO. */
static void vcpu_park(struct vcpu *v, bool io_pending)
{
	struct domain *dom = v->dom;

	if (io_pending && vcpu_complete_io(v))
		return;
	pthread_mutex_lock(&dom->pause_lock);
	dom->parked++;
	pthread_cond_broadcast(&dom->pause_cond);
	while ((dom->paused || vcpu_held(v)) && atomic_load(&dom->end) == DOMAIN_RUNNING)
		pthread_cond_wait(&dom->pause_cond, &dom->pause_lock);
	dom->parked--;
	pthread_mutex_unlock(&dom->pause_lock);
	v->run->immediate_exit = 0;
}

/* Out of KVM_RUN once, back to its loop (a signal; immediate_exit). */
static void vcpu_kick(struct vcpu *v)
{
	if (v->run)
		v->run->immediate_exit = 1;
	if (atomic_load(&v->tid))
		pthread_kill(v->thread, VCPU_KICK_SIGNAL);
}

void vcpu_set_online(struct domain *dom, unsigned id, bool online)
{
	uint64_t bit = 1ull << id;

	if (id >= dom->nvcpus)
		return;
	pthread_mutex_lock(&dom->pause_lock);
	if (online)
		atomic_fetch_or(&dom->online, bit);
	else
		atomic_fetch_and(&dom->online, ~bit);
	pthread_cond_broadcast(&dom->pause_cond);
	pthread_mutex_unlock(&dom->pause_lock);
	/* Going offline: out of KVM_RUN, to park (immediate_exit covers a
	 * kick between its check and the ioctl). */
	if (!online)
		vcpu_kick(&dom->vcpus[id]);
}

unsigned vcpu_online_count(const struct domain *dom)
{
	return (unsigned)__builtin_popcountll(atomic_load(&dom->online));
}

static void vcpu_kick_all(struct domain *dom)
{
	unsigned i;

	for (i = 0; i < dom->nvcpus; i++) {
		if (dom->vcpus[i].run)
			dom->vcpus[i].run->immediate_exit = 1;
		pthread_kill(dom->vcpus[i].thread, VCPU_KICK_SIGNAL);
	}
}

void vcpu_pause_all(struct domain *dom)
{
	pthread_mutex_lock(&dom->pause_lock);
	dom->paused = true;
	pthread_mutex_unlock(&dom->pause_lock);
	vcpu_kick_all(dom);
	pthread_mutex_lock(&dom->pause_lock);
	while (dom->parked < dom->nvcpus && atomic_load(&dom->end) == DOMAIN_RUNNING)
		pthread_cond_wait(&dom->pause_cond, &dom->pause_lock);
	pthread_mutex_unlock(&dom->pause_lock);
}

void vcpu_unpause_all(struct domain *dom)
{
	pthread_mutex_lock(&dom->pause_lock);
	dom->paused = false;
	pthread_cond_broadcast(&dom->pause_cond);
	pthread_mutex_unlock(&dom->pause_lock);
}

int vcpu_nmi(struct domain *dom, unsigned id)
{
	bool was_paused = dom->paused;
	int rc = 0;

	if (id >= dom->nvcpus)
		return -EINVAL;
	/* A vCPU ioctl waits for KVM_RUN to return: park them first, as a
	 * pause does, so the request never waits on a halted guest. */
	if (!was_paused)
		vcpu_pause_all(dom);
	if (ioctl(dom->vcpus[id].fd, KVM_NMI) < 0)
		rc = -errno;
	if (!was_paused)
		vcpu_unpause_all(dom);
	return rc;
}

uint64_t vcpu_cpu_ns(struct vcpu *v)
{
	struct timespec ts;
	clockid_t clk;

	if (pthread_getcpuclockid(v->thread, &clk) || clock_gettime(clk, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	bool io_pending = false;
	char name[16];
	sigset_t set;

	snprintf(name, sizeof(name), "vcpu%u", v->id);
	pthread_setname_np(pthread_self(), name);
	atomic_store(&v->tid, gettid());
	sigemptyset(&set);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);

	while (atomic_load(&v->dom->end) == DOMAIN_RUNNING) {
		if (v->dom->paused || vcpu_held(v)) {
			vcpu_park(v, io_pending);
			io_pending = false;
			continue;      /* the domain may have ended while parked */
		}
		emulate_syscall_watch(v, vcpu_kick);
		if (ioctl(v->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				v->run->immediate_exit = 0;
				io_pending = false;
				continue;
			}
			domain_end(v->dom, DOMAIN_ERROR, "vcpu%u: KVM_RUN: %s", v->id, strerror(errno));
			break;
		}
		io_pending = v->run->exit_reason == KVM_EXIT_IO || v->run->exit_reason == KVM_EXIT_MMIO;
		if (vcpu_handle_exit(v))
			break;
	}
	atomic_store(&v->tid, 0);     /* its /proc/self/task entry is going */
	return NULL;
}

int vcpu_start_all(struct domain *dom)
{
	struct sigaction sa = { .sa_handler = vcpu_kick_handler };
	pthread_attr_t attr;
	sigset_t set, old;
	unsigned i;
	int rc;

	sigaction(VCPU_KICK_SIGNAL, &sa, NULL);
	/* Threads start with the kick signal blocked and unblock it
	 * themselves, so only vCPU threads ever take it. */
	sigemptyset(&set);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	for (i = 0; i < dom->nvcpus; i++) {
		struct vcpu *v = &dom->vcpus[i];

		/* The config's cpus: set before the thread exists, so the vCPU
		 * never runs outside them. */
		pthread_attr_init(&attr);
		rc = v->pinned ? pthread_attr_setaffinity_np(&attr, sizeof(v->pin), &v->pin) : 0;
		if (!rc)
			rc = pthread_create(&v->thread, &attr, vcpu_thread, v);
		pthread_attr_destroy(&attr);
		if (rc) {
			domain_end(dom, DOMAIN_ERROR, "cannot start vcpu%u: %s", i, strerror(rc));
			dom->nvcpus = i;
			return -rc;
		}
	}
	return 0;
}

/* Stop every vCPU and wait for its thread.  immediate_exit makes a KVM_RUN
 * that has not yet entered the guest return at once, so a kick that lands
 * between the loop's check and the ioctl is not lost. */
void vcpu_stop_all(struct domain *dom)
{
	unsigned i;

	vcpu_kick_all(dom);
	pthread_mutex_lock(&dom->pause_lock);       /* wake parked vCPUs to exit */
	pthread_cond_broadcast(&dom->pause_cond);
	pthread_mutex_unlock(&dom->pause_lock);
	for (i = 0; i < dom->nvcpus; i++)
		pthread_join(dom->vcpus[i].thread, NULL);
}
