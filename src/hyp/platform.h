/* The guest platform lodge-hyp presents: guest-physical layout, I/O ports
 * and interrupt lines. One place, so the loaders, the ACPI tables, the
 * devices and Mini-OS's expectations cannot drift apart. */
#ifndef LODGE_PLATFORM_H
#define LODGE_PLATFORM_H

#include "schema.h"

/* ---- guest-physical memory map (low 1 MiB) ---- */
#define GPA_BOOT_GDT        0x00000500ULL  /* GDT for the 64-bit bzImage entry */
#define GPA_PVH_START_INFO  0x00006000ULL  /* hvm_start_info, memmap, modlist (4 KiB) */
#define GPA_ZERO_PAGE       0x00007000ULL  /* Linux boot_params */
#define GPA_BOOT_PML4       0x00009000ULL  /* identity page tables for bzImage 64-bit entry */
#define GPA_BOOT_PDPT       0x0000A000ULL
#define GPA_BOOT_PD         0x0000B000ULL  /* 4 pages: identity map of 4 GiB in 2 MiB pages */
#define GPA_CMDLINE         0x00020000ULL
#define CMDLINE_MAX         4096
#define GPA_EBDA            0x0009FC00ULL  /* end of usable low RAM */
#define GPA_ACPI_BASE       0x000E0000ULL  /* RSDP first (legacy scan finds it), then tables */
#define GPA_ACPI_END        0x00100000ULL
#define GPA_KERNEL_LOW      0x00100000ULL  /* 1 MiB */

/* RAM above this is placed at 4 GiB; the hole holds PCI MMIO, IOAPIC, LAPIC. */
#define GPA_LOW_RAM_MAX     0xC0000000ULL
#define GPA_HIGH_RAM_BASE   0x100000000ULL
#define GPA_PCI_MMIO_BASE   0xC0000000ULL  /* PCI memory BARs: [BASE, END), the DSDT's PCI0 _CRS */
#define GPA_PCI_MMIO_END    GPA_IOAPIC
#define GPA_IOAPIC          0xFEC00000ULL
#define GPA_LAPIC           0xFEE00000ULL

/* ---- I/O ports ---- */
#define PORT_COM1           0x3F8
#define PORT_I8042_DATA     0x60
#define PORT_I8042_CMD      0x64          /* write 0xFE: pulse reset line */
#define PORT_POST           0x80
#define PCI_CONF1_PORT      0xCF8         /* PCI configuration mechanism #1: address, data */
#define PCI_CONF1_PORTS     8
/* PCI hot-plug and its GPE0 block: src/common/pcihp.h (Mini-OS reads it too). */
/* ACPI fixed hardware (FADT). */
#define PORT_PM1A_EVT       0x600         /* 4 bytes: PM1_STS (2), PM1_EN (2) */
#define PORT_PM1A_CNT       0x604         /* 2 bytes: SCI_EN, SLP_TYP (bits 10-12), SLP_EN (bit 13) */
#define PORT_SLEEP_CTL      0x608         /* 1 byte: ACPI 5 sleep control: SLP_TYP (bits 2-4), SLP_EN (bit 5) */
#define PORT_SLEEP_STS      0x609         /* 1 byte: ACPI 5 sleep status */
#define PORT_ACPI_RESET     0x60A         /* 1 byte: FADT RESET_REG */
#define ACPI_RESET_VALUE    0x01
#define ACPI_S5_SLP_TYP     5             /* the value \_S5 in our DSDT carries */

/* ---- interrupts (GSIs; the IOAPIC's pins 0-23) ---- */
#define IRQ_COM1            4
#define IRQ_SCI             9
#define IOAPIC_PINS         24

#endif
