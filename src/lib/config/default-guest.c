#include "default-guest.h"
#include "kernel-kind.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum kvm_kind kvm_kind(const char *sysmodule)
{
	char path[CFG_PATH_MAX];

	snprintf(path, sizeof(path), "%s/kvm_pvm", sysmodule);
	if (access(path, F_OK) == 0)
		return KVM_KIND_PVM;
	snprintf(path, sizeof(path), "%s/kvm_intel", sysmodule);
	if (access(path, F_OK) == 0)
		return KVM_KIND_HW;
	snprintf(path, sizeof(path), "%s/kvm_amd", sysmodule);
	if (access(path, F_OK) == 0)
		return KVM_KIND_HW;
	return KVM_KIND_UNKNOWN;
}

const char *pvm_linux_note(enum kvm_kind kind, const char *kernel, bool bootloader)
{
	if (kind != KVM_KIND_PVM || !(bootloader || (kernel && kernel_file_is_linux(kernel))))
		return NULL;
	return "this host's KVM is PVM: a Linux kernel boots here only slowly (10 to 20 minutes, "
	       "lodge-hyp completing what PVM cannot emulate) and its user space runs thousands of "
	       "times slower (each system call completed by lodge-hyp; 32-bit programs do not run); "
	       "use a host with hardware KVM, a PVM guest kernel (CONFIG_PVM_GUEST), "
	       "or Lodge Mini-OS";
}

const char *pvm_linux_note_here(const char *kernel, bool bootloader)
{
	return pvm_linux_note(kvm_kind("/sys/module"), kernel, bootloader);
}

/* DIR/vmlinuz and DIR/initrd.img, both readable. */
static bool debian_in(const char *dir, struct default_guest *g)
{
	snprintf(g->kernel, sizeof(g->kernel), "%s/vmlinuz", dir);
	snprintf(g->ramdisk, sizeof(g->ramdisk), "%s/initrd.img", dir);
	return access(g->kernel, R_OK) == 0 && access(g->ramdisk, R_OK) == 0;
}

static void minios(const char *exe_dir, struct default_guest *g)
{
	g->debian = false;
	g->ramdisk[0] = g->cmdline[0] = '\0';
	/* The schema's default, as a config without memory = gets: the
	 * form's field and its hint ("default N") say the same number. */
	g->memory_mib = DOMAIN_MEMORY_DEFAULT_MIB;
	if (exe_dir) {
		snprintf(g->kernel, sizeof(g->kernel), "%s/minios/minios.elf", exe_dir);
		if (access(g->kernel, R_OK) == 0)
			return;
		snprintf(g->kernel, sizeof(g->kernel), "%s/../share/lodge/minios.elf", exe_dir);
		if (access(g->kernel, R_OK) == 0)
			return;
	}
	snprintf(g->kernel, sizeof(g->kernel), "/usr/local/share/lodge/minios.elf");
}

void default_guest_pick(enum kvm_kind kind, const char *exe_dir, struct default_guest *g)
{
	char dir[CFG_PATH_MAX];

	if (kind == KVM_KIND_HW && exe_dir) {
		snprintf(dir, sizeof(dir), "%s/debian", exe_dir);
		if (!debian_in(dir, g)) {
			snprintf(dir, sizeof(dir), "%s/../share/lodge/debian", exe_dir);
			if (!debian_in(dir, g))
				dir[0] = '\0';
		}
		if (dir[0]) {
			g->debian = true;
			/* The initramfs mounts /dev/vda if it has an /sbin/init
			 * (share/debian/build-rootfs.sh), else gives a shell. */
			snprintf(g->cmdline, sizeof(g->cmdline), "console=ttyS0 root=/dev/vda");
			g->memory_mib = 256;
			snprintf(g->why, sizeof(g->why), "Debian guest: this host has hardware KVM");
			return;
		}
	}
	minios(exe_dir, g);
	if (kind == KVM_KIND_PVM)
		snprintf(g->why, sizeof(g->why), "Mini-OS: this host's KVM is PVM, where a stock Linux kernel does not boot");
	else if (kind == KVM_KIND_HW)
		snprintf(g->why, sizeof(g->why), "Mini-OS: hardware KVM, but no Debian guest (share/debian/build-*.sh)");
	else
		snprintf(g->why, sizeof(g->why), "Mini-OS: this host's KVM is neither VT-x, AMD-V nor PVM");
}

void default_guest_here(struct default_guest *g)
{
	char self[CFG_PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash = NULL;

	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash)
			*slash = '\0';
	}
	default_guest_pick(kvm_kind("/sys/module"), slash ? self : NULL, g);
}
