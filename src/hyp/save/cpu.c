/* The VM's and the vCPUs' KVM state as state entries (see save/cpu.h):
 * what this host's KVM offers, probed once, and the entries registered.
 * The "vm" entry is save/cpu-vm.c's, the "vcpuN" ones save/cpu-vcpu.c's.
 *
 * Kernel structures are stored as length-prefixed blobs: a stream from a
 * lodge-hyp built against other kernel headers, whose structures differ
 * in size, is refused rather than misread.  Every load parses and checks
 * its whole payload before the first KVM_SET_*, so a short or corrupt
 * payload leaves the VM as it was. */
#include "save/cpu.h"
#include "save/cpu-state.h"
#include "log.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

/* The MSRs to save: KVM's list, less what vCPU 0 will not read (a
 * backend like PVM may list MSRs it then refuses). */
static int probe_msrs(struct cpu_state *cs)
{
	struct kvm_msr_list probe = { .nmsrs = 0 }, *list;
	struct kvm_msr_entry *got;
	int n, i;

	if (ioctl(cs->dom->kvm_fd, KVM_GET_MSR_INDEX_LIST, &probe) < 0 && errno != E2BIG)
		return -errno;
	if (!(list = calloc(1, sizeof(*list) + probe.nmsrs * sizeof(list->indices[0]))))
		return -ENOMEM;
	list->nmsrs = probe.nmsrs;
	if (ioctl(cs->dom->kvm_fd, KVM_GET_MSR_INDEX_LIST, list) < 0) {
		n = -errno;
		free(list);
		return n;
	}
	got = calloc(list->nmsrs ? list->nmsrs : 1, sizeof(*got));
	cs->msrs = calloc(list->nmsrs ? list->nmsrs : 1, sizeof(*cs->msrs));
	if (!got || !cs->msrs) {
		free(got);
		free(list);
		return -ENOMEM;
	}
	n = cpu_msrs_read(&cs->dom->vcpus[0], list->indices, list->nmsrs, got);
	for (i = 0; i < n; i++)
		cs->msrs[i] = got[i].index;
	cs->nmsrs = n > 0 ? n : 0;
	log_debug("saving %u of the %u MSRs KVM lists", cs->nmsrs, list->nmsrs);
	free(got);
	free(list);
	return n < 0 ? n : 0;
}

int cpu_state_register(struct domain *dom)
{
	struct cpu_state *cs;
	char name[STATE_NAME_MAX];
	unsigned i;
	int rc, size;

	if (!dom->nvcpus)
		return -EINVAL;
	if (!(cs = calloc(1, sizeof(*cs))))
		return -ENOMEM;
	cs->dom = dom;
	cs->sregs2 = ioctl(dom->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SREGS2) > 0;
	cs->xcrs = ioctl(dom->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XCRS) > 0;
	cs->tsc_control = ioctl(dom->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_TSC_CONTROL) > 0;
	/* XSAVE2's size is the VM's (it grows with dynamic features such as
	 * AMX); above 4096 only KVM_GET_XSAVE2 returns it all. */
	size = ioctl(dom->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE2);
	if (size > XSAVE_LEGACY_SIZE) {
		cs->xsave2 = true;
		cs->xsave_size = size;
	} else if (ioctl(dom->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE) > 0) {
		cs->xsave_size = XSAVE_LEGACY_SIZE;
	}
	log_debug("CPU state: %s, %s%s", cs->sregs2 ? "SREGS2" : "SREGS",
		  cs->xsave2 ? "XSAVE2" : cs->xsave_size ? "XSAVE" : "FPU", cs->xcrs ? ", XCRS" : "");
	if ((rc = probe_msrs(cs)))
		goto fail;

	/* "vm" first: loading checks CPUID before any vCPU is touched and
	 * sets the irqchips before the LAPICs. */
	if ((rc = state_register("vm", &cpu_vm_ops, cs)))
		goto fail;
	for (i = 0; i < dom->nvcpus; i++) {
		cs->vcpus[i] = (struct cpu_vcpu){ cs, &dom->vcpus[i] };
		snprintf(name, sizeof(name), "vcpu%u", i);
		if ((rc = state_register(name, &cpu_vcpu_ops, &cs->vcpus[i])))
			return rc;    /* registered entries point at cs: keep it */
	}
	return 0;
fail:
	free(cs->msrs);
	free(cs);
	return rc;
}
