/* ACPI tables lodge-hyp writes for the guest: RSDP, XSDT, FADT, FACS, MADT,
 * DSDT.  A stock Linux (built without X86_MPPARSE) learns its CPUs only from
 * the MADT, and powers off through \_S5 and the FADT's PM1a control block. */
#ifndef LODGE_ACPI_H
#define LODGE_ACPI_H

#include <stdint.h>
#include "mem.h"

struct acpi_platform {
	unsigned int ncpus;          /* one LAPIC per vCPU (maxvcpus), APIC IDs 0..ncpus-1 */
	unsigned int nonline;        /* the first nonline enabled (0: all); the rest hot-pluggable (cpuhp.h) */
};

/* Write the tables into guest RAM at [GPA_ACPI_BASE, GPA_ACPI_END).
 * Returns 0 and stores the RSDP's GPA, or -errno (-ENOSPC if they do not fit). */
int acpi_build(const struct guest_mem *mem, const struct acpi_platform *plat,
	       uint64_t *rsdp_gpa);

#endif
