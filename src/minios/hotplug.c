/* ACPI PCI hot-plug served as a guest without an AML interpreter would:
 * the SCI's GPE (the FADT's GPE0 block) says something changed; then the
 * controller's registers (src/common/pcihp.h, the same ones the DSDT's
 * PCNT method reads) say which slots came up -- rescan them and start a
 * new virtio disk or NIC -- and which the host wants back: stop using the
 * device and write the eject register, as a slot's _EJ0 does.
 * "hotplug-ignore on" makes it ignore eject requests (the host's detach
 * then times out).
 *
 * CPU hot-plug (src/common/cpuhp.h) is served the same way on its own
 * GPE: a CPU inserted is started (INIT, SIPI) and said online; one the
 * host asks back is parked and ejected, unless "hotplug-ignore on". */
#include "io.h"
#include "minios.h"
#include "../common/pcihp.h"
#include "../common/cpuhp.h"

#define FADT_GPE0_BLK      80
#define FADT_GPE0_BLK_LEN  92

static uint16_t gpe0_sts, gpe0_en;      /* 0: no GPE0 block */
static volatile int pending, cpu_pending;
static int ignore_ejects;

static uint8_t gpe_mask(void) { return (uint8_t)(1u << (PCIHP_GPE_BIT % 8)); }
static uint8_t cpu_gpe_mask(void) { return (uint8_t)(1u << (CPUHP_GPE_BIT % 8)); }

/* One of cpuhp.h's 64-bit registers, low half first. */
static uint64_t cpuhp_read64(uint16_t reg)
{
	uint64_t lo = inl(CPUHP_PORT + reg);

	return lo | (uint64_t)inl(CPUHP_PORT + reg + CPUHP_HI) << 32;
}

static void cpuhp_poll(void)
{
	uint64_t insert, remove;
	unsigned n;

	if (!cpu_pending)
		return;
	cpu_pending = 0;
	insert = cpuhp_read64(CPUHP_INSERT);      /* reading clears it */
	remove = cpuhp_read64(CPUHP_REMOVE);
	for (n = 0; n < CPUHP_CPUS; n++) {
		uint64_t bit = 1ull << n;

		if (insert & bit) {
			if (smp_cpu_start(n))
				printf("minios: cpu %u did not start\n", n);
			else
				printf("minios: cpu %u online\n", n);
		}
		if (!(remove & bit))
			continue;
		if (ignore_ejects) {
			printf("minios: cpu %u: eject request ignored\n", n);
			continue;
		}
		if (smp_cpu_park(n)) {
			printf("minios: cpu %u cannot be parked\n", n);
			continue;
		}
		printf("minios: cpu %u offline\n", n);
		if (n < 32)
			outl(CPUHP_PORT + CPUHP_EJECT, (uint32_t)bit);
		else
			outl(CPUHP_PORT + CPUHP_EJECT + CPUHP_HI, (uint32_t)(bit >> 32));
	}
}

/* From the SCI handler (power.c): claim our GPE, leave the work to
 * hotplug_poll outside the interrupt. */
void hotplug_sci(void)
{
	uint16_t port = gpe0_sts + PCIHP_GPE_BIT / 8, cpu_port = gpe0_sts + CPUHP_GPE_BIT / 8;

	if (!gpe0_sts)
		return;
	if (inb(cpu_port) & cpu_gpe_mask()) {
		outb(cpu_port, cpu_gpe_mask());
		cpu_pending = 1;
	}
	if (!(inb(port) & gpe_mask()))
		return;
	outb(port, gpe_mask());                   /* write 1 to clear: the level drops */
	pending = 1;
}

void hotplug_poll(void)
{
	uint32_t up, down;
	unsigned s;

	cpuhp_poll();
	if (!pending)
		return;
	pending = 0;
	up = inl(PCIHP_PORT + PCIHP_UP);          /* reading clears it */
	down = inl(PCIHP_PORT + PCIHP_DOWN);
	blk_hotplug_check(up);
	net_hotplug_check(up);
	for (s = PCIHP_FIRST_SLOT; s < PCIHP_SLOTS; s++) {
		uint32_t bit = 1u << s;

		if ((up & bit) && blk_hotplug_add(s) && net_hotplug_add(s))
			printf("hotplug: slot %u: a device this guest does not drive\n", s);
		if (!(down & bit))
			continue;
		if (ignore_ejects) {
			printf("hotplug: slot %u: eject request ignored\n", s);
			continue;
		}
		if (blk_hotplug_remove(s))
			net_hotplug_remove(s, 1);
		outl(PCIHP_PORT + PCIHP_EJECT, bit);
		printf("hotplug: slot %u ejected\n", s);
	}
}

static void cmd_hotplug_ignore(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "on") || !strcmp(argv[1], "off")))
		ignore_ejects = !strcmp(argv[1], "on");
	printf("hotplug: eject requests are %s\n", ignore_ejects ? "ignored" : "served");
}

static const struct command hotplug_commands[] = {
	{ "hotplug-ignore", "[on|off]", "ignore the host's eject requests (or serve them again)", cmd_hotplug_ignore },
};

void hotplug_init(void)
{
	uint32_t blk = 0;
	uint8_t len = 0;

	shell_register(hotplug_commands, sizeof(hotplug_commands) / sizeof(hotplug_commands[0]));
	if (acpi.fadt) {
		memcpy(&blk, acpi.fadt + FADT_GPE0_BLK, 4);
		len = acpi.fadt[FADT_GPE0_BLK_LEN];
	}
	if (!blk || len < 2 || PCIHP_GPE_BIT / 8 >= len / 2)
		return;
	gpe0_sts = (uint16_t)blk;
	gpe0_en = (uint16_t)(blk + len / 2);
	outb(gpe0_sts + PCIHP_GPE_BIT / 8, gpe_mask());     /* stale status */
	outb(gpe0_en + PCIHP_GPE_BIT / 8, inb(gpe0_en + PCIHP_GPE_BIT / 8) | gpe_mask());
	printf("hotplug: PCI hot-plug on GPE %u\n", PCIHP_GPE_BIT);
	if (CPUHP_GPE_BIT / 8 < len / 2) {
		outb(gpe0_sts + CPUHP_GPE_BIT / 8, cpu_gpe_mask());
		outb(gpe0_en + CPUHP_GPE_BIT / 8, inb(gpe0_en + CPUHP_GPE_BIT / 8) | cpu_gpe_mask());
		printf("hotplug: CPU hot-plug on GPE %u\n", CPUHP_GPE_BIT);
	}
}
