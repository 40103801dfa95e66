/* The floor of a VMM's start-to-exit cost: the least any VMM does to run
 * the guest lodge-hyp is given, on /dev/kvm, and exit.  Usage:
 *     kvm-floor ELF MEM_MIB [irqchip]
 * It does what a PVH boot cannot go without, as lodge-hyp does it:
 *   - a VM with MEM_MIB of guest RAM mapped at 0 (anonymous, NORESERVE:
 *     only touched pages cost), in one memory slot;
 *   - the ELF's PT_LOAD segments copied to their physical addresses, its
 *     entry taken from the Xen PHYS32_ENTRY note;
 *   - an hvm_start_info (magic, version 1, a one-entry memory map) for
 *     EBX to point at, as the PVH boot ABI asks;
 *   - one vCPU, its CPUID set from KVM_GET_SUPPORTED_CPUID (any VMM must:
 *     KVM's default CPUID is empty), in 32-bit flat protected mode with
 *     paging off and a busy 32-bit TSS, EIP at the entry;
 *   - KVM_RUN until KVM_EXIT_SHUTDOWN (the triple fault), then exit 3,
 *     lodge-hyp's status for a crashed guest.
 * It does not: set MSRs or the LAPIC, build ACPI tables or a command
 * line, make devices, start threads, open a console, confine itself (no
 * sandbox), write logs or events, or check the ELF beyond what keeps its
 * copies inside the file and guest RAM.  Nor, unless asked ("irqchip"),
 * create the in-kernel irqchip and PIT: this guest needs no interrupt, a
 * real one does, and the kernel's own setting up and tearing down of
 * those two (SRCU grace periods) is most of what lodge-hyp costs above
 * the floor.  With "irqchip" they are made as lodge-hyp makes them (after
 * RAM, before the vCPU), to tell the kernel's part from lodge-hyp's.
 * tests/bench/boot.py times lodge-hyp on the same ELF and memory size
 * against both. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define XEN_ELFNOTE_PHYS32_ENTRY 18
#define HVM_START_MAGIC          0x336ec578
#define START_INFO               0x6000UL     /* where lodge-hyp puts it too */
#define CPUID_ENTRIES            256          /* KVM_MAX_CPUID_ENTRIES */
#define EXIT_CRASHED             3

struct hvm_start_info {
	uint32_t magic, version, flags, nr_modules;
	uint64_t modlist_paddr, cmdline_paddr, rsdp_paddr, memmap_paddr;
	uint32_t memmap_entries, reserved;
};
struct hvm_memmap_entry { uint64_t addr, size; uint32_t type, reserved; };

static int fail(const char *what)
{
	fprintf(stderr, "kvm-floor: %s: %s\n", what, strerror(errno));
	return 1;
}

static int in(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* Copy the ELF's loadable segments into guest RAM; its PVH entry. */
static int load_elf(const uint8_t *img, size_t size, uint8_t *ram, uint64_t ram_size, uint32_t *entry)
{
	const Elf64_Ehdr *eh = (const void *)img;
	int found = 0;
	unsigned i;

	if (size < sizeof(*eh) || memcmp(img, ELFMAG, SELFMAG) || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !in(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr), size))
		return -1;
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(img + eh->e_phoff + i * sizeof(Elf64_Phdr));
		uint64_t off, end;

		if (!in(ph->p_offset, ph->p_filesz, size))
			return -1;
		if (ph->p_type == PT_LOAD) {
			if (ph->p_filesz > ph->p_memsz || !in(ph->p_paddr, ph->p_memsz, ram_size))
				return -1;
			memcpy(ram + ph->p_paddr, img + ph->p_offset, ph->p_filesz);
			continue;
		}
		if (ph->p_type != PT_NOTE)
			continue;
		for (off = ph->p_offset, end = off + ph->p_filesz; end - off >= sizeof(Elf64_Nhdr);) {
			const Elf64_Nhdr *nh = (const void *)(img + off);
			uint64_t desc = off + sizeof(*nh) + ((nh->n_namesz + 3ULL) & ~3ULL);
			uint64_t next = desc + ((nh->n_descsz + 3ULL) & ~3ULL);

			if (next > end)
				break;
			if (nh->n_type == XEN_ELFNOTE_PHYS32_ENTRY && nh->n_namesz == 4 && nh->n_descsz >= 4 &&
			    !memcmp(img + off + sizeof(*nh), "Xen", 4)) {
				memcpy(entry, img + desc, 4);
				found = 1;
			}
			off = next;
		}
	}
	return found ? 0 : -1;
}

static struct kvm_segment flat(uint16_t selector, uint8_t type)
{
	return (struct kvm_segment){ .limit = 0xffffffff, .selector = selector, .type = type, .present = 1,
				     .db = 1, .s = 1, .g = 1 };
}

int main(int argc, char **argv)
{
	struct kvm_userspace_memory_region region = { .slot = 0, .guest_phys_addr = 0 };
	struct hvm_memmap_entry map;
	struct hvm_start_info si = { .magic = HVM_START_MAGIC, .version = 1,
				     .memmap_paddr = START_INFO + sizeof(si), .memmap_entries = 1 };
	struct kvm_cpuid2 *cpuid;
	struct kvm_sregs sregs;
	struct kvm_run *run;
	struct stat st;
	const uint8_t *img;
	uint8_t *ram;
	uint64_t ram_size;
	uint32_t entry = 0;
	long run_size;
	int fd, kvm, vm, vcpu;

	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "irqchip")) || (ram_size = strtoull(argv[2], NULL, 10) << 20) == 0 || ram_size > 0xc0000000ULL) {
		fprintf(stderr, "usage: kvm-floor ELF MEM_MIB (1 to 3072) [irqchip]\n");
		return 1;
	}
	if ((fd = open(argv[1], O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) < 0 ||
	    (img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED)
		return fail(argv[1]);
	close(fd);
	if ((kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0 || (vm = ioctl(kvm, KVM_CREATE_VM, 0)) < 0)
		return fail("/dev/kvm");
	ram = mmap(NULL, ram_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (ram == MAP_FAILED)
		return fail("guest RAM");
	if (load_elf(img, (size_t)st.st_size, ram, ram_size, &entry)) {
		fprintf(stderr, "kvm-floor: %s: not an ELF64 with a PVH entry that fits in guest RAM\n", argv[1]);
		return 1;
	}
	munmap((void *)img, (size_t)st.st_size);
	map = (struct hvm_memmap_entry){ .addr = 0, .size = ram_size, .type = 1 };
	memcpy(ram + START_INFO, &si, sizeof(si));
	memcpy(ram + si.memmap_paddr, &map, sizeof(map));
	region.memory_size = ram_size;
	region.userspace_addr = (uintptr_t)ram;
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		return fail("KVM_SET_USER_MEMORY_REGION");
	if (argc == 4 && (ioctl(vm, KVM_CREATE_IRQCHIP, 0) < 0 ||
			  ioctl(vm, KVM_CREATE_PIT2, &(struct kvm_pit_config){ .flags = 0 }) < 0))
		return fail("irqchip");
	if ((vcpu = ioctl(vm, KVM_CREATE_VCPU, 0)) < 0 || (run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0)) <= 0 ||
	    (run = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0)) == MAP_FAILED)
		return fail("vcpu");
	if (!(cpuid = calloc(1, sizeof(*cpuid) + CPUID_ENTRIES * sizeof(cpuid->entries[0]))))
		return fail("calloc");
	cpuid->nent = CPUID_ENTRIES;
	if (ioctl(kvm, KVM_GET_SUPPORTED_CPUID, cpuid) < 0 || ioctl(vcpu, KVM_SET_CPUID2, cpuid) < 0)
		return fail("CPUID");
	free(cpuid);
	if (ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
		return fail("KVM_GET_SREGS");
	sregs.cs = flat(0x10, 0xb);                 /* execute/read, accessed */
	sregs.ds = sregs.es = sregs.fs = sregs.gs = sregs.ss = flat(0x18, 0x3);
	sregs.tr = (struct kvm_segment){ .selector = 0x20, .limit = 0x67, .type = 0xb, .present = 1 };
	sregs.cr0 = 0x11;                           /* PE, ET; paging off */
	sregs.cr4 = sregs.efer = 0;
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0 ||
	    ioctl(vcpu, KVM_SET_REGS, &(struct kvm_regs){ .rip = entry, .rbx = START_INFO, .rflags = 2 }) < 0)
		return fail("registers");
	while (ioctl(vcpu, KVM_RUN, 0) < 0)
		if (errno != EINTR && errno != EAGAIN)
			return fail("KVM_RUN");
	if (run->exit_reason != KVM_EXIT_SHUTDOWN) {
		fprintf(stderr, "kvm-floor: exit reason %u, not a triple fault\n", run->exit_reason);
		return 1;
	}
	return EXIT_CRASHED;
}
