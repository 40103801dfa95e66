/* Completing what the host's KVM cannot emulate (emulate.h): decode the
 * instruction, find its completion in the table, run it under the domain's
 * lock, count it; on a vCPU, fetch it through the guest's page tables and
 * inject what it raised. */
#include "insn.h"
#include "domain.h"
#include "log.h"
#include "mem.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* The table: each mnemonic Lodge completes, and how.  Counted by its
 * place here. */
static const struct emul_op {
	ZydisMnemonic mnemonic;
	int (*complete)(struct emul_cpu *c, const struct emul_insn *in);
} emul_ops[] = {
	{ ZYDIS_MNEMONIC_INT3,   complete_int3 },
	{ ZYDIS_MNEMONIC_INT1,   complete_int1 },
	{ ZYDIS_MNEMONIC_INTO,   complete_into },
	{ ZYDIS_MNEMONIC_POPCNT, complete_popcnt },
	{ ZYDIS_MNEMONIC_LZCNT,  complete_lzcnt },
	{ ZYDIS_MNEMONIC_TZCNT,  complete_tzcnt },
	{ ZYDIS_MNEMONIC_CLAC,   complete_clac },
	{ ZYDIS_MNEMONIC_STAC,   complete_stac },
	{ ZYDIS_MNEMONIC_FWAIT,  complete_fwait },
	{ ZYDIS_MNEMONIC_CMPXCHG8B,  complete_cmpxchg_wide },
	{ ZYDIS_MNEMONIC_CMPXCHG16B, complete_cmpxchg_wide },
	{ ZYDIS_MNEMONIC_FNINIT, complete_fninit },
	{ ZYDIS_MNEMONIC_FNCLEX, complete_fnclex },
	{ ZYDIS_MNEMONIC_FNSTSW, complete_fnstsw },
	{ ZYDIS_MNEMONIC_FNSTCW, complete_fnstcw },
	{ ZYDIS_MNEMONIC_FLDCW,  complete_fldcw },
	{ ZYDIS_MNEMONIC_XGETBV, complete_xgetbv },
	{ ZYDIS_MNEMONIC_XSETBV, complete_xsetbv },
	{ ZYDIS_MNEMONIC_FXSAVE,   complete_fxsave },
	{ ZYDIS_MNEMONIC_FXSAVE64, complete_fxsave },
	{ ZYDIS_MNEMONIC_FXRSTOR,   complete_fxrstor },
	{ ZYDIS_MNEMONIC_FXRSTOR64, complete_fxrstor },
	{ ZYDIS_MNEMONIC_XSAVE,     complete_xsave },
	{ ZYDIS_MNEMONIC_XSAVE64,   complete_xsave },
	{ ZYDIS_MNEMONIC_XSAVEOPT,  complete_xsave },
	{ ZYDIS_MNEMONIC_XSAVEOPT64, complete_xsave },
	{ ZYDIS_MNEMONIC_XSAVEC,    complete_xsavec },
	{ ZYDIS_MNEMONIC_XSAVEC64,  complete_xsavec },
	{ ZYDIS_MNEMONIC_XRSTOR,    complete_xrstor },
	{ ZYDIS_MNEMONIC_XRSTOR64,  complete_xrstor },
	{ ZYDIS_MNEMONIC_MOVDQA, complete_sse_move },
	{ ZYDIS_MNEMONIC_MOVDQU, complete_sse_move },
	{ ZYDIS_MNEMONIC_MOVAPS, complete_sse_move },
	{ ZYDIS_MNEMONIC_MOVUPS, complete_sse_move },
	{ ZYDIS_MNEMONIC_MOVAPD, complete_sse_move },
	{ ZYDIS_MNEMONIC_MOVUPD, complete_sse_move },
	{ ZYDIS_MNEMONIC_MOVD,   complete_sse_move },
	{ ZYDIS_MNEMONIC_MOVQ,   complete_sse_move },
	{ ZYDIS_MNEMONIC_PXOR,   complete_sse_logic },
	{ ZYDIS_MNEMONIC_XORPS,  complete_sse_logic },
	{ ZYDIS_MNEMONIC_XORPD,  complete_sse_logic },
	{ ZYDIS_MNEMONIC_PAND,   complete_sse_logic },
	{ ZYDIS_MNEMONIC_POR,    complete_sse_logic },
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
	ZydisMachineMode mode = emul_machine_mode(&c->sregs);
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

	if (emul_machine_mode(&c->sregs) != ZYDIS_MACHINE_MODE_LONG_64)
		at = (uint32_t)(at + c->sregs.cs.base);
	while (got < EMUL_INSN_MAX) {
		size_t in_page = GUEST_PAGE_SIZE - (at & (GUEST_PAGE_SIZE - 1));
		size_t chunk = EMUL_INSN_MAX - got < in_page ? EMUL_INSN_MAX - got : in_page;

		if (c->env->translate(c->ctx, at, &gpa) || gpa_read(c->mem, gpa, buf + got, chunk)) {
			if (!got) {
				emul_raise_pf(c, at, PF_FETCH);
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

/* ---- the counts ------------------------------------------------------------- */

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
	if (at < len && (n = emulate_syscall_count()))
		at += snprintf(buf + at, len - at, "%ssystem calls %llu", at ? ", " : "", (unsigned long long)n);
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
