/* The guest as an ELF core file (save/core.h).  The structures are
 * glibc's <elf.h> and <sys/procfs.h>: the same a Linux process's core
 * has, which is what gdb reads an x86_64 core's registers from. */
#include "save/core.h"
#include "domain.h"
#include "mem.h"
#include "platform.h"

#include <elf.h>
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/procfs.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <unistd.h>

#define CORE_ALIGN     4096u          /* RAM starts page-aligned in the file: holes are whole pages */
#define CORE_CHUNK     (1u << 20)     /* RAM is looked at and written this much at a time */
#define CORE_MAX_LOADS 2              /* low RAM, and RAM from 4 GiB (mem.h) */

static const char note_name[] = "CORE";     /* Linux's name for process notes */

struct ram_range {
	uint64_t gpa, size;
};

static unsigned ram_ranges(const struct domain *dom, struct ram_range r[CORE_MAX_LOADS])
{
	unsigned n = 0;

	if (dom->mem.low_size)
		r[n++] = (struct ram_range){ 0, dom->mem.low_size };
	if (dom->mem.high_size)
		r[n++] = (struct ram_range){ GPA_HIGH_RAM_BASE, dom->mem.high_size };
	return n;
}

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

/* One NT_PRSTATUS: header, name padded to 4, descriptor padded to 4. */
static size_t prstatus_note_size(void)
{
	return sizeof(Elf64_Nhdr) + align_up(sizeof(note_name), 4) + align_up(sizeof(struct elf_prstatus), 4);
}

static size_t headers_size(const struct domain *dom)
{
	struct ram_range r[CORE_MAX_LOADS];

	return sizeof(Elf64_Ehdr) + (1 + ram_ranges(dom, r)) * sizeof(Elf64_Phdr);
}

/* A vCPU's registers in the layout of a Linux process's (user.h). */
static int vcpu_prstatus(struct vcpu *v, struct elf_prstatus *st)
{
	struct user_regs_struct u;
	struct kvm_regs r;
	struct kvm_sregs s;

	if (ioctl(v->fd, KVM_GET_REGS, &r) < 0 || ioctl(v->fd, KVM_GET_SREGS, &s) < 0)
		return -errno;
	memset(&u, 0, sizeof(u));
	u.r15 = r.r15; u.r14 = r.r14; u.r13 = r.r13; u.r12 = r.r12;
	u.rbp = r.rbp; u.rbx = r.rbx; u.r11 = r.r11; u.r10 = r.r10;
	u.r9 = r.r9; u.r8 = r.r8; u.rax = r.rax; u.rcx = r.rcx;
	u.rdx = r.rdx; u.rsi = r.rsi; u.rdi = r.rdi; u.orig_rax = ~0ULL;
	u.rip = r.rip; u.eflags = r.rflags; u.rsp = r.rsp;
	u.cs = s.cs.selector; u.ss = s.ss.selector; u.ds = s.ds.selector;
	u.es = s.es.selector; u.fs = s.fs.selector; u.gs = s.gs.selector;
	u.fs_base = s.fs.base; u.gs_base = s.gs.base;
	memset(st, 0, sizeof(*st));
	st->pr_pid = (pid_t)v->id + 1;     /* gdb's thread ids: vCPU n is LWP n+1 */
	_Static_assert(sizeof(st->pr_reg) == sizeof(u), "elf_gregset_t is a user_regs_struct");
	memcpy(&st->pr_reg, &u, sizeof(u));
	return 0;
}

static int write_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Pages of RAM that are not all zeros, written where they go; the zero
 * ones stay holes (the file is sized at the end). */
static int write_ram(const struct domain *dom, int fd, const struct ram_range *r, uint64_t file_off)
{
	static const uint8_t zero[GUEST_PAGE_SIZE];
	uint64_t done, pg;

	for (done = 0; done < r->size; done += CORE_CHUNK) {
		uint64_t len = r->size - done < CORE_CHUNK ? r->size - done : CORE_CHUNK;
		const uint8_t *p = gpa_ptr(&dom->mem, r->gpa + done, len);
		uint64_t run = 0;      /* bytes of non-zero pages not written yet, ending at pg */
		int rc;

		if (!p)
			return -EFAULT;
		for (pg = 0; pg < len; pg += GUEST_PAGE_SIZE) {
			uint64_t plen = len - pg < GUEST_PAGE_SIZE ? len - pg : GUEST_PAGE_SIZE;

			if (memcmp(p + pg, zero, plen)) {
				run += plen;
				continue;
			}
			if (run && (rc = write_all(fd, p + pg - run, run, file_off + done + pg - run)))
				return rc;
			run = 0;
		}
		if (run && (rc = write_all(fd, p + len - run, run, file_off + done + len - run)))
			return rc;
	}
	return 0;
}

int core_write(struct domain *dom, int fd, char *why, size_t whylen)
{
	struct ram_range r[CORE_MAX_LOADS];
	unsigned n = ram_ranges(dom, r), i;
	size_t notes_off = headers_size(dom), note_len = prstatus_note_size();
	uint64_t off = align_up(notes_off + dom->nvcpus * note_len, CORE_ALIGN);
	uint8_t head[sizeof(Elf64_Ehdr) + (1 + CORE_MAX_LOADS) * sizeof(Elf64_Phdr)];
	Elf64_Ehdr *eh = (Elf64_Ehdr *)head;
	Elf64_Phdr *ph = (Elf64_Phdr *)(head + sizeof(*eh));
	struct stat st;
	int rc;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "the core must go to a regular file");
		return -EINVAL;
	}
	if (ftruncate(fd, 0) < 0) {
		rc = -errno;
		snprintf(why, whylen, "cannot truncate the core file: %s", strerror(-rc));
		return rc;
	}
	memset(head, 0, sizeof(head));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh->e_type = ET_CORE;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = (Elf64_Half)(1 + n);
	ph[0] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = notes_off,
			      .p_filesz = dom->nvcpus * note_len, .p_align = 4 };
	for (i = 0; i < n; i++) {
		ph[1 + i] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X, .p_offset = off,
					  .p_vaddr = r[i].gpa, .p_paddr = r[i].gpa, .p_filesz = r[i].size,
					  .p_memsz = r[i].size, .p_align = CORE_ALIGN };
		off += r[i].size;
	}
	if ((rc = write_all(fd, head, headers_size(dom), 0)))
		goto io;
	for (i = 0; i < dom->nvcpus; i++) {
		/* Header, name padded to 8, descriptor: 4-aligned all. */
		uint8_t note[sizeof(Elf64_Nhdr) + 8 + sizeof(struct elf_prstatus)];
		Elf64_Nhdr nh = { .n_namesz = sizeof(note_name), .n_descsz = sizeof(struct elf_prstatus),
				  .n_type = NT_PRSTATUS };
		struct elf_prstatus pr;

		_Static_assert(sizeof(note_name) <= 8 && sizeof(struct elf_prstatus) % 4 == 0, "note padding");
		if ((rc = vcpu_prstatus(&dom->vcpus[i], &pr))) {
			snprintf(why, whylen, "cannot read vcpu%u's registers: %s", i, strerror(-rc));
			return rc;
		}
		memset(note, 0, sizeof(note));
		memcpy(note, &nh, sizeof(nh));
		memcpy(note + sizeof(nh), note_name, sizeof(note_name));
		memcpy(note + sizeof(nh) + 8, &pr, sizeof(pr));
		if ((rc = write_all(fd, note, note_len, notes_off + i * note_len)))
			goto io;
	}
	for (i = 0; i < n; i++)
		if ((rc = write_ram(dom, fd, &r[i], ph[1 + i].p_offset)))
			goto io;
	/* The holes up to the end of the last range. */
	if (ftruncate(fd, (off_t)off) < 0) {
		rc = -errno;
		goto io;
	}
	return 0;
io:
	snprintf(why, whylen, "cannot write the core: %s", strerror(-rc));
	return rc;
}
