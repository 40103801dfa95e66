/* Multiple APIC Description Table (ACPI 6.0 Errata A, 5.2.12), revision 4:
 * one Processor Local APIC per vCPU (enabled if online at boot), KVM's in-kernel IOAPIC, the
 * ISA interrupt overrides KVM's PIC/IOAPIC wiring needs, and LINT1 as NMI. */
#include "tables.h"
#include "platform.h"

#include <errno.h>
#include <string.h>

#define MADT_REVISION        4
#define MADT_PCAT_COMPAT     (1u << 0)   /* dual 8259s present: mask them to use the IOAPIC */

struct acpi_madt {
	struct acpi_table_header header;
	uint32_t lapic_address;          /* 36: Local Interrupt Controller Address */
	uint32_t flags;                  /* 40 */
} __attribute__((packed));
static_assert(sizeof(struct acpi_madt) == 44, "MADT header");

/* Interrupt controller structure types (5.2.12, table 5-45). */
enum {
	MADT_LOCAL_APIC = 0,
	MADT_IO_APIC = 1,
	MADT_INT_SRC_OVERRIDE = 2,
	MADT_LOCAL_APIC_NMI = 4,
};

/* Processor Local APIC (5.2.12.2). */
struct madt_local_apic {
	uint8_t type, length;            /* 0, 8 */
	uint8_t processor_uid;           /* matches _UID of the ACPI0007 device */
	uint8_t apic_id;
	uint32_t flags;                  /* bit 0: enabled */
} __attribute__((packed));
static_assert(sizeof(struct madt_local_apic) == 8, "MADT Local APIC");
#define MADT_LAPIC_ENABLED 1u

/* I/O APIC (5.2.12.3). */
struct madt_io_apic {
	uint8_t type, length;            /* 1, 12 */
	uint8_t io_apic_id;
	uint8_t reserved;
	uint32_t address;
	uint32_t gsi_base;
} __attribute__((packed));
static_assert(sizeof(struct madt_io_apic) == 12, "MADT I/O APIC");

/* Interrupt Source Override (5.2.12.5). */
struct madt_int_src_override {
	uint8_t type, length;            /* 2, 10 */
	uint8_t bus;                     /* 0: ISA */
	uint8_t source;                  /* ISA IRQ */
	uint32_t gsi;
	uint16_t flags;                  /* MPS INTI flags */
} __attribute__((packed));
static_assert(sizeof(struct madt_int_src_override) == 10, "MADT ISO");

/* Local APIC NMI (5.2.12.7). */
struct madt_local_apic_nmi {
	uint8_t type, length;            /* 4, 6 */
	uint8_t processor_uid;           /* 0xFF: all processors */
	uint16_t flags;                  /* MPS INTI flags */
	uint8_t lint;                    /* LINT0 or LINT1 */
} __attribute__((packed));
static_assert(sizeof(struct madt_local_apic_nmi) == 6, "MADT LAPIC NMI");

/* MPS INTI flags (table 5-50): polarity bits 1:0, trigger mode bits 3:2. */
#define MPS_INTI_ACTIVE_HIGH  0x1
#define MPS_INTI_EDGE         (0x1 << 2)
#define MPS_INTI_LEVEL        (0x3 << 2)

/* KVM resets its IOAPIC's ID register to 0; the MADT says the same. */
#define IOAPIC_ID             0
#define ISA_IRQ_PIT           0
#define IOAPIC_PIN_PIT        2          /* the 8254 drives IOAPIC pin 2 on KVM */
#define MADT_ALL_PROCESSORS   0xFF
#define LINT1                 1

#define MADT_NUM_OVERRIDES    2

int acpi_madt_write(struct acpi_area *a, const struct acpi_platform *plat, uint64_t *gpa)
{
	size_t len = sizeof(struct acpi_madt) +
		     plat->ncpus * sizeof(struct madt_local_apic) +
		     sizeof(struct madt_io_apic) +
		     MADT_NUM_OVERRIDES * sizeof(struct madt_int_src_override) +
		     sizeof(struct madt_local_apic_nmi);
	uint8_t *t, *p;

	/* Processor UIDs and APIC IDs are one byte; 0xFF means "all". */
	if (plat->ncpus > DOMAIN_VCPUS_MAX || plat->ncpus >= 0xFF)
		return -EINVAL;
	t = acpi_area_alloc(a, len, 16, gpa);
	if (!t)
		return -ENOSPC;
	memset(t, 0, len);

	struct acpi_madt *madt = (struct acpi_madt *)t;
	acpi_header_init(&madt->header, "APIC", (uint32_t)len, MADT_REVISION);
	madt->lapic_address = (uint32_t)GPA_LAPIC;
	madt->flags = MADT_PCAT_COMPAT;
	p = t + sizeof(*madt);

	unsigned int online = plat->nonline ? plat->nonline : plat->ncpus;

	for (unsigned int cpu = 0; cpu < plat->ncpus; cpu++) {
		struct madt_local_apic *lapic = (struct madt_local_apic *)p;

		*lapic = (struct madt_local_apic){
			.type = MADT_LOCAL_APIC, .length = sizeof(*lapic),
			.processor_uid = (uint8_t)cpu, .apic_id = (uint8_t)cpu,
			/* The rest are there to be plugged (cpuhp.h): listed, not
			 * enabled, as QEMU's for CPUs beyond -smp's count. */
			.flags = cpu < online ? MADT_LAPIC_ENABLED : 0,
		};
		p += sizeof(*lapic);
	}

	struct madt_io_apic *ioapic = (struct madt_io_apic *)p;
	*ioapic = (struct madt_io_apic){
		.type = MADT_IO_APIC, .length = sizeof(*ioapic),
		.io_apic_id = IOAPIC_ID, .address = (uint32_t)GPA_IOAPIC, .gsi_base = 0,
	};
	p += sizeof(*ioapic);

	/* ISA IRQ 0 (PIT) arrives on pin 2; the SCI is level-triggered and,
	 * on KVM's IOAPIC, active high (5.2.12.5: the SCI needs an override
	 * whenever it is not the ISA default of edge/active high). */
	const struct madt_int_src_override overrides[MADT_NUM_OVERRIDES] = {
		{ .type = MADT_INT_SRC_OVERRIDE, .length = sizeof(overrides[0]),
		  .bus = 0, .source = ISA_IRQ_PIT, .gsi = IOAPIC_PIN_PIT,
		  .flags = MPS_INTI_ACTIVE_HIGH | MPS_INTI_EDGE },
		{ .type = MADT_INT_SRC_OVERRIDE, .length = sizeof(overrides[0]),
		  .bus = 0, .source = IRQ_SCI, .gsi = IRQ_SCI,
		  .flags = MPS_INTI_ACTIVE_HIGH | MPS_INTI_LEVEL },
	};
	memcpy(p, overrides, sizeof(overrides));
	p += sizeof(overrides);

	struct madt_local_apic_nmi *nmi = (struct madt_local_apic_nmi *)p;
	*nmi = (struct madt_local_apic_nmi){
		.type = MADT_LOCAL_APIC_NMI, .length = sizeof(*nmi),
		.processor_uid = MADT_ALL_PROCESSORS,
		.flags = MPS_INTI_ACTIVE_HIGH | MPS_INTI_EDGE, .lint = LINT1,
	};
	p += sizeof(*nmi);

	acpi_table_finish(&madt->header);
	return p == t + len ? 0 : -EINVAL;
}
