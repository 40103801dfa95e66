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
static volatile uint32_t cpu_apic_id[MAX_CPUS];   /* by the index each AP took at start */
static volatile uint8_t cpu_running[MAX_CPUS];    /* by that index: started, not parked */
extern char tramp_start[], tramp_end[];
/* boot.S: the next AP's index and stack; each start takes one, a CPU
 * started again after a park too (its old stack was left mid-call). */
extern volatile uint32_t ap_next_stack;

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
	cpu_running[cpu] = 1;
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
	if (cpu == 0 || cpu >= MAX_CPUS || !cpu_running[cpu] || ap_work[cpu])
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

/* The running AP with this APIC ID: its index, or 0 (none; 0 is the BSP). */
static unsigned cpu_index_of(uint32_t apic_id)
{
	unsigned i;

	for (i = 1; i < MAX_CPUS; i++)
		if (cpu_running[i] && cpu_apic_id[i] == apic_id)
			return i;
	return 0;
}

/* A CPU the host plugged (src/common/cpuhp.h): INIT, SIPI, SIPI as at
 * boot, then wait for it to check in.  0, or -1 if it did not. */
int smp_cpu_start(uint32_t apic_id)
{
	uint64_t deadline;

	if (cpu_index_of(apic_id) || apic_id == lapic_id())
		return 0;                               /* running already */
	if (ap_next_stack >= MAX_CPUS)
		return -1;                              /* no stack left for it */
	memcpy((void *)TRAMPOLINE, tramp_start, tramp_end - tramp_start);
	lapic_send_ipi(apic_id, ICR_INIT);
	lapic_send_ipi(apic_id, ICR_STARTUP | (TRAMPOLINE >> 12));
	lapic_send_ipi(apic_id, ICR_STARTUP | (TRAMPOLINE >> 12));
	deadline = time_ns() + 1000000000ULL;
	while (!cpu_index_of(apic_id) && time_ns() < deadline)
		cpu_relax();
	return cpu_index_of(apic_id) ? 0 : -1;
}

static volatile uint32_t parked_apic = ~0u;

/* On the AP itself: off the books, then halted with interrupts off, so
 * only an INIT (a later start) moves it again. */
static void park_here(unsigned cpu)
{
	cpu_running[cpu] = 0;
	__atomic_sub_fetch(&cpus_up, 1, __ATOMIC_RELEASE);
	parked_apic = cpu_apic_id[cpu];
	for (;;)
		__asm__ volatile("cli; hlt");
}

/* A CPU the host asks back: park it; then the caller ejects it.  0, or -1
 * if it is not running here or did not park. */
int smp_cpu_park(uint32_t apic_id)
{
	unsigned cpu = cpu_index_of(apic_id);
	uint64_t deadline;

	if (!cpu)
		return apic_id == lapic_id() ? -1 : 0;   /* the BSP stays; an unknown one is parked */
	parked_apic = ~0u;
	if (smp_run_on(cpu, park_here))
		return -1;
	deadline = time_ns() + 1000000000ULL;
	while (parked_apic != apic_id && time_ns() < deadline)
		cpu_relax();
	return parked_apic == apic_id ? 0 : -1;
}
