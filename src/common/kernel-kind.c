/* Linux kernel images told from others (kernel-kind.h). */
#include "kernel-kind.h"

#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* An ELF note named "Linux" in a PT_NOTE segment, read within the file. */
static bool elf_has_linux_note(const uint8_t *d, size_t size)
{
	const Elf64_Ehdr *eh = (const void *)d;
	unsigned i;

	if (size < sizeof(*eh) || memcmp(d, ELFMAG, SELFMAG) || d[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > size ||
	    (size - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum)
		return false;
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(d + eh->e_phoff + i * sizeof(Elf64_Phdr));
		uint64_t off = ph->p_offset, end;

		if (ph->p_type != PT_NOTE || off > size || ph->p_filesz > size - off)
			continue;
		end = off + ph->p_filesz;
		while (end - off >= sizeof(Elf64_Nhdr)) {
			const Elf64_Nhdr *nh = (const void *)(d + off);
			uint64_t name = off + sizeof(*nh);
			uint64_t next = name + ((nh->n_namesz + 3ull) & ~3ull) + ((nh->n_descsz + 3ull) & ~3ull);

			if (next > end)
				break;
			if (nh->n_namesz == 6 && !memcmp(d + name, "Linux", 6))
				return true;
			off = next;
		}
	}
	return false;
}

bool kernel_image_is_linux(const void *data, size_t size)
{
	const uint8_t *d = data;

	if (!d)
		return false;
	if (size > 0x206 && !memcmp(d + 0x202, "HdrS", 4))
		return true;
	return elf_has_linux_note(d, size);
}

bool kernel_file_is_linux(const char *path)
{
	struct stat st;
	bool linux_kernel = false;
	void *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) != MAP_FAILED) {
		linux_kernel = kernel_image_is_linux(p, st.st_size);
		munmap(p, st.st_size);
	}
	close(fd);
	return linux_kernel;
}
