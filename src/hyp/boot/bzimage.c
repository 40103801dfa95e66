/* Linux bzImage loader: the x86 boot protocol (Documentation/arch/x86/
 * boot.rst), entered through the 64-bit entry point at load address + 0x200,
 * so no real-mode setup code runs. */
#include "boot.h"
#include "platform.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Offsets into boot_params ("the zero page"); the setup header starts at 0x1f1. */
#define BP_ACPI_RSDP_ADDR     0x070
#define BP_EXT_RAMDISK_IMAGE  0x0c0
#define BP_EXT_RAMDISK_SIZE   0x0c4
#define BP_EXT_CMD_LINE_PTR   0x0c8
#define BP_E820_ENTRIES       0x1e8
#define BP_E820_TABLE         0x2d0
#define BP_E820_MAX           128
#define HDR_START             0x1f1
#define HDR_SETUP_SECTS       0x1f1
#define HDR_BOOT_FLAG         0x1fe
#define HDR_JUMP_END          0x201   /* end of header = 0x202 + this byte */
#define HDR_MAGIC             0x202
#define HDR_VERSION           0x206
#define HDR_TYPE_OF_LOADER    0x210
#define HDR_LOADFLAGS         0x211
#define HDR_RAMDISK_IMAGE     0x218
#define HDR_RAMDISK_SIZE      0x21c
#define HDR_CMD_LINE_PTR      0x228
#define HDR_INITRD_ADDR_MAX   0x22c
#define HDR_KERNEL_ALIGNMENT  0x230
#define HDR_RELOCATABLE       0x234
#define HDR_XLOADFLAGS        0x236
#define HDR_CMDLINE_SIZE      0x238
#define HDR_PREF_ADDRESS      0x258
#define HDR_INIT_SIZE         0x260

#define LOADED_HIGH           0x01
#define KEEP_SEGMENTS         0x40
#define XLF_KERNEL_64         0x01
#define BOOT_PROTO_MIN        0x020c  /* 2.12: xloadflags, 64-bit entry */
#define BOOT_PROTO_RSDP       0x020e  /* 2.14: acpi_rsdp_addr */
#define ENTRY64_OFFSET        0x200

static uint16_t get16(const uint8_t *p, size_t off) { uint16_t v; memcpy(&v, p + off, 2); return v; }
static uint32_t get32(const uint8_t *p, size_t off) { uint32_t v; memcpy(&v, p + off, 4); return v; }
static uint64_t get64(const uint8_t *p, size_t off) { uint64_t v; memcpy(&v, p + off, 8); return v; }
static void put8(uint8_t *p, size_t off, uint8_t v) { p[off] = v; }
static void put32(uint8_t *p, size_t off, uint32_t v) { memcpy(p + off, &v, 4); }
static void put64(uint8_t *p, size_t off, uint64_t v) { memcpy(p + off, &v, 8); }

/* The 64-bit entry wants CS=0x10 and DS=0x18 flat 4 GiB segments and an
 * identity map of the kernel, the zero page and the command line: map all
 * of the low 4 GiB with 2 MiB pages. */
static int bzimage_setup_paging(const struct guest_mem *mem)
{
	static const uint64_t gdt[] = {
		0, 0,
		0x00af9b000000ffffULL,  /* 0x10: 64-bit code, DPL 0 */
		0x00cf93000000ffffULL,  /* 0x18: flat data */
	};
	uint64_t *pml4 = gpa_ptr(mem, GPA_BOOT_PML4, 4096);
	uint64_t *pdpt = gpa_ptr(mem, GPA_BOOT_PDPT, 4096);
	uint64_t *pd = gpa_ptr(mem, GPA_BOOT_PD, 4 * 4096);
	unsigned i;

	if (!pml4 || !pdpt || !pd || gpa_write(mem, GPA_BOOT_GDT, gdt, sizeof(gdt)))
		return -EFAULT;
	memset(pml4, 0, 4096);
	memset(pdpt, 0, 4096);
	pml4[0] = GPA_BOOT_PDPT | 0x3;                     /* present, writable */
	for (i = 0; i < 4; i++)
		pdpt[i] = (GPA_BOOT_PD + i * 4096ULL) | 0x3;
	for (i = 0; i < 4 * 512; i++)
		pd[i] = ((uint64_t)i << 21) | 0x83;         /* present, writable, 2 MiB */
	return 0;
}

int bzimage_load(const struct guest_mem *mem, const struct boot_params_in *in,
		 struct boot_entry *entry, char *err, size_t errlen)
{
	const uint8_t *img = in->kernel.data;
	size_t size = in->kernel.size, setup_size, hdr_end, cmdlen;
	uint8_t *zp;
	uint64_t load, align, init_size, kernel_size, initrd_at = 0;
	struct e820_entry_out e820[E820_MAX];
	unsigned i, n;
	uint16_t version;

	if (size < 0x270 || get16(img, HDR_BOOT_FLAG) != 0xAA55 ||
	    memcmp(img + HDR_MAGIC, "HdrS", 4) != 0)
		return -ENOEXEC;

	version = get16(img, HDR_VERSION);
	if (version < BOOT_PROTO_MIN || !(get16(img, HDR_XLOADFLAGS) & XLF_KERNEL_64)) {
		snprintf(err, errlen, "%s: boot protocol %u.%02u without a 64-bit entry point (need 2.12 or later)",
			 in->kernel.path, version >> 8, version & 0xff);
		return -EINVAL;
	}
	setup_size = ((size_t)(img[HDR_SETUP_SECTS] ? img[HDR_SETUP_SECTS] : 4) + 1) * 512;
	hdr_end = 0x202 + img[HDR_JUMP_END];
	if (setup_size >= size || hdr_end > setup_size || hdr_end > 0x1000) {
		snprintf(err, errlen, "%s: truncated bzImage", in->kernel.path);
		return -EINVAL;
	}
	kernel_size = size - setup_size;

	/* A relocatable kernel goes where it prefers (16 MiB for Debian's),
	 * which keeps the decompressor from moving itself. */
	load = GPA_KERNEL_LOW;
	align = get32(img, HDR_KERNEL_ALIGNMENT);
	if (img[HDR_RELOCATABLE] && get64(img, HDR_PREF_ADDRESS))
		load = get64(img, HDR_PREF_ADDRESS);
	if (align && (align & (align - 1)) == 0)
		load = (load + align - 1) & ~(align - 1);
	init_size = get32(img, HDR_INIT_SIZE);
	if (init_size < kernel_size)
		init_size = kernel_size;
	if (load >= mem->low_size || init_size > mem->low_size - load) {
		snprintf(err, errlen, "memory too small for the kernel: %s needs %llu MiB from %#llx",
			 in->kernel.path, (unsigned long long)((load + init_size + (1 << 20) - 1) >> 20),
			 (unsigned long long)load);
		return -ENOMEM;
	}
	if (gpa_write(mem, load, img + setup_size, kernel_size))
		return -EFAULT;

	zp = gpa_ptr(mem, GPA_ZERO_PAGE, 4096);
	if (!zp)
		return -EFAULT;
	memset(zp, 0, 4096);
	memcpy(zp + HDR_START, img + HDR_START, hdr_end - HDR_START);
	put8(zp, HDR_TYPE_OF_LOADER, 0xff);            /* "undefined" boot loader */
	zp[HDR_LOADFLAGS] = (zp[HDR_LOADFLAGS] | LOADED_HIGH) & ~KEEP_SEGMENTS;

	cmdlen = strlen(in->cmdline);
	if (cmdlen + 1 > CMDLINE_MAX || cmdlen > get32(img, HDR_CMDLINE_SIZE)) {
		snprintf(err, errlen, "command line of %zu bytes is longer than %s accepts (%u)",
			 cmdlen, in->kernel.path, get32(img, HDR_CMDLINE_SIZE));
		return -E2BIG;
	}
	if (gpa_write(mem, GPA_CMDLINE, in->cmdline, cmdlen + 1))
		return -EFAULT;
	put32(zp, HDR_CMD_LINE_PTR, GPA_CMDLINE);
	put32(zp, BP_EXT_CMD_LINE_PTR, 0);

	if (in->initrd.data) {
		uint64_t max = get32(img, HDR_INITRD_ADDR_MAX);

		/* initrd_addr_max is the last byte the initrd may occupy. */
		initrd_at = boot_place_high(mem, load + init_size, max + 1,
					    in->initrd.size, 4096);
		if (!initrd_at) {
			snprintf(err, errlen, "memory too small for the kernel and initrd (%zu KiB initrd below %#llx)",
				 in->initrd.size >> 10, (unsigned long long)max);
			return -ENOMEM;
		}
		if (gpa_write(mem, initrd_at, in->initrd.data, in->initrd.size))
			return -EFAULT;
		put32(zp, HDR_RAMDISK_IMAGE, (uint32_t)initrd_at);
		put32(zp, HDR_RAMDISK_SIZE, (uint32_t)in->initrd.size);
		put32(zp, BP_EXT_RAMDISK_IMAGE, (uint32_t)(initrd_at >> 32));
		put32(zp, BP_EXT_RAMDISK_SIZE, (uint32_t)((uint64_t)in->initrd.size >> 32));
	}

	n = e820_build(mem, e820);
	for (i = 0; i < n && i < E820_MAX && i < BP_E820_MAX; i++) {
		uint8_t *e = zp + BP_E820_TABLE + i * 20;

		put64(e, 0, e820[i].addr);
		put64(e, 8, e820[i].size);
		put32(e, 16, e820[i].type);
	}
	zp[BP_E820_ENTRIES] = (uint8_t)i;
	if (version >= BOOT_PROTO_RSDP)
		put64(zp, BP_ACPI_RSDP_ADDR, in->rsdp_gpa);

	if (bzimage_setup_paging(mem))
		return -EFAULT;
	entry->mode = BOOT_LINUX64;
	entry->rip = load + ENTRY64_OFFSET;
	entry->arg = GPA_ZERO_PAGE;
	return 0;
}
