/* Start the application processors the MADT lists (INIT, SIPI, SIPI) and
 * park them in an idle loop that runs work handed to them. */
#include "io.h"
#include "minios.h"

#define TRAMPOLINE  0x10000
#define ICR_INIT    0x00004500
#define ICR_STARTUP 0x00004600
#define VEC_WAKE    0x3e

volatile unsigned cpus_up = 1;
static void (*volatile ap_work[MAX_CPUS])(unsigned);
static uint32_t cpu_apic_id[MAX_CPUS];   /* by the index each AP took at start */
extern char tramp_start[], tramp_end[];

static void wake_interrupt(void) { }

void ap_main(unsigned cpu)
{
	idt_load();
	lapic_init();
	if (cpu >= MAX_CPUS) {           /* no work slot: counted, then parked */
		__atomic_add_fetch(&cpus_up, 1, __ATOMIC_RELEASE);
		for (;;)
			idle();
	}
	cpu_apic_id[cpu] = lapic_id();
	__atomic_add_fetch(&cpus_up, 1, __ATOMIC_RELEASE);
	for (;;) {
		void (*fn)(unsigned) = ap_work[cpu];

		if (fn) {
			ap_work[cpu] = NULL;
			fn(cpu);
			continue;
		}
		idle();
	}
}

int smp_run_on(unsigned cpu, void (*fn)(unsigned))
{
	if (cpu == 0 || cpu >= cpus_up || ap_work[cpu])
		return -1;
	ap_work[cpu] = fn;
	lapic_send_ipi(cpu_apic_id[cpu], VEC_WAKE);
	return 0;
}

void smp_start(void)
{
	uint32_t self = lapic_id();
	uint64_t deadline;
	unsigned i;

	idt_set(VEC_WAKE, wake_interrupt);
	if (acpi.ncpus > 1) {
		memcpy((void *)TRAMPOLINE, tramp_start, tramp_end - tramp_start);
		/* Order the MADT's list so index i is the i-th CPU to start. */
		for (i = 0; i < acpi.ncpus; i++)
			if (acpi.apic_ids[i] != self)
				lapic_send_ipi(acpi.apic_ids[i], ICR_INIT);
		for (i = 0; i < acpi.ncpus; i++)
			if (acpi.apic_ids[i] != self) {
				lapic_send_ipi(acpi.apic_ids[i], ICR_STARTUP | (TRAMPOLINE >> 12));
				lapic_send_ipi(acpi.apic_ids[i], ICR_STARTUP | (TRAMPOLINE >> 12));
			}
		deadline = time_ns() + 1000000000ULL;
		while (cpus_up < acpi.ncpus && time_ns() < deadline)
			cpu_relax();
	}
	printf("smp: %u of %u CPUs up\n", cpus_up, acpi.ncpus ? acpi.ncpus : 1);
}
