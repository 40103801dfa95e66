/* Internal to src/hyp/acpi: the common table header, Generic Address
 * Structure, the area the tables are laid out in, and one builder per
 * table.  Layouts and section numbers are from ACPI 6.x chapter 5. */
#ifndef LODGE_ACPI_TABLES_H
#define LODGE_ACPI_TABLES_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "acpi.h"

/* Tables are little-endian and written through packed structs: x86 only. */
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "ACPI tables are little-endian");

#define ACPI_OEM_ID            "LODGE "     /* 6 bytes */
#define ACPI_OEM_TABLE_ID      "LODGEVM "   /* 8 bytes */
#define ACPI_OEM_REVISION      1
#define ACPI_CREATOR_ID        "LODG"       /* 4 bytes */
#define ACPI_CREATOR_REVISION  1

/* System Description Table Header (5.2.6). */
struct acpi_table_header {
	char signature[4];
	uint32_t length;             /* of the whole table, header included */
	uint8_t revision;
	uint8_t checksum;            /* all bytes of the table sum to zero */
	char oem_id[6];
	char oem_table_id[8];
	uint32_t oem_revision;
	char creator_id[4];
	uint32_t creator_revision;
} __attribute__((packed));
static_assert(sizeof(struct acpi_table_header) == 36, "ACPI table header");

/* Generic Address Structure (5.2.3.2). */
struct acpi_gas {
	uint8_t space_id;            /* 0 system memory, 1 system I/O */
	uint8_t bit_width;
	uint8_t bit_offset;
	uint8_t access_size;         /* 0 undefined, 1 byte, 2 word, 3 dword, 4 qword */
	uint64_t address;
} __attribute__((packed));
static_assert(sizeof(struct acpi_gas) == 12, "ACPI GAS");

#define ACPI_GAS_SYSTEM_IO     1
#define ACPI_GAS_ACCESS_BYTE   1
#define ACPI_GAS_ACCESS_WORD   2

static inline struct acpi_gas acpi_gas_io(uint16_t port, unsigned int bytes,
					  uint8_t access_size)
{
	return (struct acpi_gas){ .space_id = ACPI_GAS_SYSTEM_IO,
				  .bit_width = (uint8_t)(bytes * 8),
				  .access_size = access_size, .address = port };
}

/* The guest RAM the tables go into, reached through one gpa_ptr(). */
struct acpi_area {
	uint8_t *host;
	uint64_t gpa;                /* GPA of host[0] */
	size_t size, used;
};

/* Reserve len bytes at the next multiple of align (a power of two);
 * returns the host pointer and stores the GPA, or NULL if they do not fit. */
void *acpi_area_alloc(struct acpi_area *a, size_t len, size_t align, uint64_t *gpa);

/* Fill in a header with our OEM and creator ids; acpi_table_finish() sets
 * the checksum once the rest of the table (length bytes) is written. */
void acpi_header_init(struct acpi_table_header *h, const char sig[4],
		      uint32_t length, uint8_t revision);
void acpi_table_finish(struct acpi_table_header *h);
/* The byte that makes len bytes at p sum to zero (with it in place of a zero). */
uint8_t acpi_checksum(const void *p, size_t len);

/* Each writes one table into the area and stores its GPA; 0 or -errno. */
int acpi_fadt_write(struct acpi_area *a, uint64_t facs_gpa, uint64_t dsdt_gpa,
		    uint64_t *gpa);
int acpi_madt_write(struct acpi_area *a, const struct acpi_platform *plat, uint64_t *gpa);
int acpi_dsdt_write(struct acpi_area *a, const struct acpi_platform *plat, uint64_t *gpa);

#endif
