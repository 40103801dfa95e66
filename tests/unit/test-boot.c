/* The kernel loaders on synthetic images in a buffer standing in for guest
 * RAM: a minimal bzImage and PVH ELF load where the protocols say, and
 * malformed files are refused with a message instead of being trusted. */
#include "boot/boot.h"
#include "platform.h"
#include "unit.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RAM (64u << 20)

static uint8_t *ram;
static struct guest_mem mem;

static void put16(uint8_t *p, size_t off, uint16_t v) { memcpy(p + off, &v, 2); }
static void put32(uint8_t *p, size_t off, uint32_t v) { memcpy(p + off, &v, 4); }
static void put64(uint8_t *p, size_t off, uint64_t v) { memcpy(p + off, &v, 8); }
static uint32_t get32(const uint8_t *p, size_t off) { uint32_t v; memcpy(&v, p + off, 4); return v; }
static uint64_t get64(const uint8_t *p, size_t off) { uint64_t v; memcpy(&v, p + off, 8); return v; }

/* A bzImage: 4 setup sectors + boot sector, then 64 KiB of "kernel". */
static uint8_t *make_bzimage(size_t *size)
{
	size_t setup = 5 * 512, kernel = 65536;
	uint8_t *img = calloc(1, setup + kernel);

	img[0x1f1] = 4;
	put16(img, 0x1fe, 0xAA55);
	img[0x201] = 0x6a;                   /* header ends at 0x26c */
	memcpy(img + 0x202, "HdrS", 4);
	put16(img, 0x206, 0x020f);
	put32(img, 0x22c, 0x7fffffff);       /* initrd_addr_max */
	put32(img, 0x230, 0x200000);         /* kernel_alignment */
	img[0x234] = 1;                      /* relocatable */
	put16(img, 0x236, 0x3);              /* XLF_KERNEL_64 | CAN_BE_LOADED_ABOVE_4G */
	put32(img, 0x238, 2047);             /* cmdline_size */
	put64(img, 0x258, 0x1000000);        /* pref_address */
	put32(img, 0x260, 0x400000);         /* init_size */
	memset(img + setup, 0x90, kernel);
	*size = setup + kernel;
	return img;
}

static void test_bzimage(void)
{
	size_t size;
	uint8_t *img = make_bzimage(&size);
	uint8_t initrd[8192];
	struct boot_params_in in = {
		.kernel = { img, size, "bz" }, .initrd = { initrd, sizeof(initrd), "rd" },
		.cmdline = "console=ttyS0", .rsdp_gpa = GPA_ACPI_BASE,
	};
	struct boot_entry e;
	char err[256] = "";
	const uint8_t *zp = ram + GPA_ZERO_PAGE;
	int rc;

	memset(initrd, 0xab, sizeof(initrd));
	rc = bzimage_load(&mem, &in, &e, err, sizeof(err));
	CHECK("bzImage loads", rc == 0);
	CHECK("bzImage enters 64-bit at pref_address + 0x200", e.mode == BOOT_LINUX64 && e.rip == 0x1000200);
	CHECK("bzImage RSI is the zero page", e.arg == GPA_ZERO_PAGE);
	CHECK("kernel copied to pref_address", ram[0x1000000] == 0x90 && ram[0x1000000 + 65535] == 0x90);
	CHECK("command line in place", strcmp((char *)ram + GPA_CMDLINE, "console=ttyS0") == 0 &&
	      get32(zp, 0x228) == GPA_CMDLINE);
	CHECK("type_of_loader set", zp[0x210] == 0xff);
	CHECK("initrd placed at top of RAM, page aligned",
	      get32(zp, 0x218) == RAM - 8192 && get32(zp, 0x21c) == 8192 && ram[RAM - 1] == 0xab);
	CHECK("acpi_rsdp_addr set", get64(zp, 0x70) == GPA_ACPI_BASE);
	CHECK("e820 has four entries with 64 MiB", zp[0x1e8] == 4);
	CHECK("e820 first entry is low RAM", get64(zp, 0x2d0) == 0 && get64(zp, 0x2d8) == GPA_EBDA &&
	      get32(zp, 0x2e0) == E820_RAM);
	CHECK("e820 last entry is RAM from 1 MiB", get64(zp, 0x2d0 + 3 * 20) == GPA_KERNEL_LOW &&
	      get64(zp, 0x2d8 + 3 * 20) == RAM - GPA_KERNEL_LOW);

	in.cmdline = (char[3000]){ [0 ... 2998] = 'x' };
	CHECK("command line over cmdline_size refused",
	      bzimage_load(&mem, &in, &e, err, sizeof(err)) == -E2BIG && strstr(err, "longer than"));
	in.cmdline = "";
	put32(img, 0x260, 0x4000000);      /* init_size 64 MiB from 16 MiB: too big */
	CHECK("kernel larger than RAM refused",
	      bzimage_load(&mem, &in, &e, err, sizeof(err)) == -ENOMEM && strstr(err, "memory too small"));
	put32(img, 0x260, 0x400000);
	put16(img, 0x236, 0);
	CHECK("kernel without 64-bit entry refused",
	      bzimage_load(&mem, &in, &e, err, sizeof(err)) == -EINVAL && strstr(err, "64-bit entry"));
	put16(img, 0x236, 3);
	img[0x1f1] = 250;                    /* setup larger than the file */
	CHECK("truncated bzImage refused",
	      bzimage_load(&mem, &in, &e, err, sizeof(err)) == -EINVAL && strstr(err, "truncated"));
	memcpy(img + 0x202, "NotH", 4);
	CHECK("non-bzImage is not claimed", bzimage_load(&mem, &in, &e, err, sizeof(err)) == -ENOEXEC);
	free(img);
}

/* An ELF64 with one PT_LOAD at 1 MiB and a PT_NOTE carrying Xen's PHYS32_ENTRY. */
struct elf_image {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[2];
	Elf64_Nhdr nh;
	char name[4];
	uint32_t entry;
	uint8_t text[256];
};

static void make_elf(struct elf_image *x)
{
	memset(x, 0, sizeof(*x));
	memcpy(x->eh.e_ident, ELFMAG, SELFMAG);
	x->eh.e_ident[EI_CLASS] = ELFCLASS64;
	x->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	x->eh.e_type = ET_EXEC;
	x->eh.e_machine = EM_X86_64;
	x->eh.e_phoff = offsetof(struct elf_image, ph);
	x->eh.e_phentsize = sizeof(Elf64_Phdr);
	x->eh.e_phnum = 2;
	x->ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_offset = offsetof(struct elf_image, text),
				 .p_paddr = 0x100000, .p_filesz = 256, .p_memsz = 4096 };
	x->ph[1] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = offsetof(struct elf_image, nh),
				 .p_filesz = sizeof(Elf64_Nhdr) + 8 };
	x->nh = (Elf64_Nhdr){ .n_namesz = 4, .n_descsz = 4, .n_type = 18 };
	memcpy(x->name, "Xen", 4);
	x->entry = 0x100040;
	memset(x->text, 0xcc, sizeof(x->text));
}

static void test_pvh(void)
{
	struct elf_image x;
	struct boot_params_in in = { .kernel = { (uint8_t *)&x, sizeof(x), "elf" },
				     .cmdline = "run=poweroff", .rsdp_gpa = GPA_ACPI_BASE };
	struct boot_entry e;
	char err[256] = "";
	uint32_t si[14];

	make_elf(&x);
	memset(ram + 0x100000, 0x55, 8192);
	CHECK("PVH ELF loads", pvh_load(&mem, &in, &e, err, sizeof(err)) == 0);
	CHECK("PVH entry from the note", e.mode == BOOT_PVH32 && e.rip == 0x100040 && e.arg == GPA_PVH_START_INFO);
	CHECK("segment copied and bss zeroed", ram[0x100000] == 0xcc && ram[0x100000 + 256] == 0 &&
	      ram[0x100000 + 4095] == 0 && ram[0x100000 + 4096] == 0x55);
	memcpy(si, ram + GPA_PVH_START_INFO, sizeof(si));
	CHECK("start_info magic and version", si[0] == 0x336ec578 && si[1] == 1);
	CHECK("start_info rsdp and cmdline", get64(ram + GPA_PVH_START_INFO, 24) == GPA_CMDLINE &&
	      get64(ram + GPA_PVH_START_INFO, 32) == GPA_ACPI_BASE);
	CHECK("start_info memmap has 4 entries", si[12] == 4);

	make_elf(&x);
	x.ph[0].p_offset = 1u << 30;
	CHECK("segment beyond the file refused", pvh_load(&mem, &in, &e, err, sizeof(err)) == -EINVAL);
	make_elf(&x);
	x.ph[0].p_filesz = 8192;
	CHECK("filesz > memsz refused", pvh_load(&mem, &in, &e, err, sizeof(err)) == -EINVAL);
	make_elf(&x);
	x.ph[0].p_paddr = 0x7000;
	CHECK("segment over the boot area refused",
	      pvh_load(&mem, &in, &e, err, sizeof(err)) == -EINVAL && strstr(err, "below 1 MiB"));
	make_elf(&x);
	x.ph[0].p_paddr = RAM - 100;
	CHECK("segment beyond RAM refused",
	      pvh_load(&mem, &in, &e, err, sizeof(err)) == -ENOMEM && strstr(err, "memory too small"));
	make_elf(&x);
	x.ph[0].p_paddr = 0xfffffffffffff000ULL;
	CHECK("segment address wrapping refused", pvh_load(&mem, &in, &e, err, sizeof(err)) == -ENOMEM);
	make_elf(&x);
	x.nh.n_descsz = 0x7ffffff0;
	CHECK("oversized note refused", pvh_load(&mem, &in, &e, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "without a PVH entry note"));
	make_elf(&x);
	x.eh.e_phnum = 60000;
	CHECK("absurd phnum refused", pvh_load(&mem, &in, &e, err, sizeof(err)) == -EINVAL);
	make_elf(&x);
	x.eh.e_machine = EM_AARCH64;
	CHECK("foreign ELF refused", pvh_load(&mem, &in, &e, err, sizeof(err)) == -EINVAL);
	x.eh.e_ident[0] = 0;
	CHECK("non-ELF not claimed", pvh_load(&mem, &in, &e, err, sizeof(err)) == -ENOEXEC);
	CHECK("neither format: boot_load names the file",
	      boot_load(&mem, &in, &e, err, sizeof(err)) == -ENOEXEC &&
	      strstr(err, "elf: not a Linux bzImage nor an ELF64 kernel"));
}

static void test_gpa_bounds(void)
{
	CHECK("gpa_ptr inside RAM", gpa_ptr(&mem, 0, RAM) == ram);
	CHECK("gpa_ptr one byte past RAM", gpa_ptr(&mem, RAM - 1, 2) == NULL);
	CHECK("gpa_ptr huge length", gpa_ptr(&mem, 4096, ~0ULL) == NULL);
	CHECK("gpa_ptr in the hole", gpa_ptr(&mem, GPA_LAPIC, 4) == NULL);
	CHECK("boot_place_high finds nothing too big", boot_place_high(&mem, 0, ~0ULL, RAM + 1, 4096) == 0);
}

int main(void)
{
	ram = calloc(1, RAM);
	guest_mem_wrap(&mem, ram, RAM);
	test_bzimage();
	test_pvh();
	test_gpa_bounds();
	UNIT_EXIT();
}
