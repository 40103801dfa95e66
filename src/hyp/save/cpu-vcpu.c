/* The "vcpuN" state entries (save/cpu.h): each vCPU's registers,
 * FPU/XSAVE, MSRs, LAPIC, pending events and MP state, parsed and checked
 * whole before the first KVM_SET_*. */
#include "save/cpu.h"
#include "save/cpu-state.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

enum { SREGS_KIND_SREGS = 1, SREGS_KIND_SREGS2 = 2 };
enum { FPU_KIND_FPU = 1, FPU_KIND_XSAVE = 2 };

/* ---- MSRs -------------------------------------------------------------------------- */

#define MSR_IA32_TSC          0x10
#define MSR_IA32_TSC_DEADLINE 0x6e0
#define MSR_KVM_ASYNC_PF_EN   0x4b564d02
#define MSR_KVM_ASYNC_PF_INT  0x4b564d06

/* MSRs a host may refuse to take without the guest noticing more than a
 * perturbed profile or a stale identification: feature and model MSRs
 * the guest only reads, the PMU, LBRs, machine check banks. */
static bool msr_unimportant(uint32_t i)
{
	switch (i) {
	case 0x34:          /* SMI count */
	case 0x8b:          /* microcode revision */
	case 0xce:          /* platform info */
	case 0x10a:         /* arch capabilities (read-only to the guest) */
	case 0x140:         /* misc features enables (CPUID faulting) */
	case 0x17a: case 0x17b:    /* MCG status, control */
	case 0x1d9:         /* debugctl */
	case 0x1fc:         /* power control */
	case 0x345:         /* perf capabilities */
	case 0xc0010015:    /* AMD HWCR */
	case 0xc0010117:    /* AMD VM_HSAVE_PA (nested state is not saved anyway) */
	case 0xc001011f:    /* AMD DE_CFG */
		return true;
	}
	return (i >= 0xc1 && i <= 0xc8) ||           /* PMCs */
	       (i >= 0x186 && i <= 0x18d) ||         /* event selects */
	       (i >= 0x1db && i <= 0x1de) ||         /* last branch/exception from/to */
	       (i >= 0x309 && i <= 0x30b) ||         /* fixed counters */
	       (i >= 0x38d && i <= 0x390) ||         /* global perf control */
	       (i >= 0x400 && i <= 0x47f) ||         /* MCi banks */
	       (i >= 0xc0010000 && i <= 0xc0010007) ||   /* AMD perf counters */
	       (i >= 0xc0010200 && i <= 0xc001020b);     /* AMD perf counters, extended */
}

/* The order MSRs are written in on load: the TSC before the deadline set
 * against it (and after the LAPIC, whose mode decides whether the
 * deadline is taken); the async-PF vector before async PF is enabled,
 * since enabling it may deliver on that vector at once. */
static int msr_rank(uint32_t i)
{
	switch (i) {
	case MSR_IA32_TSC:          return 0;
	case MSR_KVM_ASYNC_PF_INT:  return 1;
	case MSR_IA32_TSC_DEADLINE: return 3;
	default:                    return 2;
	}
}

static struct kvm_msrs *msrs_alloc(unsigned n)
{
	return calloc(1, sizeof(struct kvm_msrs) + n * sizeof(struct kvm_msr_entry));
}

/* KVM_GET_MSRS stops at the first MSR it refuses: carry on after it. */
int cpu_msrs_read(struct vcpu *v, const uint32_t *index, unsigned n, struct kvm_msr_entry *out)
{
	struct kvm_msrs *m = msrs_alloc(n);
	unsigned base = 0, got = 0, i;
	int r;

	if (!m)
		return -ENOMEM;
	while (base < n) {
		m->nmsrs = n - base;
		for (i = 0; i < m->nmsrs; i++)
			m->entries[i] = (struct kvm_msr_entry){ .index = index[base + i] };
		r = ioctl(v->fd, KVM_GET_MSRS, m);
		if (r < 0) {
			r = -errno;
			free(m);
			return r;
		}
		memcpy(out + got, m->entries, r * sizeof(*out));
		got += r;
		if ((unsigned)r < m->nmsrs)
			log_debug("vcpu%u: KVM will not read MSR %#x; not saved", v->id,
				  index[base + r]);
		base += r + 1;
	}
	free(m);
	return got;
}

/* Write saved MSRs in msr_rank order.  One the host refuses is skipped if
 * it is unimportant, and fails the load (naming it) otherwise. */
static int msrs_write(struct vcpu *v, struct kvm_msr_entry *e, unsigned n, char *why, size_t whylen)
{
	struct kvm_msrs *m;
	unsigned i, j, base = 0;
	int r;

	/* Insertion sort by rank, stable: n is a few dozen. */
	for (i = 1; i < n; i++) {
		struct kvm_msr_entry t = e[i];

		for (j = i; j > 0 && msr_rank(e[j - 1].index) > msr_rank(t.index); j--)
			e[j] = e[j - 1];
		e[j] = t;
	}
	if (!(m = msrs_alloc(n)))
		return -ENOMEM;
	while (base < n) {
		m->nmsrs = n - base;
		memcpy(m->entries, e + base, m->nmsrs * sizeof(*e));
		r = ioctl(v->fd, KVM_SET_MSRS, m);
		if (r < 0) {
			r = -errno;
			snprintf(why, whylen, "vcpu%u: KVM_SET_MSRS: %s", v->id, strerror(-r));
			free(m);
			return r;
		}
		if ((unsigned)r < m->nmsrs) {
			const struct kvm_msr_entry *bad = &e[base + r];

			if (!msr_unimportant(bad->index)) {
				snprintf(why, whylen, "this host's KVM refuses MSR %#x (value %#llx) of vcpu%u",
					 bad->index, (unsigned long long)bad->data, v->id);
				free(m);
				return -EINVAL;
			}
			log_debug("vcpu%u: this host's KVM refuses MSR %#x; skipped", v->id, bad->index);
		}
		base += r + 1;
	}
	free(m);
	return 0;
}

/* ---- "vcpuN" ------------------------------------------------------------------------ */

/* One vCPU's state, parsed whole before any of it is set. */
struct vcpu_image {
	struct kvm_mp_state mp;
	struct kvm_regs regs;
	uint8_t sregs_kind;
	struct kvm_sregs sregs;
	struct kvm_sregs2 sregs2;
	uint8_t fpu_kind;
	struct kvm_fpu fpu;
	uint8_t *xsave;        /* cs->xsave_size bytes, the saved ones first */
	uint8_t has_xcrs;
	struct kvm_xcrs xcrs;
	struct kvm_debugregs dbg;
	struct kvm_lapic_state lapic;
	struct kvm_vcpu_events events;
	uint32_t tsc_khz;
	uint32_t nmsrs;
	struct kvm_msr_entry *msrs;
};

static int vcpu_save(void *obj, struct state_buf *b)
{
	struct cpu_vcpu *cv = obj;
	struct cpu_state *cs = cv->cs;
	struct vcpu *v = cv->v;
	struct vcpu_image *im;
	int rc = 0, n, khz;
	uint32_t i;

	if (!(im = calloc(1, sizeof(*im))))
		return -ENOMEM;
	/* MP state first: reading it makes KVM take pending INIT/SIPI into
	 * the LAPIC and registers, which the reads after must see. */
	if (ioctl(v->fd, KVM_GET_MP_STATE, &im->mp) < 0)
		goto fail;
	state_put_blob(b, &im->mp, sizeof(im->mp));
	if (ioctl(v->fd, KVM_GET_REGS, &im->regs) < 0)
		goto fail;
	state_put_blob(b, &im->regs, sizeof(im->regs));
	/* SREGS2 carries the PAE PDPTRs, which SREGS loses. */
	if (cs->sregs2) {
		if (ioctl(v->fd, KVM_GET_SREGS2, &im->sregs2) < 0)
			goto fail;
		state_put_u8(b, SREGS_KIND_SREGS2);
		state_put_blob(b, &im->sregs2, sizeof(im->sregs2));
	} else {
		if (ioctl(v->fd, KVM_GET_SREGS, &im->sregs) < 0)
			goto fail;
		state_put_u8(b, SREGS_KIND_SREGS);
		state_put_blob(b, &im->sregs, sizeof(im->sregs));
	}
	if (cs->xsave_size) {
		if (!(im->xsave = calloc(1, cs->xsave_size))) {
			rc = -ENOMEM;
			goto out;
		}
		if (ioctl(v->fd, cs->xsave2 ? KVM_GET_XSAVE2 : KVM_GET_XSAVE, im->xsave) < 0)
			goto fail;
		state_put_u8(b, FPU_KIND_XSAVE);
		state_put_blob(b, im->xsave, cs->xsave_size);
	} else {
		if (ioctl(v->fd, KVM_GET_FPU, &im->fpu) < 0)
			goto fail;
		state_put_u8(b, FPU_KIND_FPU);
		state_put_blob(b, &im->fpu, sizeof(im->fpu));
	}
	if (cs->xcrs) {
		if (ioctl(v->fd, KVM_GET_XCRS, &im->xcrs) < 0)
			goto fail;
		state_put_u8(b, 1);
		state_put_blob(b, &im->xcrs, sizeof(im->xcrs));
	} else {
		state_put_u8(b, 0);
	}
	if (ioctl(v->fd, KVM_GET_DEBUGREGS, &im->dbg) < 0)
		goto fail;
	state_put_blob(b, &im->dbg, sizeof(im->dbg));
	if (ioctl(v->fd, KVM_GET_LAPIC, &im->lapic) < 0)
		goto fail;
	state_put_blob(b, &im->lapic, sizeof(im->lapic));
	if (ioctl(v->fd, KVM_GET_VCPU_EVENTS, &im->events) < 0)
		goto fail;
	state_put_blob(b, &im->events, sizeof(im->events));
	khz = ioctl(v->fd, KVM_GET_TSC_KHZ, 0);
	state_put_u32(b, khz > 0 ? (uint32_t)khz : 0);

	if (!(im->msrs = calloc(cs->nmsrs ? cs->nmsrs : 1, sizeof(*im->msrs)))) {
		rc = -ENOMEM;
		goto out;
	}
	if ((n = cpu_msrs_read(v, cs->msrs, cs->nmsrs, im->msrs)) < 0) {
		rc = n;
		goto out;
	}
	state_put_u32(b, n);
	for (i = 0; i < (uint32_t)n; i++) {
		state_put_u32(b, im->msrs[i].index);
		state_put_u64(b, im->msrs[i].data);
	}
	goto out;
fail:
	rc = -errno;
out:
	free(im->xsave);
	free(im->msrs);
	free(im);
	return rc;
}

static int vcpu_parse(struct cpu_state *cs, struct vcpu_image *im, struct state_in *in,
		      char *why, size_t whylen)
{
	uint32_t i, len, room = cs->xsave_size;

	state_get_blob(in, &im->mp, sizeof(im->mp));
	state_get_blob(in, &im->regs, sizeof(im->regs));
	im->sregs_kind = state_get_u8(in);
	if (im->sregs_kind == SREGS_KIND_SREGS2)
		state_get_blob(in, &im->sregs2, sizeof(im->sregs2));
	else if (im->sregs_kind == SREGS_KIND_SREGS)
		state_get_blob(in, &im->sregs, sizeof(im->sregs));
	else
		in->bad = true;
	im->fpu_kind = state_get_u8(in);
	if (im->fpu_kind == FPU_KIND_XSAVE) {
		/* A save from a host with fewer XSAVE components is smaller;
		 * the rest stays zero (init state).  A larger one holds state
		 * this host cannot take. */
		len = state_get_u32(in);
		if (!in->bad && !room) {
			snprintf(why, whylen, "the saved vCPU has XSAVE state; this host's KVM has no XSAVE");
			return -ENOTSUP;
		}
		if (!in->bad && len > room) {
			snprintf(why, whylen, "the saved XSAVE state is %u bytes; this host's KVM takes at most %u",
				 len, room);
			return -ENOTSUP;
		}
		if (!(im->xsave = calloc(1, room ? room : 1)))
			return -ENOMEM;
		state_get(in, im->xsave, in->bad ? 0 : len);
	} else if (im->fpu_kind == FPU_KIND_FPU) {
		state_get_blob(in, &im->fpu, sizeof(im->fpu));
	} else {
		in->bad = true;
	}
	im->has_xcrs = state_get_u8(in);
	if (im->has_xcrs)
		state_get_blob(in, &im->xcrs, sizeof(im->xcrs));
	state_get_blob(in, &im->dbg, sizeof(im->dbg));
	state_get_blob(in, &im->lapic, sizeof(im->lapic));
	state_get_blob(in, &im->events, sizeof(im->events));
	im->tsc_khz = state_get_u32(in);
	im->nmsrs = state_get_u32(in);
	if (im->nmsrs > MSRS_MAX || (uint64_t)im->nmsrs * 12 > in->len - in->off)
		in->bad = true;
	if (in->bad)
		return 0;
	if (!(im->msrs = calloc(im->nmsrs ? im->nmsrs : 1, sizeof(*im->msrs))))
		return -ENOMEM;
	for (i = 0; i < im->nmsrs; i++) {
		im->msrs[i].index = state_get_u32(in);
		im->msrs[i].data = state_get_u64(in);
	}
	return 0;
}

static void sregs2_to_sregs(const struct kvm_sregs2 *s2, struct kvm_sregs *s)
{
	memset(s, 0, sizeof(*s));
	s->cs = s2->cs; s->ds = s2->ds; s->es = s2->es; s->fs = s2->fs;
	s->gs = s2->gs; s->ss = s2->ss; s->tr = s2->tr; s->ldt = s2->ldt;
	s->gdt = s2->gdt; s->idt = s2->idt;
	s->cr0 = s2->cr0; s->cr2 = s2->cr2; s->cr3 = s2->cr3; s->cr4 = s2->cr4;
	s->cr8 = s2->cr8; s->efer = s2->efer; s->apic_base = s2->apic_base;
	/* No interrupt_bitmap: a pending interrupt is in the vCPU events;
	 * KVM reloads the PDPTRs from CR3. */
}

/* Set one vCPU's state in the order KVM needs (QEMU's and Firecracker's):
 * TSC rate before the TSC; regs before events (KVM_SET_REGS drops a
 * pending exception); sregs before the LAPIC (they carry APIC_BASE, the
 * LAPIC's mode); the LAPIC before the MSRs (the TSC deadline is only
 * taken in deadline mode); events after all that; MP state last. */
static int vcpu_apply(struct cpu_state *cs, struct vcpu *v, struct vcpu_image *im,
		      char *why, size_t whylen)
{
	const char *what;
	int rc, khz = ioctl(v->fd, KVM_GET_TSC_KHZ, 0);

	if (im->tsc_khz && khz > 0 && (uint32_t)khz != im->tsc_khz) {
		if (!cs->tsc_control || ioctl(v->fd, KVM_SET_TSC_KHZ, im->tsc_khz) < 0)
			log_warn("vcpu%u: the guest's TSC ran at %u kHz, here it runs at %d kHz "
				 "(KVM cannot scale it); guest time may drift until it recalibrates",
				 v->id, im->tsc_khz, khz);
	}
	what = "registers";
	if (ioctl(v->fd, KVM_SET_REGS, &im->regs) < 0)
		goto fail;
	what = "segment and control registers";
	if (im->sregs_kind == SREGS_KIND_SREGS2 && cs->sregs2) {
		if (ioctl(v->fd, KVM_SET_SREGS2, &im->sregs2) < 0)
			goto fail;
	} else {
		if (im->sregs_kind == SREGS_KIND_SREGS2)
			sregs2_to_sregs(&im->sregs2, &im->sregs);
		if (ioctl(v->fd, KVM_SET_SREGS, &im->sregs) < 0)
			goto fail;
	}
	what = "FPU/XSAVE state";
	if (im->fpu_kind == FPU_KIND_XSAVE) {
		if (ioctl(v->fd, KVM_SET_XSAVE, im->xsave) < 0)
			goto fail;
	} else if (ioctl(v->fd, KVM_SET_FPU, &im->fpu) < 0) {
		goto fail;
	}
	what = "XCRs";
	if (im->has_xcrs && ioctl(v->fd, KVM_SET_XCRS, &im->xcrs) < 0)
		goto fail;
	what = "debug registers";
	if (ioctl(v->fd, KVM_SET_DEBUGREGS, &im->dbg) < 0)
		goto fail;
	what = "LAPIC";
	if (ioctl(v->fd, KVM_SET_LAPIC, &im->lapic) < 0)
		goto fail;
	if ((rc = msrs_write(v, im->msrs, im->nmsrs, why, whylen)))
		return rc;
	what = "pending events";
	if (ioctl(v->fd, KVM_SET_VCPU_EVENTS, &im->events) < 0)
		goto fail;
	what = "MP state";
	if (ioctl(v->fd, KVM_SET_MP_STATE, &im->mp) < 0)
		goto fail;
	return 0;
fail:
	rc = -errno;
	snprintf(why, whylen, "vcpu%u: KVM refused the saved %s: %s", v->id, what, strerror(-rc));
	return rc;
}

static int vcpu_load(void *obj, struct state_in *in, char *why, size_t whylen)
{
	struct cpu_vcpu *cv = obj;
	struct vcpu_image *im;
	char name[16];
	int rc;

	if (!(im = calloc(1, sizeof(*im))))
		return -ENOMEM;
	rc = vcpu_parse(cv->cs, im, in, why, whylen);
	if (!rc && !state_in_done(in)) {
		snprintf(name, sizeof(name), "vcpu%u", cv->v->id);
		rc = cpu_bad_payload(in, name, why, whylen);
	}
	if (!rc)
		rc = vcpu_apply(cv->cs, cv->v, im, why, whylen);
	free(im->xsave);
	free(im->msrs);
	free(im);
	return rc;
}

const struct state_ops cpu_vcpu_ops = {
	.save = vcpu_save,
	.load = vcpu_load,
	.version = CPU_STATE_VCPU_VERSION,
};
