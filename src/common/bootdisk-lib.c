/* libext2fs, libcom_err and libblkid loaded on first use (bootdisk-lib.h). */
#define BOOTDISK_LIB_LOADER
#include "bootdisk-lib.h"

#include <dlfcn.h>
#include <stdio.h>

/* The sonames lodge-hyp is built against (GNUmakefile), the ones the
 * linker would have recorded. */
#ifndef BOOTDISK_LIB_BLKID
#define BOOTDISK_LIB_BLKID "libblkid.so.1"
#endif
#ifndef BOOTDISK_LIB_EXT2FS
#define BOOTDISK_LIB_EXT2FS "libext2fs.so.2"
#endif
#ifndef BOOTDISK_LIB_COM_ERR
#define BOOTDISK_LIB_COM_ERR "libcom_err.so.2"
#endif

struct bootdisk_lib bootdisk_lib;

int bootdisk_lib_load(char *err, size_t len)
{
	static int loaded;
	void *BLKID, *EXT2FS, *COM_ERR;

	if (loaded)
		return 0;
	/* RTLD_NOW: a missing symbol is found here, not in the middle of a
	 * disk; never closed, so the pointers stay good. */
#define BOOTDISK_LIB_OPEN(h) \
	if (!(h = dlopen(BOOTDISK_LIB_##h, RTLD_NOW | RTLD_LOCAL))) { \
		snprintf(err, len, "cannot load %s: %s", BOOTDISK_LIB_##h, dlerror()); \
		return -1; \
	}
	BOOTDISK_LIB_OPEN(BLKID)
	BOOTDISK_LIB_OPEN(COM_ERR)
	BOOTDISK_LIB_OPEN(EXT2FS)
#undef BOOTDISK_LIB_OPEN
#define BOOTDISK_LIB_LOOKUP(lib, f) \
	if (!(*(void **)&bootdisk_lib.f = dlsym(lib, #f))) { \
		snprintf(err, len, "%s has no %s", BOOTDISK_LIB_##lib, #f); \
		return -1; \
	}
	BOOTDISK_LIB_FUNCS(BOOTDISK_LIB_LOOKUP)
#undef BOOTDISK_LIB_LOOKUP
	loaded = 1;
	return 0;
}
