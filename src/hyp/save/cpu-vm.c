/* The "vm" state entry (save/cpu.h): the guest-visible CPUID, checked
 * against this host's before anything is loaded, the in-kernel PIC and
 * IOAPIC, the PIT and the KVM clock. */
#include "save/cpu.h"
#include "save/cpu-state.h"
#include "cpuid.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

/* ---- CPUID: does this host have what the saved guest used? ---------------- */

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
	int rc;

	/* vCPU 0's table is the one cpuid.c set: what the guest saw. */
	if ((rc = cpuid_get(&dom->vcpus[0], &cpuid)))
		return rc;
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

int cpu_bad_payload(const struct state_in *in, const char *name, char *why, size_t whylen)
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

	if (!(saved = calloc(CPUID_MAX_ENTRIES, sizeof(*saved))))
		return -ENOMEM;
	len = state_get_blob_max(in, saved, CPUID_MAX_ENTRIES * sizeof(*saved));
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
		return cpu_bad_payload(in, "vm", why, whylen);
	}

	if ((rc = cpuid_host(dom, &host))) {
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

const struct state_ops cpu_vm_ops = {
	.save = vm_save,
	.load = vm_load,
	.version = CPU_STATE_VM_VERSION,
	.quiesce = clock_hold,
	.resume = clock_release,
};
