/* ELF64 loader for kernels with a PVH entry note (Xen's
 * XEN_ELFNOTE_PHYS32_ENTRY): Lodge Mini-OS and a Linux vmlinux.  The entry
 * is 32-bit flat protected mode with paging off and EBX pointing at an
 * hvm_start_info (xen/include/public/arch-x86/hvm/start_info.h).
 * The file is untrusted: every offset and size is checked before use. */
#include "boot.h"
#include "platform.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define XEN_ELFNOTE_PHYS32_ENTRY  18
#define HVM_START_MAGIC           0x336ec578
#define HVM_MEMMAP_TYPE_RAM       1

struct hvm_start_info {
	uint32_t magic, version, flags, nr_modules;
	uint64_t modlist_paddr, cmdline_paddr, rsdp_paddr, memmap_paddr;
	uint32_t memmap_entries, reserved;
};
struct hvm_modlist_entry { uint64_t paddr, size, cmdline_paddr, reserved; };
struct hvm_memmap_table_entry { uint64_t addr, size; uint32_t type, reserved; };

_Static_assert(sizeof(struct hvm_start_info) == 56, "hvm_start_info layout");
_Static_assert(sizeof(struct hvm_memmap_table_entry) == 24, "memmap entry layout");

#define START_INFO_MEMMAP   (GPA_PVH_START_INFO + 0x100)
#define START_INFO_MODLIST  (GPA_PVH_START_INFO + 0x800)

/* Does [off, off+len) lie inside a file of size bytes? */
static int in_file(uint64_t off, uint64_t len, size_t size)
{
	return off <= size && len <= size - off;
}

/* Search the PT_NOTE segments for Xen's PHYS32_ENTRY note. */
static int pvh_find_entry(const uint8_t *img, size_t size, const Elf64_Phdr *ph,
			  unsigned phnum, uint32_t *entry)
{
	unsigned i;

	for (i = 0; i < phnum; i++) {
		uint64_t off, end;

		if (ph[i].p_type != PT_NOTE || !in_file(ph[i].p_offset, ph[i].p_filesz, size))
			continue;
		off = ph[i].p_offset;
		end = off + ph[i].p_filesz;
		while (end - off >= sizeof(Elf64_Nhdr)) {
			Elf64_Nhdr nh;
			uint64_t name, desc, next;

			memcpy(&nh, img + off, sizeof(nh));
			name = off + sizeof(nh);
			desc = name + ((nh.n_namesz + 3ULL) & ~3ULL);
			next = desc + ((nh.n_descsz + 3ULL) & ~3ULL);
			if (next > end)
				break;
			if (nh.n_namesz == 4 && memcmp(img + name, "Xen", 4) == 0 &&
			    nh.n_type == XEN_ELFNOTE_PHYS32_ENTRY && nh.n_descsz >= 4) {
				memcpy(entry, img + desc, 4);
				return 0;
			}
			off = next;
		}
	}
	return -ENOENT;
}

static int pvh_write_start_info(const struct guest_mem *mem, const struct boot_params_in *in,
				uint64_t initrd_at)
{
	struct hvm_start_info si = {
		.magic = HVM_START_MAGIC,
		.version = 1,
		.cmdline_paddr = GPA_CMDLINE,
		.rsdp_paddr = in->rsdp_gpa,
		.memmap_paddr = START_INFO_MEMMAP,
	};
	struct e820_entry_out e820[E820_MAX];
	unsigned i, n = e820_build(mem, e820);

	for (i = 0; i < n; i++) {
		struct hvm_memmap_table_entry me = {
			.addr = e820[i].addr, .size = e820[i].size, .type = e820[i].type,
		};
		if (gpa_write(mem, START_INFO_MEMMAP + i * sizeof(me), &me, sizeof(me)))
			return -EFAULT;
	}
	si.memmap_entries = n;
	if (in->initrd.data) {
		struct hvm_modlist_entry mod = { .paddr = initrd_at, .size = in->initrd.size };

		if (gpa_write(mem, START_INFO_MODLIST, &mod, sizeof(mod)))
			return -EFAULT;
		si.nr_modules = 1;
		si.modlist_paddr = START_INFO_MODLIST;
	}
	return gpa_write(mem, GPA_PVH_START_INFO, &si, sizeof(si));
}

int pvh_load(const struct guest_mem *mem, const struct boot_params_in *in,
	     struct boot_entry *entry, char *err, size_t errlen)
{
	const uint8_t *img = in->kernel.data;
	size_t size = in->kernel.size, cmdlen;
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64];
	uint64_t kernel_end = 0, initrd_at = 0;
	uint32_t entry32;
	unsigned i;

	if (size < sizeof(eh) || memcmp(img, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	memcpy(&eh, img, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64 || eh.e_type != ET_EXEC) {
		snprintf(err, errlen, "%s: not an x86-64 executable ELF64 kernel", in->kernel.path);
		return -EINVAL;
	}
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 ||
	    eh.e_phnum > sizeof(ph) / sizeof(ph[0]) ||
	    !in_file(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), size)) {
		snprintf(err, errlen, "%s: malformed ELF program headers", in->kernel.path);
		return -EINVAL;
	}
	memcpy(ph, img + eh.e_phoff, eh.e_phnum * sizeof(Elf64_Phdr));
	if (pvh_find_entry(img, size, ph, eh.e_phnum, &entry32)) {
		snprintf(err, errlen, "%s: ELF kernel without a PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY)",
			 in->kernel.path);
		return -EINVAL;
	}

	for (i = 0; i < eh.e_phnum; i++) {
		const Elf64_Phdr *p = &ph[i];
		uint8_t *dst;

		if (p->p_type != PT_LOAD || p->p_memsz == 0)
			continue;
		if (p->p_filesz > p->p_memsz || !in_file(p->p_offset, p->p_filesz, size)) {
			snprintf(err, errlen, "%s: malformed ELF segment %u", in->kernel.path, i);
			return -EINVAL;
		}
		if (p->p_paddr < GPA_KERNEL_LOW) {
			snprintf(err, errlen, "%s: segment %u at %#llx overlaps the boot area below 1 MiB",
				 in->kernel.path, i, (unsigned long long)p->p_paddr);
			return -EINVAL;
		}
		dst = gpa_ptr(mem, p->p_paddr, p->p_memsz);
		if (!dst) {
			snprintf(err, errlen, "memory too small for the kernel: %s needs RAM up to %#llx",
				 in->kernel.path, (unsigned long long)(p->p_paddr + p->p_memsz));
			return -ENOMEM;
		}
		memcpy(dst, img + p->p_offset, p->p_filesz);
		memset(dst + p->p_filesz, 0, p->p_memsz - p->p_filesz);
		if (p->p_paddr + p->p_memsz > kernel_end)
			kernel_end = p->p_paddr + p->p_memsz;
	}

	cmdlen = strlen(in->cmdline);
	if (cmdlen + 1 > CMDLINE_MAX) {
		snprintf(err, errlen, "command line of %zu bytes is longer than %d", cmdlen, CMDLINE_MAX - 1);
		return -E2BIG;
	}
	if (gpa_write(mem, GPA_CMDLINE, in->cmdline, cmdlen + 1))
		return -EFAULT;

	if (in->initrd.data) {
		initrd_at = boot_place_high(mem, kernel_end, GPA_LOW_RAM_MAX, in->initrd.size, 4096);
		if (!initrd_at) {
			snprintf(err, errlen, "memory too small for the kernel and initrd (%zu KiB initrd)",
				 in->initrd.size >> 10);
			return -ENOMEM;
		}
		if (gpa_write(mem, initrd_at, in->initrd.data, in->initrd.size))
			return -EFAULT;
	}
	if (pvh_write_start_info(mem, in, initrd_at))
		return -EFAULT;

	entry->mode = BOOT_PVH32;
	entry->rip = entry32;
	entry->arg = GPA_PVH_START_INFO;
	return 0;
}
