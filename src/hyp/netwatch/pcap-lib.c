/* libpcap loaded on first use (pcap-lib.h). */
#include "netwatch/pcap-lib.h"

#include <dlfcn.h>
#include <stdio.h>

/* The soname lodge-hyp was built against (GNUmakefile), the one the
 * linker would have recorded. */
#ifndef PCAP_LIB_SONAME
#define PCAP_LIB_SONAME "libpcap.so.0.8"
#endif

struct pcap_lib pcap_lib;

int pcap_lib_load(char *err, size_t len)
{
	static int loaded;
	void *h;

	if (loaded)
		return 0;
	/* RTLD_NOW: a missing symbol is found here, not at a call inside
	 * the sandbox; never closed, so the pointers stay good. */
	h = dlopen(PCAP_LIB_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, len, "cannot load %s: %s", PCAP_LIB_SONAME, dlerror());
		return -1;
	}
#define PCAP_LIB_LOOKUP(f) \
	if (!(*(void **)&pcap_lib.f = dlsym(h, #f))) { \
		snprintf(err, len, "%s has no %s", PCAP_LIB_SONAME, #f); \
		return -1; \
	}
	PCAP_LIB_FUNCS(PCAP_LIB_LOOKUP)
#undef PCAP_LIB_LOOKUP
	loaded = 1;
	return 0;
}
