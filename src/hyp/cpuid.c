/* CPUID for a vCPU: what KVM supports, with this vCPU's APIC ID and the
 * KVM paravirt leaves.  (On PVM hosts the guest sees the hardware's CPUID
 * whatever we set; we set it anyway for hardware KVM.)  And the tables a
 * save and a restore compare (cpuid.h). */
#include "cpuid.h"
#include "domain.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#define CPUID_FEAT_ECX_HYPERVISOR (1u << 31)

static struct kvm_cpuid2 *cpuid_alloc(unsigned n)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + n * sizeof(c->entries[0]));

	if (c)
		c->nent = n;
	return c;
}

/* KVM_GET_SUPPORTED_CPUID, in a table grown until it fits. */
static int cpuid_supported(struct domain *dom, struct kvm_cpuid2 **out)
{
	struct kvm_cpuid2 *c;
	unsigned n;

	for (n = CPUID_MAX_ENTRIES; n <= 4 * CPUID_MAX_ENTRIES; n *= 2) {
		if (!(c = cpuid_alloc(n)))
			return -ENOMEM;
		if (ioctl(dom->kvm_fd, KVM_GET_SUPPORTED_CPUID, c) == 0) {
			*out = c;
			return 0;
		}
		free(c);
		if (errno != E2BIG)
			return -errno;
	}
	return -E2BIG;
}

int cpuid_setup(struct vcpu *v)
{
	struct kvm_cpuid2 *cpuid;
	unsigned i;
	int rc;

	if ((rc = cpuid_supported(v->dom, &cpuid)))
		return rc;
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
			/* KVM's signature, so guests find kvmclock and PV features:
			 * as the host's KVM gives it (a PVM host's leaves are what a
			 * PVM guest kernel looks for), filled in only if it gives none. */
			if (e->ebx || e->ecx || e->edx)
				break;
			e->eax = 0x40000001;
			memcpy(&e->ebx, "KVMK", 4);
			memcpy(&e->ecx, "VMKV", 4);
			memcpy(&e->edx, "M\0\0\0", 4);
			break;
		}
	}
	if (ioctl(v->fd, KVM_SET_CPUID2, cpuid) < 0)
		rc = -errno;
	free(cpuid);
	return rc;
}

int cpuid_get(struct vcpu *v, struct kvm_cpuid2 **out)
{
	struct kvm_cpuid2 *c = cpuid_alloc(CPUID_MAX_ENTRIES);
	int rc;

	if (!c)
		return -ENOMEM;
	if (ioctl(v->fd, KVM_GET_CPUID2, c) < 0) {
		rc = -errno;
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

int cpuid_host(struct domain *dom, struct kvm_cpuid2 **out)
{
	struct kvm_cpuid2 *supported, *own = NULL, *h;
	unsigned i, j;
	int rc;

	if ((rc = cpuid_supported(dom, &supported)))
		return rc;
	/* Room for vCPU 0's leaves the supported list lacks. */
	if (!(h = cpuid_alloc(supported->nent + CPUID_MAX_ENTRIES))) {
		free(supported);
		return -ENOMEM;
	}
	memcpy(h->entries, supported->entries, supported->nent * sizeof(supported->entries[0]));
	h->nent = supported->nent;
	free(supported);
	if (cpuid_get(&dom->vcpus[0], &own))
		own = NULL;       /* the supported list alone, then */
	for (i = 0; own && i < own->nent; i++) {
		const struct kvm_cpuid_entry2 *o = &own->entries[i];

		for (j = 0; j < h->nent; j++) {
			struct kvm_cpuid_entry2 *e = &h->entries[j];

			if (e->function == o->function && e->index == o->index) {
				e->eax |= o->eax;
				e->ebx |= o->ebx;
				e->ecx |= o->ecx;
				e->edx |= o->edx;
				break;
			}
		}
		if (j == h->nent)
			h->entries[h->nent++] = *o;
	}
	free(own);
	*out = h;
	return 0;
}
