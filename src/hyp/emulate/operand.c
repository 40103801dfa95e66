/* Guest memory, registers and operands, as an instruction being completed
 * sees them (insn.h). */
#include "insn.h"
#include "mem.h"

/* ---- guest memory, as the instruction sees it ------------------------------ */

unsigned emul_cpl(const struct emul_cpu *c)
{
	return c->sregs.cs.selector & 3;
}

void emul_raise(struct emul_cpu *c, int vector, bool has_error, uint32_t error)
{
	c->vector = vector;
	c->has_error_code = has_error;
	c->error_code = error;
}

void emul_raise_pf(struct emul_cpu *c, uint64_t gva, uint32_t error)
{
	emul_raise(c, VEC_PF, true, error | (emul_cpl(c) == 3 ? PF_USER : 0));
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

	if (!(c->sregs.cr0 & CR0_PG) || (emul_cpl(c) < 3 && !(c->sregs.cr0 & CR0_WP)))
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


int emul_span_map(struct emul_cpu *c, uint64_t gva, size_t len, bool write, uint32_t fetch,
		    struct emul_span *s)
{
	s->n = 0;
	while (len) {
		size_t in_page = GUEST_PAGE_SIZE - (gva & (GUEST_PAGE_SIZE - 1));
		size_t chunk = len < in_page ? len : in_page;
		uint64_t gpa;

		if (s->n == ARRAY_LEN(s->part))
			return -ENOTSUP;
		if (c->env->translate(c->ctx, gva, &gpa)) {
			emul_raise_pf(c, gva, (write ? PF_WRITE : 0) | fetch);
			return -EFAULT;
		}
		if (write && !page_writable(c, gva)) {
			emul_raise_pf(c, gva, PF_PRESENT | PF_WRITE);
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

int emul_read(struct emul_cpu *c, uint64_t gva, void *dst, size_t len)
{
	struct emul_span s;
	unsigned i;
	int rc;

	if ((rc = emul_span_map(c, gva, len, false, 0, &s)))
		return rc;
	for (i = 0; i < s.n; i++) {
		memcpy(dst, s.part[i], s.len[i]);
		dst = (uint8_t *)dst + s.len[i];
	}
	return 0;
}

/* Every page is checked before the first byte is written: a fault on the
 * second page leaves the first as it was. */
int emul_write(struct emul_cpu *c, uint64_t gva, const void *src, size_t len)
{
	struct emul_span s;
	unsigned i;
	int rc;

	if ((rc = emul_span_map(c, gva, len, true, 0, &s)))
		return rc;
	for (i = 0; i < s.n; i++) {
		guest_mem_mark_dirty(c->mem, s.part[i], s.len[i]);
		memcpy(s.part[i], src, s.len[i]);
		src = (const uint8_t *)src + s.len[i];
	}
	return 0;
}

/* ---- registers and operands ----------------------------------------------- */

ZydisMachineMode emul_machine_mode(const struct kvm_sregs *s)
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
	return ZydisRegisterGetWidth(emul_machine_mode(&c->sregs), reg);
}

int emul_reg_read(struct emul_cpu *c, ZydisRegister reg, uint64_t *val)
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
int emul_reg_write(struct emul_cpu *c, ZydisRegister reg, uint64_t val)
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
	bool long64 = emul_machine_mode(&c->sregs) == ZYDIS_MACHINE_MODE_LONG_64;

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
int emul_operand_address(struct emul_cpu *c, const struct emul_insn *in, const ZydisDecodedOperand *op,
			   uint64_t *linear)
{
	ZydisRegisterContext ctx;
	uint64_t ea, v;

	if (op->type != ZYDIS_OPERAND_TYPE_MEMORY)
		return -ENOTSUP;
	memset(&ctx, 0, sizeof(ctx));
	if (op->mem.base != ZYDIS_REGISTER_NONE) {
		if (emul_reg_read(c, op->mem.base, &v))
			return -ENOTSUP;
		ctx.values[op->mem.base] = v;
	}
	if (op->mem.index != ZYDIS_REGISTER_NONE) {
		if (emul_reg_read(c, op->mem.index, &v))
			return -ENOTSUP;
		ctx.values[op->mem.index] = v;
	}
	if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddressEx(&in->d, op, c->regs.rip, &ctx, &ea)))
		return -ENOTSUP;
	if (in->d.address_width < 64)
		ea &= (1ull << in->d.address_width) - 1;
	*linear = ea + segment_base(c, op->mem.segment);
	if (emul_machine_mode(&c->sregs) != ZYDIS_MACHINE_MODE_LONG_64)
		*linear = (uint32_t)*linear;
	return 0;
}

/* A register or memory operand's value, op->size bits (at most 64). */
int emul_operand_read(struct emul_cpu *c, const struct emul_insn *in, const ZydisDecodedOperand *op,
			uint64_t *val)
{
	uint64_t addr;
	int rc;

	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER)
		return emul_reg_read(c, op->reg.value, val);
	if ((rc = emul_operand_address(c, in, op, &addr)))
		return rc;
	*val = 0;
	return emul_read(c, addr, val, op->size / 8);
}

int emul_operand_write(struct emul_cpu *c, const struct emul_insn *in, const ZydisDecodedOperand *op,
			 uint64_t val)
{
	uint64_t addr;
	int rc;

	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER)
		return emul_reg_write(c, op->reg.value, val);
	if ((rc = emul_operand_address(c, in, op, &addr)))
		return rc;
	return emul_write(c, addr, &val, op->size / 8);
}

void emul_next(struct emul_cpu *c, const struct emul_insn *in)
{
	c->regs.rip += in->d.length;
	if (emul_machine_mode(&c->sregs) != ZYDIS_MACHINE_MODE_LONG_64)
		c->regs.rip = (uint32_t)c->regs.rip;
}

void emul_set_flags(struct emul_cpu *c, uint64_t mask, uint64_t set)
{
	c->regs.rflags = (c->regs.rflags & ~mask) | (set & mask);
}

int emul_fpu_load(struct emul_cpu *c)
{
	int rc;

	if (c->fpu_loaded)
		return 0;
	if ((rc = c->env->get_fpu(c->ctx, &c->fpu)))
		return rc;
	c->fpu_loaded = true;
	return 0;
}
