/* ACPI PCI hot-plug served as a guest without an AML interpreter would:
 * the SCI's GPE (the FADT's GPE0 block) says something changed; then the
 * controller's registers (src/common/pcihp.h, the same ones the DSDT's
 * PCNT method reads) say which slots came up -- rescan them and start a
 * new virtio disk or NIC -- and which the host wants back: stop using the
 * device and write the eject register, as a slot's _EJ0 does.
 * "hotplug-ignore on" makes it ignore eject requests (the host's detach
 * then times out). */
#include "io.h"
#include "minios.h"
#include "../common/pcihp.h"

#define FADT_GPE0_BLK      80
#define FADT_GPE0_BLK_LEN  92

static uint16_t gpe0_sts, gpe0_en;      /* 0: no GPE0 block */
static volatile int pending;
static int ignore_ejects;

static uint8_t gpe_mask(void) { return (uint8_t)(1u << (PCIHP_GPE_BIT % 8)); }

/* From the SCI handler (power.c): claim our GPE, leave the work to
 * hotplug_poll outside the interrupt. */
void hotplug_sci(void)
{
	uint16_t port = gpe0_sts + PCIHP_GPE_BIT / 8;

	if (!gpe0_sts || !(inb(port) & gpe_mask()))
		return;
	outb(port, gpe_mask());                   /* write 1 to clear: the level drops */
	pending = 1;
}

void hotplug_poll(void)
{
	uint32_t up, down;
	unsigned s;

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
}
