/* Inside the completion of what the host's KVM cannot emulate (emulate.h):
 * what the files of src/hyp/emulate/ share.  operand.c reaches guest
 * memory, registers and operands as the instruction sees them; int.c,
 * x87.c, xsave.c and sse.c complete their instructions; emulate.c decodes,
 * finds the completion in its table and runs it on a vCPU. */
#ifndef LODGE_EMULATE_INSN_H
#define LODGE_EMULATE_INSN_H

#include "emulate.h"

#include <Zydis/Zydis.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

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

/* The linear address range [gva, gva+len) as host pointers, one per page
 * it touches (at most two: no operand here is larger than a page), or a
 * #PF raised (-EFAULT) or -ENOTSUP (not RAM: an MMIO operand). */
struct emul_span {
	uint8_t *part[2];
	size_t len[2];
	unsigned n;
};

/* host.c: guest-virtual to guest-physical on a vCPU (ctx), KVM_TRANSLATE */
int kvm_translate_gva(void *ctx, uint64_t gva, uint64_t *gpa);

/* operand.c: guest memory, registers and operands */
unsigned emul_cpl(const struct emul_cpu *c);
void emul_raise(struct emul_cpu *c, int vector, bool has_error, uint32_t error);
void emul_raise_pf(struct emul_cpu *c, uint64_t gva, uint32_t error);
int emul_span_map(struct emul_cpu *c, uint64_t gva, size_t len, bool write, uint32_t fetch,
		    struct emul_span *s);
int emul_read(struct emul_cpu *c, uint64_t gva, void *dst, size_t len);
int emul_write(struct emul_cpu *c, uint64_t gva, const void *src, size_t len);
ZydisMachineMode emul_machine_mode(const struct kvm_sregs *s);
int emul_reg_read(struct emul_cpu *c, ZydisRegister reg, uint64_t *val);
int emul_reg_write(struct emul_cpu *c, ZydisRegister reg, uint64_t val);
int emul_operand_address(struct emul_cpu *c, const struct emul_insn *in, const ZydisDecodedOperand *op,
			   uint64_t *linear);
int emul_operand_read(struct emul_cpu *c, const struct emul_insn *in, const ZydisDecodedOperand *op,
			uint64_t *val);
int emul_operand_write(struct emul_cpu *c, const struct emul_insn *in, const ZydisDecodedOperand *op,
			 uint64_t val);
void emul_next(struct emul_cpu *c, const struct emul_insn *in);
void emul_set_flags(struct emul_cpu *c, uint64_t mask, uint64_t set);
int emul_fpu_load(struct emul_cpu *c);

/* int.c: traps, bit counts, AC, cmpxchg8b/16b */
int complete_int3(struct emul_cpu *c, const struct emul_insn *in);
int complete_int1(struct emul_cpu *c, const struct emul_insn *in);
int complete_into(struct emul_cpu *c, const struct emul_insn *in);
int complete_cmpxchg_wide(struct emul_cpu *c, const struct emul_insn *in);
int complete_popcnt(struct emul_cpu *c, const struct emul_insn *in);
int complete_lzcnt(struct emul_cpu *c, const struct emul_insn *in);
int complete_tzcnt(struct emul_cpu *c, const struct emul_insn *in);
int complete_clac(struct emul_cpu *c, const struct emul_insn *in);
int complete_stac(struct emul_cpu *c, const struct emul_insn *in);

/* x87.c: fwait and the x87 control instructions */
int complete_fwait(struct emul_cpu *c, const struct emul_insn *in);
int complete_fnstsw(struct emul_cpu *c, const struct emul_insn *in);
int complete_fnstcw(struct emul_cpu *c, const struct emul_insn *in);
int complete_fldcw(struct emul_cpu *c, const struct emul_insn *in);
int complete_fninit(struct emul_cpu *c, const struct emul_insn *in);
int complete_fnclex(struct emul_cpu *c, const struct emul_insn *in);

/* xsave.c: XCR0, FXSAVE and the XSAVE family */
int complete_xgetbv(struct emul_cpu *c, const struct emul_insn *in);
int complete_xsetbv(struct emul_cpu *c, const struct emul_insn *in);
int complete_fxsave(struct emul_cpu *c, const struct emul_insn *in);
int complete_fxrstor(struct emul_cpu *c, const struct emul_insn *in);
int complete_xrstor(struct emul_cpu *c, const struct emul_insn *in);
int complete_xsave(struct emul_cpu *c, const struct emul_insn *in);
int complete_xsavec(struct emul_cpu *c, const struct emul_insn *in);

/* sse.c: SSE moves and logic */
int complete_sse_move(struct emul_cpu *c, const struct emul_insn *in);
int complete_sse_logic(struct emul_cpu *c, const struct emul_insn *in);

#endif
