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

static const struct emul_env kvm_env = {
	.translate = kvm_translate_gva,
	.get_fpu = kvm_get_fpu_state, .set_fpu = kvm_set_fpu_state,
	.get_xcr0 = kvm_get_xcr0, .set_xcr0 = kvm_set_xcr0,
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
	size_t len = 0;
	int rc;

	if (!emulate_host_is_pvm() || v->run->internal.suberror != KVM_INTERNAL_ERROR_EMULATION) {
		snprintf(why, whylen, "KVM internal error (suberror %u)", v->run->internal.suberror);
		return -ENOTSUP;
	}
	if (ioctl(v->fd, KVM_GET_REGS, &c.regs) < 0 || ioctl(v->fd, KVM_GET_SREGS, &c.sregs) < 0) {
		snprintf(why, whylen, "KVM internal error (suberror 1): cannot read the vCPU: %s",
			 strerror(errno));
		return -errno;
	}
	rc = fetch_insn(&c, insn, &len);
	if (!rc && (rc = emulate_insn(&c, insn, len, why, whylen)))
		return rc;
	rc = 0;
	if (c.fpu_dirty && (rc = kvm_set_fpu_state(v, &c.fpu)) == 0)
		c.fpu_dirty = false;
	if (!rc && ioctl(v->fd, KVM_SET_REGS, &c.regs) < 0)
		rc = -errno;
	if (!rc && c.vector >= 0)
		rc = inject(v, &c);
	if (rc)
		snprintf(why, whylen, "KVM internal error (suberror 1): cannot complete at %#llx: %s",
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
