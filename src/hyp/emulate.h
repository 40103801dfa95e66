/* Completing what the host's KVM cannot emulate.  On a PVM host
 * (/sys/module/kvm_pvm: KVM in software, for nested clouds) a guest's
 * kernel-mode code runs through PVM's own instruction emulator, which
 * stops with KVM_EXIT_INTERNAL_ERROR (suberror 1, emulation) at an
 * instruction it does not know, the guest's state intact.  lodge-hyp
 * then fetches the instruction through the guest's page tables, decodes
 * it with Zydis and completes it here, or injects the exception it would
 * raise; the guest goes on.  On hardware KVM an emulation failure stays
 * a crash with its evidence. */
#ifndef LODGE_EMULATE_H
#define LODGE_EMULATE_H

#include <linux/kvm.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct guest_mem;
struct vcpu;

/* Where a completion reaches the vCPU state beyond its registers: KVM's
 * ioctls for a running vCPU (emulate/emulate.c), or a test's own state.  Each
 * returns 0 or -errno. */
struct emul_env {
	/* Guest-virtual to guest-physical (KVM_TRANSLATE): -EFAULT if the
	 * page is not mapped. */
	int (*translate)(void *ctx, uint64_t gva, uint64_t *gpa);
	int (*get_fpu)(void *ctx, struct kvm_fpu *fpu);
	int (*set_fpu)(void *ctx, const struct kvm_fpu *fpu);
	int (*get_xcr0)(void *ctx, uint64_t *xcr0);
	int (*set_xcr0)(void *ctx, uint64_t xcr0);
	/* The XSAVE area in the standard (not compacted) format. */
	int (*get_xsave)(void *ctx, struct kvm_xsave *xs);
	int (*set_xsave)(void *ctx, const struct kvm_xsave *xs);
};

/* One completion's view of the vCPU, and its outcome. */
struct emul_cpu {
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_fpu fpu;
	bool fpu_loaded, fpu_dirty;
	struct kvm_xsave xsave;
	bool xsave_loaded, xsave_dirty;
	const struct guest_mem *mem;
	const struct emul_env *env;
	void *ctx;
	/* The exception to inject instead (-1: none): the instruction was
	 * not completed, or (int3, int1) its completion is the trap. */
	int vector;
	bool has_error_code;
	uint32_t error_code;
	bool set_cr2;           /* a #PF: CR2 = cr2 */
	uint64_t cr2;
};

/* The longest x86 instruction. */
#define EMUL_INSN_MAX 15

/* Decode bytes[0..len) at c->regs.rip and complete it on c (registers,
 * FPU state through env, guest memory through env's translation and
 * c->mem), or set c->vector to the exception it raises.  0 when done
 * either way; -ENOTSUP when it is an instruction Lodge does not complete
 * (why says which: bytes, mnemonic, address). */
int emulate_insn(struct emul_cpu *c, const uint8_t *bytes, size_t len, char *why, size_t whylen);

/* The KVM_EXIT_INTERNAL_ERROR path of a vCPU: on a PVM host, complete the
 * emulation failure the last KVM_RUN returned.  0: completed (or an
 * exception injected), run on; <0: cannot, and why is the crash's reason
 * after "vcpuN ": "KVM internal error (suberror N)" where nothing is
 * completed (hardware KVM), else "KVM internal error: " and the
 * instruction. */
int emulate_vcpu(struct vcpu *v, char *why, size_t whylen);

/* A guest's 64-bit system calls from user mode on a PVM host, which
 * leaves them as a user fetch fault at LSTAR: completed by lodge-hyp at a
 * breakpoint on the guest's #PF handler (emulate/syscall.c says how).
 * One per vCPU; none of it is guest state (not saved: re-armed). */
struct syscall_trap {
	_Atomic bool armed;     /* the breakpoint is set on handler (read by the other vCPUs) */
	bool stepping;          /* single-stepping into the handler, breakpoint off */
	uint64_t lstar, sfmask, handler;   /* as the guest had them when armed */
	uint64_t next_check;    /* CLOCK_MONOTONIC ns: look at the guest's set-up again */
	uint64_t next_kick;     /* armed: when to kick the vCPUs not yet armed again */
	_Atomic bool recheck;   /* kicked by an armed vCPU: look at once, not at next_check */
};

/* Before KVM_RUN: arm (or re-arm, or disarm) the breakpoint when the
 * guest's LSTAR, SFMASK or #PF handler appeared or changed; once armed,
 * kick the vCPUs not armed yet out of KVM_RUN to look too.  Nothing on
 * hardware KVM. */
void emulate_syscall_watch(struct vcpu *v, void (*kick)(struct vcpu *v));
/* The KVM_EXIT_DEBUG path of a vCPU: 0 when the breakpoint's hit was
 * handled (a system call's entry made, or a #PF let through); <0 and why
 * (after "vcpuN ") otherwise. */
int emulate_syscall_debug(struct vcpu *v, char *why, size_t whylen);
/* System calls completed so far, on every vCPU. */
uint64_t emulate_syscall_count(void);

/* Whether this host's KVM is PVM (looked up once, before the sandbox). */
bool emulate_host_is_pvm(void);

/* "kind count, ..." of every completion so far ("none" if none). */
void emulate_counts_text(char *buf, size_t len);
/* One line in lodge-hyp's log (lodge dmesg) with the counts, if any. */
void emulate_log_counts(void);

#endif
