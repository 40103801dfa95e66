/* What emulate/ asks of the host's KVM (emulate.h, insn.h): whether it is
 * PVM, and where a guest-virtual address lies in guest memory by the
 * vCPU's own page tables.  Below both emulate.c and syscall.c. */
#include "insn.h"
#include "domain.h"

#include <errno.h>
#include <sys/ioctl.h>
#include <unistd.h>

bool emulate_host_is_pvm(void)
{
	static int pvm = -1;

	if (pvm < 0)
		pvm = access("/sys/module/kvm_pvm", F_OK) == 0;
	return pvm;
}

int kvm_translate_gva(void *ctx, uint64_t gva, uint64_t *gpa)
{
	struct vcpu *v = ctx;
	struct kvm_translation tr = { .linear_address = gva & ~(uint64_t)(GUEST_PAGE_SIZE - 1) };

	if (ioctl(v->fd, KVM_TRANSLATE, &tr) < 0)
		return -errno;
	if (!tr.valid)
		return -EFAULT;
	*gpa = tr.physical_address + (gva & (GUEST_PAGE_SIZE - 1));
	return 0;
}
