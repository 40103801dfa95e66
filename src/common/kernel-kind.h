/* Whether a kernel image is Linux's (a bzImage, or a vmlinux: an ELF with
 * a "Linux" note) rather than Lodge Mini-OS or another PVH kernel: on a
 * PVM host the two fare very differently (src/hyp/pvm-args.h). */
#ifndef LODGE_KERNEL_KIND_H
#define LODGE_KERNEL_KIND_H

#include <stdbool.h>
#include <stddef.h>

bool kernel_image_is_linux(const void *data, size_t size);
/* The same for a file: false if it cannot be read. */
bool kernel_file_is_linux(const char *path);

#endif
