/* What a KVM host does with a 64-bit guest's system call from user mode:
 * a few bytes of guest (a kernel with an IDT, a TSS, STAR/LSTAR/SFMASK as
 * Linux sets them; a user page that loops on `syscall`) run on /dev/kvm,
 * every exit printed.  Usage:
 *     pvm-syscall-probe MODE [N]
 *   plain   no help from the VMM: what the host does by itself
 *   hwbp    an instruction breakpoint (KVM_SET_GUEST_DEBUG, DR0 = LSTAR);
 *           at its KVM_EXIT_DEBUG with a user CS the VMM completes SYSCALL
 *           as the SDM defines it, then resumes
 * N system calls are made (default 3).  The kernel reports through port
 * I/O (0x80: an exception, vector in AL; 0x81: a system call entered,
 * number in AL); the user code, after its N calls, reads an unmapped
 * page, whose #PF frame tells where user mode was when it came back. */
#include <errno.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#define RAM_SIZE   (4ul << 20)
#define PML4       0x10000
#define GDT        0x13000
#define IDT        0x14000
#define TSS        0x15000
#define KSTACK     0x9000
#define STUBS      0x3000
#define LSTAR_AT   0x4000
#define USER_CODE  0x200000
#define USER_STACK 0x3ff000

#define MSR_STAR   0xc0000081
#define MSR_LSTAR  0xc0000082
#define MSR_SFMASK 0xc0000084

static uint8_t *ram;

static void die(const char *what)
{
	fprintf(stderr, "pvm-syscall-probe: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void put(uint64_t gpa, const void *p, size_t n) { memcpy(ram + gpa, p, n); }
static uint64_t get64(uint64_t gpa) { uint64_t v; memcpy(&v, ram + gpa, 8); return v; }

static void build_guest(unsigned calls)
{
	uint64_t pt[3][512] = { { 0 } };
	uint64_t gdt[10] = { 0 };
	unsigned v;

	/* identity: 0-2 MiB supervisor only, 2-4 MiB user */
	pt[0][0] = (PML4 + 0x1000) | 7;
	pt[1][0] = (PML4 + 0x2000) | 7;
	pt[2][0] = 0x000000 | 0x83;
	pt[2][1] = 0x200000 | 0x87;
	put(PML4, pt, sizeof(pt));

	gdt[2] = 0x00af9b000000ffffull;   /* 0x10 kernel code 64 */
	gdt[3] = 0x00cf93000000ffffull;   /* 0x18 kernel data */
	gdt[4] = 0x00cffb000000ffffull;   /* 0x20 user code 32 */
	gdt[5] = 0x00cff3000000ffffull;   /* 0x28 user data */
	gdt[6] = 0x00affb000000ffffull;   /* 0x30 user code 64 */
	gdt[8] = 0x67 | ((uint64_t)(TSS & 0xffff) << 16) | ((uint64_t)((TSS >> 16) & 0xff) << 32) | (0x8bull << 40);
	put(GDT, gdt, sizeof(gdt));
	put(TSS + 4, &(uint64_t){ KSTACK }, 8);           /* RSP0 */

	for (v = 0; v < 32; v++) {
		uint64_t h = STUBS + 16 * v;
		uint8_t stub[] = { 0xb8, (uint8_t)v, 0, 0, 0, 0xe6, 0x80, 0xf4, 0xeb, 0xfd };  /* mov eax,v; out 0x80,al; hlt; jmp hlt */
		uint64_t gate[2] = { (h & 0xffff) | (0x10ull << 16) | (0x8eull << 40) | (((h >> 16) & 0xffff) << 48), h >> 32 };

		put(h, stub, sizeof(stub));
		put(IDT + 16 * v, gate, sizeof(gate));
	}
	/* entry: out 0x81,al; sysretq */
	put(LSTAR_AT, (uint8_t[]){ 0xe6, 0x81, 0x48, 0x0f, 0x07 }, 5);
	/* user: mov ebx,calls; 1: mov eax,39; syscall; dec ebx; jnz 1b; mov eax,[0x400000] (not mapped) */
	uint8_t user[] = { 0xbb, 0, 0, 0, 0, 0xb8, 39, 0, 0, 0, 0x0f, 0x05, 0xff, 0xcb, 0x75, 0xf5,
			   0x8b, 0x04, 0x25, 0x00, 0x00, 0x40, 0x00 };
	memcpy(user + 1, &calls, 4);
	put(USER_CODE, user, sizeof(user));
}

static struct kvm_segment seg(uint16_t sel, uint8_t type, int dpl, int code64)
{
	return (struct kvm_segment){ .limit = 0xffffffff, .selector = sel, .type = type, .present = 1,
				     .dpl = dpl, .s = 1, .l = code64, .db = !code64, .g = 1 };
}

static void show(int vcpu, const char *what)
{
	struct kvm_regs r;
	struct kvm_sregs s;

	if (ioctl(vcpu, KVM_GET_REGS, &r) < 0 || ioctl(vcpu, KVM_GET_SREGS, &s) < 0)
		die("get regs");
	printf("%s: rip=%llx cs=%x(dpl%d) ss=%x rsp=%llx rflags=%llx rax=%llx rcx=%llx r11=%llx\n", what,
	       r.rip, s.cs.selector, s.cs.dpl, s.ss.selector, r.rsp, r.rflags, r.rax, r.rcx, r.r11);
}

int main(int argc, char **argv)
{
	struct kvm_userspace_memory_region region = { 0 };
	struct kvm_cpuid2 *cpuid;
	struct kvm_sregs s;
	struct kvm_run *run;
	int kvm, vm, vcpu, hwbp, exits = 0, entered = 0, bp_seen = 0, stepping = 0;
	struct kvm_guest_debug dbg = { .control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_HW_BP };
	unsigned calls = argc > 2 ? (unsigned)atoi(argv[2]) : 3;
	long run_size;
	struct timespec t0, t1;

	const char *mode = argc > 1 ? argv[1] : "";

	if (strcmp(mode, "plain") && strcmp(mode, "hwbp") && strcmp(mode, "hwbp-user") && strcmp(mode, "step") &&
	    strcmp(mode, "swbp") && strcmp(mode, "hwbp-pf")) {
		fprintf(stderr, "usage: pvm-syscall-probe plain|hwbp|hwbp-user|hwbp-pf|step|swbp [N]\n");
		return 1;
	}
	hwbp = strcmp(mode, "plain") != 0;
	if ((kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0 || (vm = ioctl(kvm, KVM_CREATE_VM, 0)) < 0)
		die("/dev/kvm");
	ram = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ram == MAP_FAILED)
		die("mmap");
	build_guest(calls);
	region.memory_size = RAM_SIZE;
	region.userspace_addr = (uintptr_t)ram;
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		die("memory");
	if ((vcpu = ioctl(vm, KVM_CREATE_VCPU, 0)) < 0 || (run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0)) <= 0 ||
	    (run = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0)) == MAP_FAILED)
		die("vcpu");
	cpuid = calloc(1, sizeof(*cpuid) + 256 * sizeof(cpuid->entries[0]));
	cpuid->nent = 256;
	if (ioctl(kvm, KVM_GET_SUPPORTED_CPUID, cpuid) < 0 || ioctl(vcpu, KVM_SET_CPUID2, cpuid) < 0)
		die("cpuid");
	if (ioctl(vcpu, KVM_GET_SREGS, &s) < 0)
		die("sregs");
	s.cs = seg(0x33, 0xb, 3, 1);
	s.ss = s.ds = s.es = s.fs = s.gs = seg(0x2b, 0x3, 3, 0);
	s.tr = (struct kvm_segment){ .base = TSS, .limit = 0x67, .selector = 0x40, .type = 0xb, .present = 1 };
	s.gdt.base = GDT; s.gdt.limit = 10 * 8 - 1;
	s.idt.base = IDT; s.idt.limit = 32 * 16 - 1;
	s.cr0 = 0x80050033; s.cr3 = PML4; s.cr4 = 0x6a0; /* PAE PGE OSFXSR OSXMMEXCPT */
	s.efer = 0xd01;
	if (ioctl(vcpu, KVM_SET_SREGS, &s) < 0)
		die("KVM_SET_SREGS");
	struct { struct kvm_msrs h; struct kvm_msr_entry e[3]; } msrs = { .h.nmsrs = 3, .e = {
		{ .index = MSR_STAR, .data = 0x0023001000000000ull },
		{ .index = MSR_LSTAR, .data = LSTAR_AT },
		{ .index = MSR_SFMASK, .data = 0x257fd5 } } };
	if (ioctl(vcpu, KVM_SET_MSRS, &msrs) != 3)
		die("KVM_SET_MSRS");
	if (ioctl(vcpu, KVM_SET_REGS, &(struct kvm_regs){ .rip = USER_CODE, .rsp = USER_STACK, .rflags = 0x202 }) < 0)
		die("KVM_SET_REGS");
	if (hwbp) {
		dbg.arch.debugreg[0] = !strcmp(mode, "hwbp-user") ? USER_CODE + 10 :
				       !strcmp(mode, "hwbp-pf") ? STUBS + 16 * 14 : LSTAR_AT;
		dbg.arch.debugreg[7] = 0x1 | 0x400;   /* L0, execute, length 1 */
		if (!strcmp(mode, "step"))
			dbg.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_SINGLESTEP;
		if (!strcmp(mode, "swbp")) {
			dbg.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_SW_BP;
			ram[USER_CODE + 5] = 0xcc;    /* int3 over the mov eax,39 */
		}
		if (ioctl(vcpu, KVM_SET_GUEST_DEBUG, &dbg) < 0)
			die("KVM_SET_GUEST_DEBUG");
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (ioctl(vcpu, KVM_RUN, 0) < 0) {
			if (errno == EINTR)
				continue;
			die("KVM_RUN");
		}
		exits++;
		switch (run->exit_reason) {
		case KVM_EXIT_IO: {
			uint8_t al = *((uint8_t *)run + run->io.data_offset);
			struct kvm_regs r;

			if (run->io.port == 0x81) {
				if (calls <= 10 || !entered)
					show(vcpu, "  syscall entered the kernel");
				entered++;
				continue;
			}
			ioctl(vcpu, KVM_GET_REGS, &r);
			show(vcpu, "  exception reported");
			printf("exception %u: frame", al);
			for (int i = 0; i < 6; i++)
				printf(" %llx", (unsigned long long)get64(r.rsp + 8 * i));
			printf(" (err? rip cs rflags rsp ss)\n");
			clock_gettime(CLOCK_MONOTONIC, &t1);
			printf("%d syscalls reached the kernel, %d exits, %.3f s\n", entered, exits,
			       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
			return al == 14 && get64(r.rsp + 8) == USER_CODE + 16 && entered == (int)calls ? 0 : 2;
		}
		case KVM_EXIT_DEBUG: {
			struct kvm_regs r;

			if (calls <= 10 || !entered)
				printf("KVM_EXIT_DEBUG: exception %u pc %llx dr6 %llx dr7 %llx\n", run->debug.arch.exception,
				       run->debug.arch.pc, run->debug.arch.dr6, run->debug.arch.dr7);
			if (calls <= 10 || !entered)
				show(vcpu, "  at the breakpoint");
			if (ioctl(vcpu, KVM_GET_SREGS, &s) < 0 || ioctl(vcpu, KVM_GET_REGS, &r) < 0)
				die("get");
			if (r.rip == STUBS + 16 * 14 && get64(r.rsp) == 0x15 && get64(r.rsp + 8) == LSTAR_AT &&
			    get64(r.rsp + 16) == 0x33) {
				/* the #PF of a SYSCALL the host left in user mode: unwind it into
				 * the system call's entry (RCX, R11, RFLAGS the host did) */
				r.rflags = get64(r.rsp + 24) & ~(1ull << 16);
				r.rsp = get64(r.rsp + 32);
				r.rip = LSTAR_AT;
				if (ioctl(vcpu, KVM_SET_REGS, &r) < 0)
					die("set");
				continue;
			}
			if (r.rip == STUBS + 16 * 14) {
				/* not a system call: PVM's emulator ignores RFLAGS.RF, so
				 * step over the handler's first instruction with the
				 * breakpoint off, then put it back */
				struct kvm_guest_debug step = { .control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_SINGLESTEP };

				if (bp_seen++ > 3) {
					printf("breakpoint taken again at the same place\n");
					return 3;
				}
				if (ioctl(vcpu, KVM_SET_GUEST_DEBUG, &step) < 0)
					die("step");
				stepping = 1;
				continue;
			}
			if (stepping) {
				stepping = 0;
				bp_seen = 0;
				if (ioctl(vcpu, KVM_SET_GUEST_DEBUG, &dbg) < 0)
					die("re-arm");
				continue;
			}
			if (s.cs.dpl == 3) {
				/* SYSCALL as the SDM defines it, from where the host left it */
				r.r11 = r.rflags;    /* the host may or may not have done these: see the print */
				r.rflags &= ~0x257fd5ull;
				r.rflags |= 2;
				s.cs = seg(0x10, 0xb, 0, 1);
				s.ss = seg(0x18, 0x3, 0, 0);
				if (ioctl(vcpu, KVM_SET_SREGS, &s) < 0 || ioctl(vcpu, KVM_SET_REGS, &r) < 0)
					die("set");
			}
			continue;
		}
		case KVM_EXIT_INTERNAL_ERROR:
			show(vcpu, "internal error");
			printf("  suberror %u\n", run->internal.suberror);
			return 3;
		case KVM_EXIT_SHUTDOWN:
			show(vcpu, "shutdown (triple fault)");
			return 3;
		case KVM_EXIT_HLT:
			show(vcpu, "hlt");
			return 3;
		default:
			printf("exit reason %u\n", run->exit_reason);
			show(vcpu, "  at");
			return 3;
		}
	}
}
