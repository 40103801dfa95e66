/* emulate.c's completions on a register file and a guest's RAM: the
 * instruction bytes a PVM host hands back, decoded by Zydis and finished
 * as the CPU defines them (results, flags, exceptions). */
#include "emulate.h"
#include "mem.h"
#include "pvm-args.h"
#include "unit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RAM_SIZE (4u << 20)
#define UNMAPPED 0x300000          /* from here on, no page is mapped */

static struct guest_mem mem;
static struct kvm_fpu fpu_state;
static struct kvm_xsave xsave_state;
static uint64_t xcr0_state = 7;    /* x87, SSE, AVX */

/* The test's "page tables": identity below UNMAPPED, nothing above. */
static int test_translate(void *ctx, uint64_t gva, uint64_t *gpa)
{
	if (gva >= UNMAPPED)
		return -EFAULT;
	*gpa = gva;
	return 0;
}

static int test_get_fpu(void *ctx, struct kvm_fpu *f) { *f = fpu_state; return 0; }
static int test_set_fpu(void *ctx, const struct kvm_fpu *f) { fpu_state = *f; return 0; }
static int test_get_xcr0(void *ctx, uint64_t *x) { *x = xcr0_state; return 0; }
static int test_set_xcr0(void *ctx, uint64_t x)
{
	if (!(x & 1) || ((x & 4) && !(x & 2)))
		return -EINVAL;        /* as KVM refuses it */
	xcr0_state = x;
	return 0;
}
static int test_get_xsave(void *ctx, struct kvm_xsave *x) { *x = xsave_state; return 0; }
static int test_set_xsave(void *ctx, const struct kvm_xsave *x) { xsave_state = *x; return 0; }

static const struct emul_env test_env = {
	.translate = test_translate,
	.get_fpu = test_get_fpu, .set_fpu = test_set_fpu,
	.get_xcr0 = test_get_xcr0, .set_xcr0 = test_set_xcr0,
	.get_xsave = test_get_xsave, .set_xsave = test_set_xsave,
};

/* A vCPU in 64-bit kernel mode, paging as the test's env says. */
static void cpu_init(struct emul_cpu *c)
{
	memset(c, 0, sizeof(*c));
	c->mem = &mem;
	c->env = &test_env;
	c->regs.rip = 0x1000;
	c->regs.rflags = 0x2;
	c->sregs.cs.l = 1;
	c->sregs.cs.selector = 0x10;
	c->sregs.efer = 0x500;
	c->sregs.cr0 = 0x80000011;
}

static char why[256];

/* Complete bytes on c; the completion's status and, as the test sees it,
 * the state after (emul_cpu's FPU copy written back as KVM_SET_FPU would). */
static int run(struct emul_cpu *c, const uint8_t *bytes, size_t len)
{
	int rc;

	why[0] = 0;
	rc = emulate_insn(c, bytes, len, why, sizeof(why));
	if (!rc && c->fpu_dirty)
		fpu_state = c->fpu;
	if (!rc && c->xsave_dirty)
		xsave_state = c->xsave;
	c->fpu_loaded = c->fpu_dirty = c->xsave_loaded = c->xsave_dirty = false;
	return rc;
}

#define ZF (1ull << 6)
#define CF 1ull
#define AC (1ull << 18)

static void test_traps(void)
{
	struct emul_cpu c;

	cpu_init(&c);
	CHECK("int3: completed", run(&c, (const uint8_t[]){ 0xcc }, 1) == 0);
	CHECK("int3: #BP injected after the instruction", c.vector == 3 && c.regs.rip == 0x1001 && !c.has_error_code);
	cpu_init(&c);
	run(&c, (const uint8_t[]){ 0xf1 }, 1);
	CHECK("int1 (icebp): #DB injected after the instruction", c.vector == 1 && c.regs.rip == 0x1001);
}

static void test_bit_counts(void)
{
	struct emul_cpu c;

	cpu_init(&c);
	c.regs.rsi = 0xf0f0f0f0f0f0f0f0ull;
	c.regs.rflags |= CF | ZF | (1ull << 11);
	/* popcnt rax, rsi */
	CHECK("popcnt: completed", run(&c, (const uint8_t[]){ 0xf3, 0x48, 0x0f, 0xb8, 0xc6 }, 5) == 0);
	CHECK("popcnt: 32 bits set", c.regs.rax == 32 && c.regs.rip == 0x1005);
	CHECK("popcnt: ZF CF OF cleared for a non-zero source", !(c.regs.rflags & (ZF | CF | (1ull << 11))));
	cpu_init(&c);
	c.regs.rsi = 0;
	c.regs.rax = 5;
	run(&c, (const uint8_t[]){ 0xf3, 0x48, 0x0f, 0xb8, 0xc6 }, 5);
	CHECK("popcnt of 0: 0, ZF set", c.regs.rax == 0 && (c.regs.rflags & ZF));

	cpu_init(&c);
	c.regs.rcx = 0xffffffff00000000ull;     /* ecx = 0 */
	c.regs.rax = ~0ull;
	/* lzcnt eax, ecx */
	run(&c, (const uint8_t[]){ 0xf3, 0x0f, 0xbd, 0xc1 }, 4);
	CHECK("lzcnt32 of 0: 32, CF set, rax's upper half cleared",
	      c.regs.rax == 32 && (c.regs.rflags & CF) && !(c.regs.rflags & ZF));
	cpu_init(&c);
	c.regs.rcx = 1ull << 63;
	run(&c, (const uint8_t[]){ 0xf3, 0x48, 0x0f, 0xbd, 0xc1 }, 5);
	CHECK("lzcnt64 of the top bit: 0, ZF set, CF clear", c.regs.rax == 0 && (c.regs.rflags & ZF) && !(c.regs.rflags & CF));
	cpu_init(&c);
	c.regs.rcx = 0x100;
	/* tzcnt rax, rcx */
	run(&c, (const uint8_t[]){ 0xf3, 0x48, 0x0f, 0xbc, 0xc1 }, 5);
	CHECK("tzcnt of 0x100: 8", c.regs.rax == 8 && !(c.regs.rflags & (CF | ZF)));
	/* popcnt rax, [rbx+8] from memory */
	cpu_init(&c);
	c.regs.rbx = 0x2000;
	memcpy(mem.host + 0x2008, &(uint64_t){ 0x7 }, 8);
	run(&c, (const uint8_t[]){ 0xf3, 0x48, 0x0f, 0xb8, 0x43, 0x08 }, 6);
	CHECK("popcnt from memory [rbx+8]", c.regs.rax == 3 && c.regs.rip == 0x1006);
	cpu_init(&c);
	c.regs.rbx = UNMAPPED;
	run(&c, (const uint8_t[]){ 0xf3, 0x48, 0x0f, 0xb8, 0x43, 0x08 }, 6);
	CHECK("popcnt from an unmapped page: #PF with CR2, RIP unchanged",
	      c.vector == 14 && c.set_cr2 && c.cr2 == UNMAPPED + 8 && c.regs.rip == 0x1000 &&
	      c.has_error_code && c.error_code == 0);
}

static void test_ac(void)
{
	struct emul_cpu c;

	cpu_init(&c);
	run(&c, (const uint8_t[]){ 0x0f, 0x01, 0xcb }, 3);
	CHECK("stac sets RFLAGS.AC", (c.regs.rflags & AC) && c.regs.rip == 0x1003);
	run(&c, (const uint8_t[]){ 0x0f, 0x01, 0xca }, 3);
	CHECK("clac clears RFLAGS.AC", !(c.regs.rflags & AC) && c.regs.rip == 0x1006);
	cpu_init(&c);
	c.sregs.cs.selector = 0x33;
	run(&c, (const uint8_t[]){ 0x0f, 0x01, 0xcb }, 3);
	CHECK("stac in user mode: #UD", c.vector == 6 && c.regs.rip == 0x1000 && !(c.regs.rflags & AC));
}

/* Page tables at 0x10000: one 2 MiB page, read-only, over GPA 0. */
static void read_only_tables(struct emul_cpu *c)
{
	uint64_t pml4 = 0x11000 | 3, pdpt = 0x12000 | 3, pd = 0x0 | 0x81;   /* P, PS: no W */

	memcpy(mem.host + 0x10000, &pml4, 8);
	memcpy(mem.host + 0x11000, &pdpt, 8);
	memcpy(mem.host + 0x12000, &pd, 8);
	c->sregs.cr3 = 0x10000;
	c->sregs.cr0 |= 1u << 16;     /* WP */
}

static void test_cmpxchg(void)
{
	static const uint8_t cx16[] = { 0xf0, 0x48, 0x0f, 0xc7, 0x0f };   /* lock cmpxchg16b [rdi] */
	static const uint8_t cx8[] = { 0xf0, 0x0f, 0xc7, 0x0f };          /* lock cmpxchg8b [rdi] */
	uint64_t m[2];
	struct emul_cpu c;

	cpu_init(&c);
	memcpy(mem.host + 0x4000, (uint64_t[]){ 1, 2 }, 16);
	c.regs.rdi = 0x4000;
	c.regs.rax = 1; c.regs.rdx = 2; c.regs.rbx = 3; c.regs.rcx = 4;
	CHECK("cmpxchg16b: completed", run(&c, cx16, sizeof(cx16)) == 0);
	memcpy(m, mem.host + 0x4000, 16);
	CHECK("cmpxchg16b equal: ZF, memory = rcx:rbx", (c.regs.rflags & ZF) && m[0] == 3 && m[1] == 4 &&
	      c.regs.rip == 0x1005);
	cpu_init(&c);
	c.regs.rdi = 0x4000;
	c.regs.rax = 9; c.regs.rdx = 9; c.regs.rbx = 5; c.regs.rcx = 6;
	c.regs.rflags |= ZF;
	run(&c, cx16, sizeof(cx16));
	memcpy(m, mem.host + 0x4000, 16);
	CHECK("cmpxchg16b unequal: ZF clear, memory kept, rdx:rax loaded",
	      !(c.regs.rflags & ZF) && m[0] == 3 && m[1] == 4 && c.regs.rax == 3 && c.regs.rdx == 4);
	cpu_init(&c);
	c.regs.rdi = 0x4008;
	run(&c, cx16, sizeof(cx16));
	CHECK("cmpxchg16b on a misaligned operand: #GP(0)", c.vector == 13 && c.error_code == 0 && c.regs.rip == 0x1000);

	cpu_init(&c);
	memcpy(mem.host + 0x5000, (uint32_t[]){ 7, 8 }, 8);
	c.regs.rdi = 0x5000;
	c.regs.rax = 0xffffffff00000007ull; c.regs.rdx = 8; c.regs.rbx = 10; c.regs.rcx = 11;
	run(&c, cx8, sizeof(cx8));
	CHECK("cmpxchg8b equal (upper halves ignored): memory = ecx:ebx",
	      (c.regs.rflags & ZF) && !memcmp(mem.host + 0x5000, (uint32_t[]){ 10, 11 }, 8));
	c.regs.rip = 0x1000;
	c.regs.rax = 0; c.regs.rdx = 0xffffffff00000000ull;
	run(&c, cx8, sizeof(cx8));
	CHECK("cmpxchg8b unequal: edx:eax loaded, zero-extended", !(c.regs.rflags & ZF) && c.regs.rax == 10 &&
	      c.regs.rdx == 11);

	/* Write protection: a read-only page, CR0.WP set. */
	cpu_init(&c);
	read_only_tables(&c);
	memcpy(mem.host + 0x4000, (uint64_t[]){ 1, 2 }, 16);
	c.regs.rdi = 0x4000;
	c.regs.rax = 1; c.regs.rdx = 2; c.regs.rbx = 3; c.regs.rcx = 4;
	run(&c, cx16, sizeof(cx16));
	memcpy(m, mem.host + 0x4000, 16);
	CHECK("cmpxchg16b on a read-only page (CR0.WP): #PF present|write, memory unchanged",
	      c.vector == 14 && c.error_code == 3 && c.cr2 == 0x4000 && m[0] == 1 && m[1] == 2);
	cpu_init(&c);
	read_only_tables(&c);
	c.sregs.cr0 &= ~(1ull << 16);
	c.regs.rdi = 0x4000;
	c.regs.rax = 1; c.regs.rdx = 2; c.regs.rbx = 3; c.regs.rcx = 4;
	run(&c, cx16, sizeof(cx16));
	CHECK("cmpxchg16b on a read-only page, CR0.WP clear: the kernel's write goes through",
	      c.vector == -1 && (c.regs.rflags & ZF));
}

static void test_x87(void)
{
	struct emul_cpu c;
	uint16_t w;

	memset(&fpu_state, 0, sizeof(fpu_state));
	fpu_state.fcw = 0x40;
	fpu_state.fsw = 0x1234;
	cpu_init(&c);
	CHECK("fninit: completed", run(&c, (const uint8_t[]){ 0xdb, 0xe3 }, 2) == 0);
	CHECK("fninit: control word 0x37f, status 0", fpu_state.fcw == 0x37f && fpu_state.fsw == 0 && c.regs.rip == 0x1002);
	cpu_init(&c);
	c.regs.rbx = 0x6000;
	memcpy(mem.host + 0x6000, &(uint16_t){ 0x27f }, 2);
	run(&c, (const uint8_t[]){ 0xd9, 0x2b }, 2);            /* fldcw [rbx] */
	CHECK("fldcw [rbx]: control word loaded", fpu_state.fcw == 0x27f);
	run(&c, (const uint8_t[]){ 0xd9, 0x7b, 0x02 }, 3);      /* fnstcw [rbx+2] */
	memcpy(&w, mem.host + 0x6002, 2);
	CHECK("fnstcw [rbx+2]: control word stored", w == 0x27f);
	fpu_state.fsw = 0x3800;
	c.regs.rax = 0xdead0000;
	run(&c, (const uint8_t[]){ 0xdf, 0xe0 }, 2);            /* fnstsw ax */
	CHECK("fnstsw ax: status word in ax, the rest kept", c.regs.rax == 0xdead3800);
	cpu_init(&c);
	fpu_state.fsw = 0x0081;                                 /* ES, IE */
	run(&c, (const uint8_t[]){ 0x9b }, 1);
	CHECK("fwait with an unmasked exception pending: #MF, RIP unchanged", c.vector == 16 && c.regs.rip == 0x1000);
	fpu_state.fsw = 0;
	cpu_init(&c);
	run(&c, (const uint8_t[]){ 0x9b }, 1);
	CHECK("fwait with nothing pending: completed", c.vector == -1 && c.regs.rip == 0x1001);
}

static void test_xsave(void)
{
	static const uint8_t xsave64[] = { 0x48, 0x0f, 0xae, 0x27 };    /* xsave64 [rdi] */
	static const uint8_t xrstor64[] = { 0x48, 0x0f, 0xae, 0x2f };   /* xrstor64 [rdi] */
	uint64_t bv;
	uint8_t *area = mem.host + 0x8000;
	struct emul_cpu c;

	cpu_init(&c);
	c.regs.rcx = 0;
	run(&c, (const uint8_t[]){ 0x0f, 0x01, 0xd0 }, 3);        /* xgetbv */
	CHECK("xgetbv: XCR0 in edx:eax", c.regs.rax == 7 && c.regs.rdx == 0 && c.regs.rip == 0x1003);
	cpu_init(&c);
	c.regs.rax = 4;                                            /* AVX without SSE */
	run(&c, (const uint8_t[]){ 0x0f, 0x01, 0xd1 }, 3);        /* xsetbv */
	CHECK("xsetbv of an invalid XCR0: #GP, XCR0 kept", c.vector == 13 && xcr0_state == 7);
	c.regs.rax = 3;
	c.vector = -1;
	run(&c, (const uint8_t[]){ 0x0f, 0x01, 0xd1 }, 3);
	CHECK("xsetbv: XCR0 set", c.vector == -1 && xcr0_state == 3);
	xcr0_state = 3;

	memset(&xsave_state, 0, sizeof(xsave_state));
	memcpy((uint8_t *)xsave_state.region, &(uint16_t){ 0x37f }, 2);
	memset((uint8_t *)xsave_state.region + 160, 0xab, 16);    /* xmm0 */
	bv = 3;
	memcpy((uint8_t *)xsave_state.region + 512, &bv, 8);
	memset(area, 0xee, 1024);
	memset(area + 512, 0, 64);       /* the header, as the kernel zeroes it */
	cpu_init(&c);
	c.regs.rdi = 0x8000;
	c.regs.rax = ~0u; c.regs.rdx = ~0u;
	CHECK("xsave64: completed", run(&c, xsave64, sizeof(xsave64)) == 0 && c.vector == -1);
	memcpy(&bv, area + 512, 8);
	CHECK("xsave64: xmm0 and the x87 control word in the standard format, XSTATE_BV 3",
	      area[160] == 0xab && area[0] == 0x7f && area[1] == 3 && (bv & 3) == 3);
	memset(area + 160, 0x5a, 16);
	cpu_init(&c);
	c.regs.rdi = 0x8000;
	c.regs.rax = ~0u; c.regs.rdx = ~0u;
	run(&c, xrstor64, sizeof(xrstor64));
	CHECK("xrstor64: xmm0 loaded from memory", ((uint8_t *)xsave_state.region)[160] == 0x5a && c.vector == -1);
	cpu_init(&c);
	c.regs.rdi = 0x8008;
	run(&c, xsave64, sizeof(xsave64));
	CHECK("xsave64 on an area not 64-byte aligned: #GP", c.vector == 13);
	xcr0_state = 7;

	/* fxsave64 [rdi] */
	fpu_state.fcw = 0x27f;
	memset(fpu_state.xmm[1], 0x11, 16);
	cpu_init(&c);
	c.regs.rdi = 0x9000;
	run(&c, (const uint8_t[]){ 0x48, 0x0f, 0xae, 0x07 }, 4);
	CHECK("fxsave64: control word and xmm1 stored", mem.host[0x9000] == 0x7f && mem.host[0x9000 + 176] == 0x11);
}

static void test_sse(void)
{
	struct emul_cpu c;
	uint8_t want[16];

	memset(&fpu_state, 0, sizeof(fpu_state));
	for (int i = 0; i < 16; i++)
		mem.host[0xa000 + i] = (uint8_t)(i + 1);
	cpu_init(&c);
	c.sregs.cr4 |= 1u << 9;                          /* OSFXSR */
	c.regs.rdi = 0xa000;
	/* movdqu xmm1, [rdi] */
	CHECK("movdqu xmm1, [rdi]: completed", run(&c, (const uint8_t[]){ 0xf3, 0x0f, 0x6f, 0x0f }, 4) == 0);
	CHECK("movdqu: xmm1 holds the 16 bytes", !memcmp(fpu_state.xmm[1], mem.host + 0xa000, 16) && c.regs.rip == 0x1004);
	/* movdqa [rdi+0x10], xmm1 */
	run(&c, (const uint8_t[]){ 0x66, 0x0f, 0x7f, 0x4f, 0x10 }, 5);
	CHECK("movdqa [rdi+16], xmm1: stored", !memcmp(mem.host + 0xa010, mem.host + 0xa000, 16));
	/* pxor xmm1, [rdi] */
	run(&c, (const uint8_t[]){ 0x66, 0x0f, 0xef, 0x0f }, 4);
	memset(want, 0, 16);
	CHECK("pxor xmm1, [rdi]: xmm1 zero", !memcmp(fpu_state.xmm[1], want, 16));
	/* movq rax, xmm2 (66 48 0f 7e d0) */
	memset(fpu_state.xmm[2], 0x42, 16);
	run(&c, (const uint8_t[]){ 0x66, 0x48, 0x0f, 0x7e, 0xd0 }, 5);
	CHECK("movq rax, xmm2", c.regs.rax == 0x4242424242424242ull);
	c.regs.rdi = 0xa008;
	c.regs.rip = 0x1000;
	run(&c, (const uint8_t[]){ 0x66, 0x0f, 0x6f, 0x0f }, 4);   /* movdqa xmm1, [rdi] */
	CHECK("movdqa from a misaligned address: #GP", c.vector == 13 && c.regs.rip == 0x1000);
	cpu_init(&c);
	c.sregs.cr4 |= 1u << 9;
	c.sregs.cr0 |= 8;                                /* TS */
	run(&c, (const uint8_t[]){ 0xf3, 0x0f, 0x6f, 0x0f }, 4);
	CHECK("an SSE move with CR0.TS set: #NM", c.vector == 7);
	cpu_init(&c);
	run(&c, (const uint8_t[]){ 0xf3, 0x0f, 0x6f, 0x0f }, 4);
	CHECK("an SSE move without CR4.OSFXSR: #UD", c.vector == 6);
}

static void test_refused(void)
{
	struct emul_cpu c;

	cpu_init(&c);
	c.regs.rip = 0xffffffff81000000ull;
	/* cpuid: not Lodge's to complete (and never refused by PVM) */
	CHECK("an instruction not in the table: refused", run(&c, (const uint8_t[]){ 0x0f, 0xa2 }, 2) == -ENOTSUP);
	CHECK("the refusal names its mnemonic, bytes and address",
	      strstr(why, "cpuid") && strstr(why, "0f a2") && strstr(why, "0xffffffff81000000"));
	CHECK("an instruction that does not decode: refused",
	      run(&c, (const uint8_t[]){ 0x0f, 0xff, 0xff }, 1) == -ENOTSUP && strstr(why, "does not decode"));
	emulate_counts_text(why, sizeof(why));
	CHECK("the counts name each kind completed", strstr(why, "int3 ") && strstr(why, "popcnt ") &&
	      strstr(why, "cmpxchg16b "));
}

/* The arguments a Linux kernel gets on a PVM host: only those the user's
 * line does not set, and nothing half-added when they do not fit. */
static void test_pvm_args(void)
{
	static char out[4096], big[4096];
	int n;

	n = pvm_args_apply("console=ttyS0", true, out, sizeof(out));
	CHECK("every argument added to console=ttyS0", n == (int)pvm_linux_nargs &&
	      !strncmp(out, "console=ttyS0 earlyprintk=serial,ttyS0,115200 ", 46) && strstr(out, " cryptomgr.notests") &&
	      strstr(out, " nopv"));
	n = pvm_args_apply("console=ttyS0", false, out, sizeof(out));
	CHECK("one vCPU: all but nopv (SMP's only)", n == (int)pvm_linux_nargs - 1 && !strstr(out, "nopv") &&
	      strstr(out, " cryptomgr.notests"));
	n = pvm_args_apply("console=ttyS0 nopv", true, out, sizeof(out));
	CHECK("the user's nopv: not added twice", n == (int)pvm_linux_nargs - 1 && strstr(out, "nopv") &&
	      !strstr(strstr(out, "nopv") + 4, "nopv"));
	n = pvm_args_apply("earlyprintk=vga clearcpuid=sse4_2 root=/dev/vda", true, out, sizeof(out));
	CHECK("the user's earlyprintk and clearcpuid kept, ours not added",
	      n == (int)pvm_linux_nargs - 2 && !strstr(out, "ttyS0,115200") && !strstr(out, "cx16") &&
	      strstr(out, "cryptomgr.notests"));
	n = pvm_args_apply("xearlyprintk=1", true, out, sizeof(out));
	CHECK("a longer word is not the user's setting", n == (int)pvm_linux_nargs);
	memset(big, 'a', sizeof(big) - 100);
	big[sizeof(big) - 100] = 0;
	n = pvm_args_apply(big, true, out, sizeof(out));
	CHECK("no room: -ENAMETOOLONG, the user's line as it was", n == -ENAMETOOLONG && !strcmp(out, big));
}

int main(void)
{
	static uint8_t ram[RAM_SIZE] __attribute__((aligned(4096)));

	guest_mem_wrap(&mem, ram, sizeof(ram));
	test_traps();
	test_bit_counts();
	test_ac();
	test_cmpxchg();
	test_x87();
	test_xsave();
	test_sse();
	test_refused();
	test_pvm_args();
	UNIT_EXIT();
}
