/* Lodge Mini-OS: shared declarations. */
#ifndef MINIOS_H
#define MINIOS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define MINIOS_VERSION "0.1.0"
#define MAX_CPUS 64

/* lib.c */
void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
uint64_t strtou64(const char *s, const char **end);
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* uart.c: COM1 */
void uart_init(void);
void uart_putc(char c);
void uart_puts(const char *s);
void uart_rx_irq(void);
/* The key that followed a serial BREAK (a sysrq, as Linux reads it), or
 * -1; taking it clears it. */
int uart_take_sysrq(void);
#define VEC_NMI 2
extern volatile unsigned nmi_count;
int uart_getc(void);           /* -1 if nothing received */
int uart_at_line_start(void);  /* the last character written was a newline */

/* apic.c: local APIC, IOAPIC, IDT, time */
typedef void (*irq_handler_t)(void);
void idt_init(void);
void idt_load(void);
void idt_set(unsigned vector, irq_handler_t fn);
void lapic_init(void);
void lapic_eoi(void);
uint32_t lapic_id(void);
void lapic_send_ipi(uint32_t apic_id, uint32_t icr_low);
void ioapic_route(unsigned pin, unsigned vector, int level_triggered);
uint64_t time_ns(void);        /* monotonic, from the LAPIC timer */
void delay_us(uint64_t us);
void timer_arm_ns(uint64_t ns);  /* one wake-up interrupt in ns (BSP only); 0 disarms */
void ap_idle_init(void);

/* acpi.c */
struct acpi_info {
	uint64_t rsdp;
	char tables[16][5];
	uint64_t table_addr[16];
	unsigned ntables;
	unsigned ncpus;                 /* enabled LAPICs in the MADT */
	uint32_t apic_ids[MAX_CPUS];
	const uint8_t *fadt, *dsdt;
};
extern struct acpi_info acpi;
int acpi_init(uint64_t rsdp_hint);
int acpi_s5_type(unsigned *slp_typ);

/* smp.c */
extern volatile unsigned cpus_up;
void smp_start(void);
/* Run fn(cpu) on application processor cpu (1..cpus_up-1); 0 if it took it. */
int smp_run_on(unsigned cpu, void (*fn)(unsigned cpu));
/* CPU hot-plug (hotplug.c): start a plugged CPU, park one the host wants
 * back (before the eject); 0 or -1. */
int smp_cpu_start(uint32_t apic_id);
int smp_cpu_park(uint32_t apic_id);

/* power.c */
void power_off(void);
void power_reboot(void);
void power_crash(void);
void power_button_init(void);
int power_port_write_ends(uint16_t port, unsigned size, uint32_t v);
/* hostile.c */
void hostile_init(void);

/* shell.c */
struct command {
	const char *name, *args, *help;
	void (*run)(int argc, char **argv);
};
void shell_init(void);
void insn_init(void);
/* An exception (vector < 32) handled by its owner returns 1; else Mini-OS halts. */
extern int (*isr_exception_hook)(uint64_t vector, uint64_t *frame);
void shell_register(const struct command *cmds, unsigned n);
/* Called after every wake-up of the idle shell (device polling). */
void shell_set_poll(void (*fn)(void));
void shell_run_line(char *line);
void shell_loop(void);
void shell_run_cmdline(const char *cmdline);
/* Background tasks: run by the shell's loop, between device polls and
 * console input, on the BSP.  step(now) does a short piece of work and
 * sets due (ns, time_ns()); the loop sleeps (LAPIC timer, hlt) until the
 * earliest due.  period bounds how far ahead due may lie: a clock that
 * jumped (a restore onto another TSC) is clamped, never waited out. */
struct task {
	const char *name;
	void (*step)(struct task *t, uint64_t now);
	uint64_t due, period;
	int active;
};
void task_start(struct task *t, uint64_t now);
void task_stop(struct task *t);
void tasks_stop_all(void);
/* tasks.c: counter, memfill, memcheck, dirty (save/restore and migration tests) */
void tasks_init(void);

/* blk.c, net.c */
void blk_init(void);
/* A disk hot-plugged into PCI slot slot / to be taken out of it: 0, or -1
 * if no disk of ours is there. */
int blk_hotplug_add(unsigned slot);
int blk_hotplug_remove(unsigned slot);
/* Forget the disks whose slot is empty now, or holds a device just
 * plugged (bit N of plugged: slot N): the host removed ours by force. */
void blk_hotplug_check(uint32_t plugged);
/* net.c: a vif hot-plugged into slot, taken out of it (ejected: the
 * device is still there to reset; else the host removed it by force). */
int net_hotplug_add(unsigned slot);
int net_hotplug_remove(unsigned slot, int ejected);
void net_hotplug_check(uint32_t plugged);
/* hotplug.c: PCI hot-plug (the SCI's GPE, then hotplug_poll). */
void hotplug_init(void);
void hotplug_sci(void);
void hotplug_poll(void);
void net_init(void);
void net_poll(void);

/* page.c: free RAM as 4 KiB pages, shared by kalloc, the balloon and touch */
#define LOW_RAM_MAX   0xc0000000ULL   /* RAM above is at 4 GiB, not mapped cacheable */
#define PAGESET_WORDS (LOW_RAM_MAX >> 12 >> 6)
struct pageset {
	uint64_t *bits;               /* bit set: page in the set */
	long top;                     /* no bit set in a word above this */
	uint64_t count;
};
extern struct pageset free_pages, balloon_set;
extern uint64_t pages_total;      /* RAM pages the pool started with */
void page_add_range(uint64_t start, uint64_t end);
/* Take up to want (1..64) pages, highest first, all within one 64-page
 * word: returns the mask taken (0: the set is empty), *base_pfn its bit 0. */
uint64_t pageset_take(struct pageset *s, unsigned want, uint64_t *base_pfn);
void pageset_give(struct pageset *s, uint64_t base_pfn, uint64_t mask);
/* Take [start, end) from the free set (kalloc); -1, taking nothing, if
 * any page of it is not free. */
int page_reserve(uint64_t start, uint64_t end);
/* Write to npages free pages (they stay free); returns how many. */
uint64_t page_touch_free(uint64_t npages);
/* Take a run of npages (rounded up to 64) contiguous free pages, the
 * highest run that fits: its address, or 0.  page_give_run returns it. */
uint64_t page_take_run(uint64_t npages);
void page_give_run(uint64_t addr, uint64_t npages);

/* balloon.c */
void balloon_init(void);
void balloon_poll(void);

/* main.c */
extern const char *boot_cmdline;
extern uint64_t ram_bytes;
/* RAM in whole MiB as the host gave it (the memory map's holes rounded off). */
static inline uint64_t ram_mib(void) { return (ram_bytes + 0xfffff) >> 20; }
const char *cmdline_get(const char *key, char *buf, size_t len);

#endif
