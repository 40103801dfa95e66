/* A Lodge network's packet filter and NAT rules, through libnftables.
 *
 * Interface shared by the network model (network.c: config, bridge,
 * dnsmasq) and the rules (netfilter.c).  Every network's rules live in
 * Lodge's own table, `table inet lodge`, as that network's own base
 * chains (NAME_input, NAME_forward, NAME_postrouting ...), so adding or
 * removing one network is one nftables transaction that touches no other
 * network and nothing of the host's; the table itself goes with the last
 * network, leaving `nft list ruleset` as it was before the first. */
#ifndef LODGE_NETFILTER_H
#define LODGE_NETFILTER_H

#include <netinet/in.h>
#include <stdbool.h>

#include "lodge.h"

struct netfilter_net {
	const char *name;              /* the network's (lodge_network_name_ok) */
	const char *bridge;            /* its bridge, which holds the gateway address */
	struct in_addr subnet;         /* network address, host order bits zero */
	unsigned prefix;               /* 1-30 */
	enum lodge_net_mode mode;
};

/* Put n's rules in place, replacing any it had (one transaction): 0, or
 * -errno with libnftables' own words in err. */
int netfilter_net_add(const struct netfilter_net *n, struct lodge_err *err);
/* Remove the network's rules (and Lodge's table with the last): 0, 0 if
 * it had none, or -errno. */
int netfilter_net_del(const char *name, struct lodge_err *err);
/* Whether the network's rules are in place: 1, 0, or -errno. */
int netfilter_net_present(const char *name, struct lodge_err *err);
/* Turn IPv4 forwarding on (NAT and routed networks need it): 1 if this
 * call turned it on (the caller tells the user once), 0 if it was on. */
int netfilter_ip_forward_on(struct lodge_err *err);

#endif
