/* Differentiated System Description Table (ACPI 6.x, 5.2.11.1): the AML
 * namespace of the guest.  In ASL it reads:
 *
 *   DefinitionBlock ("", "DSDT", 2, "LODGE ", "LODGEVM ", 1) {
 *       Name (_S5, Package (4) { 5, 5, 0, 0 })      // ACPI_S5_SLP_TYP
 *       Scope (\_SB) {
 *           Device (C000) { Name (_HID, "ACPI0007") Name (_UID, 0) }
 *           ...                                      // one per vCPU
 *           Device (COM1) {
 *               Name (_HID, EisaId ("PNP0501"))
 *               Name (_UID, 1)
 *               Name (_CRS, ResourceTemplate () {
 *                   IO (Decode16, 0x3F8, 0x3F8, 0x00, 0x08)
 *                   IRQNoFlags () { 4 }
 *               })
 *           }
 *       }
 *   }
 *
 * Processor devices (8.4, "ACPI0007") carry _UID = the MADT Processor UID,
 * which is how the OS pairs them with the Local APIC entries. */
#include "tables.h"
#include "aml.h"
#include "platform.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Revision 2 and above: AML integers are 64 bits (5.2.11.1). */
#define DSDT_REVISION 2
#define COM1_PORTS    8

/* \_S5 (7.4.2.4): SLP_TYPa, SLP_TYPb, then two reserved elements. */
static void dsdt_sleep_states(struct aml *a)
{
	size_t pkg;

	aml_name(a, "_S5");
	pkg = aml_package_begin(a, 4);
	aml_integer(a, ACPI_S5_SLP_TYP);
	aml_integer(a, ACPI_S5_SLP_TYP);
	aml_integer(a, 0);
	aml_integer(a, 0);
	aml_end(a, pkg);
}

static void dsdt_processors(struct aml *a, unsigned int ncpus)
{
	for (unsigned int cpu = 0; cpu < ncpus; cpu++) {
		char name[8];
		size_t dev;

		snprintf(name, sizeof(name), "C%03X", cpu & 0xFFF);
		dev = aml_device_begin(a, name);
		aml_name(a, "_HID");
		aml_string(a, "ACPI0007");
		aml_name(a, "_UID");
		aml_integer(a, cpu);
		aml_end(a, dev);
	}
}

static void dsdt_com1(struct aml *a)
{
	size_t dev, res;

	dev = aml_device_begin(a, "COM1");
	aml_name(a, "_HID");
	aml_eisaid(a, "PNP0501");        /* 16550A-compatible UART */
	aml_name(a, "_UID");
	aml_integer(a, 1);
	aml_name(a, "_CRS");
	res = aml_restemplate_begin(a);
	aml_res_io16(a, PORT_COM1, PORT_COM1, 0, COM1_PORTS);
	aml_res_irq_noflags(a, IRQ_COM1);
	aml_restemplate_end(a, res);
	aml_end(a, dev);
}

int acpi_dsdt_write(struct acpi_area *a, const struct acpi_platform *plat, uint64_t *gpa)
{
	struct acpi_table_header *h;
	struct aml aml;
	size_t sb, len;
	int rc = 0;

	aml_init(&aml);
	dsdt_sleep_states(&aml);
	sb = aml_scope_begin(&aml, "\\_SB");
	dsdt_processors(&aml, plat->ncpus);
	dsdt_com1(&aml);
	aml_end(&aml, sb);
	if (aml.err) {
		rc = aml.err;
		goto out;
	}

	len = sizeof(*h) + aml.len;
	if (len > UINT32_MAX || !(h = acpi_area_alloc(a, len, 16, gpa))) {
		rc = -ENOSPC;
		goto out;
	}
	acpi_header_init(h, "DSDT", (uint32_t)len, DSDT_REVISION);
	memcpy((uint8_t *)h + sizeof(*h), aml.buf, aml.len);
	acpi_table_finish(h);
out:
	aml_free(&aml);
	return rc;
}
