/* The VM's and the vCPUs' KVM state as state entries (see save/cpu.h).
 *
 * Kernel structures are stored as length-prefixed blobs: a stream from a
 * lodge-hyp built against other kernel headers, whose structures differ
 * in size, is refused rather than misread.  Every load parses and checks
 * its whole payload before the first KVM_SET_*, so a short or corrupt
 * payload leaves the VM as it was. */
#include "save/cpu.h"
#include "save/state.h"
#include "domain.h"
#include "log.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#define CPUID_MAX 256          /* entries, saved or supported */
#define MSRS_MAX  1024         /* no saved vCPU has more MSRs than this */
#define XSAVE_LEGACY_SIZE 4096 /* struct kvm_xsave without KVM_CAP_XSAVE2 */

enum { SREGS_KIND_SREGS = 1, SREGS_KIND_SREGS2 = 2 };
enum { FPU_KIND_FPU = 1, FPU_KIND_XSAVE = 2 };

struct cpu_state;

struct cpu_vcpu {
	struct cpu_state *cs;
	struct vcpu *v;
};

/* What this host's KVM offers, probed once when registering. */
struct cpu_state {
	struct domain *dom;
	uint32_t *msrs;        /* KVM_GET_MSR_INDEX_LIST, less those vCPU 0 cannot read */
	unsigned nmsrs;
	uint32_t xsave_size;   /* bytes KVM_GET/SET_XSAVE move; 0: no XSAVE, use KVM_GET_FPU */
	bool xsave2, sregs2, xcrs, tsc_control;
	/* The clock stopped at quiesce, so the guest does not see the time
	 * it spends paused for a save. */
	bool clock_held;
	uint64_t clock;
	struct cpu_vcpu vcpus[LODGE_MAX_VCPUS];
};

/* ---- CPUID: does this host have what the saved guest used? ---------------- */

static struct kvm_cpuid2 *cpuid_alloc(unsigned n)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + n * sizeof(c->entries[0]));

	if (c)
		c->nent = n;
	return c;
}

static const struct kvm_cpuid_entry2 *cpuid_find(const struct kvm_cpuid_entry2 *e, unsigned n,
						 uint32_t function, uint32_t index)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (e[i].function == function &&
		    (!(e[i].flags & KVM_CPUID_FLAG_SIGNIFCANT_INDEX) || e[i].index == index))
			return &e[i];
	return NULL;
}

enum cpuid_reg { EAX, EBX, ECX, EDX };
static const char *const reg_names[] = { "eax", "ebx", "ecx", "edx" };

static uint32_t cpuid_reg(const struct kvm_cpuid_entry2 *e, enum cpuid_reg r)
{
	if (!e)
		return 0;
	switch (r) {
	case EAX: return e->eax;
	case EBX: return e->ebx;
	case ECX: return e->ecx;
	default:  return e->edx;
	}
}

/* The feature words compared.  ignore: bits that are not features KVM
 * offers but state (OSXSAVE, OSPKE follow CR4) or that lodge-hyp sets
 * itself (hypervisor). */
static const struct feature_word {
	uint32_t function, index;
	enum cpuid_reg reg;
	uint32_t ignore;
	const char *names[32];
} feature_words[] = {
	{ 1, 0, EDX, 0, {
		[0] = "fpu", [1] = "vme", [2] = "de", [3] = "pse", [4] = "tsc", [5] = "msr",
		[6] = "pae", [7] = "mce", [8] = "cx8", [9] = "apic", [11] = "sep", [12] = "mtrr",
		[13] = "pge", [14] = "mca", [15] = "cmov", [16] = "pat", [17] = "pse36",
		[19] = "clflush", [23] = "mmx", [24] = "fxsr", [25] = "sse", [26] = "sse2",
		[28] = "ht" } },
	{ 1, 0, ECX, 1u << 27 | 1u << 31, {
		[0] = "sse3", [1] = "pclmulqdq", [3] = "monitor", [5] = "vmx", [9] = "ssse3",
		[12] = "fma", [13] = "cx16", [17] = "pcid", [19] = "sse4_1", [20] = "sse4_2",
		[21] = "x2apic", [22] = "movbe", [23] = "popcnt", [24] = "tsc_deadline_timer",
		[25] = "aes", [26] = "xsave", [28] = "avx", [29] = "f16c", [30] = "rdrand" } },
	{ 7, 0, EBX, 0, {
		[0] = "fsgsbase", [3] = "bmi1", [4] = "hle", [5] = "avx2", [7] = "smep",
		[8] = "bmi2", [9] = "erms", [10] = "invpcid", [11] = "rtm", [16] = "avx512f",
		[17] = "avx512dq", [18] = "rdseed", [19] = "adx", [20] = "smap",
		[21] = "avx512ifma", [23] = "clflushopt", [24] = "clwb", [26] = "avx512pf",
		[27] = "avx512er", [28] = "avx512cd", [29] = "sha_ni", [30] = "avx512bw",
		[31] = "avx512vl" } },
	{ 7, 0, ECX, 1u << 4, {
		[1] = "avx512vbmi", [2] = "umip", [3] = "pku", [5] = "waitpkg",
		[6] = "avx512_vbmi2", [8] = "gfni", [9] = "vaes", [10] = "vpclmulqdq",
		[11] = "avx512_vnni", [12] = "avx512_bitalg", [14] = "avx512_vpopcntdq",
		[16] = "la57", [22] = "rdpid", [25] = "cldemote", [27] = "movdiri",
		[28] = "movdir64b" } },
	{ 7, 0, EDX, 0, {
		[2] = "avx512_4vnniw", [3] = "avx512_4fmaps", [4] = "fsrm",
		[8] = "avx512_vp2intersect", [10] = "md_clear", [14] = "serialize",
		[16] = "tsxldtrk", [22] = "amx_bf16", [23] = "avx512_fp16", [24] = "amx_tile",
		[25] = "amx_int8", [26] = "spec_ctrl", [27] = "stibp", [28] = "flush_l1d",
		[29] = "arch_capabilities", [31] = "ssbd" } },
	{ 7, 1, EAX, 0, { [4] = "avx_vnni", [5] = "avx512_bf16" } },
	{ 0xd, 0, EAX, 0, {
		[0] = "x87 XSAVE state", [1] = "SSE XSAVE state", [2] = "AVX XSAVE state",
		[3] = "MPX bound registers", [4] = "MPX BNDCSR", [5] = "AVX-512 opmask state",
		[6] = "AVX-512 ZMM_Hi256 state", [7] = "AVX-512 Hi16_ZMM state",
		[9] = "PKRU XSAVE state", [17] = "AMX tile config state",
		[18] = "AMX tile data state" } },
	{ 0xd, 0, EDX, 0, { [0] = NULL } },
	{ 0xd, 1, EAX, 0, { [0] = "xsaveopt", [1] = "xsavec", [2] = "xgetbv1", [3] = "xsaves" } },
	{ 0x80000001, 0, ECX, 0, {
		[0] = "lahf_lm", [1] = "cmp_legacy", [2] = "svm", [4] = "cr8_legacy",
		[5] = "abm", [6] = "sse4a", [7] = "misalignsse", [8] = "3dnowprefetch",
		[11] = "xop", [16] = "fma4", [21] = "tbm" } },
	{ 0x80000001, 0, EDX, 0, {
		[11] = "syscall", [20] = "nx", [22] = "mmxext", [25] = "fxsr_opt",
		[26] = "pdpe1gb", [27] = "rdtscp", [29] = "lm", [30] = "3dnowext",
		[31] = "3dnow" } },
};

/* Refuse (-ENOTSUP, why naming the features) a saved CPUID with a feature
 * bit this host's KVM does not support: the guest has already seen it
 * and may use it at any moment. */
static int cpuid_check(const struct kvm_cpuid_entry2 *saved, unsigned nsaved,
		       const struct kvm_cpuid2 *host, char *why, size_t whylen)
{
	char list[192] = "";
	size_t used = 0;
	unsigned i, bit, missing = 0;

	for (i = 0; i < sizeof(feature_words) / sizeof(feature_words[0]); i++) {
		const struct feature_word *w = &feature_words[i];
		const struct kvm_cpuid_entry2 *s = cpuid_find(saved, nsaved, w->function, w->index);
		const struct kvm_cpuid_entry2 *h = cpuid_find(host->entries, host->nent,
							      w->function, w->index);
		uint32_t lacks = cpuid_reg(s, w->reg) & ~cpuid_reg(h, w->reg) & ~w->ignore;

		for (bit = 0; bit < 32; bit++) {
			char unnamed[48];
			const char *name = w->names[bit];

			if (!(lacks & (1u << bit)))
				continue;
			if (!name) {
				if (w->function == 0xd && w->index == 0)
					snprintf(unnamed, sizeof(unnamed), "XSAVE component %u",
						 bit + (w->reg == EDX ? 32 : 0));
				else
					snprintf(unnamed, sizeof(unnamed),
						 w->function < 10 ? "CPUID leaf %u%s %s bit %u"
								  : "CPUID leaf %#x%s %s bit %u",
						 w->function, w->index ? ".1" : "",
						 reg_names[w->reg], bit);
				name = unnamed;
			}
			if (missing++ < 3 && used < sizeof(list))
				used += snprintf(list + used, sizeof(list) - used, "%s%s",
						 used ? ", " : "", name);
		}
	}
	if (!missing)
		return 0;
	if (missing > 3)
		snprintf(why, whylen, "this host's CPU lacks %s (and %u more), which the saved guest uses",
			 list, missing - 3);
	else
		snprintf(why, whylen, "this host's CPU lacks %s, which the saved guest uses", list);
	return -ENOTSUP;
}

/* What this host can give a guest: KVM_GET_SUPPORTED_CPUID, and what
 * this host's vCPU 0 already has (cpuid.c's table as KVM took it).  On
 * hardware KVM the second is within the first.  PVM reports a reduced
 * supported set (without SSE3, say) yet gives vCPUs nearly the
 * hardware's CPUID, which is what a guest saved there has seen; the
 * union compares like with like on both.  0 or -errno. */
static int host_cpuid(struct domain *dom, struct kvm_cpuid2 **out)
{
	struct kvm_cpuid2 *c = NULL, *own;
	unsigned n, i, j;

	for (n = CPUID_MAX; n <= 4 * CPUID_MAX; n *= 2) {
		if (!(c = cpuid_alloc(n)))
			return -ENOMEM;
		if (ioctl(dom->kvm_fd, KVM_GET_SUPPORTED_CPUID, c) == 0)
			break;
		free(c);
		c = NULL;
		if (errno != E2BIG)
			return -errno;
	}
	if (!c)
		return -E2BIG;
	/* Room for vCPU 0's leaves the supported list lacks. */
	if (!(own = cpuid_alloc(CPUID_MAX)) ||
	    !(*out = cpuid_alloc(c->nent + CPUID_MAX))) {
		free(own);
		free(c);
		return -ENOMEM;
	}
	memcpy((*out)->entries, c->entries, c->nent * sizeof(c->entries[0]));
	(*out)->nent = c->nent;
	free(c);
	if (ioctl(dom->vcpus[0].fd, KVM_GET_CPUID2, own) < 0)
		own->nent = 0;    /* the supported list alone, then */
	for (i = 0; i < own->nent; i++) {
		const struct kvm_cpuid_entry2 *o = &own->entries[i];

		for (j = 0; j < (*out)->nent; j++) {
			struct kvm_cpuid_entry2 *h = &(*out)->entries[j];

			if (h->function == o->function && h->index == o->index) {
				h->eax |= o->eax;
				h->ebx |= o->ebx;
				h->ecx |= o->ecx;
				h->edx |= o->edx;
				break;
			}
		}
		if (j == (*out)->nent)
			(*out)->entries[(*out)->nent++] = *o;
	}
	free(own);
	return 0;
}

/* ---- "vm": CPUID, irqchip, PIT, clock --------------------------------------- */

static void clock_hold(void *obj)
{
	struct cpu_state *cs = obj;
	struct kvm_clock_data c = { 0 };

	/* The vCPUs are parked: this is the guest time the save records. */
	if (ioctl(cs->dom->vm_fd, KVM_GET_CLOCK, &c) < 0) {
		log_debug("KVM_GET_CLOCK: %s", strerror(errno));
		return;
	}
	cs->clock = c.clock;
	cs->clock_held = true;
}

static void clock_release(void *obj)
{
	struct cpu_state *cs = obj;
	struct kvm_clock_data c = { .clock = cs->clock };

	/* Carrying on after save --keep: the guest's clock goes on from
	 * where it stopped, as it would on the host loading the save. */
	if (cs->clock_held && ioctl(cs->dom->vm_fd, KVM_SET_CLOCK, &c) < 0)
		log_warn("cannot restore the guest clock after a save: %s", strerror(errno));
	cs->clock_held = false;
}

static int vm_save(void *obj, struct state_buf *b)
{
	struct cpu_state *cs = obj;
	struct domain *dom = cs->dom;
	struct kvm_cpuid2 *cpuid;
	struct kvm_pit_state2 pit;
	struct kvm_clock_data clock = { 0 };
	uint32_t chip;

	if (!(cpuid = cpuid_alloc(CPUID_MAX)))
		return -ENOMEM;
	/* vCPU 0's table is the one cpuid.c set: what the guest saw. */
	if (ioctl(dom->vcpus[0].fd, KVM_GET_CPUID2, cpuid) < 0) {
		int rc = -errno;

		free(cpuid);
		return rc;
	}
	state_put_blob(b, cpuid->entries, cpuid->nent * sizeof(cpuid->entries[0]));
	free(cpuid);

	for (chip = KVM_IRQCHIP_PIC_MASTER; chip <= KVM_IRQCHIP_IOAPIC; chip++) {
		struct kvm_irqchip ic = { .chip_id = chip };

		if (ioctl(dom->vm_fd, KVM_GET_IRQCHIP, &ic) < 0)
			return -errno;
		state_put_blob(b, &ic, sizeof(ic));
	}
	if (ioctl(dom->vm_fd, KVM_GET_PIT2, &pit) < 0)
		return -errno;
	state_put_blob(b, &pit, sizeof(pit));

	if (cs->clock_held) {
		clock.clock = cs->clock;
	} else if (ioctl(dom->vm_fd, KVM_GET_CLOCK, &clock) < 0) {
		return -errno;
	}
	state_put_u64(b, clock.clock);
	return 0;
}

/* Why a payload that parsed badly is refused. */
static int bad_payload(const struct state_in *in, const char *name, char *why, size_t whylen)
{
	snprintf(why, whylen, "'%s' state is %s", name,
		 in->bad ? "short or malformed (a field of the wrong size)" : "longer than expected");
	return -EBADMSG;
}

static int vm_load(void *obj, struct state_in *in, char *why, size_t whylen)
{
	static const char *const chip_names[] = { "PIC master", "PIC slave", "IOAPIC" };
	struct cpu_state *cs = obj;
	struct domain *dom = cs->dom;
	struct kvm_cpuid_entry2 *saved;
	struct kvm_cpuid2 *host = NULL;
	struct kvm_irqchip chips[3];
	struct kvm_pit_state2 pit;
	struct kvm_clock_data clock = { 0 };
	uint32_t len, i;
	int rc;

	if (!(saved = calloc(CPUID_MAX, sizeof(*saved))))
		return -ENOMEM;
	len = state_get_blob_max(in, saved, CPUID_MAX * sizeof(*saved));
	if (len % sizeof(*saved))
		in->bad = true;
	for (i = 0; i < 3; i++) {
		state_get_blob(in, &chips[i], sizeof(chips[i]));
		if (chips[i].chip_id != i)
			in->bad = true;
	}
	state_get_blob(in, &pit, sizeof(pit));
	clock.clock = state_get_u64(in);
	if (!state_in_done(in)) {
		free(saved);
		return bad_payload(in, "vm", why, whylen);
	}

	if ((rc = host_cpuid(dom, &host))) {
		snprintf(why, whylen, "cannot read this host's KVM CPUID: %s", strerror(-rc));
		free(saved);
		return rc;
	}
	rc = cpuid_check(saved, len / sizeof(*saved), host, why, whylen);
	free(host);
	free(saved);
	if (rc)
		return rc;

	/* The irqchips before the vCPUs' LAPICs; the clock last, so as
	 * little time as possible passes before the vCPUs run. */
	for (i = 0; i < 3; i++)
		if (ioctl(dom->vm_fd, KVM_SET_IRQCHIP, &chips[i]) < 0) {
			rc = -errno;
			snprintf(why, whylen, "KVM refused the saved %s: %s", chip_names[i], strerror(-rc));
			return rc;
		}
	if (ioctl(dom->vm_fd, KVM_SET_PIT2, &pit) < 0) {
		rc = -errno;
		snprintf(why, whylen, "KVM refused the saved PIT: %s", strerror(-rc));
		return rc;
	}
	/* The clock the guest had when it was saved: the time it spent
	 * saved is not time the guest sees pass. */
	if (ioctl(dom->vm_fd, KVM_SET_CLOCK, &clock) < 0) {
		rc = -errno;
		snprintf(why, whylen, "KVM refused the saved clock: %s", strerror(-rc));
		return rc;
	}
	return 0;
}

static const struct state_ops vm_ops = {
	.save = vm_save,
	.load = vm_load,
	.version = CPU_STATE_VM_VERSION,
	.quiesce = clock_hold,
	.resume = clock_release,
};

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

/* Read what of index[0..n) KVM gives for this vCPU into out (n entries
 * of room); KVM_GET_MSRS stops at the first MSR it refuses, so carry on
 * after it.  Returns the number read, or -errno. */
static int msrs_read(struct vcpu *v, const uint32_t *index, unsigned n, struct kvm_msr_entry *out)
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
	if ((n = msrs_read(v, cs->msrs, cs->nmsrs, im->msrs)) < 0) {
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
		rc = bad_payload(in, name, why, whylen);
	}
	if (!rc)
		rc = vcpu_apply(cv->cs, cv->v, im, why, whylen);
	free(im->xsave);
	free(im->msrs);
	free(im);
	return rc;
}

static const struct state_ops vcpu_ops = {
	.save = vcpu_save,
	.load = vcpu_load,
	.version = CPU_STATE_VCPU_VERSION,
};

/* ---- registration ------------------------------------------------------------------- */

/* The MSRs to save: KVM's list, less what vCPU 0 will not read (a
 * backend like PVM may list MSRs it then refuses). */
static int probe_msrs(struct cpu_state *cs)
{
	struct kvm_msr_list probe = { .nmsrs = 0 }, *list;
	struct kvm_msr_entry *got;
	int n, i;

	if (ioctl(cs->dom->kvm_fd, KVM_GET_MSR_INDEX_LIST, &probe) < 0 && errno != E2BIG)
		return -errno;
	if (!(list = calloc(1, sizeof(*list) + probe.nmsrs * sizeof(list->indices[0]))))
		return -ENOMEM;
	list->nmsrs = probe.nmsrs;
	if (ioctl(cs->dom->kvm_fd, KVM_GET_MSR_INDEX_LIST, list) < 0) {
		n = -errno;
		free(list);
		return n;
	}
	got = calloc(list->nmsrs ? list->nmsrs : 1, sizeof(*got));
	cs->msrs = calloc(list->nmsrs ? list->nmsrs : 1, sizeof(*cs->msrs));
	if (!got || !cs->msrs) {
		free(got);
		free(list);
		return -ENOMEM;
	}
	n = msrs_read(&cs->dom->vcpus[0], list->indices, list->nmsrs, got);
	for (i = 0; i < n; i++)
		cs->msrs[i] = got[i].index;
	cs->nmsrs = n > 0 ? n : 0;
	log_debug("saving %u of the %u MSRs KVM lists", cs->nmsrs, list->nmsrs);
	free(got);
	free(list);
	return n < 0 ? n : 0;
}

int cpu_state_register(struct domain *dom)
{
	struct cpu_state *cs;
	char name[STATE_NAME_MAX];
	unsigned i;
	int rc, size;

	if (!dom->nvcpus)
		return -EINVAL;
	if (!(cs = calloc(1, sizeof(*cs))))
		return -ENOMEM;
	cs->dom = dom;
	cs->sregs2 = ioctl(dom->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SREGS2) > 0;
	cs->xcrs = ioctl(dom->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XCRS) > 0;
	cs->tsc_control = ioctl(dom->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_TSC_CONTROL) > 0;
	/* XSAVE2's size is the VM's (it grows with dynamic features such as
	 * AMX); above 4096 only KVM_GET_XSAVE2 returns it all. */
	size = ioctl(dom->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE2);
	if (size > XSAVE_LEGACY_SIZE) {
		cs->xsave2 = true;
		cs->xsave_size = size;
	} else if (ioctl(dom->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE) > 0) {
		cs->xsave_size = XSAVE_LEGACY_SIZE;
	}
	log_debug("CPU state: %s, %s%s", cs->sregs2 ? "SREGS2" : "SREGS",
		  cs->xsave2 ? "XSAVE2" : cs->xsave_size ? "XSAVE" : "FPU", cs->xcrs ? ", XCRS" : "");
	if ((rc = probe_msrs(cs)))
		goto fail;

	/* "vm" first: loading checks CPUID before any vCPU is touched and
	 * sets the irqchips before the LAPICs. */
	if ((rc = state_register("vm", &vm_ops, cs)))
		goto fail;
	for (i = 0; i < dom->nvcpus; i++) {
		cs->vcpus[i] = (struct cpu_vcpu){ cs, &dom->vcpus[i] };
		snprintf(name, sizeof(name), "vcpu%u", i);
		if ((rc = state_register(name, &vcpu_ops, &cs->vcpus[i])))
			return rc;    /* registered entries point at cs: keep it */
	}
	return 0;
fail:
	free(cs->msrs);
	free(cs);
	return rc;
}
