/* liblodge: networks and bridges. */
#ifndef LODGE_API_NETWORK_H
#define LODGE_API_NETWORK_H

#include "lodge/handle.h"
#include "lodge/devices.h"

/* ---- networks (network.c, netfilter.c) ------------------------------------------------------ */

/* A private network behind the host: a bridge holding the gateway
 * address, dnsmasq for DHCP and DNS on it, and Lodge's nftables rules. */
enum lodge_net_mode {
	LODGE_NET_NAT,                 /* masqueraded out of any other interface (libvirt's default) */
	LODGE_NET_ROUTED,              /* forwarded with the guests' own addresses */
	LODGE_NET_ISOLATED,            /* the host's DHCP and DNS only; no way out */
};
#define LODGE_NET_MODES 3
/* "nat", "routed", "isolated"; parse: 0, or -EINVAL. */
const char *lodge_net_mode_name(enum lodge_net_mode m);
int lodge_net_mode_parse(const char *word, enum lodge_net_mode *m);

/* A network's name: schema.h's network_name_valid (it names a file, a
 * bridge and nftables chains). */
#define LODGE_NETWORK_NAME_MAX NETWORK_NAME_MAX
#define LODGE_NETWORK_BRIDGE_PREFIX NETWORK_BRIDGE_PREFIX   /* the bridge's name when none is given */
#define LODGE_NETWORK_DOMAIN_MAX NETWORK_DOMAIN_MAX
bool lodge_network_name_ok(const char *name);

struct lodge_network {
	char name[LODGE_NETWORK_NAME_MAX];
	char file[CFG_PATH_MAX];       /* ROOT/etc/lodge/networks/NAME.cfg */
	enum lodge_net_mode mode;
	char subnet[20];               /* "10.77.0.0/24" */
	char gateway[16];              /* the bridge's address: the subnet's first host */
	char range_start[16], range_end[16];   /* DHCP's */
	char domain[LODGE_NETWORK_DOMAIN_MAX]; /* NAME.DOMAIN resolves; "" none */
	char bridge[IFNAMSIZ];
	bool autostart;
	bool dns_forward;              /* names it does not know go to the host's resolv.conf servers */
	uint32_t net, range_lo, range_hi;      /* host order */
	unsigned prefix;
	/* What runs (lodge_network_get and _list fill it in). */
	bool bridge_up;                /* the bridge exists */
	int ports;                     /* interfaces on it (the domains' vifs) */
	int dnsmasq_pid;               /* > 0: it runs */
	bool dnsmasq_died;             /* started and not stopped, but gone */
	int rules;                     /* its nftables rules: 1 in place, 0 not, -1 unknown (not root) */
	unsigned leases;
};

struct lodge_network_opts {
	const char *name, *subnet;
	enum lodge_net_mode mode;
	const char *dhcp_range;        /* "A-B"; NULL: the subnet's hosts after the gateway */
	const char *domain;            /* NULL: none */
	const char *bridge;            /* NULL: LODGE_NETWORK_BRIDGE_PREFIX NAME */
	bool autostart;
	bool dns_forward;
};
/* Write the network's config and start it (lodge_network_start): every
 * check first (name, CIDR, range, a subnet overlapping a route of the host
 * or another network, a bridge name that does not fit), and nothing left
 * if the start fails.  0, or -errno with one line in err. */
int lodge_network_create(const struct lodge *lg, const struct lodge_network_opts *o, struct lodge_err *err);
/* Stop it and remove its config and addresses; refused (-EBUSY) while a
 * domain's vif is on its bridge. */
int lodge_network_delete(const struct lodge *lg, const char *name, struct lodge_err *err);
/* Bring up what of it is not up: the bridge with the gateway address, its
 * nftables rules, IPv4 forwarding (a notice when this turns it on) and
 * dnsmasq, started detached (it outlives the caller).  0 if all runs. */
int lodge_network_start(const struct lodge *lg, const char *name, struct lodge_err *err);
/* Stop dnsmasq, remove the rules and the bridge; refused (-EBUSY) while a
 * domain's vif is on the bridge. */
int lodge_network_stop(const struct lodge *lg, const char *name, struct lodge_err *err);
int lodge_network_get(const struct lodge *lg, const char *name, struct lodge_network *out, struct lodge_err *err);
/* Every network, sorted by name, into out[max]: how many (may exceed max), or -errno. */
int lodge_network_list(const struct lodge *lg, struct lodge_network *out, unsigned max, struct lodge_err *err);
/* The network a guest joins when it is given none, as libvirt's: NAT, DHCP
 * and DNS on a private /24 that no route of the host's overlaps. */
#define LODGE_NETWORK_DEFAULT "default"
struct lodge_network_default {
	char subnet[20];               /* its subnet, or the one it would get */
	bool created;                  /* made (would be, dry run) by this call */
	bool started;                  /* defined but down: started by this call */
};
/* The default network: found (and started if it is down), or, on first
 * use, made on the first subnet of a table of candidates (libvirt's
 * 192.168.122.0/24 first) that overlaps no route of the host and no other
 * network, autostarted.  dry_run: only what would be done, into *out.  0,
 * or -errno with why (every candidate taken: network-create default
 * --subnet, by hand). */
int lodge_network_default(const struct lodge *lg, bool dry_run, struct lodge_network_default *out,
			  struct lodge_err *err);
/* Start each network marked autostart that is not running; fn hears each
 * outcome (err NULL: started).  How many failed. */
int lodge_network_autostart(const struct lodge *lg,
			    void (*fn)(const char *name, const struct lodge_err *err, void *arg), void *arg);

/* A lease dnsmasq gave (its lease file). */
struct lodge_lease {
	char network[LODGE_NETWORK_NAME_MAX];
	uint8_t mac[6];
	char addr[16];
	char hostname[64];             /* "" if none */
	long long expires;             /* Unix time; 0: never */
};
/* Every lease of every running network into out[max]: how many. */
unsigned lodge_network_leases(const struct lodge *lg, struct lodge_lease *out, unsigned max);
/* Add to each vif of n on a Lodge network the address dnsmasq leased its
 * MAC, learned by "lease", its age the time since the lease was given or
 * renewed (lodge addr shows them beside what the watcher learned). */
void lodge_net_leases(const struct lodge *lg, struct lodge_net *n);

/* ---- bridges ------------------------------------------------------------------------------- */

/* A bridge; with nic, the host's NIC joins it and its addresses and
 * routes move onto the bridge (force: even one that carries this ssh
 * session). */
int lodge_bridge_create(const char *bridge, const char *nic, bool force, struct lodge_err *err);
/* Delete it; a NIC it adopted goes back first, named in nic ("" if none). */
int lodge_bridge_delete(const char *bridge, char nic[IFNAMSIZ], struct lodge_err *err);
int lodge_bridge_list(void (*fn)(const char *name, int ports, bool up, void *arg), void *arg,
		      struct lodge_err *err);

#endif
