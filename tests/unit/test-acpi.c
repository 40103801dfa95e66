/* The ACPI tables lodge-hyp writes, read back the way a guest OS does:
 * RSDP (found by the legacy BIOS-area scan too), XSDT, FADT, FACS, MADT and
 * DSDT for 1, 2 and 64 vCPUs, checked against the spec's byte offsets and
 * platform.h; plus the AML emitter's encodings and the error paths.
 * LODGE_ACPI_DUMP=DIR also writes every table as DIR/<SIG>-<n>cpu.dat for
 * `iasl -d`.  The DSDT is also read by ACPICA's own iasl (Debian's
 * acpica-tools, as Linux's ACPI core is ACPICA): disassembled, the PCI
 * host bridge, hot-plug slots and GPE method checked by name, and the
 * result compiled again with neither errors nor warnings. */
#include "acpi/acpi.h"
#include "acpi/aml.h"
#include "acpi/tables.h"
#include "pcihp.h"
#include "platform.h"
#include "unit.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define RAM   (2u << 20)
#define FILL  0xAA

static uint8_t *ram;
static struct guest_mem mem;

static uint16_t get16(const uint8_t *p, size_t off) { uint16_t v; memcpy(&v, p + off, 2); return v; }
static uint32_t get32(const uint8_t *p, size_t off) { uint32_t v; memcpy(&v, p + off, 4); return v; }
static uint64_t get64(const uint8_t *p, size_t off) { uint64_t v; memcpy(&v, p + off, 8); return v; }

static bool sums_to_zero(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;

	for (size_t i = 0; i < len; i++)
		sum = (uint8_t)(sum + p[i]);
	return sum == 0;
}

/* A table at gpa, if it lies inside the ACPI area and its length fits. */
static const uint8_t *table_at(uint64_t gpa, const char *sig)
{
	const uint8_t *t;

	if (gpa < GPA_ACPI_BASE || gpa + 36 > GPA_ACPI_END)
		return NULL;
	t = ram + gpa;
	if (memcmp(t, sig, 4) || get32(t, 4) < 36 || gpa + get32(t, 4) > GPA_ACPI_END)
		return NULL;
	return t;
}

static void dump(const char *dir, const char *sig, unsigned int ncpus,
		 const uint8_t *p, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s-%ucpu.dat", dir, sig, ncpus);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, len, f) != len)
		printf("FAIL: acpi dump: cannot write %s\n", path);
	if (f)
		fclose(f);
}

/* Decode an AML integer constant at *p (ZeroOp, OneOp, Byte/Word/DWord). */
static bool aml_read_int(const uint8_t **p, uint64_t *v)
{
	const uint8_t *b = *p;

	switch (b[0]) {
	case AML_ZERO_OP:      *v = 0; *p += 1; return true;
	case AML_ONE_OP:       *v = 1; *p += 1; return true;
	case AML_BYTE_PREFIX:  *v = b[1]; *p += 2; return true;
	case AML_WORD_PREFIX:  *v = get16(b, 1); *p += 3; return true;
	case AML_DWORD_PREFIX: *v = get32(b, 1); *p += 5; return true;
	default: return false;
	}
}

/* Decode a PkgLength at *p: its value, and advance past it. */
static size_t aml_read_pkglength(const uint8_t **p)
{
	const uint8_t *b = *p;
	unsigned int follow = b[0] >> 6;
	size_t len = follow ? b[0] & 0x0F : b[0] & 0x3F;

	for (unsigned int i = 0; i < follow; i++)
		len |= (size_t)b[1 + i] << (4 + 8 * i);
	*p += 1 + follow;
	return len;
}

static const uint8_t *memmem_u8(const uint8_t *h, size_t hlen, const void *n, size_t nlen)
{
	return memmem(h, hlen, n, nlen);
}

static void check_fadt(const uint8_t *fadt, const uint8_t **dsdt)
{
	uint32_t flags = get32(fadt, 112);
	const uint8_t *facs;

	CHECK("FADT length 276, revision 6.0", get32(fadt, 4) == 276 && fadt[8] == 6 && fadt[131] == 0);
	CHECK("FADT checksum", sums_to_zero(fadt, 276));
	/* FACS: 32-bit pointer only (5.2.9: not both), 64-byte aligned, 64 bytes. */
	facs = ram + get32(fadt, 36);
	CHECK("FADT FIRMWARE_CTRL -> FACS", get32(fadt, 36) >= GPA_ACPI_BASE &&
	      get32(fadt, 36) + 64 <= GPA_ACPI_END && !memcmp(facs, "FACS", 4) &&
	      get32(facs, 4) == 64 && get32(fadt, 36) % 64 == 0 && facs[32] == 2);
	CHECK("FADT X_FIRMWARE_CTRL zero", get64(fadt, 132) == 0);
	*dsdt = table_at(get32(fadt, 40), "DSDT");
	CHECK("FADT DSDT -> DSDT, X_DSDT the same", *dsdt && get64(fadt, 140) == get32(fadt, 40));
	CHECK("FADT Preferred_PM_Profile server", fadt[45] == 4);
	CHECK("FADT SCI_INT", get16(fadt, 46) == IRQ_SCI);
	CHECK("FADT SMI_CMD 0, no ACPI_ENABLE", get32(fadt, 48) == 0 && fadt[52] == 0 && fadt[53] == 0);
	CHECK("FADT PM1a_EVT_BLK", get32(fadt, 56) == PORT_PM1A_EVT && fadt[88] == 4);
	CHECK("FADT PM1a_CNT_BLK", get32(fadt, 64) == PORT_PM1A_CNT && fadt[89] == 2);
	CHECK("FADT no PM1b/PM2/PM timer/GPE1",
	      !get32(fadt, 60) && !get32(fadt, 68) && !get32(fadt, 72) && !get32(fadt, 76) &&
	      !get32(fadt, 84) && !fadt[91] && !fadt[93]);
	CHECK("FADT GPE0_BLK: the hot-plug GPE block, 4 bytes",
	      get32(fadt, 80) == PCIHP_GPE0_PORT && fadt[92] == PCIHP_GPE0_LEN);
	CHECK("FADT X_GPE0_BLK: I/O, 32 bits, byte access",
	      fadt[220] == 1 && fadt[221] == 32 && fadt[223] == 1 && get64(fadt, 224) == PCIHP_GPE0_PORT);
	/* GAS: space id, bit width, bit offset, access size, address. */
	CHECK("FADT X_PM1a_EVT_BLK", fadt[148] == 1 && fadt[149] == 32 && fadt[150] == 0 &&
	      get64(fadt, 152) == PORT_PM1A_EVT);
	CHECK("FADT X_PM1a_CNT_BLK", fadt[172] == 1 && fadt[173] == 16 && fadt[174] == 0 &&
	      get64(fadt, 176) == PORT_PM1A_CNT);
	CHECK("FADT X_PM_TMR_BLK and X_GPE1 empty", !get64(fadt, 212) && !get64(fadt, 236));
	CHECK("FADT RESET_REG", fadt[116] == 1 && fadt[117] == 8 && fadt[119] == 1 &&
	      get64(fadt, 120) == PORT_ACPI_RESET && fadt[128] == ACPI_RESET_VALUE);
	CHECK("FADT SLEEP_CONTROL_REG", fadt[244] == 1 && fadt[245] == 8 &&
	      get64(fadt, 248) == PORT_SLEEP_CTL);
	CHECK("FADT SLEEP_STATUS_REG", fadt[256] == 1 && fadt[257] == 8 &&
	      get64(fadt, 260) == PORT_SLEEP_STS);
	CHECK("FADT flags WBINVD, PROC_C1, SLP_BUTTON, RESET_REG_SUP",
	      (flags & 0x425) == 0x425);
	CHECK("FADT flags: fixed power button, not hardware-reduced",
	      !(flags & (1u << 4)) && !(flags & (1u << 20)));
	CHECK("FADT IAPC_BOOT_ARCH 8042, no VGA", get16(fadt, 109) == 0x6);
}

static void check_madt(const uint8_t *madt, unsigned int ncpus)
{
	uint32_t len = get32(madt, 4);
	unsigned int lapics = 0, ioapics = 0, nmis = 0;
	bool seen[256] = { false }, unique = true, enabled = true, uid_is_id = true;
	bool iso_pit = false, iso_sci = false, walk_ok = true;
	size_t off;

	CHECK("MADT checksum", sums_to_zero(madt, len));
	CHECK("MADT LAPIC address, PCAT_COMPAT", get32(madt, 36) == GPA_LAPIC && get32(madt, 40) == 1);
	for (off = 44; off < len; off += madt[off + 1]) {
		const uint8_t *e = madt + off;

		if (off + 2 > len || e[1] < 2 || off + e[1] > len) {
			walk_ok = false;
			break;
		}
		switch (e[0]) {
		case 0:
			lapics++;
			unique &= !seen[e[3]];
			seen[e[3]] = true;
			enabled &= (get32(e, 4) & 1) == 1;
			uid_is_id &= e[2] == e[3];
			break;
		case 1:
			ioapics += e[1] == 12 && get32(e, 4) == GPA_IOAPIC && get32(e, 8) == 0;
			break;
		case 2:
			iso_pit |= e[1] == 10 && e[2] == 0 && e[3] == 0 && get32(e, 4) == 2;
			iso_sci |= e[1] == 10 && e[2] == 0 && e[3] == IRQ_SCI &&
				   get32(e, 4) == IRQ_SCI && get16(e, 8) == 0x000D;
			break;
		case 4:
			nmis += e[1] == 6 && e[2] == 0xFF && e[5] == 1;
			break;
		}
	}
	CHECK("MADT entries walk to the table's end", walk_ok && off == len);
	CHECK("MADT one Local APIC per vCPU", lapics == ncpus);
	CHECK("MADT APIC IDs unique, UID = APIC ID, enabled", unique && uid_is_id && enabled);
	CHECK("MADT one IOAPIC", ioapics == 1);
	CHECK("MADT override IRQ0 -> GSI2", iso_pit);
	CHECK("MADT override SCI level/high", iso_sci);
	CHECK("MADT LINT1 NMI on all CPUs", nmis == 1);
}

static void check_dsdt(const uint8_t *dsdt, unsigned int ncpus)
{
	uint32_t len = get32(dsdt, 4);
	const uint8_t *aml = dsdt + 36, *end = dsdt + len, *p;
	static const uint8_t pnp0501[] = { AML_DWORD_PREFIX, 0x41, 0xD0, 0x05, 0x01 };
	uint64_t typ_a = 99, typ_b = 99;
	unsigned int procs = 0;
	bool s5_ok = false;

	CHECK("DSDT checksum, revision 2", sums_to_zero(dsdt, len) && dsdt[8] == 2);
	p = memmem_u8(aml, len - 36, "_S5_", 4);
	if (p && p > aml && p[-1] == AML_NAME_OP && p[4] == AML_PACKAGE_OP) {
		const uint8_t *q = p + 5, *pkg_start = q;
		size_t pkglen = aml_read_pkglength(&q);

		s5_ok = q[0] == 4 && pkg_start + pkglen <= end;
		q++;
		s5_ok = s5_ok && aml_read_int(&q, &typ_a) && aml_read_int(&q, &typ_b);
	}
	CHECK("DSDT \\_S5 decodes to ACPI_S5_SLP_TYP",
	      s5_ok && typ_a == ACPI_S5_SLP_TYP && typ_b == ACPI_S5_SLP_TYP);

	/* \_SB_ is followed only by \_GPE: its PkgLength must reach that
	 * scope exactly (for 64 CPUs that takes a multi-byte PkgLength). */
	const uint8_t *scope = NULL;

	p = memmem_u8(aml, len - 36, "\\_SB_", 5);
	for (unsigned int k = 1; p && k <= 4 && p - 1 - k >= aml; k++)
		if (p[-1 - (int)k] == AML_SCOPE_OP && (p[-(int)k] >> 6) + 1u == k)
			scope = p - 1 - k;
	if (scope) {
		const uint8_t *q = scope + 1;
		size_t pkglen = aml_read_pkglength(&q);
		const uint8_t *next = scope + 1 + pkglen, *r = next + 1;
		bool gpe_ok = next < end && next[0] == AML_SCOPE_OP;

		if (gpe_ok) {
			size_t gpelen = aml_read_pkglength(&r);

			gpe_ok = !memcmp(r, "\\_GPE", 5) && next + 1 + gpelen == end;
		}
		CHECK("DSDT \\_SB_ scope then \\_GPE, whose PkgLength spans to the end", gpe_ok);
		if (ncpus == 64)
			CHECK("DSDT 64 CPUs: multi-byte PkgLength", (scope[1] >> 6) > 0);
	} else {
		CHECK("DSDT has a \\_SB_ scope", false);
	}
	for (p = aml; (p = memmem_u8(p, (size_t)(end - p), "ACPI0007", 9)); p += 9)
		procs++;
	CHECK("DSDT one ACPI0007 processor device per vCPU", procs == ncpus);
	CHECK("DSDT COM1 _HID EISAID(PNP0501)",
	      memmem_u8(aml, len - 36, "COM1", 4) && memmem_u8(aml, len - 36, pnp0501, 5));
	/* IO(Decode16, 0x3F8, 0x3F8, 0, 8), IRQNoFlags(){4}, End Tag. */
	static const uint8_t crs[] = { 0x47, 0x01, 0xF8, 0x03, 0xF8, 0x03, 0x00, 0x08,
				       0x22, 0x10, 0x00, 0x79, 0x00 };
	CHECK("DSDT COM1 _CRS", memmem_u8(aml, len - 36, crs, sizeof(crs)) != NULL);
}

/* Run a shell command line; its exit status, or -1. */
static int run(const char *cmd)
{
	int st = system(cmd);

	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = calloc(1, (size_t)n + 1)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* ACPICA's disassembler reads the DSDT as Linux's ACPI core will: every
 * object the hot-plug needs is there by name, and the ASL it gives back
 * compiles with no error and no warning. */
static void check_dsdt_iasl(const uint8_t *dsdt, unsigned int ncpus)
{
	static const char *const want[] = {
		"Device (PCI0)", "EisaId (\"PNP0A03\")", "WordBusNumber (ResourceProducer",
		"0x0CF8,             // Range Minimum", "DWordMemory (ResourceProducer",
		"0xC0000000,         // Range Minimum", "0xFEBFFFFF,         // Range Maximum",
		"OperationRegion (PCST, SystemIO, 0x0630, 0x10)",
		"Field (PCST, DWordAcc, NoLock, WriteAsZeros)",
		"Device (S01)", "Name (_ADR, 0x00010000)", "Name (_SUN, One)", "Device (S1F)",
		"Name (_ADR, 0x001F0000)", "Method (_EJ0, 1, NotSerialized)", "B0EJ = 0x80000000",
		"Method (PCNT, 0, NotSerialized)", "Notify (S1F, One)", "Notify (S1F, 0x03)",
		"Scope (\\_GPE)", "Method (_E01, 0, NotSerialized)", "\\_SB.PCI0.PCNT ()",
	};
	char dir[] = "/tmp/lodge-test-acpi-XXXXXX", path[200], cmd[600], name[80];
	char *dsl, *log;
	bool all = true;
	FILE *f;

	if (run("command -v iasl >/dev/null 2>&1") != 0) {
		printf("SKIP: DSDT through iasl: iasl (Debian's acpica-tools, make deps) is not installed\n");
		return;
	}
	if (!mkdtemp(dir)) {
		CHECK("DSDT through iasl: a temporary directory", false);
		return;
	}
	snprintf(path, sizeof(path), "%s/dsdt.dat", dir);
	f = fopen(path, "wb");
	CHECK("DSDT written for iasl", f && fwrite(dsdt, 1, get32(dsdt, 4), f) == get32(dsdt, 4));
	if (f)
		fclose(f);
	snprintf(cmd, sizeof(cmd), "cd %s && iasl -d dsdt.dat >dis.log 2>&1", dir);
	snprintf(name, sizeof(name), "iasl -d disassembles the DSDT (%u vCPUs)", ncpus);
	CHECK(name, run(cmd) == 0);
	snprintf(path, sizeof(path), "%s/dsdt.dsl", dir);
	dsl = slurp(path);
	CHECK("iasl -d wrote the ASL", dsl != NULL);
	for (size_t i = 0; dsl && i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(dsl, want[i])) {
			printf("FAIL: the disassembled DSDT lacks: %s\n", want[i]);
			all = false;
		}
	CHECK("the disassembled DSDT has the host bridge, its _CRS, 31 slots, PCNT and \\_GPE._E01",
	      dsl && all);
	snprintf(cmd, sizeof(cmd), "cd %s && iasl -p again dsdt.dsl >asl.log 2>&1", dir);
	CHECK("iasl compiles the disassembly again", run(cmd) == 0);
	snprintf(path, sizeof(path), "%s/asl.log", dir);
	log = slurp(path);
	CHECK("... with 0 errors and 0 warnings", log && strstr(log, " 0 Errors, 0 Warnings"));
	if (log && !strstr(log, " 0 Errors, 0 Warnings"))
		printf("%s\n", log);
	free(dsl);
	free(log);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	run(cmd);
}

static void check_tables(unsigned int ncpus, const char *dump_dir)
{
	uint64_t rsdp_gpa = 0;
	const uint8_t *rsdp, *xsdt, *fadt = NULL, *madt = NULL, *dsdt = NULL;
	uint64_t scan_hit = 0;
	int rc;

	printf("-- %u vCPU(s)\n", ncpus);
	memset(ram, FILL, RAM);
	rc = acpi_build(&mem, &(struct acpi_platform){ .ncpus = ncpus }, &rsdp_gpa);
	CHECK("acpi_build succeeds", rc == 0);
	if (rc)
		return;
	CHECK("nothing written outside the ACPI area",
	      ram[GPA_ACPI_BASE - 1] == FILL && ram[GPA_ACPI_END] == FILL);

	CHECK("RSDP at GPA_ACPI_BASE", rsdp_gpa == GPA_ACPI_BASE);
	rsdp = ram + rsdp_gpa;
	CHECK("RSDP signature, revision 2, length 36",
	      !memcmp(rsdp, "RSD PTR ", 8) && rsdp[15] == 2 && get32(rsdp, 20) == 36);
	CHECK("RSDP checksum (20 bytes)", sums_to_zero(rsdp, 20));
	CHECK("RSDP extended checksum (36 bytes)", sums_to_zero(rsdp, 36));
	CHECK("RSDP no RSDT", get32(rsdp, 16) == 0);
	/* The legacy scan (ACPI 5.2.5.1): 16-byte boundaries in 0xE0000-0xFFFFF. */
	for (uint64_t a = 0xE0000; a < 0x100000 && !scan_hit; a += 16)
		if (!memcmp(ram + a, "RSD PTR ", 8) && sums_to_zero(ram + a, 20))
			scan_hit = a;
	CHECK("legacy BIOS-area scan finds the RSDP", scan_hit == rsdp_gpa);

	xsdt = table_at(get64(rsdp, 24), "XSDT");
	CHECK("RSDP -> XSDT", xsdt != NULL);
	if (!xsdt)
		return;
	CHECK("XSDT checksum", sums_to_zero(xsdt, get32(xsdt, 4)));
	CHECK("XSDT has two entries", get32(xsdt, 4) == 36 + 2 * 8);
	for (uint32_t off = 36; off + 8 <= get32(xsdt, 4); off += 8) {
		uint64_t gpa = get64(xsdt, off);

		if (table_at(gpa, "FACP"))
			fadt = ram + gpa;
		if (table_at(gpa, "APIC"))
			madt = ram + gpa;
	}
	CHECK("XSDT -> FACP", fadt != NULL);
	CHECK("XSDT -> APIC", madt != NULL);
	if (fadt)
		check_fadt(fadt, &dsdt);
	if (madt)
		check_madt(madt, ncpus);
	if (dsdt)
		check_dsdt(dsdt, ncpus);
	if (dsdt && ncpus != 1)
		check_dsdt_iasl(dsdt, ncpus);

	if (dump_dir && fadt && madt && dsdt) {
		dump(dump_dir, "RSDP", ncpus, rsdp, 36);
		dump(dump_dir, "XSDT", ncpus, xsdt, get32(xsdt, 4));
		dump(dump_dir, "FACP", ncpus, fadt, get32(fadt, 4));
		dump(dump_dir, "FACS", ncpus, ram + get32(fadt, 36), 64);
		dump(dump_dir, "APIC", ncpus, madt, get32(madt, 4));
		dump(dump_dir, "DSDT", ncpus, dsdt, get32(dsdt, 4));
	}
}

static bool aml_is(const struct aml *a, const void *bytes, size_t n)
{
	return !a->err && a->len == n && !memcmp(a->buf, bytes, n);
}

static void check_aml_emitter(void)
{
	struct aml a;
	uint8_t out[4];
	size_t n;

	printf("-- AML emitter\n");
	n = aml_pkglength_encode(out, 0);
	CHECK("PkgLength empty body: 1 byte", n == 1 && out[0] == 1);
	n = aml_pkglength_encode(out, 62);
	CHECK("PkgLength 62-byte body: 1 byte (63)", n == 1 && out[0] == 63);
	n = aml_pkglength_encode(out, 63);
	CHECK("PkgLength 63-byte body: 2 bytes (65)", n == 2 && out[0] == 0x41 && out[1] == 0x04);
	n = aml_pkglength_encode(out, 4093);
	CHECK("PkgLength 4093-byte body: 2 bytes (4095)", n == 2 && out[0] == 0x4F && out[1] == 0xFF);
	n = aml_pkglength_encode(out, 4094);
	CHECK("PkgLength 4094-byte body: 3 bytes (4097)",
	      n == 3 && out[0] == 0x81 && out[1] == 0x00 && out[2] == 0x01);
	n = aml_pkglength_encode(out, 0x100000);
	CHECK("PkgLength 1 MiB body: 4 bytes",
	      n == 4 && out[0] == 0xC4 && out[1] == 0x00 && out[2] == 0x00 && out[3] == 0x01);
	CHECK("PkgLength 256 MiB body: refused", aml_pkglength_encode(out, 1u << 28) == 0);

	CHECK("EISAID PNP0501", aml_eisaid_value("PNP0501") == 0x0105D041);
	CHECK("EISAID PNP0A03", aml_eisaid_value("PNP0A03") == 0x030AD041);
	CHECK("EISAID malformed", aml_eisaid_value("pnp0501") == 0 && aml_eisaid_value("PNP05") == 0);

	aml_init(&a);
	aml_integer(&a, 0); aml_integer(&a, 1); aml_integer(&a, 5); aml_integer(&a, 0x3F8);
	aml_integer(&a, 0x12345678); aml_integer(&a, 0x100000000ull); aml_integer(&a, UINT64_MAX);
	CHECK("integers: shortest encodings", aml_is(&a,
	      "\x00\x01\x0A\x05\x0B\xF8\x03\x0C\x78\x56\x34\x12\x0E\x00\x00\x00\x00\x01\x00\x00\x00\xFF",
	      22));
	aml_free(&a);

	aml_init(&a);
	aml_namestring(&a, "_S5"); aml_namestring(&a, "\\_SB.COM1"); aml_namestring(&a, "\\A.B.C");
	CHECK("names: padding, dual and multi segment", aml_is(&a,
	      "_S5_" "\\\x2E_SB_COM1" "\\\x2F\x03" "A___B___C___", 4 + 10 + 15));
	aml_free(&a);

	aml_init(&a);
	aml_namestring(&a, "1ABC");
	CHECK("names: bad lead character refused", a.err == -EINVAL);
	aml_integer(&a, 7);
	CHECK("errors are sticky", a.err == -EINVAL && a.len == 0);
	aml_free(&a);

	/* Device(COM1){Name(_UID,1)} and a 70-byte package (2-byte PkgLength). */
	aml_init(&a);
	size_t dev = aml_device_begin(&a, "COM1");
	aml_name(&a, "_UID");
	aml_integer(&a, 1);
	aml_end(&a, dev);
	CHECK("Device encoding", aml_is(&a, "\x5B\x82\x0B" "COM1" "\x08_UID\x01", 13));
	aml_free(&a);

	aml_init(&a);
	size_t pkg = aml_package_begin(&a, 35);
	for (int i = 0; i < 35; i++)
		aml_integer(&a, 0x10);
	aml_end(&a, pkg);
	/* Body = NumElements + 35 * 2 = 71 bytes; PkgLength 73 in 2 bytes. */
	CHECK("Package with a 2-byte PkgLength", !a.err && a.len == 1 + 2 + 71 &&
	      a.buf[0] == AML_PACKAGE_OP && a.buf[1] == 0x49 && a.buf[2] == 0x04 && a.buf[3] == 35);
	aml_free(&a);

	aml_init(&a);
	size_t res = aml_restemplate_begin(&a);
	aml_res_irq_noflags(&a, 4);
	aml_restemplate_end(&a, res);
	CHECK("ResourceTemplate: BufferOp, PkgLength, BufferSize, End Tag",
	      aml_is(&a, "\x11\x08\x0A\x05\x22\x10\x00\x79\x00", 9));
	aml_free(&a);
}

static void check_errors(void)
{
	uint8_t small[256];
	struct acpi_area area = { .host = small, .gpa = GPA_ACPI_BASE, .size = sizeof(small) };
	struct guest_mem tiny;
	uint64_t gpa = 0;

	printf("-- errors\n");
	guest_mem_wrap(&tiny, ram, GPA_ACPI_BASE);
	CHECK("guest RAM below the ACPI area: -EFAULT",
	      acpi_build(&tiny, &(struct acpi_platform){ .ncpus = 1 }, &gpa) == -EFAULT);
	guest_mem_wrap(&tiny, ram, GPA_ACPI_END - 1);
	CHECK("guest RAM ending inside the ACPI area: -EFAULT",
	      acpi_build(&tiny, &(struct acpi_platform){ .ncpus = 1 }, &gpa) == -EFAULT);
	CHECK("0 vCPUs: -EINVAL",
	      acpi_build(&mem, &(struct acpi_platform){ .ncpus = 0 }, &gpa) == -EINVAL);
	CHECK("65 vCPUs: -EINVAL", acpi_build(&mem, &(struct acpi_platform){
	      .ncpus = DOMAIN_VCPUS_MAX + 1 }, &gpa) == -EINVAL);

	CHECK("area allocator: aligned", acpi_area_alloc(&area, 10, 1, &gpa) == small &&
	      acpi_area_alloc(&area, 10, 64, &gpa) == small + 64 && gpa == GPA_ACPI_BASE + 64);
	CHECK("area allocator: full -> NULL", acpi_area_alloc(&area, 256, 16, &gpa) == NULL);
	area.used = 0;
	CHECK("DSDT that does not fit: -ENOSPC",
	      acpi_dsdt_write(&area, &(struct acpi_platform){ .ncpus = 64 }, &gpa) == -ENOSPC);
	area.used = 0;
	CHECK("MADT that does not fit: -ENOSPC",
	      acpi_madt_write(&area, &(struct acpi_platform){ .ncpus = 64 }, &gpa) == -ENOSPC);
	area.used = 200;
	CHECK("FADT that does not fit: -ENOSPC", acpi_fadt_write(&area, 0, 0, &gpa) == -ENOSPC);
}

/* maxvcpus 4, 2 online at boot (vcpu-set, src/common/cpuhp.h): four
 * Local APICs, the last two listed but not enabled, so the guest starts
 * two and finds the others' APIC IDs for a later plug. */
static void check_madt_hotplug(void)
{
	static uint8_t buf[4096];
	struct acpi_area area = { .host = buf, .gpa = GPA_ACPI_BASE, .size = sizeof(buf) };
	unsigned int lapics = 0, flags[4] = { 9, 9, 9, 9 };
	uint64_t gpa = 0;
	const uint8_t *madt = buf;
	uint32_t len;

	printf("-- MADT with CPUs to plug\n");
	CHECK("MADT with 4 vCPUs, 2 online, written",
	      acpi_madt_write(&area, &(struct acpi_platform){ .ncpus = 4, .nonline = 2 }, &gpa) == 0);
	len = get32(madt, 4);
	for (size_t off = 44; off + 2 <= len && madt[off + 1] >= 2; off += madt[off + 1])
		if (madt[off] == 0 && lapics < 4 && madt[off + 3] < 4) {
			flags[madt[off + 3]] = get32(madt + off, 4);
			lapics++;
		}
	CHECK("MADT: 4 Local APICs, 0 and 1 enabled, 2 and 3 not",
	      lapics == 4 && flags[0] == 1 && flags[1] == 1 && flags[2] == 0 && flags[3] == 0);
}

int main(void)
{
	const char *dump_dir = getenv("LODGE_ACPI_DUMP");
	static const unsigned int counts[] = { 1, 2, DOMAIN_VCPUS_MAX };

	ram = malloc(RAM);
	if (!ram)
		return 1;
	guest_mem_wrap(&mem, ram, RAM);
	check_aml_emitter();
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		check_tables(counts[i], dump_dir && *dump_dir ? dump_dir : NULL);
	check_madt_hotplug();
	check_errors();
	free(ram);
	UNIT_EXIT();
}
