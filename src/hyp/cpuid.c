/* CPUID for a vCPU: what KVM supports, with this vCPU's APIC ID and the
 * KVM paravirt leaves.  (On PVM hosts the guest sees the hardware's CPUID
 * whatever we set; we set it anyway for hardware KVM.) */
#include "domain.h"
#include "log.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#define CPUID_MAX_ENTRIES 256
#define CPUID_FEAT_ECX_HYPERVISOR (1u << 31)

int cpuid_setup(struct vcpu *v)
{
	struct kvm_cpuid2 *cpuid;
	unsigned i;
	int rc = 0;

	cpuid = calloc(1, sizeof(*cpuid) + CPUID_MAX_ENTRIES * sizeof(cpuid->entries[0]));
	if (!cpuid)
		return -ENOMEM;
	cpuid->nent = CPUID_MAX_ENTRIES;
	if (ioctl(v->dom->kvm_fd, KVM_GET_SUPPORTED_CPUID, cpuid) < 0) {
		rc = -errno;
		goto out;
	}
	for (i = 0; i < cpuid->nent; i++) {
		struct kvm_cpuid_entry2 *e = &cpuid->entries[i];

		switch (e->function) {
		case 1:
			/* Initial APIC ID in EBX[31:24]; HTT/logical count left alone. */
			e->ebx = (e->ebx & 0x00ffffff) | (v->id << 24);
			e->ecx |= CPUID_FEAT_ECX_HYPERVISOR;
			break;
		case 0xb:
		case 0x1f:
			e->edx = v->id;    /* x2APIC ID */
			break;
		case 0x40000000:
			/* KVM's signature, so guests find kvmclock and PV features. */
			e->eax = 0x40000001;
			memcpy(&e->ebx, "KVMK", 4);
			memcpy(&e->ecx, "VMKV", 4);
			memcpy(&e->edx, "M\0\0\0", 4);
			break;
		}
	}
	if (ioctl(v->fd, KVM_SET_CPUID2, cpuid) < 0)
		rc = -errno;
out:
	free(cpuid);
	return rc;
}
