/* Bridges and vifs over rtnetlink (libnl-route-3): what Xen's
 * network-bridge and vif-bridge scripts did with brctl and ifconfig. */
#ifndef LODGE_NETLINK_H
#define LODGE_NETLINK_H

#include <stddef.h>
#include <stdint.h>

struct link_stats {
	uint64_t rx_packets, rx_bytes, rx_dropped, rx_errors;
	uint64_t tx_packets, tx_bytes, tx_dropped, tx_errors;
};

/* Is name a valid interface name?  schema.h's one rule (ifname_check),
 * here for every netlink call that takes a name (netlink-attach.c, with
 * nl_link_attach: lodge-hyp's part). */
int netif_name_check(const char *name, char *err, size_t errlen);

/* All return 0 or -errno with a one-line message in err. */
int nl_bridge_create(const char *name, char *err, size_t errlen);
/* Refuses (-ENOTEMPTY) while interfaces are attached. */
int nl_bridge_delete(const char *name, char *err, size_t errlen);
/* Calls fn for every bridge with its number of attached ports. */
int nl_bridge_list(void (*fn)(const char *name, int ports, int up, void *arg), void *arg,
		   char *err, size_t errlen);
/* Attach ifname to bridge and bring ifname up (libnl loaded on first
 * use, netlink-attach.c; -ELIBACC if it cannot be). */
int nl_link_attach(const char *ifname, const char *bridge, char *err, size_t errlen);
/* Put a host NIC on a bridge (made if needed) and move its addresses and
 * routes onto the bridge; refused (-EPERM) for the NIC carrying the
 * current ssh session unless force. */
int nl_bridge_adopt_nic(const char *bridge, const char *nic, int force, char *err, size_t errlen);
/* Undo it: the adopted NIC (a port that is not a tap) leaves the bridge
 * and takes its addresses and routes back. nic_out "" if none. */
int nl_bridge_release_nic(const char *bridge, char *nic_out, size_t niclen, char *err, size_t errlen);
int nl_link_stats(const char *ifname, struct link_stats *st, char *err, size_t errlen);
int nl_link_exists(const char *ifname);
/* Give ifname the IPv4 address (network byte order) with its prefix; one
 * it has already is no error. */
int nl_addr4_add(const char *ifname, uint32_t addr_be, unsigned prefix, char *err, size_t errlen);
/* Whether a route of the main table other than the default (and other
 * than skip_ifname's, if given) overlaps net/prefix: 1 with the route in
 * words in what ("10.0.0.0/8 dev eth0"), 0, or -errno. */
int nl_route4_overlap(uint32_t net_be, unsigned prefix, const char *skip_ifname, char *what, size_t whatlen,
		      char *err, size_t errlen);

#endif
