/* Completing xgetbv/xsetbv, fxsave/fxrstor and the XSAVE family (insn.h). */
#include "insn.h"

/* ---- XCR0, FXSAVE and the XSAVE family: KVM_GET/SET_XCRS, _FPU, _XSAVE --- */

static int kernel_only(struct emul_cpu *c)
{
	if (emul_cpl(c)) {
		emul_raise(c, VEC_GP, true, 0);
		return -EFAULT;
	}
	return 0;
}

int complete_xgetbv(struct emul_cpu *c, const struct emul_insn *in)
{
	uint64_t xcr0;
	int rc;

	if ((uint32_t)c->regs.rcx != 0) {
		emul_raise(c, VEC_GP, true, 0);   /* XCR0 is the only one KVM gives */
		return 0;
	}
	if ((rc = c->env->get_xcr0(c->ctx, &xcr0)))
		return rc;
	c->regs.rax = (uint32_t)xcr0;
	c->regs.rdx = xcr0 >> 32;
	emul_next(c, in);
	return 0;
}

/* KVM checks the value as the CPU would (x87 set, AVX only with SSE, ...):
 * what it refuses is the #GP the instruction raises. */
int complete_xsetbv(struct emul_cpu *c, const struct emul_insn *in)
{
	uint64_t xcr0 = ((c->regs.rdx & 0xffffffffull) << 32) | (uint32_t)c->regs.rax;
	int rc;

	if ((rc = kernel_only(c)))
		return rc;
	if ((uint32_t)c->regs.rcx != 0 || c->env->set_xcr0(c->ctx, xcr0)) {
		emul_raise(c, VEC_GP, true, 0);
		return 0;
	}
	emul_next(c, in);
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

	if ((rc = emul_operand_address(c, in, &in->op[0], addr)))
		return rc;
	if (*addr & (align - 1)) {
		emul_raise(c, VEC_GP, true, 0);
		return -EFAULT;
	}
	return 0;
}

int complete_fxsave(struct emul_cpu *c, const struct emul_insn *in)
{
	uint8_t fx[FX_SIZE];
	uint64_t addr;
	int rc;

	if ((rc = emul_fpu_load(c)) || (rc = mem_operand_aligned(c, in, 16, &addr)))
		return rc;
	fx_from_fpu(fx, &c->fpu);
	if ((rc = emul_write(c, addr, fx, sizeof(fx))))
		return rc;
	emul_next(c, in);
	return 0;
}

int complete_fxrstor(struct emul_cpu *c, const struct emul_insn *in)
{
	uint8_t fx[FX_SIZE];
	uint32_t mxcsr;
	uint64_t addr;
	int rc;

	if ((rc = emul_fpu_load(c)) || (rc = mem_operand_aligned(c, in, 16, &addr)) ||
	    (rc = emul_read(c, addr, fx, sizeof(fx))))
		return rc;
	memcpy(&mxcsr, fx + FX_MXCSR, 4);
	if (mxcsr & ~host_mxcsr_mask()) {
		emul_raise(c, VEC_GP, true, 0);
		return 0;
	}
	fx_to_fpu(&c->fpu, fx);
	c->fpu_dirty = true;
	emul_next(c, in);
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

static int complete_xsave_any(struct emul_cpu *c, const struct emul_insn *in, bool compacted)
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
	if ((rc = emul_read(c, addr, area, end)))
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
	if ((rc = emul_write(c, addr, area, end)))
		return rc;
	emul_next(c, in);
	return 0;
}

int complete_xsave(struct emul_cpu *c, const struct emul_insn *in) { return complete_xsave_any(c, in, false); }
int complete_xsavec(struct emul_cpu *c, const struct emul_insn *in) { return complete_xsave_any(c, in, true); }

/* xrstor: components in RFBM come from memory where its XSTATE_BV has
 * them, else go to their initial state; either format. */
int complete_xrstor(struct emul_cpu *c, const struct emul_insn *in)
{
	uint8_t *kx = (uint8_t *)c->xsave.region;
	uint8_t hdr[64], area[XSAVE_AREA_MAX];
	uint64_t addr, rfbm, bv, comp_bv, kbv;
	uint32_t end = XSAVE_EXT, mxcsr;
	bool compacted;
	unsigned i;
	int rc;

	if ((rc = xsave_load(c)) || (rc = xsave_rfbm(c, &rfbm)) || (rc = mem_operand_aligned(c, in, 64, &addr)) ||
	    (rc = emul_read(c, addr + XSAVE_HEADER, hdr, sizeof(hdr))))
		return rc;
	memcpy(&bv, hdr, 8);
	memcpy(&comp_bv, hdr + 8, 8);
	compacted = comp_bv >> 63;
	if ((!compacted && comp_bv) || (compacted && (bv & ~comp_bv & ~(1ull << 63)))) {
		emul_raise(c, VEC_GP, true, 0);
		return 0;
	}
	if ((rc = xsave_extent(rfbm, comp_bv, compacted, &end)))
		return rc;
	if ((rc = emul_read(c, addr, area, end)))
		return rc;
	memcpy(&mxcsr, area + FX_MXCSR, 4);
	if ((rfbm & 6) && (mxcsr & ~host_mxcsr_mask())) {
		emul_raise(c, VEC_GP, true, 0);
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
	emul_next(c, in);
	return 0;
}
