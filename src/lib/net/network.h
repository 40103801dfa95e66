/* Private to liblodge: a network's model (network.c) and what runs for it
 * (network-run.c: the bridge, dnsmasq, the fixed addresses; the rules
 * through netfilter.h). */
#ifndef LODGE_NETWORK_H
#define LODGE_NETWORK_H

#include "lodge.h"

#include <sys/types.h>

/* Under the runtime directory, where every other entry is a domain's: a
 * domain's name cannot start with a dot, so this is no domain's. */
#define NET_RUN_SUBDIR ".networks"

struct net_paths {
	char cfg_dir[CFG_PATH_MAX], cfg[CFG_PATH_MAX + 48];
	/* Kept across the host's reboots: the fixed address of each MAC, and
	 * the names they resolve by (dnsmasq's dhcp-hostsfile, addn-hosts). */
	char state_dir[CFG_PATH_MAX], hosts[CFG_PATH_MAX + 48], addn[CFG_PATH_MAX + 48], lock[CFG_PATH_MAX + 48];
	/* dnsmasq's config, pid and leases: gone with the host's boot, as it is. */
	char run_dir[CFG_PATH_MAX + 48], conf[CFG_PATH_MAX + 80], pid[CFG_PATH_MAX + 80],
		leases[CFG_PATH_MAX + 80];
};
int net_paths(const struct lodge *lg, const char *name, struct net_paths *p);

/* network.c */
void net_ip4_text(uint32_t ip, char out[16]);
int net_parse_cidr(const char *s, uint32_t *net, unsigned *prefix, char *why, size_t whylen);
int net_parse_range(const char *s, uint32_t net, unsigned prefix, uint32_t *lo, uint32_t *hi, char *why,
		    size_t whylen);
/* A name DNS takes as one label (a domain's, to resolve as NAME.DOMAIN). */
bool net_dns_label_ok(const char *name);
/* n's subnet against every other network's (and its bridge), and with
 * with_routes the host's routes (but those on n's own bridge). */
int net_check_overlap(const struct lodge *lg, const struct lodge_network *n, bool with_routes,
		      struct lodge_err *err);

/* The bridge of network name, from its file alone (0), or -errno. */
int net_bridge_of(const char *name, char bridge[IFNAMSIZ]);

/* network-run.c */
/* What runs of n, into its state fields. */
void net_state(const struct lodge *lg, struct lodge_network *n);
/* Bring up what is not (bridge and address, rules, forwarding, dnsmasq);
 * on failure, what this call brought up goes again. */
int net_up(const struct lodge *lg, struct lodge_network *n, struct lodge_err *err);
/* Take all of it down; -EBUSY while the bridge has ports. */
int net_down(const struct lodge *lg, struct lodge_network *n, struct lodge_err *err);
/* What a network whose file does not read (or did not start) may have
 * left by its name alone: its dnsmasq, its rules, its runtime files. */
void net_remains_remove(const struct lodge *lg, const char *name);
/* A domain's vif on network `network`: its bridge into bridge, and the
 * MAC's fixed address (kept, or the lowest free of the DHCP range) in
 * dnsmasq's hosts file, dnsmasq told to reread it. */
int net_vif_attach(const struct lodge *lg, const char *network, const char *domain, const uint8_t mac[6],
		   char bridge[IFNAMSIZ], char addr[16], struct lodge_err *err);

#endif
