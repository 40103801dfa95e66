/* liblodge: a running domain's devices, addresses and traffic, and the queries that never wait. */
#ifndef LODGE_API_DEVICES_H
#define LODGE_API_DEVICES_H

#include "lodge/handle.h"
#include "lodge/status.h"

/* ---- devices, addresses and traffic ----------------------------------------------------- */

struct lodge_disk {
	char vdev[16];
	bool readonly, is_phy;
	char path[CFG_PATH_MAX];
	struct lodge_io io;
};
struct lodge_vif {
	char ifname[IFNAMSIZ];             /* its tap on the host */
	uint8_t mac[6];
	char bridge[IFNAMSIZ];
	struct lodge_io io;
};
struct lodge_devices {
	struct lodge_status st;
	unsigned ndisks, nvifs;
	struct lodge_disk disk[DOMAIN_DISKS_MAX];
	struct lodge_vif vif[DOMAIN_VIFS_MAX];
};
/* A running domain's disks and vifs (its resolved config) with their counters. */
int lodge_devices(const struct lodge *lg, const char *domain, struct lodge_devices *out, struct lodge_err *err);
/* The same from a status the caller has (the poller's): its resolved
 * config into dc and its devices into out, from the runtime directory's
 * copy alone (a file; the domain is not asked), the counters st's. */
int lodge_devices_of(const struct lodge *lg, const struct lodge_status *st, struct domain_config *dc,
		     struct lodge_devices *out, struct lodge_err *err);

#define LODGE_MAX_PEERS 5
struct lodge_vif_net {
	struct lodge_vif vif;
	char watch[256];               /* "on", or why its traffic is not watched */
	unsigned naddrs;
	struct {
		struct lodge_addr a;
		char others[256];      /* other domains on its bridge claiming it (lodge_net_conflicts) */
	} addrs[LODGE_MAX_ADDRS];
	uint64_t pps, bps, drops;      /* over the last interval; drops since start */
	unsigned npeers;
	struct {
		char addr[46];
		uint64_t packets, bytes;
	} peers[LODGE_MAX_PEERS];      /* the top peers of the last interval, by bytes */
};
struct lodge_net {
	char name[DOMAIN_NAME_MAX];
	unsigned long interval_ms;
	unsigned nvifs;
	struct lodge_vif_net vifs[DOMAIN_VIFS_MAX];
};
/* What each vif's watcher saw: the addresses the guest claimed, rates,
 * top peers.  -ENODEV for a domain without vifs, -EPROTO with lodge-hyp's
 * word for one whose vifs are not watched. */
int lodge_net(const struct lodge *lg, const char *domain, struct lodge_net *out, struct lodge_err *err);
/* Fill each address's others: the domains on the same bridge that claim
 * it too (this asks every running domain). */
void lodge_net_conflicts(const struct lodge *lg, struct lodge_net *n);

/* A host interface's counters, from netlink; for a vif's tap, rx is what
 * the guest sent and tx what it was sent. */
struct lodge_link {
	uint64_t rx_packets, rx_bytes, rx_dropped, tx_packets, tx_bytes, tx_dropped;
};
int lodge_link_stats(const char *ifname, struct lodge_link *out, struct lodge_err *err);

/* Hot-plug (lodge block-attach, block-detach).  Attach: spec is xl's disk
 * spec as in a config (relative paths from the working directory); the
 * disk is opened here with the caller's own rights (never a file the
 * caller may not open) with every name its blocks go by, and those
 * descriptors go to lodge-hyp, which locks them as at start: refused with
 * one line if the vdev is taken, the disk is another domain's (or this
 * one's), or no slot is free.  The guest is told; the runtime config
 * gains the disk.  Detach: the guest is asked to eject the disk's slot;
 * -ETIMEDOUT if it has not within timeout_ms (the disk stays), unless
 * force (the disk goes at once: the guest was not asked).  The runtime
 * config loses it, the disk's locks are free. */
#define LODGE_DETACH_TIMEOUT_S 10
#define LODGE_DETACH_TIMEOUT_MS (LODGE_DETACH_TIMEOUT_S * 1000)
/* lent_only: the caller is not the host's root (a web user; the server
 * is): only a disk lodge.conf lends (lodge_disk_open). */
int lodge_block_attach(const struct lodge *lg, const char *domain, const char *spec, bool lent_only, char vdev[16],
		       struct lodge_err *err);
/* A host disk (a regular file or a block device) opened once, as the
 * caller may: its name looked up one time (O_PATH: no device's open
 * runs), what was found checked (its type; with lent_only, a file under
 * storage_dirs or a device matching storage_devices, by the descriptor's
 * real path) and opened through that descriptor (readonly: O_RDONLY,
 * else O_RDWR, with the process's own rights), never by the name again.
 * The descriptor (O_CLOEXEC, O_NONBLOCK) with its real path in real, or
 * -errno (-EACCES: not lent) with err.  Every face's disk goes through
 * here; the descriptor is what lodge-hyp gets. */
int lodge_disk_open(const struct lodge *lg, const char *path, bool readonly, bool lent_only, char real[4096],
		    struct lodge_err *err);
int lodge_block_detach(const struct lodge *lg, const char *domain, const char *vdev, bool force,
		       unsigned timeout_ms, struct lodge_err *err);
/* A vif (spec as a config's vif entry: bridge=, mac=, vifname=): its tap
 * is made here (root: CAP_NET_ADMIN), put on its bridge and handed to
 * lodge-hyp; refused if the MAC is the domain's already, or another
 * running domain's, or no slot is free.  Detach by MAC or index (devid,
 * as network-list numbers them); the tap Lodge made goes with it.  The
 * runtime config follows; every vif keeps its tap name and MAC from then
 * on (vifname=, mac=), whatever index it has. */
int lodge_network_attach(const struct lodge *lg, const char *domain, const char *spec, char ifname[16],
			 struct lodge_err *err);
int lodge_network_detach(const struct lodge *lg, const char *domain, const char *which, bool force,
			 unsigned timeout_ms, struct lodge_err *err);

/* A disk's size in bytes, a file's or a block device's: 0 or -errno. */
int lodge_disk_size(const char *path, uint64_t *bytes);
/* Why PATH may not be a new domain's disk: a block device mounted on the
 * host, a disk of a running domain (from their runtime configs; no
 * domain is asked), or a block device held on the host (swap, LVM, RAID,
 * a mounted partition of a whole disk).  true with why ("used by domain
 * web"), false if free.  The dashboard's picker and lodge install both
 * ask this: one rule set. */
bool lodge_disk_taken(const struct lodge *lg, const char *path, char *why, size_t len);
/* A block device of the host (ram disks left out), for a new domain's disk. */
struct lodge_blockdev {
	char path[300];                /* /dev/NAME */
	uint64_t bytes;
	char taken[128];               /* lodge_disk_taken's why; "" if free */
};
/* The host's block devices into out[max]: how many. */
unsigned lodge_host_blockdevs(const struct lodge *lg, struct lodge_blockdev *out, unsigned max);

/* ---- queries that never wait --------------------------------------------------------------- */

/* For a face with a main loop of its own: a query goes out at once and its
 * reply is taken in whenever it arrives, so a domain slow to answer (or
 * stopped) holds neither the screen nor the keys.  start: 0 with q->fd to
 * poll for input (POLLIN), or -errno with err; collect reads what has
 * arrived and never blocks: 1 done (the result filled), 0 not yet, -errno
 * with err; after 1 or -errno the query is closed.  close drops one still
 * out.  A query is closed (fd -1, buf NULL) before its first start. */
struct lodge_query {
	int fd;                        /* -1: none out */
	char name[DOMAIN_NAME_MAX];
	char *buf;                     /* the reply so far */
	size_t n, cap;
};
#define LODGE_QUERY_CLOSED ((struct lodge_query){ .fd = -1 })
void lodge_query_close(struct lodge_query *q);
/* lodge_net's view of the vifs; dev: the domain's devices (lodge_devices_of). */
int lodge_net_start(const struct lodge *lg, const char *domain, struct lodge_query *q, struct lodge_err *err);
int lodge_net_collect(struct lodge_query *q, const struct lodge_devices *dev, struct lodge_net *out,
		      struct lodge_err *err);
/* lodge_console_log's text: *text malloc'd (NUL-terminated), the caller's. */
int lodge_console_log_start(const struct lodge *lg, const char *domain, size_t last, struct lodge_query *q,
			    struct lodge_err *err);
int lodge_console_log_collect(struct lodge_query *q, char **text, size_t *len, struct lodge_err *err);
/* lodge_console_open's console: collect's 1 comes with *fd, the console
 * (blocking, the caller's to close). */
int lodge_console_start(const struct lodge *lg, const char *domain, bool force, struct lodge_query *q,
			struct lodge_err *err);
int lodge_console_collect(struct lodge_query *q, int *fd, struct lodge_err *err);

#endif
