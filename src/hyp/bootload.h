/* bootloader = "lodge" in lodge-hyp (bootload.c): at each boot, before
 * the domain is built, its kernel and initrd are read from the filesystem
 * on its disk (src/common/bootdisk.h) by a process of the sandbox's user
 * that holds nothing but the disk open for reading and the two files to
 * write, and the command line is completed with the filesystem's UUID.
 * Each restart reads them anew: an upgrade inside the guest takes effect
 * at its next boot, as with Xen's pygrub. */
#ifndef LODGE_BOOTLOAD_H
#define LODGE_BOOTLOAD_H

#include "options.h"
#include "sandbox.h"

#include <stddef.h>

/* Read o->bootloader_disk; then o->kernel, o->initrd (NULL if none) and
 * o->cmdline name this boot's: copies in the runtime directory dir
 * (boot-kernel, boot-initrd), or in memory standalone (dir "").  0 (the
 * choice logged), or -errno with one sentence in why naming the domain,
 * the disk and what is wrong. */
int bootload(struct options *o, const struct sandbox *sb, const char *dir, char *why, size_t whylen);

#endif
