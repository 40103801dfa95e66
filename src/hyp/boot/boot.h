/* Kernel loaders: a Linux bzImage through the x86 boot protocol, or an
 * ELF64 kernel through its PVH entry note (Mini-OS, a Linux vmlinux). */
#ifndef LODGE_BOOT_H
#define LODGE_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "mem.h"

enum boot_mode {
	BOOT_PVH32,      /* 32-bit flat protected mode, paging off, EBX = start_info */
	BOOT_LINUX64,    /* 64-bit long mode, identity paging, RSI = boot_params */
};

struct boot_entry {
	enum boot_mode mode;
	uint64_t rip;
	uint64_t arg;        /* EBX (PVH) or RSI (Linux) */
};

struct boot_image {
	const uint8_t *data;  /* the whole file, read-only */
	size_t size;
	const char *path;
};

struct boot_params_in {
	struct boot_image kernel;
	struct boot_image initrd;   /* data NULL: none */
	const char *cmdline;
	uint64_t rsdp_gpa;
};

/* Load the image read from path into guest memory and fill *entry.
 * Returns 0 or -errno with a message already stored in err (one line). */
int boot_load(const struct guest_mem *mem, const struct boot_params_in *in,
	      struct boot_entry *entry, char *err, size_t errlen);

/* Each loader: -ENOEXEC, with no message, if the image is not its kind at
 * all (try the next one); any other error is final, with a message. */
int bzimage_load(const struct guest_mem *mem, const struct boot_params_in *in,
		 struct boot_entry *entry, char *err, size_t errlen);
int pvh_load(const struct guest_mem *mem, const struct boot_params_in *in,
	     struct boot_entry *entry, char *err, size_t errlen);

/* e820.c: the guest's memory map, shared by both loaders. */
struct e820_entry_out {
	uint64_t addr, size;
	uint32_t type;
};
#define E820_RAM       1
#define E820_RESERVED  2
#define E820_ACPI      3
#define E820_MAX       8
unsigned e820_build(const struct guest_mem *mem, struct e820_entry_out *out);

/* Top-most place below limit where size bytes fit in low RAM above floor,
 * aligned to align; 0 if none. For the initrd. */
uint64_t boot_place_high(const struct guest_mem *mem, uint64_t floor,
			 uint64_t limit, uint64_t size, uint64_t align);

#endif
