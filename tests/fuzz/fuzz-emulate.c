/* lodge-hyp's completion of instructions a PVM host refuses
 * (src/hyp/emulate/): the bytes and registers are the guest's.  Input:
 * a mode byte (bit 0: 64-bit code, else 32-bit; bit 1: CPL 3; bit 2:
 * paging with the guest's tables at 0x10000; bit 3: CR4.OSFXSR), 16
 * general registers and RFLAGS (8 bytes each, where the input has them;
 * addresses fall in or past the guest's 1 MiB), then the instruction's
 * bytes.  Properties: it reads and writes only the guest's RAM (ASan);
 * it completes, injects an exception, or refuses with a printable reason
 * naming what it saw; a completion moves RIP forward by the instruction's
 * length, a fault leaves it where it was. */
#include "fuzz.h"
#include "emulate.h"
#include "mem.h"

#include <errno.h>
#include <string.h>

#define RAM (1u << 20)

static struct kvm_fpu fpu;
static struct kvm_xsave xs;
static uint64_t xcr0 = 7;

static int tr(void *ctx, uint64_t gva, uint64_t *gpa)
{
	if (gva >= RAM + 0x1000)      /* a page past RAM maps to nothing RAM */
		return -EFAULT;
	*gpa = gva;
	return 0;
}
static int gf(void *ctx, struct kvm_fpu *f) { *f = fpu; return 0; }
static int sf(void *ctx, const struct kvm_fpu *f) { fpu = *f; return 0; }
static int gx(void *ctx, uint64_t *x) { *x = xcr0; return 0; }
static int sx(void *ctx, uint64_t x) { return (x & 1) ? (xcr0 = x, 0) : -EINVAL; }
static int gxs(void *ctx, struct kvm_xsave *x) { *x = xs; return 0; }
static int sxs(void *ctx, const struct kvm_xsave *x) { xs = *x; return 0; }

static const struct emul_env env = { tr, gf, sf, gx, sx, gxs, sxs };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t ram[RAM] __attribute__((aligned(4096)));
	static struct guest_mem mem;
	__u64 *regs[17];
	struct emul_cpu c;
	char why[256];
	uint64_t rip0;
	size_t i, len;
	int rc;

	if (size < 1)
		return 0;
	guest_mem_wrap(&mem, ram, sizeof(ram));
	memset(&c, 0, sizeof(c));
	c.mem = &mem;
	c.env = &env;
	c.regs.rip = 0x1000;
	c.sregs.cs.l = data[0] & 1;
	c.sregs.cs.db = !(data[0] & 1);
	c.sregs.efer = (data[0] & 1) ? 0x500 : 0;
	c.sregs.cs.selector = (data[0] & 2) ? 0x33 : 0x10;
	c.sregs.cr0 = 0x11 | ((data[0] & 4) && (data[0] & 1) ? 0x80010000u : 0);
	c.sregs.cr3 = 0x10000;
	c.sregs.cr4 = (data[0] & 8) ? 0x220 : 0x20;
	regs[0] = &c.regs.rax; regs[1] = &c.regs.rcx; regs[2] = &c.regs.rdx; regs[3] = &c.regs.rbx;
	regs[4] = &c.regs.rsp; regs[5] = &c.regs.rbp; regs[6] = &c.regs.rsi; regs[7] = &c.regs.rdi;
	regs[8] = &c.regs.r8; regs[9] = &c.regs.r9; regs[10] = &c.regs.r10; regs[11] = &c.regs.r11;
	regs[12] = &c.regs.r12; regs[13] = &c.regs.r13; regs[14] = &c.regs.r14; regs[15] = &c.regs.r15;
	regs[16] = &c.regs.rflags;
	data++, size--;
	for (i = 0; i < 17 && size >= 8; i++, data += 8, size -= 8)
		memcpy(regs[i], data, 8);
	len = size < EMUL_INSN_MAX ? size : EMUL_INSN_MAX;
	rip0 = c.regs.rip;
	why[0] = 0;
	rc = emulate_insn(&c, data, len, why, sizeof(why));
	FUZZ_CHECK(rc == 0 || rc == -ENOTSUP, "a completion's status is 0 or -ENOTSUP");
	if (rc) {
		FUZZ_CHECK(why[0] && fuzz_printable(why), "a refusal without a printable reason");
		return 0;
	}
	if (c.vector < 0 || c.vector == 1 || c.vector == 3)
		FUZZ_CHECK(c.regs.rip > rip0 && c.regs.rip - rip0 <= EMUL_INSN_MAX,
			   "a completion did not move RIP past the instruction");
	else if (c.vector != 4)
		FUZZ_CHECK(c.regs.rip == rip0, "a fault moved RIP");
	return 0;
}
