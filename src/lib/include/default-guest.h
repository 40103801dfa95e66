/* The guest the create form offers by default: the Debian guest (built by
 * share/debian/) where the host has hardware KVM and it is there, else
 * Lodge Mini-OS; with the reason in words. */
#ifndef LODGE_DEFAULT_GUEST_H
#define LODGE_DEFAULT_GUEST_H

#include <stdbool.h>

#include "config.h"

enum kvm_kind { KVM_KIND_UNKNOWN, KVM_KIND_HW, KVM_KIND_PVM };

struct default_guest {
	bool debian;
	char kernel[CFG_PATH_MAX], ramdisk[CFG_PATH_MAX], cmdline[128];
	unsigned memory_mib;           /* Mini-OS: the schema's default; the Debian guest needs more */
	char why[160];                 /* one line, e.g. for the form */
};

/* The host's KVM, from SYSMODULE (/sys/module): kvm_pvm, kvm_intel, kvm_amd. */
enum kvm_kind kvm_kind(const char *sysmodule);
/* The default guest for a host of KIND whose lodge binary is in EXE_DIR
 * (the build directory, or PREFIX/sbin with guests in PREFIX/share/lodge). */
void default_guest_pick(enum kvm_kind kind, const char *exe_dir, struct default_guest *g);
/* On a PVM host (KIND), a guest that boots a Linux kernel (the file KERNEL,
 * or bootloader = "lodge", which only boots Linux from its disk): what
 * will happen and what the user can do, one line; NULL for any other
 * guest (Lodge Mini-OS) or host.  For check, create, install and the
 * create forms, before the guest starts. */
const char *pvm_linux_note(enum kvm_kind kind, const char *kernel, bool bootloader);
/* The same for this host (/sys/module). */
const char *pvm_linux_note_here(const char *kernel, bool bootloader);
/* The same for this host and this program (/sys/module, /proc/self/exe). */
void default_guest_here(struct default_guest *g);

#endif
