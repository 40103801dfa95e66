/* Local APIC (xAPIC MMIO), IOAPIC, the IDT, and a clock. */
#include "io.h"
#include "minios.h"

#define LAPIC_BASE   0xfee00000ULL
#define LAPIC_ID     0x020
#define LAPIC_TPR    0x080
#define LAPIC_EOI    0x0b0
#define LAPIC_SVR    0x0f0
#define LAPIC_ICR_LO 0x300
#define LAPIC_ICR_HI 0x310
#define LAPIC_TIMER  0x320
#define LAPIC_TICR   0x380
#define LAPIC_TCCR   0x390
#define LAPIC_TDCR   0x3e0
#define IOAPIC_BASE  0xfec00000ULL
#define IDT_VECTORS  64
#define VEC_SPURIOUS 0xff

struct idt_entry {
	uint16_t off0, sel;
	uint8_t ist, type;
	uint16_t off1;
	uint32_t off2, zero;
} __attribute__((packed));

static struct idt_entry idt[256] __attribute__((aligned(16)));
static irq_handler_t handlers[IDT_VECTORS];
extern char isr_stubs[];

static uint32_t lapic_read(unsigned reg) { return mmio_read32(LAPIC_BASE + reg); }
static void lapic_write(unsigned reg, uint32_t v) { mmio_write32(LAPIC_BASE + reg, v); }

/* NMIs seen (lodge trigger DOMAIN nmi): counted here, told by the shell
 * loop, since an NMI may come while this CPU holds the UART's lock. */
volatile unsigned nmi_count;
int (*isr_exception_hook)(uint64_t vector, uint64_t *frame);

void isr_dispatch(uint64_t vector, uint64_t *frame)
{
	if (vector == VEC_NMI) {        /* no EOI: an NMI is not the LAPIC's */
		__atomic_add_fetch(&nmi_count, 1, __ATOMIC_RELAXED);
		return;
	}
	if (vector < 32 && isr_exception_hook && isr_exception_hook(vector, frame))
		return;
	if (vector < 32) {
		printf("minios: exception %lu (error %lx) at rip %lx\n", vector, frame[1], frame[2]);
		for (;;)
			__asm__ volatile("cli; hlt");
	}
	if (vector < IDT_VECTORS && handlers[vector])
		handlers[vector]();
	lapic_eoi();
}

void idt_set(unsigned vector, irq_handler_t fn)
{
	if (vector < IDT_VECTORS)
		handlers[vector] = fn;
}

void idt_load(void)
{
	struct { uint16_t limit; uint64_t base; } __attribute__((packed)) ptr = {
		sizeof(idt) - 1, (uint64_t)idt };

	__asm__ volatile("lidt %0" :: "m"(ptr));
}

/* Only the vectors Mini-OS uses (exceptions and 32-63): 64 entries to fill. */
void idt_init(void)
{
	unsigned v;

	for (v = 0; v < IDT_VECTORS; v++) {
		uint64_t a = (uint64_t)isr_stubs + v * 16;

		idt[v] = (struct idt_entry){ .off0 = a, .sel = 0x08, .type = 0x8e,
					     .off1 = a >> 16, .off2 = a >> 32 };
	}
	idt_load();
}

void lapic_init(void)
{
	lapic_write(LAPIC_TPR, 0);
	lapic_write(LAPIC_SVR, 0x100 | VEC_SPURIOUS);
}

void lapic_eoi(void) { lapic_write(LAPIC_EOI, 0); }
uint32_t lapic_id(void) { return lapic_read(LAPIC_ID) >> 24; }

void lapic_send_ipi(uint32_t apic_id, uint32_t icr_low)
{
	lapic_write(LAPIC_ICR_HI, apic_id << 24);
	lapic_write(LAPIC_ICR_LO, icr_low);
	while (lapic_read(LAPIC_ICR_LO) & (1 << 12))
		cpu_relax();
}

void ioapic_route(unsigned pin, unsigned vector, int level)
{
	uint32_t low = vector | (level ? 1u << 15 : 0);

	mmio_write32(IOAPIC_BASE, 0x11 + 2 * pin);
	mmio_write32(IOAPIC_BASE + 0x10, lapic_id() << 24);
	mmio_write32(IOAPIC_BASE, 0x10 + 2 * pin);
	mmio_write32(IOAPIC_BASE + 0x10, low);
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* The TSC, calibrated once against the LAPIC timer, which KVM runs from a
 * 1 GHz bus: a count of 62,500 at divide-by-16 is one millisecond. */
static uint64_t tsc_per_ms, tsc_base;

static void clock_calibrate(void)
{
	uint64_t t0;

	lapic_write(LAPIC_TDCR, 0x3);            /* divide by 16 */
	lapic_write(LAPIC_TIMER, 1 << 16);       /* masked, one-shot */
	lapic_write(LAPIC_TICR, 0xffffffff);
	t0 = rdtsc();
	while (0xffffffff - lapic_read(LAPIC_TCCR) < 62500)
		cpu_relax();
	tsc_per_ms = rdtsc() - t0;
	if (!tsc_per_ms)
		tsc_per_ms = 1;
	tsc_base = t0;
	lapic_write(LAPIC_TICR, 0);
}

uint64_t time_ns(void)
{
	uint64_t d;

	if (!tsc_per_ms)
		clock_calibrate();
	d = rdtsc() - tsc_base;
	return d / tsc_per_ms * 1000000 + d % tsc_per_ms * 1000000 / tsc_per_ms;
}

/* One LAPIC timer interrupt (vector VEC_TIMER, an empty handler: it only
 * wakes a hlt) in about ns nanoseconds; 0 disarms.  At divide-by-16 on
 * KVM's 1 GHz bus a count is 16 ns.  The timer lives in the LAPIC, whose
 * registers a restore puts back (KVM_SET_LAPIC), so an armed timer still
 * fires after a save/restore. */
#define VEC_TIMER 0x31

static void timer_interrupt(void) { }

void timer_arm_ns(uint64_t ns)
{
	uint64_t count = ns / 16;

	if (!tsc_per_ms)
		clock_calibrate();          /* it borrows the timer: before arming */
	if (!handlers[VEC_TIMER])
		handlers[VEC_TIMER] = timer_interrupt;
	if (!ns) {
		lapic_write(LAPIC_TICR, 0);
		return;
	}
	if (count > 0xffffffffULL)
		count = 0xffffffffULL;
	lapic_write(LAPIC_TDCR, 0x3);
	lapic_write(LAPIC_TIMER, VEC_TIMER);     /* one-shot, unmasked */
	lapic_write(LAPIC_TICR, count ? count : 1);
}

void delay_us(uint64_t us)
{
	uint64_t end = time_ns() + us * 1000;

	while (time_ns() < end)
		cpu_relax();
}
