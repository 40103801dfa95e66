/* Completing what the host's KVM cannot emulate (emulate.h). */
#include "emulate.h"
#include "domain.h"
#include "log.h"
#include "mem.h"

#include <Zydis/Zydis.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define RFLAGS_CF (1ull << 0)
#define RFLAGS_PF (1ull << 2)
#define RFLAGS_AF (1ull << 4)
#define RFLAGS_ZF (1ull << 6)
#define RFLAGS_SF (1ull << 7)
#define RFLAGS_OF (1ull << 11)
#define RFLAGS_AC (1ull << 18)
#define RFLAGS_ARITH (RFLAGS_CF | RFLAGS_PF | RFLAGS_AF | RFLAGS_ZF | RFLAGS_SF | RFLAGS_OF)

#define CR0_PG (1ull << 31)
#define CR0_WP (1ull << 16)
#define CR4_LA57 (1ull << 12)
#define EFER_LMA (1ull << 10)

#define FSW_ES 0x0080          /* an unmasked x87 exception is pending */
#define FSW_EXCEPTIONS 0x00ff  /* ES, SF and the six exception flags */
#define FSW_B  0x8000

enum { VEC_DB = 1, VEC_BP = 3, VEC_OF = 4, VEC_UD = 6, VEC_GP = 13, VEC_PF = 14, VEC_MF = 16 };
/* #PF error code bits */
#define PF_PRESENT 1u
#define PF_WRITE   2u
#define PF_USER    4u
#define PF_FETCH   16u

/* One decoded instruction and its operands. */
struct emul_insn {
	ZydisDecodedInstruction d;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	const uint8_t *bytes;
};

/* ---- guest memory, as the instruction sees it ------------------------------ */

static unsigned cpl(const struct emul_cpu *c)
{
	return c->sregs.cs.selector & 3;
}

static void raise_exception(struct emul_cpu *c, int vector, bool has_error, uint32_t error)
{
	c->vector = vector;
	c->has_error_code = has_error;
	c->error_code = error;
}

static void raise_pf(struct emul_cpu *c, uint64_t gva, uint32_t error)
{
	raise_exception(c, VEC_PF, true, error | (cpl(c) == 3 ? PF_USER : 0));
	c->set_cr2 = true;
	c->cr2 = gva;
}

/* Whether the guest's page tables let this CPL write gva: KVM_TRANSLATE
 * says where a page is, not whether it may be written (x86 KVM reports
 * every page writeable), so the W bits of every level are read here.
 * Supervisor writes ignore them while CR0.WP is clear. */
static bool page_writable(const struct emul_cpu *c, uint64_t gva)
{
	uint64_t table = c->sregs.cr3 & 0x000ffffffffff000ull, entry = 0;
	int level = (c->sregs.cr4 & CR4_LA57) ? 5 : 4;

	if (!(c->sregs.cr0 & CR0_PG) || (cpl(c) < 3 && !(c->sregs.cr0 & CR0_WP)))
		return true;
	if (!(c->sregs.efer & EFER_LMA))
		return true;     /* 32-bit paging: not walked; KVM's translation stands */
	for (; level >= 1; level--) {
		unsigned idx = (gva >> (12 + 9 * (level - 1))) & 511;

		if (gpa_read(c->mem, table + idx * 8, &entry, 8) || !(entry & 1))
			return false;
		if (!(entry & 2))
			return false;
		if (level <= 3 && level > 1 && (entry & 0x80))
			return true;          /* a 1 GiB or 2 MiB page */
		table = entry & 0x000ffffffffff000ull;
	}
	return true;
}

/* The linear address range [gva, gva+len) as host pointers, one per page
 * it touches (at most two: no operand here is larger than a page), or a
 * #PF raised (-EFAULT) or -ENOTSUP (not RAM: an MMIO operand). */
struct guest_span {
	uint8_t *part[2];
	size_t len[2];
	unsigned n;
};

static int span_map(struct emul_cpu *c, uint64_t gva, size_t len, bool write, uint32_t fetch,
		    struct guest_span *s)
{
	s->n = 0;
	while (len) {
		size_t in_page = GUEST_PAGE_SIZE - (gva & (GUEST_PAGE_SIZE - 1));
		size_t chunk = len < in_page ? len : in_page;
		uint64_t gpa;

		if (s->n == ARRAY_LEN(s->part))
			return -ENOTSUP;
		if (c->env->translate(c->ctx, gva, &gpa)) {
			raise_pf(c, gva, (write ? PF_WRITE : 0) | fetch);
			return -EFAULT;
		}
		if (write && !page_writable(c, gva)) {
			raise_pf(c, gva, PF_PRESENT | PF_WRITE);
			return -EFAULT;
		}
		if (!(s->part[s->n] = gpa_ptr(c->mem, gpa, chunk)))
			return -ENOTSUP;
		s->len[s->n++] = chunk;
		gva += chunk;
		len -= chunk;
	}
	return 0;
}

static int guest_read(struct emul_cpu *c, uint64_t gva, void *dst, size_t len)
{
	struct guest_span s;
	unsigned i;
	int rc;

	if ((rc = span_map(c, gva, len, false, 0, &s)))
		return rc;
	for (i = 0; i < s.n; i++) {
		memcpy(dst, s.part[i], s.len[i]);
		dst = (uint8_t *)dst + s.len[i];
	}
	return 0;
}

/* Every page is checked before the first byte is written: a fault on the
 * second page leaves the first as it was. */
static int guest_write(struct emul_cpu *c, uint64_t gva, const void *src, size_t len)
{
	struct guest_span s;
	unsigned i;
	int rc;

	if ((rc = span_map(c, gva, len, true, 0, &s)))
		return rc;
	for (i = 0; i < s.n; i++) {
		guest_mem_mark_dirty(c->mem, s.part[i], s.len[i]);
		memcpy(s.part[i], src, s.len[i]);
		src = (const uint8_t *)src + s.len[i];
	}
	return 0;
}

/* ---- registers and operands ----------------------------------------------- */

static ZydisMachineMode machine_mode(const struct kvm_sregs *s)
{
	if ((s->efer & EFER_LMA) && s->cs.l)
		return ZYDIS_MACHINE_MODE_LONG_64;
	if (s->cs.db)
		return (s->efer & EFER_LMA) ? ZYDIS_MACHINE_MODE_LONG_COMPAT_32 : ZYDIS_MACHINE_MODE_LEGACY_32;
	return (s->efer & EFER_LMA) ? ZYDIS_MACHINE_MODE_LONG_COMPAT_16 : ZYDIS_MACHINE_MODE_LEGACY_16;
}

/* kvm_regs' general registers in the encoding's order, which is Zydis's
 * order from RAX to R15. */
static __u64 *gpr_slot(struct kvm_regs *r, unsigned n)
{
	__u64 *slots[16] = { &r->rax, &r->rcx, &r->rdx, &r->rbx, &r->rsp, &r->rbp, &r->rsi, &r->rdi,
				&r->r8, &r->r9, &r->r10, &r->r11, &r->r12, &r->r13, &r->r14, &r->r15 };
	return n < 16 ? slots[n] : NULL;
}

static bool is_high_byte(ZydisRegister reg)
{
	return reg == ZYDIS_REGISTER_AH || reg == ZYDIS_REGISTER_CH || reg == ZYDIS_REGISTER_DH ||
	       reg == ZYDIS_REGISTER_BH;
}

static __u64 *gpr_of(struct emul_cpu *c, ZydisRegister reg)
{
	ZydisRegister full = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);

	if (full < ZYDIS_REGISTER_RAX || full > ZYDIS_REGISTER_R15)
		return NULL;
	return gpr_slot(&c->regs, full - ZYDIS_REGISTER_RAX);
}

static unsigned reg_bits(const struct emul_cpu *c, ZydisRegister reg)
{
	return ZydisRegisterGetWidth(machine_mode(&c->sregs), reg);
}

static int reg_read(struct emul_cpu *c, ZydisRegister reg, uint64_t *val)
{
	__u64 *slot = gpr_of(c, reg);
	unsigned bits = reg_bits(c, reg);

	if (reg == ZYDIS_REGISTER_RIP || reg == ZYDIS_REGISTER_EIP) {
		*val = c->regs.rip;
		return 0;
	}
	if (!slot)
		return -ENOTSUP;
	*val = is_high_byte(reg) ? (*slot >> 8) & 0xff : bits >= 64 ? *slot : *slot & ((1ull << bits) - 1);
	return 0;
}

/* As the CPU writes a general register: a 32-bit write clears the upper
 * half, 8- and 16-bit writes keep the rest. */
static int reg_write(struct emul_cpu *c, ZydisRegister reg, uint64_t val)
{
	__u64 *slot = gpr_of(c, reg);
	unsigned bits = reg_bits(c, reg);

	if (!slot)
		return -ENOTSUP;
	if (is_high_byte(reg))
		*slot = (*slot & ~0xff00ull) | ((val & 0xff) << 8);
	else if (bits == 64)
		*slot = val;
	else if (bits == 32)
		*slot = (uint32_t)val;
	else
		*slot = (*slot & ~((1ull << bits) - 1)) | (val & ((1ull << bits) - 1));
	return 0;
}

static uint64_t segment_base(const struct emul_cpu *c, ZydisRegister seg)
{
	bool long64 = machine_mode(&c->sregs) == ZYDIS_MACHINE_MODE_LONG_64;

	switch (seg) {
	case ZYDIS_REGISTER_FS: return c->sregs.fs.base;
	case ZYDIS_REGISTER_GS: return c->sregs.gs.base;
	case ZYDIS_REGISTER_ES: return long64 ? 0 : c->sregs.es.base;
	case ZYDIS_REGISTER_CS: return long64 ? 0 : c->sregs.cs.base;
	case ZYDIS_REGISTER_SS: return long64 ? 0 : c->sregs.ss.base;
	default:                return long64 ? 0 : c->sregs.ds.base;
	}
}

/* The linear address of a memory operand: Zydis's effective address, in
 * the instruction's address size, plus its segment's base. */
static int operand_address(struct emul_cpu *c, const struct emul_insn *in, const ZydisDecodedOperand *op,
			   uint64_t *linear)
{
	ZydisRegisterContext ctx;
	uint64_t ea, v;

	if (op->type != ZYDIS_OPERAND_TYPE_MEMORY)
		return -ENOTSUP;
	memset(&ctx, 0, sizeof(ctx));
	if (op->mem.base != ZYDIS_REGISTER_NONE) {
		if (reg_read(c, op->mem.base, &v))
			return -ENOTSUP;
		ctx.values[op->mem.base] = v;
	}
	if (op->mem.index != ZYDIS_REGISTER_NONE) {
		if (reg_read(c, op->mem.index, &v))
			return -ENOTSUP;
		ctx.values[op->mem.index] = v;
	}
	if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddressEx(&in->d, op, c->regs.rip, &ctx, &ea)))
		return -ENOTSUP;
	if (in->d.address_width < 64)
		ea &= (1ull << in->d.address_width) - 1;
	*linear = ea + segment_base(c, op->mem.segment);
	if (machine_mode(&c->sregs) != ZYDIS_MACHINE_MODE_LONG_64)
		*linear = (uint32_t)*linear;
	return 0;
}

/* A register or memory operand's value, op->size bits (at most 64). */
static int operand_read(struct emul_cpu *c, const struct emul_insn *in, const ZydisDecodedOperand *op,
			uint64_t *val)
{
	uint64_t addr;
	int rc;

	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER)
		return reg_read(c, op->reg.value, val);
	if ((rc = operand_address(c, in, op, &addr)))
		return rc;
	*val = 0;
	return guest_read(c, addr, val, op->size / 8);
}

static int operand_write(struct emul_cpu *c, const struct emul_insn *in, const ZydisDecodedOperand *op,
			 uint64_t val)
{
	uint64_t addr;
	int rc;

	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER)
		return reg_write(c, op->reg.value, val);
	if ((rc = operand_address(c, in, op, &addr)))
		return rc;
	return guest_write(c, addr, &val, op->size / 8);
}

static void next_insn(struct emul_cpu *c, const struct emul_insn *in)
{
	c->regs.rip += in->d.length;
	if (machine_mode(&c->sregs) != ZYDIS_MACHINE_MODE_LONG_64)
		c->regs.rip = (uint32_t)c->regs.rip;
}

static void set_flags(struct emul_cpu *c, uint64_t mask, uint64_t set)
{
	c->regs.rflags = (c->regs.rflags & ~mask) | (set & mask);
}

static int fpu_load(struct emul_cpu *c)
{
	int rc;

	if (c->fpu_loaded)
		return 0;
	if ((rc = c->env->get_fpu(c->ctx, &c->fpu)))
		return rc;
	c->fpu_loaded = true;
	return 0;
}

/* ---- the completions ------------------------------------------------------- */
/* Each returns 0 (completed, or an exception raised on c) or -ENOTSUP. */

/* int3, int1 (icebp): traps, RIP past the instruction. */
static int do_int3(struct emul_cpu *c, const struct emul_insn *in)
{
	next_insn(c, in);
	raise_exception(c, VEC_BP, false, 0);
	return 0;
}

static int do_int1(struct emul_cpu *c, const struct emul_insn *in)
{
	next_insn(c, in);
	raise_exception(c, VEC_DB, false, 0);
	return 0;
}

static int do_into(struct emul_cpu *c, const struct emul_insn *in)
{
	next_insn(c, in);
	if (c->regs.rflags & RFLAGS_OF)
		raise_exception(c, VEC_OF, false, 0);
	return 0;
}

/* popcnt, lzcnt, tzcnt: count bits of the source into the destination. */
static int bit_count(struct emul_cpu *c, const struct emul_insn *in, ZydisMnemonic m)
{
	unsigned bits = in->op[1].size;
	uint64_t src, n;
	int rc;

	if ((rc = operand_read(c, in, &in->op[1], &src)))
		return rc == -EFAULT ? 0 : rc;
	if (bits < 64)
		src &= (1ull << bits) - 1;
	switch (m) {
	case ZYDIS_MNEMONIC_POPCNT:
		n = __builtin_popcountll(src);
		/* ZF: the source was zero; CF OF SF AF PF cleared. */
		set_flags(c, RFLAGS_ARITH, src ? 0 : RFLAGS_ZF);
		break;
	case ZYDIS_MNEMONIC_LZCNT:
		n = src ? (uint64_t)(__builtin_clzll(src) - (64 - bits)) : bits;
		set_flags(c, RFLAGS_CF | RFLAGS_ZF, (src ? 0 : RFLAGS_CF) | (n ? 0 : RFLAGS_ZF));
		break;
	default:   /* TZCNT */
		n = src ? (uint64_t)__builtin_ctzll(src) : bits;
		set_flags(c, RFLAGS_CF | RFLAGS_ZF, (src ? 0 : RFLAGS_CF) | (n ? 0 : RFLAGS_ZF));
		break;
	}
	if ((rc = reg_write(c, in->op[0].reg.value, n)))
		return rc;
	next_insn(c, in);
	return 0;
}

static int do_popcnt(struct emul_cpu *c, const struct emul_insn *in) { return bit_count(c, in, ZYDIS_MNEMONIC_POPCNT); }
static int do_lzcnt(struct emul_cpu *c, const struct emul_insn *in)  { return bit_count(c, in, ZYDIS_MNEMONIC_LZCNT); }
static int do_tzcnt(struct emul_cpu *c, const struct emul_insn *in)  { return bit_count(c, in, ZYDIS_MNEMONIC_TZCNT); }

/* clac, stac: RFLAGS.AC, which SMAP reads; kernel mode only. */
static int set_ac(struct emul_cpu *c, const struct emul_insn *in, bool on)
{
	if (cpl(c)) {
		raise_exception(c, VEC_UD, false, 0);
		return 0;
	}
	set_flags(c, RFLAGS_AC, on ? RFLAGS_AC : 0);
	next_insn(c, in);
	return 0;
}

static int do_clac(struct emul_cpu *c, const struct emul_insn *in) { return set_ac(c, in, false); }
static int do_stac(struct emul_cpu *c, const struct emul_insn *in) { return set_ac(c, in, true); }

/* fwait: the pending x87 exception, if any, is delivered here (#MF). */
static int do_fwait(struct emul_cpu *c, const struct emul_insn *in)
{
	int rc;

	if ((rc = fpu_load(c)))
		return rc;
	if (c->fpu.fsw & FSW_ES) {
		raise_exception(c, VEC_MF, false, 0);
		return 0;
	}
	next_insn(c, in);
	return 0;
}


/* cmpxchg8b, cmpxchg16b: compare EDX:EAX (RDX:RAX) with the operand; if
 * equal, ZF and the operand = ECX:EBX (RCX:RBX), else the operand into
 * EDX:EAX.  Atomic on the host's mapping of the guest's page, so a vCPU
 * running the guest's own code on it meanwhile sees it whole. */
static int do_cmpxchg_wide(struct emul_cpu *c, const struct emul_insn *in)
{
	const ZydisDecodedOperand *op = &in->op[0];
	bool wide = op->size == 128;
	unsigned half = wide ? 64 : 32;
	uint64_t mask = wide ? ~0ull : 0xffffffffull, addr;
	struct guest_span s;
	int rc;

	if ((rc = operand_address(c, in, op, &addr)))
		return rc;
	if (wide && (addr & 15)) {
		raise_exception(c, VEC_GP, true, 0);
		return 0;
	}
	/* The CPU writes the operand back even when unequal: it must be
	 * writable either way. */
	if ((rc = span_map(c, addr, op->size / 8, true, 0, &s)))
		return rc;
	if (s.n != 1)
		return -ENOTSUP;      /* a cmpxchg8b across two pages */
	guest_mem_mark_dirty(c->mem, s.part[0], s.len[0]);
	if (wide) {
		unsigned __int128 expect = ((unsigned __int128)c->regs.rdx << 64) | c->regs.rax;
		unsigned __int128 want = ((unsigned __int128)c->regs.rcx << 64) | c->regs.rbx;
		unsigned __int128 old = __sync_val_compare_and_swap((unsigned __int128 *)(void *)s.part[0],
								   expect, want);

		set_flags(c, RFLAGS_ZF, old == expect ? RFLAGS_ZF : 0);
		if (old != expect) {
			c->regs.rax = (uint64_t)old;
			c->regs.rdx = (uint64_t)(old >> half);
		}
	} else {
		uint64_t expect = ((c->regs.rdx & mask) << half) | (c->regs.rax & mask);
		uint64_t want = ((c->regs.rcx & mask) << half) | (c->regs.rbx & mask);
		uint64_t old = expect;

		if (__atomic_compare_exchange_n((uint64_t *)(void *)s.part[0], &old, want, false,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			set_flags(c, RFLAGS_ZF, RFLAGS_ZF);
		} else {
			set_flags(c, RFLAGS_ZF, 0);
			c->regs.rax = old & mask;
			c->regs.rdx = old >> half;
		}
	}
	next_insn(c, in);
	return 0;
}

/* ---- x87 control: KVM_GET/SET_FPU --------------------------------------- */

static int fpu_store16(struct emul_cpu *c, const struct emul_insn *in, uint16_t val)
{
	const ZydisDecodedOperand *op = &in->op[0];
	int rc;

	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER)     /* fnstsw ax */
		rc = reg_write(c, op->reg.value, val);
	else
		rc = operand_write(c, in, op, val);
	if (rc)
		return rc;
	next_insn(c, in);
	return 0;
}

/* The operand an x87 control instruction names: the first visible one. */
static int do_fnstsw(struct emul_cpu *c, const struct emul_insn *in)
{
	int rc = fpu_load(c);

	return rc ? rc : fpu_store16(c, in, c->fpu.fsw);
}

static int do_fnstcw(struct emul_cpu *c, const struct emul_insn *in)
{
	int rc = fpu_load(c);

	return rc ? rc : fpu_store16(c, in, c->fpu.fcw);
}

static int do_fldcw(struct emul_cpu *c, const struct emul_insn *in)
{
	uint64_t cw;
	int rc;

	if ((rc = fpu_load(c)) || (rc = operand_read(c, in, &in->op[0], &cw)))
		return rc;
	c->fpu.fcw = (uint16_t)cw;
	/* Unmasking a pending exception flag makes it pending: ES and B follow. */
	if (c->fpu.fsw & 0x3f & ~c->fpu.fcw)
		c->fpu.fsw |= FSW_ES | FSW_B;
	else
		c->fpu.fsw &= ~(FSW_ES | FSW_B);
	c->fpu_dirty = true;
	next_insn(c, in);
	return 0;
}

static int do_fninit(struct emul_cpu *c, const struct emul_insn *in)
{
	int rc;

	if ((rc = fpu_load(c)))
		return rc;
	c->fpu.fcw = 0x037f;
	c->fpu.fsw = 0;
	c->fpu.ftwx = 0;           /* abridged tag word: every register empty */
	c->fpu.last_opcode = 0;
	c->fpu.last_ip = 0;
	c->fpu.last_dp = 0;
	c->fpu_dirty = true;
	next_insn(c, in);
	return 0;
}

static int do_fnclex(struct emul_cpu *c, const struct emul_insn *in)
{
	int rc;

	if ((rc = fpu_load(c)))
		return rc;
	c->fpu.fsw &= ~(FSW_EXCEPTIONS | FSW_B);
	c->fpu_dirty = true;
	next_insn(c, in);
	return 0;
}

/* ---- XCR0, FXSAVE and the XSAVE family: KVM_GET/SET_XCRS, _FPU, _XSAVE --- */

static int kernel_only(struct emul_cpu *c)
{
	if (cpl(c)) {
		raise_exception(c, VEC_GP, true, 0);
		return -EFAULT;
	}
	return 0;
}

static int do_xgetbv(struct emul_cpu *c, const struct emul_insn *in)
{
	uint64_t xcr0;
	int rc;

	if ((uint32_t)c->regs.rcx != 0) {
		raise_exception(c, VEC_GP, true, 0);   /* XCR0 is the only one KVM gives */
		return 0;
	}
	if ((rc = c->env->get_xcr0(c->ctx, &xcr0)))
		return rc;
	c->regs.rax = (uint32_t)xcr0;
	c->regs.rdx = xcr0 >> 32;
	next_insn(c, in);
	return 0;
}

/* KVM checks the value as the CPU would (x87 set, AVX only with SSE, ...):
 * what it refuses is the #GP the instruction raises. */
static int do_xsetbv(struct emul_cpu *c, const struct emul_insn *in)
{
	uint64_t xcr0 = ((c->regs.rdx & 0xffffffffull) << 32) | (uint32_t)c->regs.rax;
	int rc;

	if ((rc = kernel_only(c)))
		return rc;
	if ((uint32_t)c->regs.rcx != 0 || c->env->set_xcr0(c->ctx, xcr0)) {
		raise_exception(c, VEC_GP, true, 0);
		return 0;
	}
	next_insn(c, in);
	return 0;
}

/* The legacy region's layout (FXSAVE, and the first 512 bytes of XSAVE). */
#define FX_MXCSR 24
#define FX_ST    32
#define FX_XMM   160
#define FX_SIZE  512
#define XSAVE_HEADER 512
#define XSAVE_EXT    576

static uint32_t host_mxcsr_mask(void)
{
	static uint32_t mask;
	uint8_t area[FX_SIZE] __attribute__((aligned(16)));

	if (!mask) {
		memset(area, 0, sizeof(area));
		__builtin_ia32_fxsave64(area);
		memcpy(&mask, area + 28, 4);
		if (!mask)
			mask = 0xffbf;     /* the architecture's default */
	}
	return mask;
}

/* kvm_fpu <-> the 512-byte FXSAVE image (64-bit format). */
static void fx_from_fpu(uint8_t *fx, const struct kvm_fpu *f)
{
	uint32_t mask = host_mxcsr_mask();
	unsigned i;

	memset(fx, 0, FX_SIZE);
	memcpy(fx + 0, &f->fcw, 2);
	memcpy(fx + 2, &f->fsw, 2);
	fx[4] = f->ftwx;
	memcpy(fx + 6, &f->last_opcode, 2);
	memcpy(fx + 8, &f->last_ip, 8);
	memcpy(fx + 16, &f->last_dp, 8);
	memcpy(fx + FX_MXCSR, &f->mxcsr, 4);
	memcpy(fx + 28, &mask, 4);
	for (i = 0; i < 8; i++)
		memcpy(fx + FX_ST + 16 * i, f->fpr[i], 16);
	for (i = 0; i < 16; i++)
		memcpy(fx + FX_XMM + 16 * i, f->xmm[i], 16);
}

static void fx_to_fpu(struct kvm_fpu *f, const uint8_t *fx)
{
	unsigned i;

	memcpy(&f->fcw, fx + 0, 2);
	memcpy(&f->fsw, fx + 2, 2);
	f->ftwx = fx[4];
	memcpy(&f->last_opcode, fx + 6, 2);
	memcpy(&f->last_ip, fx + 8, 8);
	memcpy(&f->last_dp, fx + 16, 8);
	memcpy(&f->mxcsr, fx + FX_MXCSR, 4);
	for (i = 0; i < 8; i++)
		memcpy(f->fpr[i], fx + FX_ST + 16 * i, 16);
	for (i = 0; i < 16; i++)
		memcpy(f->xmm[i], fx + FX_XMM + 16 * i, 16);
}

static int mem_operand_aligned(struct emul_cpu *c, const struct emul_insn *in, unsigned align, uint64_t *addr)
{
	int rc;

	if ((rc = operand_address(c, in, &in->op[0], addr)))
		return rc;
	if (*addr & (align - 1)) {
		raise_exception(c, VEC_GP, true, 0);
		return -EFAULT;
	}
	return 0;
}

static int do_fxsave(struct emul_cpu *c, const struct emul_insn *in)
{
	uint8_t fx[FX_SIZE];
	uint64_t addr;
	int rc;

	if ((rc = fpu_load(c)) || (rc = mem_operand_aligned(c, in, 16, &addr)))
		return rc;
	fx_from_fpu(fx, &c->fpu);
	if ((rc = guest_write(c, addr, fx, sizeof(fx))))
		return rc;
	next_insn(c, in);
	return 0;
}

static int do_fxrstor(struct emul_cpu *c, const struct emul_insn *in)
{
	uint8_t fx[FX_SIZE];
	uint32_t mxcsr;
	uint64_t addr;
	int rc;

	if ((rc = fpu_load(c)) || (rc = mem_operand_aligned(c, in, 16, &addr)) ||
	    (rc = guest_read(c, addr, fx, sizeof(fx))))
		return rc;
	memcpy(&mxcsr, fx + FX_MXCSR, 4);
	if (mxcsr & ~host_mxcsr_mask()) {
		raise_exception(c, VEC_GP, true, 0);
		return 0;
	}
	fx_to_fpu(&c->fpu, fx);
	c->fpu_dirty = true;
	next_insn(c, in);
	return 0;
}

/* One state component of the XSAVE area: CPUID leaf 0xd as the hardware
 * gives it (a PVM guest's CPUID is the hardware's). */
struct xcomp { uint32_t size, offset; bool align64; };

static struct xcomp xsave_component(unsigned i)
{
	unsigned a, b, cx, d;

	/* (GCC's <cpuid.h> is shadowed by lodge-hyp's own cpuid.h.) */
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(cx), "=d"(d) : "a"(0xd), "c"(i));
	(void)d;
	return (struct xcomp){ .size = a, .offset = b, .align64 = cx & 2 };
}

/* Where component i is in the compacted format with these components. */
static uint32_t compacted_offset(uint64_t comp_bv, unsigned i)
{
	uint32_t at = XSAVE_EXT;
	unsigned j;

	for (j = 2; j < i; j++) {
		if (!(comp_bv & (1ull << j)))
			continue;
		if (xsave_component(j).align64)
			at = (at + 63) & ~63u;
		at += xsave_component(j).size;
	}
	if (xsave_component(i).align64)
		at = (at + 63) & ~63u;
	return at;
}

static int xsave_load(struct emul_cpu *c)
{
	int rc;

	if (c->xsave_loaded)
		return 0;
	if ((rc = c->env->get_xsave(c->ctx, &c->xsave)))
		return rc;
	c->xsave_loaded = true;
	return 0;
}

/* The requested-feature bitmap: EDX:EAX and XCR0. */
static int xsave_rfbm(struct emul_cpu *c, uint64_t *rfbm)
{
	uint64_t xcr0;
	int rc;

	if ((rc = c->env->get_xcr0(c->ctx, &xcr0)))
		return rc;
	*rfbm = (((c->regs.rdx & 0xffffffffull) << 32) | (uint32_t)c->regs.rax) & xcr0;
	return 0;
}

/* Largest offset an XSAVE area reaches (the operand's span): components
 * up to bit 31 only, what kvm_xsave's 4096 bytes hold. */
#define XSAVE_AREA_MAX sizeof(((struct kvm_xsave *)0)->region)

/* How far into an XSAVE area the components in RFBM reach, in the
 * standard layout or the compacted one of LAYOUT_BV (the XCOMP_BV an
 * xsavec writes or an xrstor reads): *end grows to cover each, and an
 * area past what Lodge holds is -ENOTSUP. */
static int xsave_extent(uint64_t rfbm, uint64_t layout_bv, bool compacted, uint32_t *end)
{
	unsigned i;

	for (i = 2; i < 32; i++) {
		struct xcomp x;
		uint32_t off;

		if (!(rfbm & (1ull << i)))
			continue;
		x = xsave_component(i);
		off = compacted ? compacted_offset(layout_bv, i) : x.offset;
		if (off + x.size > XSAVE_AREA_MAX || x.offset + x.size > XSAVE_AREA_MAX)
			return -ENOTSUP;
		if (off + x.size > *end)
			*end = off + x.size;
	}
	return 0;
}

static int do_xsave_any(struct emul_cpu *c, const struct emul_insn *in, bool compacted)
{
	const uint8_t *kx = (const uint8_t *)c->xsave.region;
	uint8_t area[XSAVE_AREA_MAX];
	uint64_t addr, rfbm, have_bv, bv, comp_bv;
	uint32_t end = XSAVE_EXT;
	unsigned i;
	int rc;

	if ((rc = xsave_load(c)) || (rc = xsave_rfbm(c, &rfbm)) || (rc = mem_operand_aligned(c, in, 64, &addr)))
		return rc;
	memcpy(&have_bv, kx + XSAVE_HEADER, 8);
	if ((rc = xsave_extent(rfbm, rfbm, compacted, &end)))
		return rc;
	/* Read what is there: the parts not requested stay as they were. */
	if ((rc = guest_read(c, addr, area, end)))
		return rc;
	if (rfbm & 1) {
		memcpy(area, kx, FX_MXCSR);
		memcpy(area + FX_ST, kx + FX_ST, FX_XMM - FX_ST);
	}
	if (rfbm & 6)
		memcpy(area + FX_MXCSR, kx + FX_MXCSR, 8);
	if (rfbm & 2)
		memcpy(area + FX_XMM, kx + FX_XMM, 16 * 16);
	for (i = 2; i < 32; i++) {
		struct xcomp x;

		if (!(rfbm & (1ull << i)))
			continue;
		x = xsave_component(i);
		memcpy(area + (compacted ? compacted_offset(rfbm, i) : x.offset), kx + x.offset, x.size);
	}
	memcpy(&bv, area + XSAVE_HEADER, 8);
	bv = (bv & ~rfbm) | (have_bv & rfbm);
	if (compacted) {
		bv = have_bv & rfbm;
		comp_bv = rfbm | (1ull << 63);
		memcpy(area + XSAVE_HEADER + 8, &comp_bv, 8);
	}
	memcpy(area + XSAVE_HEADER, &bv, 8);
	if ((rc = guest_write(c, addr, area, end)))
		return rc;
	next_insn(c, in);
	return 0;
}

static int do_xsave(struct emul_cpu *c, const struct emul_insn *in) { return do_xsave_any(c, in, false); }
static int do_xsavec(struct emul_cpu *c, const struct emul_insn *in) { return do_xsave_any(c, in, true); }

/* xrstor: components in RFBM come from memory where its XSTATE_BV has
 * them, else go to their initial state; either format. */
static int do_xrstor(struct emul_cpu *c, const struct emul_insn *in)
{
	uint8_t *kx = (uint8_t *)c->xsave.region;
	uint8_t hdr[64], area[XSAVE_AREA_MAX];
	uint64_t addr, rfbm, bv, comp_bv, kbv;
	uint32_t end = XSAVE_EXT, mxcsr;
	bool compacted;
	unsigned i;
	int rc;

	if ((rc = xsave_load(c)) || (rc = xsave_rfbm(c, &rfbm)) || (rc = mem_operand_aligned(c, in, 64, &addr)) ||
	    (rc = guest_read(c, addr + XSAVE_HEADER, hdr, sizeof(hdr))))
		return rc;
	memcpy(&bv, hdr, 8);
	memcpy(&comp_bv, hdr + 8, 8);
	compacted = comp_bv >> 63;
	if ((!compacted && comp_bv) || (compacted && (bv & ~comp_bv & ~(1ull << 63)))) {
		raise_exception(c, VEC_GP, true, 0);
		return 0;
	}
	if ((rc = xsave_extent(rfbm, comp_bv, compacted, &end)))
		return rc;
	if ((rc = guest_read(c, addr, area, end)))
		return rc;
	memcpy(&mxcsr, area + FX_MXCSR, 4);
	if ((rfbm & 6) && (mxcsr & ~host_mxcsr_mask())) {
		raise_exception(c, VEC_GP, true, 0);
		return 0;
	}
	memcpy(&kbv, kx + XSAVE_HEADER, 8);
	if (rfbm & 1) {
		if (bv & 1) {
			memcpy(kx, area, FX_MXCSR);
			memcpy(kx + FX_ST, area + FX_ST, FX_XMM - FX_ST);
		} else {
			uint16_t fcw = 0x37f;

			memset(kx, 0, FX_MXCSR);
			memcpy(kx, &fcw, 2);
			memset(kx + FX_ST, 0, FX_XMM - FX_ST);
		}
	}
	if (rfbm & 6)
		memcpy(kx + FX_MXCSR, area + FX_MXCSR, 4);
	if (rfbm & 2) {
		if (bv & 2)
			memcpy(kx + FX_XMM, area + FX_XMM, 16 * 16);
		else
			memset(kx + FX_XMM, 0, 16 * 16);
	}
	for (i = 2; i < 32; i++) {
		struct xcomp x;

		if (!(rfbm & (1ull << i)))
			continue;
		x = xsave_component(i);
		if (bv & (1ull << i))
			memcpy(kx + x.offset, area + (compacted ? compacted_offset(comp_bv, i) : x.offset), x.size);
		else
			memset(kx + x.offset, 0, x.size);
	}
	kbv = (kbv & ~rfbm) | (bv & rfbm);
	memcpy(kx + XSAVE_HEADER, &kbv, 8);
	memset(kx + XSAVE_HEADER + 8, 0, 8);     /* KVM takes the standard format */
	c->xsave_dirty = true;
	next_insn(c, in);
	return 0;
}

/* ---- SSE moves and logic on xmm registers: KVM_GET/SET_FPU --------------- */
/* What a kernel does between kernel_fpu_begin() and _end() (copies, XORs
 * of blocks), legacy-encoded.  The VEX forms (ymm) are not completed. */

#define CR0_EM (1ull << 2)
#define CR0_TS (1ull << 3)
#define CR4_OSFXSR (1ull << 9)
#define VEC_NM 7

static int sse_usable(struct emul_cpu *c)
{
	if ((c->sregs.cr0 & CR0_EM) || !(c->sregs.cr4 & CR4_OSFXSR)) {
		raise_exception(c, VEC_UD, false, 0);
		return -EFAULT;
	}
	if (c->sregs.cr0 & CR0_TS) {
		raise_exception(c, VEC_NM, false, 0);
		return -EFAULT;
	}
	return fpu_load(c);
}

static uint8_t *xmm_of(struct emul_cpu *c, const ZydisDecodedOperand *op)
{
	if (op->type != ZYDIS_OPERAND_TYPE_REGISTER || op->reg.value < ZYDIS_REGISTER_XMM0 ||
	    op->reg.value > ZYDIS_REGISTER_XMM15)
		return NULL;
	return c->fpu.xmm[op->reg.value - ZYDIS_REGISTER_XMM0];
}

/* An operand of op->size bits (32, 64 or 128) into v[16], zero-filled. */
static int sse_read(struct emul_cpu *c, const struct emul_insn *in, const ZydisDecodedOperand *op, bool aligned,
		    uint8_t v[16])
{
	uint8_t *x = xmm_of(c, op);
	uint64_t addr, g;
	int rc;

	memset(v, 0, 16);
	if (x) {
		memcpy(v, x, op->size / 8);
		return 0;
	}
	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
		if ((rc = reg_read(c, op->reg.value, &g)))
			return rc;
		memcpy(v, &g, op->size / 8);
		return 0;
	}
	if ((rc = operand_address(c, in, op, &addr)))
		return rc;
	if (aligned && (addr & 15)) {
		raise_exception(c, VEC_GP, true, 0);
		return -EFAULT;
	}
	return guest_read(c, addr, v, op->size / 8);
}

/* v into an operand: an xmm destination of a 32/64-bit load is zero-extended. */
static int sse_write(struct emul_cpu *c, const struct emul_insn *in, const ZydisDecodedOperand *op, bool aligned,
		     const uint8_t v[16], bool zero_upper)
{
	uint8_t *x = xmm_of(c, op);
	uint64_t addr, g = 0;
	int rc;

	if (x) {
		if (zero_upper)
			memset(x, 0, 16);
		memcpy(x, v, op->size / 8);
		c->fpu_dirty = true;
		return 0;
	}
	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
		memcpy(&g, v, op->size / 8 > 8 ? 8 : op->size / 8);
		return reg_write(c, op->reg.value, g);
	}
	if ((rc = operand_address(c, in, op, &addr)))
		return rc;
	if (aligned && (addr & 15)) {
		raise_exception(c, VEC_GP, true, 0);
		return -EFAULT;
	}
	return guest_write(c, addr, v, op->size / 8);
}

static bool sse_aligned(ZydisMnemonic m)
{
	return m == ZYDIS_MNEMONIC_MOVDQA || m == ZYDIS_MNEMONIC_MOVAPS || m == ZYDIS_MNEMONIC_MOVAPD ||
	       m == ZYDIS_MNEMONIC_PXOR || m == ZYDIS_MNEMONIC_XORPS || m == ZYDIS_MNEMONIC_XORPD ||
	       m == ZYDIS_MNEMONIC_PAND || m == ZYDIS_MNEMONIC_POR;
}

/* movdqa/movdqu/movaps/movups/movapd/movupd, movd, movq. */
static int do_sse_move(struct emul_cpu *c, const struct emul_insn *in)
{
	bool aligned = sse_aligned(in->d.mnemonic);
	uint8_t v[16];
	int rc;

	if (in->d.attributes & ZYDIS_ATTRIB_HAS_VEX || in->d.attributes & ZYDIS_ATTRIB_HAS_EVEX)
		return -ENOTSUP;
	if ((rc = sse_usable(c)) || (rc = sse_read(c, in, &in->op[1], aligned, v)) ||
	    (rc = sse_write(c, in, &in->op[0], aligned, v, in->op[1].size < 128)))
		return rc;
	next_insn(c, in);
	return 0;
}

/* pxor/xorps/xorpd, pand, por: xmm = xmm OP xmm/m128. */
static int do_sse_logic(struct emul_cpu *c, const struct emul_insn *in)
{
	uint8_t a[16], b[16];
	unsigned i;
	int rc;

	if (in->d.attributes & ZYDIS_ATTRIB_HAS_VEX || in->d.attributes & ZYDIS_ATTRIB_HAS_EVEX || !xmm_of(c, &in->op[0]))
		return -ENOTSUP;
	if ((rc = sse_usable(c)) || (rc = sse_read(c, in, &in->op[0], false, a)) ||
	    (rc = sse_read(c, in, &in->op[1], true, b)))
		return rc;
	for (i = 0; i < 16; i++)
		a[i] = in->d.mnemonic == ZYDIS_MNEMONIC_PAND ? a[i] & b[i]
		     : in->d.mnemonic == ZYDIS_MNEMONIC_POR ? a[i] | b[i] : a[i] ^ b[i];
	if ((rc = sse_write(c, in, &in->op[0], false, a, false)))
		return rc;
	next_insn(c, in);
	return 0;
}

/* The table: each mnemonic Lodge completes, and how.  Counted by its
 * place here. */
static const struct emul_op {
	ZydisMnemonic mnemonic;
	int (*complete)(struct emul_cpu *c, const struct emul_insn *in);
} emul_ops[] = {
	{ ZYDIS_MNEMONIC_INT3,   do_int3 },
	{ ZYDIS_MNEMONIC_INT1,   do_int1 },
	{ ZYDIS_MNEMONIC_INTO,   do_into },
	{ ZYDIS_MNEMONIC_POPCNT, do_popcnt },
	{ ZYDIS_MNEMONIC_LZCNT,  do_lzcnt },
	{ ZYDIS_MNEMONIC_TZCNT,  do_tzcnt },
	{ ZYDIS_MNEMONIC_CLAC,   do_clac },
	{ ZYDIS_MNEMONIC_STAC,   do_stac },
	{ ZYDIS_MNEMONIC_FWAIT,  do_fwait },
	{ ZYDIS_MNEMONIC_CMPXCHG8B,  do_cmpxchg_wide },
	{ ZYDIS_MNEMONIC_CMPXCHG16B, do_cmpxchg_wide },
	{ ZYDIS_MNEMONIC_FNINIT, do_fninit },
	{ ZYDIS_MNEMONIC_FNCLEX, do_fnclex },
	{ ZYDIS_MNEMONIC_FNSTSW, do_fnstsw },
	{ ZYDIS_MNEMONIC_FNSTCW, do_fnstcw },
	{ ZYDIS_MNEMONIC_FLDCW,  do_fldcw },
	{ ZYDIS_MNEMONIC_XGETBV, do_xgetbv },
	{ ZYDIS_MNEMONIC_XSETBV, do_xsetbv },
	{ ZYDIS_MNEMONIC_FXSAVE,   do_fxsave },
	{ ZYDIS_MNEMONIC_FXSAVE64, do_fxsave },
	{ ZYDIS_MNEMONIC_FXRSTOR,   do_fxrstor },
	{ ZYDIS_MNEMONIC_FXRSTOR64, do_fxrstor },
	{ ZYDIS_MNEMONIC_XSAVE,     do_xsave },
	{ ZYDIS_MNEMONIC_XSAVE64,   do_xsave },
	{ ZYDIS_MNEMONIC_XSAVEOPT,  do_xsave },
	{ ZYDIS_MNEMONIC_XSAVEOPT64, do_xsave },
	{ ZYDIS_MNEMONIC_XSAVEC,    do_xsavec },
	{ ZYDIS_MNEMONIC_XSAVEC64,  do_xsavec },
	{ ZYDIS_MNEMONIC_XRSTOR,    do_xrstor },
	{ ZYDIS_MNEMONIC_XRSTOR64,  do_xrstor },
	{ ZYDIS_MNEMONIC_MOVDQA, do_sse_move },
	{ ZYDIS_MNEMONIC_MOVDQU, do_sse_move },
	{ ZYDIS_MNEMONIC_MOVAPS, do_sse_move },
	{ ZYDIS_MNEMONIC_MOVUPS, do_sse_move },
	{ ZYDIS_MNEMONIC_MOVAPD, do_sse_move },
	{ ZYDIS_MNEMONIC_MOVUPD, do_sse_move },
	{ ZYDIS_MNEMONIC_MOVD,   do_sse_move },
	{ ZYDIS_MNEMONIC_MOVQ,   do_sse_move },
	{ ZYDIS_MNEMONIC_PXOR,   do_sse_logic },
	{ ZYDIS_MNEMONIC_XORPS,  do_sse_logic },
	{ ZYDIS_MNEMONIC_XORPD,  do_sse_logic },
	{ ZYDIS_MNEMONIC_PAND,   do_sse_logic },
	{ ZYDIS_MNEMONIC_POR,    do_sse_logic },
};

static _Atomic uint64_t emul_completed[ARRAY_LEN(emul_ops)];
static _Atomic uint64_t emul_faults;      /* exceptions injected instead of a completion */

/* Every completion holds this: one domain per lodge-hyp, so it is the
 * domain's.  What it serialises is completions against each other (the
 * read-modify-writes of guest memory below, done by lodge-hyp on the
 * host mapping): the guest's own accesses from other vCPUs are its
 * kernel-mode code running through PVM's emulator or natively, whose
 * locked instructions are locked on the same memory, and every one that
 * PVM cannot do comes here and waits its turn. */
static pthread_mutex_t emul_lock = PTHREAD_MUTEX_INITIALIZER;

static void bytes_text(char *buf, size_t len, const uint8_t *b, size_t n)
{
	size_t i, at = 0;

	buf[0] = 0;
	for (i = 0; i < n && at + 4 < len; i++)
		at += snprintf(buf + at, len - at, "%s%02x", i ? " " : "", b[i]);
}

int emulate_insn(struct emul_cpu *c, const uint8_t *bytes, size_t len, char *why, size_t whylen)
{
	ZydisMachineMode mode = machine_mode(&c->sregs);
	ZydisStackWidth stack = mode == ZYDIS_MACHINE_MODE_LONG_64 ? ZYDIS_STACK_WIDTH_64
				: c->sregs.ss.db ? ZYDIS_STACK_WIDTH_32 : ZYDIS_STACK_WIDTH_16;
	struct emul_insn in = { .bytes = bytes };
	ZydisDecoder dec;
	char hex[64];
	unsigned i;
	int rc;

	c->vector = -1;
	c->set_cr2 = false;
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, mode, stack)) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, bytes, len, &in.d, in.op))) {
		bytes_text(hex, sizeof(hex), bytes, len < 8 ? len : 8);
		snprintf(why, whylen, "an instruction that does not decode (%s) at %#llx", hex,
			 (unsigned long long)c->regs.rip);
		return -ENOTSUP;
	}
	bytes_text(hex, sizeof(hex), bytes, in.d.length);
	for (i = 0; i < ARRAY_LEN(emul_ops); i++)
		if (emul_ops[i].mnemonic == in.d.mnemonic)
			break;
	if (i == ARRAY_LEN(emul_ops)) {
		snprintf(why, whylen, "%s (%s) at %#llx, which Lodge does not complete",
			 ZydisMnemonicGetString(in.d.mnemonic), hex, (unsigned long long)c->regs.rip);
		return -ENOTSUP;
	}
	pthread_mutex_lock(&emul_lock);
	rc = emul_ops[i].complete(c, &in);
	pthread_mutex_unlock(&emul_lock);
	if (rc == -EFAULT)
		rc = 0;       /* the exception it raised is the outcome */
	if (rc) {
		snprintf(why, whylen, "%s (%s) at %#llx, which Lodge could not complete (%s)",
			 ZydisMnemonicGetString(in.d.mnemonic), hex, (unsigned long long)c->regs.rip,
			 rc == -ENOTSUP ? "an operand it does not handle" : strerror(-rc));
		return -ENOTSUP;
	}
	if (c->vector >= 0 && c->vector != VEC_BP && c->vector != VEC_DB)
		atomic_fetch_add(&emul_faults, 1);
	else if (atomic_fetch_add(&emul_completed[i], 1) == 0)
		log_info("completed the first %s (%s) at %#llx for the host's KVM",
			 ZydisMnemonicGetString(in.d.mnemonic), hex, (unsigned long long)c->regs.rip);
	return 0;
}

/* ---- on a vCPU -------------------------------------------------------------- */

static int kvm_translate_gva(void *ctx, uint64_t gva, uint64_t *gpa)
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

static int kvm_get_fpu_state(void *ctx, struct kvm_fpu *fpu)
{
	return ioctl(((struct vcpu *)ctx)->fd, KVM_GET_FPU, fpu) < 0 ? -errno : 0;
}

static int kvm_set_fpu_state(void *ctx, const struct kvm_fpu *fpu)
{
	return ioctl(((struct vcpu *)ctx)->fd, KVM_SET_FPU, fpu) < 0 ? -errno : 0;
}

static int kvm_get_xcr0(void *ctx, uint64_t *xcr0)
{
	struct kvm_xcrs x;
	unsigned i;

	memset(&x, 0, sizeof(x));
	if (ioctl(((struct vcpu *)ctx)->fd, KVM_GET_XCRS, &x) < 0)
		return -errno;
	for (i = 0; i < x.nr_xcrs && i < KVM_MAX_XCRS; i++)
		if (x.xcrs[i].xcr == 0) {
			*xcr0 = x.xcrs[i].value;
			return 0;
		}
	return -ENOTSUP;
}

static int kvm_set_xcr0(void *ctx, uint64_t xcr0)
{
	struct kvm_xcrs x;

	memset(&x, 0, sizeof(x));
	x.nr_xcrs = 1;
	x.xcrs[0].xcr = 0;
	x.xcrs[0].value = xcr0;
	return ioctl(((struct vcpu *)ctx)->fd, KVM_SET_XCRS, &x) < 0 ? -errno : 0;
}

static int kvm_get_xsave_state(void *ctx, struct kvm_xsave *xs)
{
	return ioctl(((struct vcpu *)ctx)->fd, KVM_GET_XSAVE, xs) < 0 ? -errno : 0;
}

static int kvm_set_xsave_state(void *ctx, const struct kvm_xsave *xs)
{
	return ioctl(((struct vcpu *)ctx)->fd, KVM_SET_XSAVE, xs) < 0 ? -errno : 0;
}

static const struct emul_env kvm_env = {
	.translate = kvm_translate_gva,
	.get_fpu = kvm_get_fpu_state, .set_fpu = kvm_set_fpu_state,
	.get_xcr0 = kvm_get_xcr0, .set_xcr0 = kvm_set_xcr0,
	.get_xsave = kvm_get_xsave_state, .set_xsave = kvm_set_xsave_state,
};

/* The instruction's bytes at CS:RIP, up to EMUL_INSN_MAX, through the
 * guest's page tables a page at a time: those of a second page only as
 * far as it is mapped (the decoder says whether it needed them). */
static int fetch_insn(struct emul_cpu *c, uint8_t *buf, size_t *len)
{
	uint64_t at = c->regs.rip, gpa;
	size_t got = 0;

	if (machine_mode(&c->sregs) != ZYDIS_MACHINE_MODE_LONG_64)
		at = (uint32_t)(at + c->sregs.cs.base);
	while (got < EMUL_INSN_MAX) {
		size_t in_page = GUEST_PAGE_SIZE - (at & (GUEST_PAGE_SIZE - 1));
		size_t chunk = EMUL_INSN_MAX - got < in_page ? EMUL_INSN_MAX - got : in_page;

		if (c->env->translate(c->ctx, at, &gpa) || gpa_read(c->mem, gpa, buf + got, chunk)) {
			if (!got) {
				raise_pf(c, at, PF_FETCH);
				return -EFAULT;
			}
			break;
		}
		got += chunk;
		at += chunk;
	}
	*len = got;
	return 0;
}

static int inject(struct vcpu *v, struct emul_cpu *c)
{
	struct kvm_vcpu_events ev;

	if (c->set_cr2) {
		c->sregs.cr2 = c->cr2;
		if (ioctl(v->fd, KVM_SET_SREGS, &c->sregs) < 0)
			return -errno;
	}
	if (ioctl(v->fd, KVM_GET_VCPU_EVENTS, &ev) < 0)
		return -errno;
	ev.exception.injected = 1;
	ev.exception.nr = c->vector;
	ev.exception.has_error_code = c->has_error_code;
	ev.exception.error_code = c->error_code;
	if (ioctl(v->fd, KVM_SET_VCPU_EVENTS, &ev) < 0)
		return -errno;
	return 0;
}

int emulate_vcpu(struct vcpu *v, char *why, size_t whylen)
{
	struct emul_cpu c = { .mem = &v->dom->mem, .env = &kvm_env, .ctx = v, .vector = -1 };
	uint8_t insn[EMUL_INSN_MAX];
	char text[200];
	size_t len = 0;
	int rc;

	if (!emulate_host_is_pvm() || v->run->internal.suberror != KVM_INTERNAL_ERROR_EMULATION) {
		snprintf(why, whylen, "KVM internal error (suberror %u)", v->run->internal.suberror);
		return -ENOTSUP;
	}
	if (ioctl(v->fd, KVM_GET_REGS, &c.regs) < 0 || ioctl(v->fd, KVM_GET_SREGS, &c.sregs) < 0) {
		snprintf(why, whylen, "KVM internal error: cannot read the vCPU after an emulation failure: %s",
			 strerror(errno));
		return -errno;
	}
	rc = fetch_insn(&c, insn, &len);
	if (!rc && (rc = emulate_insn(&c, insn, len, text, sizeof(text)))) {
		snprintf(why, whylen, "KVM internal error: %s", text);
		return rc;
	}
	rc = 0;
	if (c.fpu_dirty)
		rc = kvm_set_fpu_state(v, &c.fpu);
	if (!rc && c.xsave_dirty)
		rc = kvm_set_xsave_state(v, &c.xsave);
	if (!rc && ioctl(v->fd, KVM_SET_REGS, &c.regs) < 0)
		rc = -errno;
	if (!rc && c.vector >= 0)
		rc = inject(v, &c);
	if (rc)
		snprintf(why, whylen, "KVM internal error: cannot complete the instruction at %#llx: %s",
			 (unsigned long long)c.regs.rip, strerror(-rc));
	return rc;
}

/* ---- the host, and the counts ---------------------------------------------- */

bool emulate_host_is_pvm(void)
{
	static int pvm = -1;

	if (pvm < 0)
		pvm = access("/sys/module/kvm_pvm", F_OK) == 0;
	return pvm;
}

void emulate_counts_text(char *buf, size_t len)
{
	size_t at = 0;
	unsigned i;
	uint64_t n;

	buf[0] = 0;
	for (i = 0; i < ARRAY_LEN(emul_ops) && at < len; i++)
		if ((n = atomic_load(&emul_completed[i])))
			at += snprintf(buf + at, len - at, "%s%s %llu", at ? ", " : "",
				       ZydisMnemonicGetString(emul_ops[i].mnemonic), (unsigned long long)n);
	if (at < len && (n = atomic_load(&emul_faults)))
		at += snprintf(buf + at, len - at, "%sexceptions injected %llu", at ? ", " : "",
			       (unsigned long long)n);
	if (!at)
		snprintf(buf, len, "none");
}

void emulate_log_counts(void)
{
	char text[1024];

	emulate_counts_text(text, sizeof(text));
	if (strcmp(text, "none"))
		log_info("instructions completed for the host's KVM: %s", text);
}
