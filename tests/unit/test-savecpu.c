/* The VM's and vCPUs' saved state on real KVM: distinctive registers,
 * MSRs, LAPIC, IOAPIC and clock set in one VM are saved, loaded into a
 * second, fresh VM and read back; a short, long or corrupt payload, an
 * MSR the host refuses and a CPUID feature the host lacks are refused
 * with a message. */
#include "domain.h"
#include "boot/boot.h"
#include "log.h"
#include "save/cpu.h"
#include "save/state.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define MSR_IA32_TSC       0x10
#define MSR_KERNEL_GS_BASE 0xc0000102
#define APIC_TASKPRI       0x80
#define CLOCK_START        1000000000000ULL     /* 1000 s of guest time */
#define TSC_START          1000000000000ULL
#define GS0                0xffff888012345678ULL
#define GS1                0xffff888087654321ULL

static struct domain a, b;
static bool tsc_settable;
/* Host time (CLOCK_MONOTONIC, ns) just before A's clock was set, and the
 * host time A's guest clock ran before the save held it: what a guest
 * clock may have advanced by is judged against the host time it ran,
 * measured around it, never against a fixed bound (a loaded host
 * stretches every step). */
static uint64_t a_clock_set_ns, a_ran_ns;

struct saved {
	char name[STATE_NAME_MAX];
	struct state_buf buf;
};
static struct saved saved[1 + 2];

static int make_domain(struct domain *d)
{
	unsigned i;
	int rc;

	domain_init(d);
	d->nvcpus = 2;
	if ((rc = kvm_open(d)) || (rc = guest_mem_init(&d->mem, 64u << 20)) ||
	    (rc = kvm_create_vm(d)))
		return rc;
	for (i = 0; i < d->nvcpus; i++)
		if ((rc = vcpu_create(d, i)))
			return rc;
	return cpu_state_register(d);
}

static int set_msr(struct vcpu *v, uint32_t index, uint64_t data)
{
	struct { struct kvm_msrs h; struct kvm_msr_entry e; } m = { .h.nmsrs = 1 };

	m.e.index = index;
	m.e.data = data;
	return ioctl(v->fd, KVM_SET_MSRS, &m) == 1 ? 0 : -EINVAL;
}

static uint64_t get_msr(struct vcpu *v, uint32_t index)
{
	struct { struct kvm_msrs h; struct kvm_msr_entry e; } m = { .h.nmsrs = 1 };

	m.e.index = index;
	return ioctl(v->fd, KVM_GET_MSRS, &m) == 1 ? m.e.data : 0xdeadULL;
}

static uint64_t host_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A guest clock that advanced by at most the host time it ran (with room
 * for the two clocks' rates: 0.1% and 1 ms). */
static bool advanced_at_most(uint64_t from, uint64_t to, uint64_t ran_ns)
{
	return to >= from && to - from <= ran_ns + ran_ns / 1000 + 1000000;
}

static uint64_t get_clock(struct domain *d)
{
	struct kvm_clock_data c = { 0 };

	ioctl(d->vm_fd, KVM_GET_CLOCK, &c);
	return c.clock;
}

static uint32_t version_of(const char *name)
{
	return strcmp(name, "vm") == 0 ? CPU_STATE_VM_VERSION : CPU_STATE_VCPU_VERSION;
}

/* Load a (possibly doctored) copy of a saved payload into b's entry. */
static int load(const char *name, const void *data, size_t len, char *why, size_t whylen)
{
	why[0] = '\0';
	return state_load_named(name, version_of(name), data, len, why, whylen);
}

static void set_state_a(void)
{
	struct boot_entry entry = { .mode = BOOT_LINUX64, .rip = 0x100000, .arg = 0x7000 };
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_lapic_state lapic;
	struct kvm_debugregs dbg;
	struct kvm_irqchip ioapic = { .chip_id = KVM_IRQCHIP_IOAPIC };
	struct kvm_clock_data clock = { .clock = CLOCK_START };

	CHECK("boot state set", vcpu_set_boot_state(&a.vcpus[0], &entry) == 0);
	ioctl(a.vcpus[0].fd, KVM_GET_REGS, &regs);
	regs.rax = 0x1122334455667788ULL;
	regs.r15 = 0x0f0f0f0f0f0f0f0fULL;
	regs.rip = 0x123456;
	CHECK("A: regs set", ioctl(a.vcpus[0].fd, KVM_SET_REGS, &regs) == 0);
	ioctl(a.vcpus[0].fd, KVM_GET_SREGS, &sregs);
	sregs.cr3 = 0x345000;
	sregs.idt.base = 0x12345000;
	sregs.idt.limit = 0xfff;
	CHECK("A: sregs set", ioctl(a.vcpus[0].fd, KVM_SET_SREGS, &sregs) == 0);
	CHECK("A: MSR_KERNEL_GS_BASE set",
	      set_msr(&a.vcpus[0], MSR_KERNEL_GS_BASE, GS0) == 0 &&
	      set_msr(&a.vcpus[1], MSR_KERNEL_GS_BASE, GS1) == 0);
	CHECK("A: TSC set", set_msr(&a.vcpus[0], MSR_IA32_TSC, TSC_START) == 0);
	/* PVM takes the write and ignores it: its guests run on the host's TSC. */
	tsc_settable = get_msr(&a.vcpus[0], MSR_IA32_TSC) - TSC_START < 10000000000ULL;
	ioctl(a.vcpus[1].fd, KVM_GET_LAPIC, &lapic);
	lapic.regs[APIC_TASKPRI] = 0x50;
	CHECK("A: LAPIC TPR set", ioctl(a.vcpus[1].fd, KVM_SET_LAPIC, &lapic) == 0);
	ioctl(a.vcpus[0].fd, KVM_GET_DEBUGREGS, &dbg);
	dbg.db[0] = 0x401000;
	CHECK("A: DR0 set", ioctl(a.vcpus[0].fd, KVM_SET_DEBUGREGS, &dbg) == 0);
	ioctl(a.vm_fd, KVM_GET_IRQCHIP, &ioapic);
	ioapic.chip.ioapic.redirtbl[4].bits = 0x10034;     /* masked, vector 0x34 */
	CHECK("A: IOAPIC pin 4 set", ioctl(a.vm_fd, KVM_SET_IRQCHIP, &ioapic) == 0);
	a_clock_set_ns = host_ns();
	CHECK("A: clock set", ioctl(a.vm_fd, KVM_SET_CLOCK, &clock) == 0);
}

static void save_all(void)
{
	uint64_t before, after, t0, t1, t2, t3;
	unsigned i;
	int rc = 0;

	CHECK("registered vm, vcpu0, vcpu1 in load order",
	      state_count() == 3 && strcmp(state_name(0), "vm") == 0 &&
	      strcmp(state_name(1), "vcpu0") == 0 && strcmp(state_name(2), "vcpu1") == 0);
	/* Quiesce holds the clock; the time until resume is not the guest's:
	 * across the save the guest clock advances by no more than the host
	 * time it ran (t0-t1 and t2-t3), the 300 ms held between not counted. */
	t0 = host_ns();
	before = get_clock(&a);
	state_quiesce_all();
	t1 = host_ns();
	a_ran_ns = t1 - a_clock_set_ns;
	usleep(300000);
	for (i = 0; i < state_count(); i++) {
		snprintf(saved[i].name, sizeof(saved[i].name), "%s", state_name(i));
		state_buf_init(&saved[i].buf);
		rc |= state_save_entry(i, &saved[i].buf);
	}
	CHECK("every entry saves", rc == 0);
	t2 = host_ns();
	state_resume_all();
	after = get_clock(&a);
	t3 = host_ns();
	CHECK("resume: the guest clock goes on from the pause, the time held not counted",
	      advanced_at_most(before, after, (t1 - t0) + (t3 - t2)));
	printf("# guest clock: +%llu us across the save, %llu us of it running, %llu us held\n",
	       (unsigned long long)(after - before) / 1000, (unsigned long long)((t1 - t0) + (t3 - t2)) / 1000,
	       (unsigned long long)(t2 - t1) / 1000);
	printf("# payloads: vm %zu, vcpu0 %zu bytes\n", saved[0].buf.len, saved[1].buf.len);
}

static void load_all_into_b(void)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_lapic_state lapic;
	struct kvm_debugregs dbg;
	struct kvm_irqchip ioapic = { .chip_id = KVM_IRQCHIP_IOAPIC };
	struct kvm_mp_state mpa, mpb;
	char why[256];
	unsigned i;
	uint64_t clock, tsc, t_load;
	int rc = 0;

	t_load = host_ns();
	for (i = 0; i < 3; i++) {
		int r = load(saved[i].name, saved[i].buf.data, saved[i].buf.len, why, sizeof(why));

		if (r)
			printf("# load %s: %s\n", saved[i].name, why);
		rc |= r;
	}
	CHECK("every entry loads into a fresh VM", rc == 0);
	ioctl(b.vcpus[0].fd, KVM_GET_REGS, &regs);
	CHECK("regs come back", regs.rax == 0x1122334455667788ULL && regs.r15 == 0x0f0f0f0f0f0f0f0fULL &&
	      regs.rip == 0x123456);
	ioctl(b.vcpus[0].fd, KVM_GET_SREGS, &sregs);
	CHECK("sregs come back", sregs.cr3 == 0x345000 && sregs.idt.base == 0x12345000 &&
	      sregs.idt.limit == 0xfff && sregs.efer == 0x500 && sregs.cs.l == 1);
	CHECK("MSR_KERNEL_GS_BASE comes back, per vCPU",
	      get_msr(&b.vcpus[0], MSR_KERNEL_GS_BASE) == GS0 &&
	      get_msr(&b.vcpus[1], MSR_KERNEL_GS_BASE) == GS1);
	tsc = get_msr(&b.vcpus[0], MSR_IA32_TSC);
	if (tsc_settable)
		CHECK("TSC continues from the saved value", tsc >= TSC_START && tsc - TSC_START < 50000000000ULL);
	else
		printf("SKIP: TSC continues from the saved value: this KVM ignores TSC writes (PVM)\n");
	ioctl(b.vcpus[1].fd, KVM_GET_LAPIC, &lapic);
	CHECK("LAPIC TPR comes back", lapic.regs[APIC_TASKPRI] == 0x50);
	ioctl(b.vcpus[0].fd, KVM_GET_DEBUGREGS, &dbg);
	CHECK("DR0 comes back", dbg.db[0] == 0x401000);
	ioctl(b.vm_fd, KVM_GET_IRQCHIP, &ioapic);
	CHECK("IOAPIC pin 4 comes back", ioapic.chip.ioapic.redirtbl[4].bits == 0x10034);
	ioctl(a.vcpus[1].fd, KVM_GET_MP_STATE, &mpa);
	ioctl(b.vcpus[1].fd, KVM_GET_MP_STATE, &mpb);
	CHECK("AP's MP state comes back", mpa.mp_state == mpb.mp_state);
	/* What A ran before its save, then what B ran since the load: not
	 * the time between (the hold, the second VM's making). */
	clock = get_clock(&b);
	CHECK("clock continues from the saved value, not the time since",
	      advanced_at_most(CLOCK_START, clock, a_ran_ns + (host_ns() - t_load)));
}

static int refused(const char *name, const void *data, size_t len, const char *words)
{
	char why[256];
	int rc = load(name, data, len, why, sizeof(why));

	if (rc == 0 || !strstr(why, words))
		printf("# %s: rc %d, \"%s\" lacks \"%s\"\n", name, rc, why, words);
	return rc != 0 && strstr(why, words) != NULL;
}

static void test_bad_payloads(void)
{
	const struct state_buf *v0 = &saved[1].buf;
	uint8_t *p = malloc(v0->len + 1);
	uint32_t n;

	memcpy(p, v0->data, v0->len);
	CHECK("short vcpu payload refused", refused("vcpu0", p, v0->len - 5, "short"));
	p[v0->len] = 0;
	CHECK("long vcpu payload refused", refused("vcpu0", p, v0->len + 1, "longer than expected"));
	n = 5;                               /* the MP state blob's length */
	memcpy(p, &n, 4);
	CHECK("blob of the wrong size refused", refused("vcpu0", p, v0->len, "malformed"));
	memcpy(p, v0->data, v0->len);
	n = 0x12345678;                      /* the last MSR's index */
	memcpy(p + v0->len - 12, &n, 4);
	CHECK("an MSR the host refuses fails the load, named",
	      refused("vcpu0", p, v0->len, "refuses MSR 0x12345678"));
	free(p);
	CHECK("unknown entry refused", refused("vcpu7", v0->data, v0->len, "does not have"));
}

/* Leaf 7 ebx as this host offers it: supported, or on vCPU 0 already. */
static uint32_t host_leaf7_ebx(struct domain *d)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + 256 * sizeof(c->entries[0]));
	uint32_t ebx = 0, i;

	c->nent = 256;
	if (ioctl(d->kvm_fd, KVM_GET_SUPPORTED_CPUID, c) == 0)
		for (i = 0; i < c->nent; i++)
			if (c->entries[i].function == 7 && c->entries[i].index == 0)
				ebx |= c->entries[i].ebx;
	c->nent = 256;
	if (ioctl(d->vcpus[0].fd, KVM_GET_CPUID2, c) == 0)
		for (i = 0; i < c->nent; i++)
			if (c->entries[i].function == 7 && c->entries[i].index == 0)
				ebx |= c->entries[i].ebx;
	free(c);
	return ebx;
}

static void test_cpuid_check(void)
{
	static const struct { unsigned bit; const char *name; } named[] = {
		{ 16, "avx512f" }, { 11, "rtm" }, { 4, "hle" }, { 27, "avx512er" }, { 26, "avx512pf" },
	};
	const struct state_buf *vm = &saved[0].buf;
	struct kvm_cpuid_entry2 *e;
	uint8_t *p = malloc(vm->len);
	uint32_t len, i, k, lacks = ~host_leaf7_ebx(&b), bit;
	char words[128];

	memcpy(p, vm->data, vm->len);
	memcpy(&len, p, 4);
	e = (struct kvm_cpuid_entry2 *)(p + 4);
	for (i = 0; i < len / sizeof(*e); i++)
		if (e[i].function == 7 && e[i].index == 0)
			break;
	if (i == len / sizeof(*e)) {
		printf("SKIP: CPUID feature check: the saved guest has no leaf 7\n");
		goto out;
	}
	for (k = 0; k < sizeof(named) / sizeof(named[0]); k++)
		if (lacks & (1u << named[k].bit))
			break;
	if (k < sizeof(named) / sizeof(named[0])) {
		e[i].ebx |= 1u << named[k].bit;
		snprintf(words, sizeof(words), "this host's CPU lacks %s, which the saved guest uses",
			 named[k].name);
		CHECK("a saved feature this host lacks is refused by name", refused("vm", p, vm->len, words));
		e[i].ebx &= ~(1u << named[k].bit);
	} else {
		printf("SKIP: named-feature refusal: this host has every feature tried\n");
	}
	/* An unnamed bit (leaf 7 ebx bits 12-15 and 22 have no name here). */
	for (bit = 12; bit <= 22; bit++)
		if ((lacks & (1u << bit)) && (bit <= 15 || bit == 22))
			break;
	if (bit <= 22) {
		e[i].ebx |= 1u << bit;
		snprintf(words, sizeof(words), "lacks CPUID leaf 7 ebx bit %u,", bit);
		CHECK("an unnamed feature is refused by leaf and bit", refused("vm", p, vm->len, words));
	} else {
		printf("SKIP: unnamed-bit refusal: this host has them all\n");
	}
	memcpy(p, vm->data, vm->len);
	CHECK("the unaltered CPUID loads", load("vm", p, vm->len, words, sizeof(words)) == 0);
out:
	free(p);
}

int main(void)
{
	int rc;

	log_init("test-savecpu");
	if (access("/dev/kvm", R_OK | W_OK) != 0) {
		printf("SKIP: no usable /dev/kvm\n");
		return 0;
	}
	if ((rc = make_domain(&a))) {
		printf("SKIP: cannot create a KVM domain: %s\n", strerror(-rc));
		return 0;
	}
	set_state_a();
	save_all();
	state_reset_registry();
	rc = make_domain(&b);
	CHECK("a second domain registers", rc == 0);
	if (rc)
		UNIT_EXIT();
	load_all_into_b();
	test_bad_payloads();
	test_cpuid_check();
	UNIT_EXIT();
}
