/* The CPU state entries' shared part (save/cpu.h): what this host's KVM
 * offers, probed once when registering (save/cpu.c), used by the "vm"
 * entry (save/cpu-vm.c) and the "vcpuN" ones (save/cpu-vcpu.c). */
#ifndef LODGE_SAVE_CPU_STATE_H
#define LODGE_SAVE_CPU_STATE_H

#include "domain.h"
#include "save/state.h"

#include <linux/kvm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MSRS_MAX  1024         /* no saved vCPU has more MSRs than this */
#define XSAVE_LEGACY_SIZE 4096 /* struct kvm_xsave without KVM_CAP_XSAVE2 */

struct cpu_state;

struct cpu_vcpu {
	struct cpu_state *cs;
	struct vcpu *v;
};

struct cpu_state {
	struct domain *dom;
	uint32_t *msrs;        /* KVM_GET_MSR_INDEX_LIST, less those vCPU 0 cannot read */
	unsigned nmsrs;
	uint32_t xsave_size;   /* bytes KVM_GET/SET_XSAVE move; 0: no XSAVE, use KVM_GET_FPU */
	bool xsave2, sregs2, xcrs, tsc_control;
	/* The clock stopped at quiesce, so the guest does not see the time
	 * it spends paused for a save. */
	bool clock_held;
	uint64_t clock;
	struct cpu_vcpu vcpus[DOMAIN_VCPUS_MAX];
};

/* "vm" (cpu-vm.c): CPUID, irqchips, PIT, clock; its object a cpu_state. */
extern const struct state_ops cpu_vm_ops;
/* "vcpuN" (cpu-vcpu.c): its object a cpu_vcpu. */
extern const struct state_ops cpu_vcpu_ops;
/* Read what of index[0..n) KVM gives for this vCPU into out (n entries
 * of room), past any it refuses.  Returns the number read, or -errno. */
int cpu_msrs_read(struct vcpu *v, const uint32_t *index, unsigned n, struct kvm_msr_entry *out);
/* Why a payload that parsed badly is refused: -EBADMSG. */
int cpu_bad_payload(const struct state_in *in, const char *name, char *why, size_t whylen);

#endif
