/* CPUID (cpuid.c): the only code that asks KVM for CPUID tables, what
 * this host can give a guest and what a vCPU has been given. */
#ifndef LODGE_CPUID_H
#define LODGE_CPUID_H

#include <linux/kvm.h>

struct domain;
struct vcpu;

/* Most entries a table holds here (a saved one included). */
#define CPUID_MAX_ENTRIES 256

/* Give the vCPU what KVM supports, with its APIC ID and the KVM paravirt
 * leaves.  0 or -errno. */
int cpuid_setup(struct vcpu *v);
/* The vCPU's table as KVM took it (what its guest sees), into *out,
 * freed by the caller.  0 or -errno. */
int cpuid_get(struct vcpu *v, struct kvm_cpuid2 **out);
/* What this host can give a guest: KVM_GET_SUPPORTED_CPUID with vCPU 0's
 * own table (cpuid_get) merged in, each register the union of both, into
 * *out, freed by the caller.  On hardware KVM the second is within the
 * first.  PVM reports a reduced supported set (without SSE3, say) yet
 * gives vCPUs nearly the hardware's CPUID, which is what a guest saved
 * there has seen; the union compares like with like on both.  0 or -errno. */
int cpuid_host(struct domain *dom, struct kvm_cpuid2 **out);

#endif
