/* ACPI tables for the guest: the layout in [GPA_ACPI_BASE, GPA_ACPI_END),
 * the RSDP and XSDT that lead to the other tables, the FACS, and the
 * header/checksum helpers every table uses.  Section numbers: ACPI 6.x.
 *
 * Layout: RSDP at GPA_ACPI_BASE (16-byte aligned, inside the BIOS area
 * 0xE0000-0xFFFFF that a legacy RSDP scan searches, 5.2.5.1), then FACS
 * (64-byte aligned, 5.2.10), DSDT, FADT, MADT and XSDT. */
#include "tables.h"
#include "platform.h"

#include <errno.h>
#include <string.h>

/* Root System Description Pointer (5.2.5.3), revision 2. */
struct acpi_rsdp {
	char signature[8];           /* "RSD PTR " */
	uint8_t checksum;            /* over the first 20 bytes (the ACPI 1.0 part) */
	char oem_id[6];
	uint8_t revision;            /* 2: ACPI 2.0 and later */
	uint32_t rsdt_address;       /* 0: we only have an XSDT */
	uint32_t length;             /* 36 */
	uint64_t xsdt_address;
	uint8_t extended_checksum;   /* over all 36 bytes */
	uint8_t reserved[3];
} __attribute__((packed));
static_assert(sizeof(struct acpi_rsdp) == 36, "RSDP");
#define ACPI_RSDP_V1_LENGTH 20

/* Firmware ACPI Control Structure (5.2.10): no header, no checksum. */
struct acpi_facs {
	char signature[4];           /* "FACS" */
	uint32_t length;             /* 64 */
	uint32_t hardware_signature;
	uint32_t firmware_waking_vector;
	uint32_t global_lock;
	uint32_t flags;              /* no S4BIOS, no 64-bit wake */
	uint64_t x_firmware_waking_vector;
	uint8_t version;             /* 2 since ACPI 4.0 */
	uint8_t reserved1[3];
	uint32_t ospm_flags;
	uint8_t reserved2[24];
} __attribute__((packed));
static_assert(sizeof(struct acpi_facs) == 64, "FACS");
#define ACPI_FACS_ALIGN 64

/* Extended System Description Table (5.2.8): 64-bit table pointers. */
#define ACPI_XSDT_REVISION 1
#define ACPI_XSDT_ENTRIES  2         /* FADT, MADT */

#define ACPI_TABLE_ALIGN   16

void *acpi_area_alloc(struct acpi_area *a, size_t len, size_t align, uint64_t *gpa)
{
	size_t start = (a->used + align - 1) & ~(align - 1);

	if (start < a->used || start > a->size || len > a->size - start)
		return NULL;
	a->used = start + len;
	*gpa = a->gpa + start;
	return a->host + start;
}

uint8_t acpi_checksum(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	for (size_t i = 0; i < len; i++)
		sum = (uint8_t)(sum + b[i]);
	return (uint8_t)-sum;
}

void acpi_header_init(struct acpi_table_header *h, const char sig[4],
		      uint32_t length, uint8_t revision)
{
	memcpy(h->signature, sig, 4);
	h->length = length;
	h->revision = revision;
	h->checksum = 0;
	memcpy(h->oem_id, ACPI_OEM_ID, 6);
	memcpy(h->oem_table_id, ACPI_OEM_TABLE_ID, 8);
	h->oem_revision = ACPI_OEM_REVISION;
	memcpy(h->creator_id, ACPI_CREATOR_ID, 4);
	h->creator_revision = ACPI_CREATOR_REVISION;
}

void acpi_table_finish(struct acpi_table_header *h)
{
	h->checksum = 0;
	h->checksum = acpi_checksum(h, h->length);
}

static int facs_write(struct acpi_area *a, uint64_t *gpa)
{
	struct acpi_facs *facs = acpi_area_alloc(a, sizeof(*facs), ACPI_FACS_ALIGN, gpa);

	if (!facs)
		return -ENOSPC;
	*facs = (struct acpi_facs){ .length = sizeof(*facs), .version = 2 };
	memcpy(facs->signature, "FACS", 4);
	return 0;
}

static int xsdt_write(struct acpi_area *a, const uint64_t *entries, unsigned int n,
		      uint64_t *gpa)
{
	size_t len = sizeof(struct acpi_table_header) + n * sizeof(uint64_t);
	uint8_t *t = acpi_area_alloc(a, len, ACPI_TABLE_ALIGN, gpa);

	if (!t)
		return -ENOSPC;
	acpi_header_init((struct acpi_table_header *)t, "XSDT", (uint32_t)len,
			 ACPI_XSDT_REVISION);
	/* Entries follow the header at offset 36: only 4-byte aligned. */
	memcpy(t + sizeof(struct acpi_table_header), entries, n * sizeof(uint64_t));
	acpi_table_finish((struct acpi_table_header *)t);
	return 0;
}

static void rsdp_fill(struct acpi_rsdp *rsdp, uint64_t xsdt_gpa)
{
	*rsdp = (struct acpi_rsdp){ .revision = 2, .length = sizeof(*rsdp),
				    .xsdt_address = xsdt_gpa };
	memcpy(rsdp->signature, "RSD PTR ", 8);
	memcpy(rsdp->oem_id, ACPI_OEM_ID, 6);
	rsdp->checksum = acpi_checksum(rsdp, ACPI_RSDP_V1_LENGTH);
	rsdp->extended_checksum = acpi_checksum(rsdp, sizeof(*rsdp));
}

int acpi_build(const struct guest_mem *mem, const struct acpi_platform *plat,
	       uint64_t *rsdp_gpa)
{
	struct acpi_area area = { .gpa = GPA_ACPI_BASE, .size = GPA_ACPI_END - GPA_ACPI_BASE };
	uint64_t rsdp_at, facs, dsdt, xsdt, tables[ACPI_XSDT_ENTRIES];
	struct acpi_rsdp *rsdp;
	int rc;

	if (plat->ncpus < 1 || plat->ncpus > DOMAIN_VCPUS_MAX)
		return -EINVAL;
	area.host = gpa_ptr(mem, area.gpa, area.size);
	if (!area.host)
		return -EFAULT;
	/* No stale bytes for a scan to trip over, and zero reserved fields. */
	memset(area.host, 0, area.size);

	rsdp = acpi_area_alloc(&area, sizeof(*rsdp), ACPI_TABLE_ALIGN, &rsdp_at);
	if (!rsdp)
		return -ENOSPC;
	if ((rc = facs_write(&area, &facs)) ||
	    (rc = acpi_dsdt_write(&area, plat, &dsdt)) ||
	    (rc = acpi_fadt_write(&area, facs, dsdt, &tables[0])) ||
	    (rc = acpi_madt_write(&area, plat, &tables[1])) ||
	    (rc = xsdt_write(&area, tables, ACPI_XSDT_ENTRIES, &xsdt)))
		return rc;
	rsdp_fill(rsdp, xsdt);
	*rsdp_gpa = rsdp_at;
	return 0;
}
