/* A guest's 64-bit system calls from user mode on a PVM host (emulate.h).
 *
 * PVM runs an unmodified guest's user mode natively.  Its `syscall` sets
 * RCX and R11, masks RFLAGS with SFMASK and jumps to LSTAR, but leaves CS
 * at the user's 0x33: the fetch of the guest kernel's entry is then a user
 * fetch of a supervisor page, a #PF (error 0x15, RIP = LSTAR, CS 0x33)
 * that PVM hands the guest's own #PF handler, which kills the process.
 * Nothing of it reaches the VMM, and guest debug is not seen in user mode
 * (tests/bench/pvm-syscall-probe.c measured each of these).  But the #PF
 * handler is kernel code, run by PVM's emulator, which does honour an
 * instruction breakpoint (KVM_SET_GUEST_DEBUG, DR0): lodge-hyp puts one on
 * the handler the guest's IDT names for #PF, and at each hit looks at the
 * exception frame.  A user fetch fault at LSTAR is the system call: the
 * frame is unwound (RSP the user's, RFLAGS masked as SYSCALL masks them)
 * and the vCPU goes on at LSTAR in kernel mode, as SYSCALL would have left
 * it.  Any other #PF goes on into the handler: the emulator ignores
 * RFLAGS.RF, so its first instruction is single-stepped with the
 * breakpoint off, which is then put back.  The guest's `sysretq` back to
 * user mode works on PVM by itself.
 *
 * The breakpoint is lodge-hyp's, not guest state: it is not saved, and is
 * (re)armed whenever the guest's LSTAR, SFMASK or #PF handler is first
 * seen or changes (checked before KVM_RUN, at most every CHECK_UNARMED_NS,
 * or CHECK_ARMED_NS once armed; at once when a vCPU thread starts, as
 * after a restore, and when an armed vCPU kicks one not yet armed).  On
 * hardware KVM none of this runs. */
#include "insn.h"
#include "domain.h"
#include "log.h"
#include "mem.h"

#include <stdatomic.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <time.h>

#define MSR_LSTAR              0xc0000082
#define MSR_SYSCALL_MASK       0xc0000084
#define EFER_SCE               1ull
#define RFLAGS_RF              (1ull << 16)
#define DR7_L0                 1ull
#define DR7_FIXED              (1ull << 10)   /* reads as 1 */
#define IDT_GATE_PRESENT       0x80

/* How often an unarmed vCPU looks for the guest's system-call set-up, and
 * an armed one for a change to it: the kernel sets LSTAR and its IDT long
 * before it runs user space, with many exits (its console) in between. */
#define CHECK_UNARMED_NS  (20ull * 1000 * 1000)
#define CHECK_ARMED_NS    (1000ull * 1000 * 1000)
/* How often an armed vCPU kicks the online vCPUs not yet armed (below). */
#define KICK_UNARMED_NS   (100ull * 1000 * 1000)

/* What a #PF from user mode pushes: error code, RIP, CS, RFLAGS, RSP, SS. */
struct pf_frame {
	uint64_t error, rip, cs, rflags, rsp, ss;
};

static _Atomic uint64_t syscalls_completed;
static _Atomic uint64_t jumps_to_lstar;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* len bytes at the guest-virtual gva, through the guest's page tables. */
static int read_virt(struct vcpu *v, uint64_t gva, void *dst, size_t len)
{
	uint8_t *out = dst;

	while (len) {
		size_t in_page = GUEST_PAGE_SIZE - (gva & (GUEST_PAGE_SIZE - 1));
		size_t chunk = len < in_page ? len : in_page;
		uint64_t gpa;
		int rc;

		if ((rc = kvm_translate_gva(v, gva, &gpa)) || (rc = gpa_read(&v->dom->mem, gpa, out, chunk)))
			return rc;
		out += chunk;
		gva += chunk;
		len -= chunk;
	}
	return 0;
}

static int get_msrs(struct vcpu *v, uint64_t *lstar, uint64_t *sfmask)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e[2];
	} m = { .hdr.nmsrs = 2, .e = { { .index = MSR_LSTAR }, { .index = MSR_SYSCALL_MASK } } };

	if (ioctl(v->fd, KVM_GET_MSRS, &m) != 2)
		return -EIO;
	*lstar = m.e[0].data;
	*sfmask = m.e[1].data;
	return 0;
}

/* The #PF handler the guest's IDT names, or 0 if there is none yet. */
static uint64_t pf_handler(struct vcpu *v, const struct kvm_sregs *s)
{
	uint8_t gate[16];
	uint64_t handler;

	if (!(s->efer & EFER_LMA) || s->idt.limit < VEC_PF * 16 + 15 ||
	    read_virt(v, s->idt.base + VEC_PF * 16, gate, sizeof(gate)) || !(gate[5] & IDT_GATE_PRESENT))
		return 0;
	handler = gate[0] | (uint64_t)gate[1] << 8 | (uint64_t)gate[6] << 16 | (uint64_t)gate[7] << 24;
	handler |= (uint64_t)(gate[8] | gate[9] << 8 | gate[10] << 16 | (uint32_t)gate[11] << 24) << 32;
	return handler;
}

static int set_debug(struct vcpu *v, bool step)
{
	struct kvm_guest_debug dbg = { .control = KVM_GUESTDBG_ENABLE };

	if (step) {
		dbg.control |= KVM_GUESTDBG_SINGLESTEP;
	} else {
		dbg.control |= KVM_GUESTDBG_USE_HW_BP;
		dbg.arch.debugreg[0] = v->syscall_trap.handler;
		dbg.arch.debugreg[7] = DR7_L0 | DR7_FIXED;     /* DR0: execute, one byte */
	}
	return ioctl(v->fd, KVM_SET_GUEST_DEBUG, &dbg) < 0 ? -errno : 0;
}

static void disarm(struct vcpu *v)
{
	struct kvm_guest_debug off = { .control = 0 };

	ioctl(v->fd, KVM_SET_GUEST_DEBUG, &off);
	v->syscall_trap.armed = false;
	v->syscall_trap.stepping = false;
}

/* v is armed: every other online vCPU not armed yet is kicked out of
 * KVM_RUN to look at once, at most every KICK_UNARMED_NS.  A secondary
 * vCPU of Linux sets LSTAR and its IDT as it comes up, then may idle, take
 * its timers and IPIs and run user space without one exit of its own to
 * lodge-hyp (all in the in-kernel irqchip): unarmed, its user space's
 * first system call would fault.  A vCPU that never sets them up (one the
 * guest did not start) is kicked on, ten times a second, while an armed
 * vCPU exits.  How a vCPU thread is woken is vcpu.c's: it passes kick. */
static void kick_unarmed(struct vcpu *v, uint64_t now, void (*kick)(struct vcpu *))
{
	struct domain *dom = v->dom;
	uint64_t online;
	unsigned i;

	if (dom->nvcpus < 2 || now < v->syscall_trap.next_kick)
		return;
	v->syscall_trap.next_kick = now + KICK_UNARMED_NS;
	online = atomic_load(&dom->online);
	for (i = 0; i < dom->nvcpus; i++) {
		struct vcpu *o = &dom->vcpus[i];

		if (o == v || !(online & (1ull << i)) || atomic_load(&o->syscall_trap.armed))
			continue;
		atomic_store(&o->syscall_trap.recheck, true);
		kick(o);
	}
}

void emulate_syscall_watch(struct vcpu *v, void (*kick)(struct vcpu *))
{
	struct syscall_trap *t = &v->syscall_trap;
	uint64_t now, lstar, sfmask, handler;
	struct kvm_sregs s;

	if (!emulate_host_is_pvm() || t->stepping)
		return;
	now = now_ns();
	if (t->armed)
		kick_unarmed(v, now, kick);
	if (!atomic_exchange(&t->recheck, false) && now < t->next_check)
		return;
	t->next_check = now + (t->armed ? CHECK_ARMED_NS : CHECK_UNARMED_NS);
	if (get_msrs(v, &lstar, &sfmask) || ioctl(v->fd, KVM_GET_SREGS, &s) < 0)
		return;
	handler = lstar && (s.efer & EFER_SCE) ? pf_handler(v, &s) : 0;
	if (!handler) {
		if (t->armed)
			disarm(v);
		return;
	}
	if (t->armed && handler == t->handler && lstar == t->lstar && sfmask == t->sfmask)
		return;
	t->lstar = lstar;
	t->sfmask = sfmask;
	t->handler = handler;
	if (set_debug(v, false)) {
		log_warn("vcpu%u: cannot put a breakpoint on the guest's #PF handler (%s): its system calls "
			 "from user mode will fault", v->id, strerror(errno));
		t->armed = false;
		return;
	}
	t->armed = true;
	log_info("vcpu%u: completing the guest's system calls from user mode for the host's KVM "
		 "(entry %#llx, #PF handler %#llx)", v->id, (unsigned long long)lstar, (unsigned long long)handler);
}

int emulate_syscall_debug(struct vcpu *v, char *why, size_t whylen)
{
	struct syscall_trap *t = &v->syscall_trap;
	struct pf_frame f;
	struct kvm_regs r;
	int rc;

	if (!t->armed) {
		snprintf(why, whylen, "debug exit at %#llx with no breakpoint set",
			 (unsigned long long)v->run->debug.arch.pc);
		return -EPROTO;
	}
	if (t->stepping) {            /* past the handler's first instruction: the breakpoint back */
		t->stepping = false;
		rc = set_debug(v, false);
		goto out;
	}
	if (ioctl(v->fd, KVM_GET_REGS, &r) < 0) {
		rc = -errno;
		goto out;
	}
	if (r.rip != t->handler) {
		snprintf(why, whylen, "debug exit at %#llx, not at the #PF handler %#llx",
			 (unsigned long long)r.rip, (unsigned long long)t->handler);
		return -EPROTO;
	}
	if (!read_virt(v, r.rsp, &f, sizeof(f)) && (f.cs & 3) == 3 && f.rip == t->lstar &&
	    (f.error & (PF_USER | PF_FETCH)) == (PF_USER | PF_FETCH)) {
		/* SYSCALL's entry, as the CPU would have made it: RCX and R11
		 * as the host left them; RFLAGS masked again, for a user that
		 * jumped to LSTAR rather than executed syscall.  Such a user
		 * comes with flags SYSCALL masks still set (IF at least; RF
		 * aside, which the fault itself sets) and with an R11 of its
		 * own choosing, which the kernel takes for the user's flags
		 * and its sysret restores: R11 is then made the user's own
		 * flags, as SYSCALL would have saved them.  The first few such
		 * jumps are logged. */
		if (f.rflags & t->sfmask & ~RFLAGS_RF) {
			r.r11 = (f.rflags & ~RFLAGS_RF) | 2;
			if (atomic_fetch_add(&jumps_to_lstar, 1) < 3)
				log_info("vcpu%u: a user jumped to the guest's LSTAR without syscall: its system "
					 "call completed with its own flags in R11 (%#llx)",
					 v->id, (unsigned long long)r.r11);
		}
		r.rip = t->lstar;
		r.rsp = f.rsp;
		r.rflags = (f.rflags & ~t->sfmask & ~RFLAGS_RF) | 2;
		if (ioctl(v->fd, KVM_SET_REGS, &r) < 0) {
			rc = -errno;
			goto out;
		}
		if (atomic_fetch_add(&syscalls_completed, 1) == 0)
			log_info("vcpu%u: completed the guest's first system call from user mode (number %llu)",
				 v->id, (unsigned long long)r.rax);
		return 0;
	}
	t->stepping = true;           /* an ordinary #PF: into the handler */
	rc = set_debug(v, true);
out:
	if (rc)
		snprintf(why, whylen, "cannot complete a system call from user mode: %s", strerror(-rc));
	return rc;
}

uint64_t emulate_syscall_count(void)
{
	return atomic_load(&syscalls_completed);
}
