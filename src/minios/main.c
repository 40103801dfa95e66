/* Lodge Mini-OS: boot, report, serve the console. */
#include "io.h"
#include "minios.h"

#define HVM_START_MAGIC 0x336ec578
#define VEC_UART 0x24
#define VEC_VIRTIO_WAKE 0x30          /* VEC_VIRTIO: wakes the shell loop */

static void virtio_interrupt(void) { }

/* After every wake-up of the idle shell. */
static void poll_devices(void)
{
	net_poll();
	balloon_poll();
	hotplug_poll();
}

struct hvm_start_info {
	uint32_t magic, version, flags, nr_modules;
	uint64_t modlist_paddr, cmdline_paddr, rsdp_paddr, memmap_paddr;
	uint32_t memmap_entries, reserved;
};
struct hvm_memmap_entry { uint64_t addr, size; uint32_t type, reserved; };

static char cmdline_buf[2048];
const char *boot_cmdline = cmdline_buf;
uint64_t ram_bytes;

/* KEY=VALUE from the command line, or NULL. */
const char *cmdline_get(const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key), n = 0;
	const char *s = cmdline_buf;

	for (; *s; s++) {
		if ((s == cmdline_buf || s[-1] == ' ') && strncmp(s, key, klen) == 0 && s[klen] == '=') {
			s += klen + 1;
			while (*s && *s != ' ' && n + 1 < len)
				buf[n++] = *s++;
			buf[n] = '\0';
			return buf;
		}
	}
	return NULL;
}

static uint64_t read_start_info(const struct hvm_start_info *si)
{
	const struct hvm_memmap_entry *mm;
	uint32_t i;

	if (si->magic != HVM_START_MAGIC)
		return 0;
	if (si->cmdline_paddr) {
		const char *c = (const char *)si->cmdline_paddr;

		for (i = 0; c[i] && i + 1 < sizeof(cmdline_buf); i++)
			cmdline_buf[i] = c[i];
		cmdline_buf[i] = '\0';
	}
	if (si->version >= 1 && si->memmap_paddr) {
		extern char _end[];
		/* The page pool starts where kalloc does, past the kernel. */
		uint64_t pool = ((uint64_t)_end + 0xfffff) & ~0xfffffULL;

		mm = (const void *)si->memmap_paddr;
		for (i = 0; i < si->memmap_entries; i++)
			if (mm[i].type == 1) {
				ram_bytes += mm[i].size;
				if (mm[i].addr + mm[i].size > pool)
					page_add_range(mm[i].addr > pool ? mm[i].addr : pool,
						       mm[i].addr + mm[i].size);
			}
	}
	return si->rsdp_paddr;
}

void kmain(const struct hvm_start_info *si)
{
	uint64_t rsdp;
	unsigned i;

	/* First, before anything else: the line the boot benchmark waits for. */
	uart_puts("Lodge Mini-OS " MINIOS_VERSION "\n");
	rsdp = read_start_info(si);

	idt_init();
	lapic_init();
	outb(0x21, 0xff);                /* mask the 8259s: the IOAPIC routes */
	outb(0xa1, 0xff);
	uart_init();
	idt_set(VEC_UART, uart_rx_irq);
	ioapic_route(4, VEC_UART, 0);
	irq_enable();

	if (acpi_init(rsdp) == 0) {
		char line[128];
		size_t n = snprintf(line, sizeof(line), "acpi:");

		for (i = 0; i < acpi.ntables; i++)
			n += snprintf(line + n, sizeof(line) - n, " %s", acpi.tables[i]);
		printf("%s\n", line);
	} else {
		printf("acpi: no tables found\n");
	}
	printf("mem: %lu MiB RAM\n", ram_bytes >> 20);
	power_button_init();
	smp_start();
	shell_init();
	idt_set(VEC_VIRTIO_WAKE, virtio_interrupt);
	blk_init();
	net_init();
	balloon_init();
	hotplug_init();
	hostile_init();
	insn_init();
	shell_set_poll(poll_devices);
	shell_run_cmdline(boot_cmdline);
	shell_loop();
}
