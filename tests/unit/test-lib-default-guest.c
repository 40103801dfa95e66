/* The create form's default guest: Debian where the host has hardware KVM
 * and the Debian guest is built (next to lodge, or installed under share/),
 * else Mini-OS, with the reason; and how the host's KVM is told apart. */
#include "default-guest.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[] = "/tmp/lodge-guest.XXXXXX";

static void touch(const char *rel)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	if ((f = fopen(path, "w")))
		fclose(f);
}

static void sub(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	mkdir(path, 0755);
}

int main(void)
{
	static struct default_guest g;
	char build[512], sbin[512], sysmod[512], want[600];

	if (!mkdtemp(tmp))
		return 1;
	snprintf(build, sizeof(build), "%s/build", tmp);
	snprintf(sbin, sizeof(sbin), "%s/usr/sbin", tmp);
	snprintf(sysmod, sizeof(sysmod), "%s/sys", tmp);
	sub("build"); sub("build/minios"); sub("usr"); sub("usr/sbin"); sub("usr/share"); sub("usr/share/lodge");
	sub("sys");
	touch("build/minios/minios.elf");

	CHECK("no kvm module: unknown", kvm_kind(sysmod) == KVM_KIND_UNKNOWN);
	sub("sys/kvm_intel");
	CHECK("kvm_intel: hardware", kvm_kind(sysmod) == KVM_KIND_HW);
	sub("sys/kvm_pvm");
	CHECK("kvm_pvm (beside kvm_intel): PVM", kvm_kind(sysmod) == KVM_KIND_PVM);

	/* Hardware KVM without the Debian guest: Mini-OS, and why. */
	default_guest_pick(KVM_KIND_HW, build, &g);
	snprintf(want, sizeof(want), "%s/minios/minios.elf", build);
	CHECK("hardware KVM, no Debian guest built: Mini-OS, the schema's default memory", !g.debian && strcmp(g.kernel, want) == 0 &&
	      !g.ramdisk[0] && !g.cmdline[0] && g.memory_mib == DOMAIN_MEMORY_DEFAULT_MIB);
	CHECK("... and the form says the Debian guest is missing", strstr(g.why, "no Debian guest") != NULL);

	/* A kernel without its initramfs is not the Debian guest. */
	sub("build/debian");
	touch("build/debian/vmlinuz");
	default_guest_pick(KVM_KIND_HW, build, &g);
	CHECK("vmlinuz without initrd.img: still Mini-OS", !g.debian);

	touch("build/debian/initrd.img");
	default_guest_pick(KVM_KIND_HW, build, &g);
	snprintf(want, sizeof(want), "%s/debian/vmlinuz", build);
	CHECK("hardware KVM with build/debian: the Debian guest", g.debian && strcmp(g.kernel, want) == 0);
	snprintf(want, sizeof(want), "%s/debian/initrd.img", build);
	CHECK("... with its initramfs and console=ttyS0 root=/dev/vda",
	      strcmp(g.ramdisk, want) == 0 && strcmp(g.cmdline, "console=ttyS0 root=/dev/vda") == 0);
	CHECK("... more memory than Mini-OS, and the reason", g.memory_mib >= 128 && strstr(g.why, "hardware KVM"));

	/* PVM: Mini-OS even with the Debian guest there. */
	default_guest_pick(KVM_KIND_PVM, build, &g);
	snprintf(want, sizeof(want), "%s/minios/minios.elf", build);
	CHECK("PVM host with the Debian guest built: Mini-OS", !g.debian && strcmp(g.kernel, want) == 0);
	CHECK("... saying PVM is why", strstr(g.why, "PVM") && strstr(g.why, "Mini-OS"));
	default_guest_pick(KVM_KIND_UNKNOWN, build, &g);
	CHECK("unknown KVM: Mini-OS", !g.debian && strstr(g.why, "Mini-OS"));

	/* Installed: PREFIX/sbin/lodge with PREFIX/share/lodge/{minios.elf,debian/}. */
	default_guest_pick(KVM_KIND_HW, sbin, &g);
	CHECK("installed, nothing under share: the default Mini-OS path",
	      !g.debian && strcmp(g.kernel, "/usr/local/share/lodge/minios.elf") == 0);
	touch("usr/share/lodge/minios.elf");
	default_guest_pick(KVM_KIND_PVM, sbin, &g);
	snprintf(want, sizeof(want), "%s/../share/lodge/minios.elf", sbin);
	CHECK("installed: Mini-OS from PREFIX/share/lodge", strcmp(g.kernel, want) == 0);
	sub("usr/share/lodge/debian");
	touch("usr/share/lodge/debian/vmlinuz");
	touch("usr/share/lodge/debian/initrd.img");
	default_guest_pick(KVM_KIND_HW, sbin, &g);
	snprintf(want, sizeof(want), "%s/../share/lodge/debian/vmlinuz", sbin);
	CHECK("installed, hardware KVM: the Debian guest from PREFIX/share/lodge/debian",
	      g.debian && strcmp(g.kernel, want) == 0);

	/* A Linux kernel on a PVM host is said before it starts; Mini-OS,
	 * and any guest on hardware KVM, is not. */
	{
		char linux_path[512], minios_path[512], hdr[0x300];
		FILE *f;

		memset(hdr, 0, sizeof(hdr));
		memcpy(hdr + 0x202, "HdrS", 4);           /* the x86 boot protocol's magic */
		snprintf(linux_path, sizeof(linux_path), "%s/bzImage", tmp);
		if ((f = fopen(linux_path, "w"))) {
			fwrite(hdr, 1, sizeof(hdr), f);
			fclose(f);
		}
		snprintf(minios_path, sizeof(minios_path), "%s/build/minios/minios.elf", tmp);
		CHECK("PVM, a bzImage: the note names what to do",
		      pvm_linux_note(KVM_KIND_PVM, linux_path, false) &&
		      strstr(pvm_linux_note(KVM_KIND_PVM, linux_path, false), "CONFIG_PVM_GUEST"));
		CHECK("PVM, bootloader = \"lodge\" (a Linux disk): the note", pvm_linux_note(KVM_KIND_PVM, NULL, true));
		CHECK("PVM, Mini-OS: no note", !pvm_linux_note(KVM_KIND_PVM, minios_path, false));
		CHECK("PVM, a kernel that cannot be read: no note", !pvm_linux_note(KVM_KIND_PVM, "/nonexistent", false));
		CHECK("hardware KVM, a bzImage: no note", !pvm_linux_note(KVM_KIND_HW, linux_path, false));
	}

	snprintf(want, sizeof(want), "rm -rf '%s'", tmp);
	if (system(want) != 0)
		printf("(could not remove %s)\n", tmp);
	UNIT_EXIT();
}
