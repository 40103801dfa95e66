/* Power: poweroff through \_S5 and the FADT's PM1 control block (or the
 * ACPI 5 sleep control register on hardware-reduced platforms), reboot
 * through the FADT reset register (or the i8042 reset line), a
 * deliberate triple fault, and the fixed-feature power button. */
#include "io.h"
#include "minios.h"

#define FADT_SCI_INT       46
#define FADT_SMI_CMD       48
#define FADT_ACPI_ENABLE   52
#define FADT_PM1A_EVT      56
#define FADT_PM1B_EVT      60
#define FADT_PM1A_CNT      64
#define FADT_PM1B_CNT      68
#define FADT_PM1_EVT_LEN   88
#define FADT_FLAGS         112
#define FADT_RESET_REG     116
#define FADT_RESET_VALUE   128
#define FADT_X_PM1A_EVT    148
#define FADT_X_PM1A_CNT    172
#define FADT_SLEEP_CTL     244
#define FLAG_RESET_REG_SUP (1u << 10)
#define FLAG_HW_REDUCED    (1u << 20)
#define PM1_SCI_EN         0x0001
#define PM1_SLP_EN         (1u << 13)
#define PM1_PWRBTN         0x0100
#define VEC_SCI            0x29

struct gas { uint8_t space, bit_width, bit_offset, access; uint64_t addr; } __attribute__((packed));

static uint32_t fadt32(unsigned off) { uint32_t v; memcpy(&v, acpi.fadt + off, 4); return v; }
static uint32_t fadt_len(void) { return fadt32(4); }

static int fadt_gas(unsigned off, struct gas *g)
{
	if (!acpi.fadt || fadt_len() < off + sizeof(*g))
		return -1;
	memcpy(g, acpi.fadt + off, sizeof(*g));
	return g->addr ? 0 : -1;
}

static void gas_write(const struct gas *g, uint32_t v, unsigned size)
{
	if (g->space == 1) {             /* system I/O */
		if (size == 1) outb(g->addr, v);
		else if (size == 2) outw(g->addr, v);
		else outl(g->addr, v);
	} else if (g->space == 0) {      /* system memory */
		if (size == 1) mmio_write8(g->addr, v);
		else if (size == 2) mmio_write16(g->addr, v);
		else mmio_write32(g->addr, v);
	}
}

static uint16_t pm1a_evt_port(void)
{
	struct gas g;

	if (fadt_gas(FADT_X_PM1A_EVT, &g) == 0 && g.space == 1)
		return g.addr;
	return fadt32(FADT_PM1A_EVT);
}

static uint16_t pm1_cnt_port(unsigned x_off, unsigned off)
{
	struct gas g;

	if (fadt_gas(x_off, &g) == 0 && g.space == 1)
		return g.addr;
	return fadt32(off);
}

/* Would writing V (SIZE bytes) to PORT power the machine off or reset it?
 * hostile.c steers clear of these: a guest that turns itself off is
 * within its rights, and would only end the test early. */
int power_port_write_ends(uint16_t port, unsigned size, uint32_t v)
{
	uint16_t a = acpi.fadt ? pm1_cnt_port(FADT_X_PM1A_CNT, FADT_PM1A_CNT) : 0;
	uint16_t b = acpi.fadt ? fadt32(FADT_PM1B_CNT) : 0;
	struct gas g;
	unsigned i;

	for (i = 0; i < size; i++) {
		uint16_t p = port + i;
		uint8_t byte = v >> (8 * i);

		if ((a && p == a + 1 && (byte & 0x20)) || (b && p == b + 1 && (byte & 0x20)))
			return 1;                /* SLP_EN, bit 13 of PM1_CNT */
		if (acpi.fadt && fadt_gas(FADT_SLEEP_CTL, &g) == 0 && g.space == 1 && p == g.addr && (byte & 0x20))
			return 1;                /* SLP_EN of the sleep control register */
		if (acpi.fadt && fadt_gas(FADT_RESET_REG, &g) == 0 && g.space == 1 && p == g.addr &&
		    byte == acpi.fadt[FADT_RESET_VALUE])
			return 1;
		if ((p == 0x64 && byte >= 0xf0) || (p == 0xcf9 && (byte & 4)) || (p == 0x92 && (byte & 1)))
			return 1;                /* i8042 output-port pulses, PCI reset control, fast reset */
	}
	return 0;
}

void power_off(void)
{
	unsigned slp_typ = 5;
	struct gas g;

	printf("minios: powering off\n");
	if (!acpi.fadt || acpi_s5_type(&slp_typ)) {
		printf("minios: no ACPI S5; halting\n");
		goto halt;
	}
	irq_disable();
	if ((fadt32(FADT_FLAGS) & FLAG_HW_REDUCED) && fadt_gas(FADT_SLEEP_CTL, &g) == 0) {
		gas_write(&g, (slp_typ << 2) | (1 << 5), 1);
	} else {
		uint16_t a = pm1_cnt_port(FADT_X_PM1A_CNT, FADT_PM1A_CNT);
		uint16_t b = fadt32(FADT_PM1B_CNT);

		outw(a, (inw(a) & ~(7u << 10)) | (slp_typ << 10) | PM1_SLP_EN);
		if (b)
			outw(b, (inw(b) & ~(7u << 10)) | (slp_typ << 10) | PM1_SLP_EN);
	}
halt:
	for (;;)
		__asm__ volatile("cli; hlt");
}

void power_reboot(void)
{
	struct gas g;

	printf("minios: rebooting\n");
	irq_disable();
	if (acpi.fadt && (fadt32(FADT_FLAGS) & FLAG_RESET_REG_SUP) && fadt_gas(FADT_RESET_REG, &g) == 0)
		gas_write(&g, acpi.fadt[FADT_RESET_VALUE], 1);
	outb(0x64, 0xfe);                /* the keyboard controller's reset line */
	for (;;)
		__asm__ volatile("cli; hlt");
}

void power_crash(void)
{
	struct { uint16_t limit; uint64_t base; } __attribute__((packed)) none = { 0, 0 };

	printf("minios: triple fault\n");
	/* No IDT: the exception cannot be delivered, nor the double fault. */
	__asm__ volatile("cli; lidt %0; int3" :: "m"(none));
	for (;;)
		;
}

/* pwrbtn=ignore on the command line: a guest that hears the button and
 * does nothing (tests of what the host does when a shutdown times out). */
static int pwrbtn_ignored;

/* The SCI: a power button press powers off, as a distribution's
 * acpid or logind would. */
static void sci_interrupt(void)
{
	uint16_t port = pm1a_evt_port();
	uint16_t sts = inw(port);

	hotplug_sci();

	if (sts & PM1_PWRBTN) {
		outw(port, PM1_PWRBTN);  /* write 1 to clear */
		printf("minios: power button pressed%s\n", pwrbtn_ignored ? " (ignored)" : "");
		if (!pwrbtn_ignored)
			power_off();
	}
	if (sts)
		outw(port, sts);
}

void power_button_init(void)
{
	uint16_t evt, en, cnt;
	uint8_t evt_len;
	uint32_t smi;

	char how[16];

	if (!acpi.fadt || (fadt32(FADT_FLAGS) & FLAG_HW_REDUCED))
		return;
	pwrbtn_ignored = cmdline_get("pwrbtn", how, sizeof(how)) && strcmp(how, "ignore") == 0;
	evt = pm1a_evt_port();
	evt_len = acpi.fadt[FADT_PM1_EVT_LEN];
	cnt = pm1_cnt_port(FADT_X_PM1A_CNT, FADT_PM1A_CNT);
	smi = fadt32(FADT_SMI_CMD);
	/* Firmware that boots in legacy mode wants ACPI switched on. */
	if (smi && cnt && !(inw(cnt) & PM1_SCI_EN)) {
		outb(smi, acpi.fadt[FADT_ACPI_ENABLE]);
		for (int i = 0; i < 1000 && !(inw(cnt) & PM1_SCI_EN); i++)
			cpu_relax();
	}
	if (!evt || evt_len < 4)
		return;
	en = evt + evt_len / 2;
	outw(evt, 0xffff);                   /* clear stale status */
	idt_set(VEC_SCI, sci_interrupt);
	ioapic_route(*(const uint16_t *)(acpi.fadt + FADT_SCI_INT), VEC_SCI, 1);
	outw(en, PM1_PWRBTN);
}
