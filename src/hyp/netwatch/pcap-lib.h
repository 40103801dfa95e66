/* libpcap, loaded when the network watcher first starts instead of linked
 * into lodge-hyp.  Linked, its dependencies (libdbus, libsystemd and
 * theirs: libgcrypt, libgpg-error, liblz4, liblzma, libzstd, libcap) are
 * loaded and relocated in every lodge-hyp process: a supervisor that never
 * captures and every domain without a vif paid about 1 MiB resident and
 * 150 KiB of relocated pages each for a library only the watcher uses. */
#ifndef LODGE_NETWATCH_PCAP_LIB_H
#define LODGE_NETWATCH_PCAP_LIB_H

#include <pcap/pcap.h>
#include <stddef.h>

#define PCAP_LIB_FUNCS(X) \
	X(pcap_init) X(pcap_create) X(pcap_set_snaplen) X(pcap_set_promisc) \
	X(pcap_set_immediate_mode) X(pcap_set_buffer_size) X(pcap_activate) \
	X(pcap_datalink) X(pcap_setdirection) X(pcap_compile) X(pcap_setfilter) \
	X(pcap_freecode) X(pcap_setnonblock) X(pcap_geterr) X(pcap_get_selectable_fd) \
	X(pcap_dispatch) X(pcap_stats) X(pcap_close)

/* The functions the watcher calls, filled by pcap_lib_load(). */
struct pcap_lib {
#define PCAP_LIB_POINTER(f) __typeof__(f) *f;
	PCAP_LIB_FUNCS(PCAP_LIB_POINTER)
#undef PCAP_LIB_POINTER
};
extern struct pcap_lib pcap_lib;

/* Load libpcap (once; before the sandbox, whose empty root has no
 * library to load): 0, or -1 with the reason in err. */
int pcap_lib_load(char *err, size_t len);

#endif
