/* Completing fwait and the x87 control instructions (insn.h). */
#include "insn.h"

/* ---- x87 control: KVM_GET/SET_FPU --------------------------------------- */

/* fwait: the pending x87 exception, if any, is delivered here (#MF). */
int complete_fwait(struct emul_cpu *c, const struct emul_insn *in)
{
	int rc;

	if ((rc = emul_fpu_load(c)))
		return rc;
	if (c->fpu.fsw & FSW_ES) {
		emul_raise(c, VEC_MF, false, 0);
		return 0;
	}
	emul_next(c, in);
	return 0;
}



static int fpu_store16(struct emul_cpu *c, const struct emul_insn *in, uint16_t val)
{
	const ZydisDecodedOperand *op = &in->op[0];
	int rc;

	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER)     /* fnstsw ax */
		rc = emul_reg_write(c, op->reg.value, val);
	else
		rc = emul_operand_write(c, in, op, val);
	if (rc)
		return rc;
	emul_next(c, in);
	return 0;
}

/* The operand an x87 control instruction names: the first visible one. */
int complete_fnstsw(struct emul_cpu *c, const struct emul_insn *in)
{
	int rc = emul_fpu_load(c);

	return rc ? rc : fpu_store16(c, in, c->fpu.fsw);
}

int complete_fnstcw(struct emul_cpu *c, const struct emul_insn *in)
{
	int rc = emul_fpu_load(c);

	return rc ? rc : fpu_store16(c, in, c->fpu.fcw);
}

int complete_fldcw(struct emul_cpu *c, const struct emul_insn *in)
{
	uint64_t cw;
	int rc;

	if ((rc = emul_fpu_load(c)) || (rc = emul_operand_read(c, in, &in->op[0], &cw)))
		return rc;
	c->fpu.fcw = (uint16_t)cw;
	/* Unmasking a pending exception flag makes it pending: ES and B follow. */
	if (c->fpu.fsw & 0x3f & ~c->fpu.fcw)
		c->fpu.fsw |= FSW_ES | FSW_B;
	else
		c->fpu.fsw &= ~(FSW_ES | FSW_B);
	c->fpu_dirty = true;
	emul_next(c, in);
	return 0;
}

int complete_fninit(struct emul_cpu *c, const struct emul_insn *in)
{
	int rc;

	if ((rc = emul_fpu_load(c)))
		return rc;
	c->fpu.fcw = 0x037f;
	c->fpu.fsw = 0;
	c->fpu.ftwx = 0;           /* abridged tag word: every register empty */
	c->fpu.last_opcode = 0;
	c->fpu.last_ip = 0;
	c->fpu.last_dp = 0;
	c->fpu_dirty = true;
	emul_next(c, in);
	return 0;
}

int complete_fnclex(struct emul_cpu *c, const struct emul_insn *in)
{
	int rc;

	if ((rc = emul_fpu_load(c)))
		return rc;
	c->fpu.fsw &= ~(FSW_EXCEPTIONS | FSW_B);
	c->fpu_dirty = true;
	emul_next(c, in);
	return 0;
}
