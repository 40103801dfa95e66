/* Arguments lodge-hyp adds to a Linux kernel's command line on a PVM
 * host, where the user did not set them: they keep a stock kernel off
 * the paths where every instruction is emulated, or ends in an exit to
 * lodge-hyp (emulate.h), and show its output from its first line. */
#ifndef LODGE_PVM_ARGS_H
#define LODGE_PVM_ARGS_H

#include <stdbool.h>
#include <stddef.h>

struct boot_image;

struct pvm_arg {
	const char *arg;     /* as added */
	const char *key;     /* the user set it if a word of the line is key or starts key= */
	const char *why;
	bool smp;            /* only for a guest with more than one vCPU */
};
extern const struct pvm_arg pvm_linux_args[];
extern const size_t pvm_linux_nargs;

/* Whether the image is a Linux kernel: a bzImage, or an ELF with a
 * "Linux" note (a vmlinux), not Mini-OS or another PVH kernel. */
bool boot_image_is_linux(const struct boot_image *img);
/* user's line plus the table's arguments it does not set, into out (those
 * marked smp only if smp: the guest has more than one vCPU, maxvcpus
 * counted).  The number added, or -ENAMETOOLONG (out then holds the
 * user's line). */
int pvm_args_apply(const char *user, bool smp, char *out, size_t outlen);

#endif
