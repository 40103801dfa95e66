/* The VM itself: /dev/kvm, the in-kernel irqchip and PIT, guest RAM slots. */
#include "domain.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Addresses KVM on Intel wants for real-mode emulation; inside the
 * 3-4 GiB hole, below the IOAPIC, so they never shadow RAM. */
#define KVM_TSS_ADDR        0xfffbd000UL
#define KVM_IDENTITY_MAP    0xfffbc000ULL

int kvm_open(struct domain *dom)
{
	int version;

	dom->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (dom->kvm_fd < 0)
		return -errno;
	version = ioctl(dom->kvm_fd, KVM_GET_API_VERSION, 0);
	if (version != KVM_API_VERSION) {
		close(dom->kvm_fd);
		dom->kvm_fd = -1;
		return -EPROTO;
	}
	return 0;
}

int kvm_max_vcpus(struct domain *dom)
{
	int n = ioctl(dom->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);

	if (n <= 0)
		n = ioctl(dom->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_NR_VCPUS);
	if (n <= 0)
		n = 4;  /* the API's documented minimum */
	return n < DOMAIN_VCPUS_MAX ? n : DOMAIN_VCPUS_MAX;
}

/* Guest RAM in two slots: 0 below the 3-4 GiB hole, 1 above it. */
static int kvm_map_memory(struct domain *dom)
{
	struct kvm_userspace_memory_region low = {
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = dom->mem.low_size,
		.userspace_addr = (uintptr_t)dom->mem.host,
	};
	struct kvm_userspace_memory_region high = {
		.slot = 1,
		.guest_phys_addr = GPA_HIGH_RAM_BASE,
		.memory_size = dom->mem.high_size,
		.userspace_addr = (uintptr_t)(dom->mem.host + dom->mem.low_size),
	};

	if (ioctl(dom->vm_fd, KVM_SET_USER_MEMORY_REGION, &low) < 0)
		return -errno;
	if (high.memory_size && ioctl(dom->vm_fd, KVM_SET_USER_MEMORY_REGION, &high) < 0)
		return -errno;
	return 0;
}

int kvm_create_vm(struct domain *dom)
{
	struct kvm_pit_config pit = { .flags = 0 };
	static const int required[] = {
		KVM_CAP_IRQCHIP, KVM_CAP_PIT2, KVM_CAP_USER_MEMORY, KVM_CAP_IMMEDIATE_EXIT,
	};
	unsigned i;
	int rc;

	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (ioctl(dom->kvm_fd, KVM_CHECK_EXTENSION, required[i]) <= 0) {
			log_err("KVM lacks capability %d", required[i]);
			return -ENOTSUP;
		}
	dom->vm_fd = ioctl(dom->kvm_fd, KVM_CREATE_VM, 0);
	if (dom->vm_fd < 0)
		return -errno;
	/* Needed by VMX for real mode; other backends may refuse, harmlessly. */
	if (ioctl(dom->vm_fd, KVM_SET_TSS_ADDR, KVM_TSS_ADDR) < 0)
		log_debug("KVM_SET_TSS_ADDR: %s", strerror(errno));
	{
		uint64_t idmap = KVM_IDENTITY_MAP;

		if (ioctl(dom->vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &idmap) < 0)
			log_debug("KVM_SET_IDENTITY_MAP_ADDR: %s", strerror(errno));
	}
	/* RAM before the irqchip and the PIT: their creation leaves an SRCU
	 * grace period in flight that a memory slot added after them waits
	 * out (4 to 8 ms on this project's machine, against 0.2 before). */
	if ((rc = kvm_map_memory(dom)))
		return rc;
	if (ioctl(dom->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0)
		return -errno;
	if (ioctl(dom->vm_fd, KVM_CREATE_PIT2, &pit) < 0)
		return -errno;
	return 0;
}

int kvm_irq_line(struct domain *dom, unsigned gsi, int level)
{
	struct kvm_irq_level irq = { .irq = gsi, .level = level };

	if (ioctl(dom->vm_fd, KVM_IRQ_LINE, &irq) < 0)
		return -errno;
	return 0;
}
