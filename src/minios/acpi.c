/* ACPI: find the tables (RSDP, XSDT or RSDT), count the CPUs in the MADT,
 * keep the FADT and DSDT for power management. */
#include "io.h"
#include "minios.h"

struct acpi_info acpi;

struct sdt_header {
	char sig[4];
	uint32_t length;
	uint8_t revision, checksum;
	char oem[6], oem_table[8];
	uint32_t oem_rev, creator, creator_rev;
} __attribute__((packed));

static int checksum_ok(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	while (len--)
		sum += *b++;
	return sum == 0;
}

static uint64_t rsdp_scan(void)
{
	uint64_t a;

	for (a = 0xe0000; a < 0x100000; a += 16)
		if (memcmp((void *)a, "RSD PTR ", 8) == 0 && checksum_ok((void *)a, 20))
			return a;
	return 0;
}

static void madt_parse(const uint8_t *madt, uint32_t len)
{
	uint32_t off = 44;

	while (off + 2 <= len) {
		uint8_t type = madt[off], elen = madt[off + 1];

		if (elen < 2 || off + elen > len)
			break;
		if (type == 0 && elen >= 8 && (madt[off + 4] & 1) && acpi.ncpus < MAX_CPUS)
			acpi.apic_ids[acpi.ncpus++] = madt[off + 3];
		else if (type == 9 && elen >= 16 && (madt[off + 8] & 1) && acpi.ncpus < MAX_CPUS) {
			uint32_t id;

			memcpy(&id, madt + off + 4, 4);
			acpi.apic_ids[acpi.ncpus++] = id;
		}
		off += elen;
	}
}

static void table_found(const struct sdt_header *h)
{
	if (acpi.ntables < 16) {
		memcpy(acpi.tables[acpi.ntables], h->sig, 4);
		acpi.tables[acpi.ntables][4] = '\0';
		acpi.table_addr[acpi.ntables++] = (uint64_t)h;
	}
}

int acpi_init(uint64_t rsdp_hint)
{
	const uint8_t *rsdp;
	const struct sdt_header *root;
	uint32_t entry_size, n, i;

	acpi.rsdp = rsdp_hint ? rsdp_hint : rsdp_scan();
	if (!acpi.rsdp)
		return -1;
	rsdp = (const uint8_t *)acpi.rsdp;
	memcpy(acpi.tables[0], "RSDP", 5);
	acpi.table_addr[0] = acpi.rsdp;
	acpi.ntables = 1;
	if (rsdp[15] >= 2 && *(const uint64_t *)(rsdp + 24)) {
		root = (const void *)*(const uint64_t *)(rsdp + 24);      /* XSDT */
		entry_size = 8;
	} else {
		root = (const void *)(uint64_t)*(const uint32_t *)(rsdp + 16);  /* RSDT */
		entry_size = 4;
	}
	if (!checksum_ok(root, root->length))
		return -1;
	table_found(root);
	n = (root->length - sizeof(*root)) / entry_size;
	for (i = 0; i < n; i++) {
		const uint8_t *e = (const uint8_t *)(root + 1) + i * entry_size;
		uint64_t addr = entry_size == 8 ? *(const uint64_t *)e : *(const uint32_t *)e;
		const struct sdt_header *h = (const void *)addr;

		if (!addr || !checksum_ok(h, h->length))
			continue;
		table_found(h);
		if (memcmp(h->sig, "APIC", 4) == 0)
			madt_parse((const uint8_t *)h, h->length);
		else if (memcmp(h->sig, "FACP", 4) == 0)
			acpi.fadt = (const uint8_t *)h;
	}
	if (acpi.fadt) {
		const struct sdt_header *f = (const void *)acpi.fadt;
		uint64_t dsdt = 0;

		if (f->length >= 148)
			dsdt = *(const uint64_t *)(acpi.fadt + 140);          /* X_DSDT */
		if (!dsdt)
			dsdt = *(const uint32_t *)(acpi.fadt + 40);
		if (dsdt && checksum_ok((void *)dsdt, ((const struct sdt_header *)dsdt)->length)) {
			acpi.dsdt = (const uint8_t *)dsdt;
			table_found((const void *)dsdt);
		}
	}
	return 0;
}

/* \_S5: NameOp "_S5_" PackageOp PkgLength NumElements, then SLP_TYPa as
 * BytePrefix n, ZeroOp or OneOp. */
int acpi_s5_type(unsigned *slp_typ)
{
	const struct sdt_header *h = (const void *)acpi.dsdt;
	const uint8_t *p, *end;

	if (!h)
		return -1;
	p = acpi.dsdt + sizeof(*h);
	end = acpi.dsdt + h->length - 8;
	for (; p < end; p++) {
		const uint8_t *q;

		if (memcmp(p, "_S5_", 4) != 0 || (p[-1] != 0x08 && !(p[-2] == 0x08 && p[-1] == '\\')))
			continue;
		q = p + 4;
		if (*q++ != 0x12)
			continue;
		q += (*q >> 6) + 1;      /* PkgLength: lead byte plus its follow bytes */
		q++;                     /* NumElements */
		if (*q == 0x0a)
			*slp_typ = q[1];
		else if (*q == 0x00 || *q == 0x01)
			*slp_typ = *q;
		else
			return -1;
		return 0;
	}
	return -1;
}
