/* Arguments for a Linux kernel on a PVM host (pvm-args.h). */
#include "pvm-args.h"
#include "boot/boot.h"
#include "kernel-kind.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Measured on a PVM host with Debian 12's 6.1 kernel (README, "Linux on
 * PVM hosts"): with console=ttyS0 alone it printed nothing and stopped
 * after ~40 s; with these it booted to `Run /init`. */
const struct pvm_arg pvm_linux_args[] = {
	{ "earlyprintk=serial,ttyS0,115200", "earlyprintk",
	  "the console shows the kernel from its first line: console=ttyS0 registers minutes into a boot on PVM", false },
	{ "cryptomgr.notests", "cryptomgr.notests",
	  "the crypto self-tests run every algorithm's vectors through emulated kernel code: minutes of boot", false },
	{ "noxsave", "noxsave",
	  "XSAVE/XRSTOR on every context switch would each end in an exit for lodge-hyp to complete", false },
	/* Debian 12's 6.1 reads noxsave itself but lists it, and nosmap (which
	 * it no longer knows: clearcpuid=smap below does it there), among the
	 * "unknown" words passed to init; older kernels need nosmap. */
	{ "nosmap", "nosmap",
	  "SMAP's clac/stac, at every exception entry and user access, would each end in an exit", false },
	{ "clearcpuid=cx16,popcnt,avx,avx2,sse4_1,sse4_2,ssse3,aes,pclmulqdq,bmi1,bmi2,movbe,fma,f16c,avx512f,"
	  "erms,fsrm,smap", "clearcpuid",
	  "features whose instructions PVM's emulator refuses (SLUB's cmpxchg16b on every allocation, "
	  "popcnt in hweight, the SIMD crypto and RAID code): the kernel's alternatives then take plain code", false },
	/* The KVM features the guest's CPUID shows on PVM (the host's, not
	 * lodge-hyp's: PVM ignores KVM_SET_CPUID2) include PV IPIs and PV
	 * sched yield, which a kernel with CONFIG_KVM_GUEST uses once it has
	 * more than one CPU: their vmcall never completes on PVM, and the
	 * first IPI a secondary CPU sends holds it there, with the boot CPU
	 * spinning on a lock behind it ("x86: Booting SMP configuration:"
	 * the last line).  nopv turns the kernel's KVM guest code off
	 * (kvm-clock with it: the clock falls back to jiffies). */
	{ "nopv", "nopv",
	  "with more than one vCPU only: the KVM PV IPIs and sched yield the kernel would use are vmcalls "
	  "PVM never completes, and its SMP boot hangs on the first one", true },
};
const size_t pvm_linux_nargs = sizeof(pvm_linux_args) / sizeof(pvm_linux_args[0]);

static bool line_sets(const char *line, const char *key)
{
	size_t klen = strlen(key);
	const char *p = line;

	while (*p) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, key, klen) && (p[klen] == '=' || p[klen] == ' ' || !p[klen]))
			return true;
		while (*p && *p != ' ')
			p++;
	}
	return false;
}

int pvm_args_apply(const char *user, bool smp, char *out, size_t outlen)
{
	size_t i, at;
	int added = 0, n;

	n = snprintf(out, outlen, "%s", user);
	if (n < 0 || (size_t)n >= outlen)
		return -ENAMETOOLONG;
	at = (size_t)n;
	for (i = 0; i < pvm_linux_nargs; i++) {
		if (line_sets(user, pvm_linux_args[i].key) || (pvm_linux_args[i].smp && !smp))
			continue;
		n = snprintf(out + at, outlen - at, "%s%s", at ? " " : "", pvm_linux_args[i].arg);
		if (n < 0 || (size_t)n >= outlen - at) {
			snprintf(out, outlen, "%s", user);
			return -ENAMETOOLONG;
		}
		at += (size_t)n;
		added++;
	}
	return added;
}

bool boot_image_is_linux(const struct boot_image *img)
{
	return kernel_image_is_linux(img->data, img->size);
}
