/* ACPI PCI hot-plug as lodge-hyp presents it (src/hyp/dev/pcihp.c) and
 * its guests serve it: Linux's acpiphp through the DSDT's AML
 * (src/hyp/acpi/dsdt.c), Lodge Mini-OS by reading these registers itself.
 * Defined once here, freestanding (no libc), for both.
 *
 * The model is QEMU's PIIX4 hot-plug (docs/specs/acpi_pci_hotplug.rst):
 * a bit in the FADT's GPE0 block raises the SCI; \_GPE._E01 calls
 * \_SB.PCI0.PCNT, which reads which slots came up and which the host wants
 * ejected and notifies each slot's device (Device Check, Eject Request);
 * a slot's _EJ0 writes its bit to the eject register, and only that write
 * removes the device.  One bus (bus 0), so no bus-select register.
 *
 * Every register is 32 bits, one bit per slot (bit N: device N on bus 0),
 * in I/O space, read and written with 32-bit accesses. */
#ifndef LODGE_PCIHP_H
#define LODGE_PCIHP_H

/* GPE0 block (ACPI 6.x 4.8.4.1): GPE0_STS (2 bytes, write 1 to clear)
 * then GPE0_EN (2 bytes); the FADT's GPE0_BLK and GPE0_BLK_LEN. */
#define PCIHP_GPE0_PORT      0x620
#define PCIHP_GPE0_LEN       4
#define PCIHP_GPE_BIT        1           /* \_GPE._E01, as QEMU's PIIX4 */

#define PCIHP_PORT           0x630
#define PCIHP_LEN            0x10
/* Read: slots a device was plugged into since the last read (the read
 * clears them).  The guest rescans these. */
#define PCIHP_UP             0x0
/* Read: slots whose device the host asks the guest to give up; a bit
 * stays set until the guest ejects the slot or the host withdraws. */
#define PCIHP_DOWN           0x4
/* Write: slots the guest has finished with: the devices of those the host
 * asked for (PCIHP_DOWN) are removed, other bits are ignored.  Reads as 0. */
#define PCIHP_EJECT          0x8
/* Read: slots that hold a device that may be hot-unplugged. */
#define PCIHP_PRESENT        0xc

/* Slot 0 is the host bridge; hot-plug serves slots 1 to 31. */
#define PCIHP_SLOTS          32
#define PCIHP_FIRST_SLOT     1

/* AML names for the DSDT: the slot devices are \_SB.PCI0.Snn (hex). */
#define PCIHP_SLOT_NAME_FMT  "S%02X"

#endif
