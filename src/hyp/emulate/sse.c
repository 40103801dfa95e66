/* Completing SSE moves and logic on xmm registers (insn.h). */
#include "insn.h"

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
		emul_raise(c, VEC_UD, false, 0);
		return -EFAULT;
	}
	if (c->sregs.cr0 & CR0_TS) {
		emul_raise(c, VEC_NM, false, 0);
		return -EFAULT;
	}
	return emul_fpu_load(c);
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
		if ((rc = emul_reg_read(c, op->reg.value, &g)))
			return rc;
		memcpy(v, &g, op->size / 8);
		return 0;
	}
	if ((rc = emul_operand_address(c, in, op, &addr)))
		return rc;
	if (aligned && (addr & 15)) {
		emul_raise(c, VEC_GP, true, 0);
		return -EFAULT;
	}
	return emul_read(c, addr, v, op->size / 8);
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
		return emul_reg_write(c, op->reg.value, g);
	}
	if ((rc = emul_operand_address(c, in, op, &addr)))
		return rc;
	if (aligned && (addr & 15)) {
		emul_raise(c, VEC_GP, true, 0);
		return -EFAULT;
	}
	return emul_write(c, addr, v, op->size / 8);
}

static bool sse_aligned(ZydisMnemonic m)
{
	return m == ZYDIS_MNEMONIC_MOVDQA || m == ZYDIS_MNEMONIC_MOVAPS || m == ZYDIS_MNEMONIC_MOVAPD ||
	       m == ZYDIS_MNEMONIC_PXOR || m == ZYDIS_MNEMONIC_XORPS || m == ZYDIS_MNEMONIC_XORPD ||
	       m == ZYDIS_MNEMONIC_PAND || m == ZYDIS_MNEMONIC_POR;
}

/* movdqa/movdqu/movaps/movups/movapd/movupd, movd, movq. */
int complete_sse_move(struct emul_cpu *c, const struct emul_insn *in)
{
	bool aligned = sse_aligned(in->d.mnemonic);
	uint8_t v[16];
	int rc;

	if (in->d.attributes & ZYDIS_ATTRIB_HAS_VEX || in->d.attributes & ZYDIS_ATTRIB_HAS_EVEX)
		return -ENOTSUP;
	if ((rc = sse_usable(c)) || (rc = sse_read(c, in, &in->op[1], aligned, v)) ||
	    (rc = sse_write(c, in, &in->op[0], aligned, v, in->op[1].size < 128)))
		return rc;
	emul_next(c, in);
	return 0;
}

/* pxor/xorps/xorpd, pand, por: xmm = xmm OP xmm/m128. */
int complete_sse_logic(struct emul_cpu *c, const struct emul_insn *in)
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
	emul_next(c, in);
	return 0;
}
