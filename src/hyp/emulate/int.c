/* Completing traps (int3, int1, into), the bit counts (popcnt, lzcnt,
 * tzcnt), clac/stac and lock cmpxchg8b/16b (insn.h). */
#include "insn.h"
#include "mem.h"

#include <stdatomic.h>

/* ---- the completions ------------------------------------------------------- */
/* Each returns 0 (completed, or an exception raised on c) or -ENOTSUP. */

/* int3, int1 (icebp): traps, RIP past the instruction. */
int complete_int3(struct emul_cpu *c, const struct emul_insn *in)
{
	emul_next(c, in);
	emul_raise(c, VEC_BP, false, 0);
	return 0;
}

int complete_int1(struct emul_cpu *c, const struct emul_insn *in)
{
	emul_next(c, in);
	emul_raise(c, VEC_DB, false, 0);
	return 0;
}

int complete_into(struct emul_cpu *c, const struct emul_insn *in)
{
	emul_next(c, in);
	if (c->regs.rflags & RFLAGS_OF)
		emul_raise(c, VEC_OF, false, 0);
	return 0;
}

/* popcnt, lzcnt, tzcnt: count bits of the source into the destination. */
static int bit_count(struct emul_cpu *c, const struct emul_insn *in, ZydisMnemonic m)
{
	unsigned bits = in->op[1].size;
	uint64_t src, n;
	int rc;

	if ((rc = emul_operand_read(c, in, &in->op[1], &src)))
		return rc == -EFAULT ? 0 : rc;
	if (bits < 64)
		src &= (1ull << bits) - 1;
	switch (m) {
	case ZYDIS_MNEMONIC_POPCNT:
		n = __builtin_popcountll(src);
		/* ZF: the source was zero; CF OF SF AF PF cleared. */
		emul_set_flags(c, RFLAGS_ARITH, src ? 0 : RFLAGS_ZF);
		break;
	case ZYDIS_MNEMONIC_LZCNT:
		n = src ? (uint64_t)(__builtin_clzll(src) - (64 - bits)) : bits;
		emul_set_flags(c, RFLAGS_CF | RFLAGS_ZF, (src ? 0 : RFLAGS_CF) | (n ? 0 : RFLAGS_ZF));
		break;
	default:   /* TZCNT */
		n = src ? (uint64_t)__builtin_ctzll(src) : bits;
		emul_set_flags(c, RFLAGS_CF | RFLAGS_ZF, (src ? 0 : RFLAGS_CF) | (n ? 0 : RFLAGS_ZF));
		break;
	}
	if ((rc = emul_reg_write(c, in->op[0].reg.value, n)))
		return rc;
	emul_next(c, in);
	return 0;
}

int complete_popcnt(struct emul_cpu *c, const struct emul_insn *in) { return bit_count(c, in, ZYDIS_MNEMONIC_POPCNT); }
int complete_lzcnt(struct emul_cpu *c, const struct emul_insn *in)  { return bit_count(c, in, ZYDIS_MNEMONIC_LZCNT); }
int complete_tzcnt(struct emul_cpu *c, const struct emul_insn *in)  { return bit_count(c, in, ZYDIS_MNEMONIC_TZCNT); }

/* clac, stac: RFLAGS.AC, which SMAP reads; kernel mode only. */
static int set_ac(struct emul_cpu *c, const struct emul_insn *in, bool on)
{
	if (emul_cpl(c)) {
		emul_raise(c, VEC_UD, false, 0);
		return 0;
	}
	emul_set_flags(c, RFLAGS_AC, on ? RFLAGS_AC : 0);
	emul_next(c, in);
	return 0;
}

int complete_clac(struct emul_cpu *c, const struct emul_insn *in) { return set_ac(c, in, false); }
int complete_stac(struct emul_cpu *c, const struct emul_insn *in) { return set_ac(c, in, true); }

/* cmpxchg8b, cmpxchg16b: compare EDX:EAX (RDX:RAX) with the operand; if
 * equal, ZF and the operand = ECX:EBX (RCX:RBX), else the operand into
 * EDX:EAX.  Atomic on the host's mapping of the guest's page, so a vCPU
 * running the guest's own code on it meanwhile sees it whole. */
int complete_cmpxchg_wide(struct emul_cpu *c, const struct emul_insn *in)
{
	const ZydisDecodedOperand *op = &in->op[0];
	bool wide = op->size == 128;
	unsigned half = wide ? 64 : 32;
	uint64_t mask = wide ? ~0ull : 0xffffffffull, addr;
	struct emul_span s;
	int rc;

	if ((rc = emul_operand_address(c, in, op, &addr)))
		return rc;
	if (wide && (addr & 15)) {
		emul_raise(c, VEC_GP, true, 0);
		return 0;
	}
	/* The CPU writes the operand back even when unequal: it must be
	 * writable either way. */
	if ((rc = emul_span_map(c, addr, op->size / 8, true, 0, &s)))
		return rc;
	if (s.n != 1)
		return -ENOTSUP;      /* a cmpxchg8b across two pages */
	guest_mem_mark_dirty(c->mem, s.part[0], s.len[0]);
	if (wide) {
		unsigned __int128 expect = ((unsigned __int128)c->regs.rdx << 64) | c->regs.rax;
		unsigned __int128 want = ((unsigned __int128)c->regs.rcx << 64) | c->regs.rbx;
		unsigned __int128 old = __sync_val_compare_and_swap((unsigned __int128 *)(void *)s.part[0],
								   expect, want);

		emul_set_flags(c, RFLAGS_ZF, old == expect ? RFLAGS_ZF : 0);
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
			emul_set_flags(c, RFLAGS_ZF, RFLAGS_ZF);
		} else {
			emul_set_flags(c, RFLAGS_ZF, 0);
			c->regs.rax = old & mask;
			c->regs.rdx = old >> half;
		}
	}
	emul_next(c, in);
	return 0;
}
