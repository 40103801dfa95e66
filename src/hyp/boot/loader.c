/* Pick the loader for a kernel image: each loader says -ENOEXEC when the
 * image is not its kind, so adding a format touches only this table. */
#include "boot.h"

#include <errno.h>
#include <stdio.h>

typedef int (*boot_loader_fn)(const struct guest_mem *, const struct boot_params_in *,
			      struct boot_entry *, char *, size_t);

static const boot_loader_fn boot_loaders[] = { bzimage_load, pvh_load };

int boot_load(const struct guest_mem *mem, const struct boot_params_in *in,
	      struct boot_entry *entry, char *err, size_t errlen)
{
	size_t i;
	int rc;

	for (i = 0; i < sizeof(boot_loaders) / sizeof(boot_loaders[0]); i++) {
		rc = boot_loaders[i](mem, in, entry, err, errlen);
		if (rc != -ENOEXEC)
			return rc;
	}
	snprintf(err, errlen, "%s: not a Linux bzImage nor an ELF64 kernel with a PVH entry note",
		 in->kernel.path);
	return -ENOEXEC;
}

uint64_t boot_place_high(const struct guest_mem *mem, uint64_t floor,
			 uint64_t limit, uint64_t size, uint64_t align)
{
	uint64_t top = mem->low_size < limit ? mem->low_size : limit;
	uint64_t at;

	if (size > top)
		return 0;
	at = (top - size) & ~(align - 1);
	return at >= floor ? at : 0;
}
