/* The floor of a VMM's start-to-exit cost: the least a process does to run
 * a guest that triple-faults at once on /dev/kvm (a VM, one page of RAM
 * holding ud2, one vCPU in flat 32-bit protected mode as PVH starts it,
 * with an empty IDT), and exit.
 * tests/bench/boot.py times lodge-hyp on the same guest against it. */
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096UL

int main(void)
{
	struct kvm_userspace_memory_region region = { .guest_phys_addr = 0, .memory_size = PAGE };
	struct kvm_sregs sregs;
	struct kvm_run *run;
	int kvm, vm, vcpu;
	unsigned char *ram;
	long run_size;

	if ((kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0 || (vm = ioctl(kvm, KVM_CREATE_VM, 0)) < 0) {
		perror("kvm-floor: /dev/kvm");
		return 1;
	}
	ram = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ram == MAP_FAILED)
		return 1;
	memcpy(ram + 0x100, "\x0f\x0b", 2);        /* ud2 */
	region.userspace_addr = (unsigned long)ram;
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0 || (vcpu = ioctl(vm, KVM_CREATE_VCPU, 0)) < 0 ||
	    (run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0)) <= 0) {
		perror("kvm-floor: vm");
		return 1;
	}
	run = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED || ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
		return 1;
	sregs.cs = (struct kvm_segment){ .limit = 0xffffffff, .selector = 0x10, .type = 11, .present = 1,
					 .db = 1, .s = 1, .g = 1 };
	sregs.ds = sregs.es = sregs.fs = sregs.gs = sregs.ss =
		(struct kvm_segment){ .limit = 0xffffffff, .selector = 0x18, .type = 3, .present = 1, .db = 1,
				      .s = 1, .g = 1 };
	sregs.cr0 = 0x11;                           /* PE, ET */
	sregs.idt.base = 0;
	sregs.idt.limit = 0;                        /* #UD, then #GP, #DF: a triple fault */
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0 ||
	    ioctl(vcpu, KVM_SET_REGS, &(struct kvm_regs){ .rip = 0x100, .rflags = 2 }) < 0)
		return 1;
	if (ioctl(vcpu, KVM_RUN, 0) < 0 || run->exit_reason != KVM_EXIT_SHUTDOWN) {
		fprintf(stderr, "kvm-floor: exit %u, not a triple fault\n", run->exit_reason);
		return 1;
	}
	return 3;                                   /* lodge-hyp's status for a crashed guest */
}
