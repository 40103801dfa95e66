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
 *           Device (PCI0) {                          // the host bridge, bus 0
 *               Name (_HID, EisaId ("PNP0A03"))
 *               Name (_UID, 0)
 *               Name (_CRS, ResourceTemplate () {
 *                   WordBusNumber (ResourceProducer, MinFixed, MaxFixed, PosDecode,
 *                                  0, 0, 0, 0, 1)
 *                   IO (Decode16, 0xCF8, 0xCF8, 0x01, 0x08)
 *                   WordIO (..., EntireRange, 0, 0x0000, 0x0CF7, 0, 0x0CF8)
 *                   WordIO (..., EntireRange, 0, 0x0D00, 0xFFFF, 0, 0xF300)
 *                   DWordMemory (..., NonCacheable, ReadWrite,
 *                                0, 0xC0000000, 0xFEBFFFFF, 0, 0x3EC00000)
 *               })
 *               OperationRegion (PCST, SystemIO, 0x630, 0x10)    // pcihp.h
 *               Field (PCST, DWordAcc, NoLock, WriteAsZeros) {
 *                   PCIU, 32, PCID, 32, B0EJ, 32, PCPR, 32
 *               }
 *               Device (S01) {                       // ... to S1F
 *                   Name (_ADR, 0x00010000)
 *                   Name (_SUN, 1)
 *                   Method (_EJ0, 1) { Store (0x02, B0EJ) }
 *               }
 *               Method (PCNT, 0) {
 *                   Store (PCIU, Local0)              // the read clears it
 *                   Store (PCID, Local1)
 *                   If (And (Local0, 0x02)) { Notify (S01, 1) }   // Device Check
 *                   If (And (Local1, 0x02)) { Notify (S01, 3) }   // Eject Request
 *                   ...
 *               }
 *           }
 *       }
 *       Scope (\_GPE) { Method (_E01) { \_SB.PCI0.PCNT () } }
 *   }
 *
 * The PCI0 _CRS is what dev/pci.c decodes: bus 0 only, configuration
 * mechanism #1 at 0xCF8, and memory BARs only inside [GPA_PCI_MMIO_BASE,
 * GPA_IOAPIC) (RAM above it starts at 4 GiB): with use_crs, Linux keeps
 * the BARs lodge-hyp assigned instead of moving them.  Slots are exposed
 * the way Linux's acpiphp looks for them: a device under the host bridge
 * with _ADR (slot << 16) and _EJ0; no _STA, so presence is the vendor ID.
 *
 * Processor devices (8.4, "ACPI0007") carry _UID = the MADT Processor UID,
 * which is how the OS pairs them with the Local APIC entries. */
#include "tables.h"
#include "aml.h"
#include "cpuhp.h"
#include "pcihp.h"
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

/* CPU hot-plug (src/common/cpuhp.h): the register block's fields, one
 * pair (CPUs 0-31, 32-63) per register, in its order. */
static const char *const cpuhp_fields[] = { "CPR0", "CPR1", "CIN0", "CIN1", "CRM0", "CRM1", "CEJ0", "CEJ1" };
static_assert(CPUHP_PRESENT == 0 && CPUHP_INSERT == 8 && CPUHP_REMOVE == 0x10 && CPUHP_EJECT == 0x18 &&
	      CPUHP_HI == 4, "the Field lists cpuhp.h's registers in order");

/* If (And (FIELD, bit of cpu)): FIELD is the pair's name stem. */
static size_t dsdt_if_cpu_bit(struct aml *a, const char *stem, unsigned int cpu)
{
	char field[16];
	size_t cond;

	snprintf(field, sizeof(field), "%s%u", stem, cpu / 32);
	cond = aml_if_begin(a);
	aml_and(a);
	aml_namestring(a, field);
	aml_integer(a, 1ull << (cpu % 32));
	aml_and_end(a);
	return cond;
}

#define CPU_NAME_FMT "C%03X"

/* A processor that may be plugged or ejected, as QEMU's: _STA from the
 * present register, _MAT its LAPIC entry, enabled while present (what
 * the OS maps it by once it is plugged), _EJ0 writes its eject bit. */
static void dsdt_cpu_hotplug_methods(struct aml *a, unsigned int cpu)
{
	uint8_t mat[8] = { 0, 8, (uint8_t)cpu, (uint8_t)cpu, 1, 0, 0, 0 };   /* MADT Processor Local APIC */
	char field[16];
	size_t m, cond;

	m = aml_method_begin(a, "_STA", 0);
	cond = dsdt_if_cpu_bit(a, "CPR", cpu);
	aml_return(a);
	aml_integer(a, 0xF);               /* present, enabled, shown, functioning */
	aml_end(a, cond);
	aml_return(a);
	aml_integer(a, 0);
	aml_end(a, m);

	m = aml_method_begin(a, "_MAT", 0);
	cond = dsdt_if_cpu_bit(a, "CPR", cpu);
	aml_return(a);
	aml_buffer(a, mat, sizeof(mat));
	aml_end(a, cond);
	mat[4] = 0;
	aml_return(a);
	aml_buffer(a, mat, sizeof(mat));
	aml_end(a, m);

	snprintf(field, sizeof(field), "CEJ%u", cpu / 32);
	m = aml_method_begin(a, "_EJ0", 1);
	aml_store(a);
	aml_integer(a, 1ull << (cpu % 32));
	aml_namestring(a, field);
	aml_end(a, m);
}

/* One ACPI0007 device per vCPU up to maxvcpus.  CPU 0 stays; the others
 * may come and go (dev/cpuhp.c), and CSCN, called on the CPU hot-plug
 * GPE, notifies each that came (Device Check) or that the host wants back
 * (Eject Request). */
/* ACPI notification values (5.6.6, table 5-166). */
#define NOTIFY_DEVICE_CHECK   1
#define NOTIFY_EJECT_REQUEST  3

static void dsdt_processors(struct aml *a, unsigned int ncpus)
{
	size_t scan;

	if (ncpus > 1) {
		aml_opregion_io(a, "CPST", CPUHP_PORT, CPUHP_LEN);
		aml_field_dwords(a, "CPST", cpuhp_fields, sizeof(cpuhp_fields) / sizeof(cpuhp_fields[0]));
	}
	for (unsigned int cpu = 0; cpu < ncpus; cpu++) {
		char name[8];
		size_t dev;

		snprintf(name, sizeof(name), CPU_NAME_FMT, cpu & 0xFFF);
		dev = aml_device_begin(a, name);
		aml_name(a, "_HID");
		aml_string(a, "ACPI0007");
		aml_name(a, "_UID");
		aml_integer(a, cpu);
		if (cpu > 0)
			dsdt_cpu_hotplug_methods(a, cpu);
		aml_end(a, dev);
	}
	if (ncpus <= 1)
		return;
	/* Each register read once into Local0-3 (CIN0, CIN1, CRM0, CRM1):
	 * reading CINn clears it. */
	scan = aml_method_begin(a, "CSCN", 0);
	for (unsigned int i = 0; i < 4; i++) {
		if (i % 2 && ncpus <= 32)
			continue;                  /* no CPU in the high half */
		aml_store(a);
		aml_namestring(a, cpuhp_fields[2 + i]);
		aml_local(a, i);
	}
	for (unsigned int cpu = 1; cpu < ncpus; cpu++) {
		static const uint64_t values[2] = { NOTIFY_DEVICE_CHECK, NOTIFY_EJECT_REQUEST };
		char name[8];

		snprintf(name, sizeof(name), CPU_NAME_FMT, cpu & 0xFFF);
		for (unsigned int r = 0; r < 2; r++) {
			size_t cond = aml_if_begin(a);

			aml_and(a);
			aml_local(a, 2 * r + cpu / 32);
			aml_integer(a, 1ull << (cpu % 32));
			aml_and_end(a);
			aml_notify(a, name, values[r]);
			aml_end(a, cond);
		}
	}
	aml_end(a, scan);
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


static void dsdt_pci_crs(struct aml *a)
{
	size_t res;

	aml_name(a, "_CRS");
	res = aml_restemplate_begin(a);
	aml_res_word_bus(a, 0, 0);
	aml_res_io16(a, PCI_CONF1_PORT, PCI_CONF1_PORT, 1, PCI_CONF1_PORTS);
	aml_res_word_io(a, 0x0000, PCI_CONF1_PORT - 1);
	aml_res_word_io(a, 0x0D00, 0xFFFF);
	aml_res_dword_memory(a, (uint32_t)GPA_PCI_MMIO_BASE, (uint32_t)(GPA_PCI_MMIO_END - 1));
	aml_restemplate_end(a, res);
}

static void dsdt_pci_slot(struct aml *a, unsigned int slot)
{
	char name[8];
	size_t dev, ej0;

	snprintf(name, sizeof(name), PCIHP_SLOT_NAME_FMT, slot);
	dev = aml_device_begin(a, name);
	aml_name(a, "_ADR");
	aml_integer(a, (uint64_t)slot << 16);     /* device << 16 | function 0 */
	aml_name(a, "_SUN");
	aml_integer(a, slot);
	ej0 = aml_method_begin(a, "_EJ0", 1);
	aml_store(a);
	aml_integer(a, 1ull << slot);
	aml_namestring(a, "B0EJ");
	aml_end(a, ej0);
	aml_end(a, dev);
}

/* Notify each slot whose bit is set in LocalN with value. */
static void dsdt_pci_notify(struct aml *a, unsigned int local, unsigned int slot, uint64_t value)
{
	char name[8];
	size_t cond;

	snprintf(name, sizeof(name), PCIHP_SLOT_NAME_FMT, slot);
	cond = aml_if_begin(a);
	aml_and(a);
	aml_local(a, local);
	aml_integer(a, 1ull << slot);
	aml_and_end(a);
	aml_notify(a, name, value);
	aml_end(a, cond);
}

static void dsdt_pci0(struct aml *a)
{
	static const char *const fields[] = { "PCIU", "PCID", "B0EJ", "PCPR" };
	static_assert(PCIHP_UP == 0 && PCIHP_DOWN == 4 && PCIHP_EJECT == 8 && PCIHP_PRESENT == 12,
		      "the Field lists pcihp.h's registers in order");
	size_t dev, pcnt;
	unsigned int s;

	dev = aml_device_begin(a, "PCI0");
	aml_name(a, "_HID");
	aml_eisaid(a, "PNP0A03");        /* PCI host bridge; _HID, so no _ADR (6.1) */
	aml_name(a, "_UID");
	aml_integer(a, 0);
	dsdt_pci_crs(a);
	aml_opregion_io(a, "PCST", PCIHP_PORT, PCIHP_LEN);
	aml_field_dwords(a, "PCST", fields, 4);
	for (s = PCIHP_FIRST_SLOT; s < PCIHP_SLOTS; s++)
		dsdt_pci_slot(a, s);
	pcnt = aml_method_begin(a, "PCNT", 0);
	aml_store(a);
	aml_namestring(a, "PCIU");
	aml_local(a, 0);
	aml_store(a);
	aml_namestring(a, "PCID");
	aml_local(a, 1);
	for (s = PCIHP_FIRST_SLOT; s < PCIHP_SLOTS; s++) {
		dsdt_pci_notify(a, 0, s, NOTIFY_DEVICE_CHECK);
		dsdt_pci_notify(a, 1, s, NOTIFY_EJECT_REQUEST);
	}
	aml_end(a, pcnt);
	aml_end(a, dev);
}

/* The GPE the hot-plug controller raises: an edge GPE (_Exx), so the OS
 * clears its status before running the method and an event that comes
 * while PCNT runs raises it again. */
static void dsdt_gpe(struct aml *a, unsigned int ncpus)
{
	char name[8];
	size_t scope, method;

	snprintf(name, sizeof(name), "_E%02X", PCIHP_GPE_BIT);
	scope = aml_scope_begin(a, "\\_GPE");
	method = aml_method_begin(a, name, 0);
	aml_call0(a, "\\_SB.PCI0.PCNT");
	aml_end(a, method);
	if (ncpus > 1) {                   /* CPU hot-plug (cpuhp.h) */
		snprintf(name, sizeof(name), "_E%02X", CPUHP_GPE_BIT);
		method = aml_method_begin(a, name, 0);
		aml_call0(a, "\\_SB.CSCN");
		aml_end(a, method);
	}
	aml_end(a, scope);
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
	dsdt_pci0(&aml);
	aml_end(&aml, sb);
	dsdt_gpe(&aml, plat->ncpus);
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
