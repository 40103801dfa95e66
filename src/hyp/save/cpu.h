/* The state of the VM and of each vCPU, as registered state entries.
 *
 * "vm" holds the guest-visible CPUID (checked against this host's KVM
 * before anything else is loaded), the in-kernel PIC and IOAPIC, the PIT
 * and the KVM clock.  "vcpu0".."vcpuN-1" hold each vCPU's registers,
 * FPU/XSAVE, MSRs, LAPIC, pending events and MP state.  "vm" is
 * registered, and so loaded, before the vCPUs: a host that lacks a CPU
 * feature the guest uses is refused before any state is touched, and the
 * irqchips are in place before the LAPICs are (QEMU's order).
 *
 * Saving wants the vCPUs parked (vcpu_pause_all); vcpu_park completes any
 * PIO/MMIO in flight first, so the registers read are the guest's.
 * Loading wants vCPUs that have never run. */
#ifndef LODGE_SAVE_CPU_H
#define LODGE_SAVE_CPU_H

struct domain;

/* Payload format versions of the "vm" and "vcpuN" entries. */
#define CPU_STATE_VM_VERSION   1
#define CPU_STATE_VCPU_VERSION 1

/* Register "vm", then "vcpu0".."vcpu<nvcpus-1>", for vCPUs already
 * created.  0 or -errno (-ENOMEM, a KVM ioctl's error, or the registry's). */
int cpu_state_register(struct domain *dom);

/* For tests crafting payloads: "vm" begins with the CPUID blob (u32
 * length, then struct kvm_cpuid_entry2[]); "vcpuN" ends with its MSRs
 * (u32 count, then count (u32 index, u64 value) pairs). */

#endif
