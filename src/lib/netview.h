/* What each domain's network watcher (lodge-hyp's netwatch) reports, as
 * the agent reads it: the addresses a guest claimed on each vif, and the
 * peers reply's rates and top talkers (src/common/proto.h). */
#ifndef LODGE_NETVIEW_H
#define LODGE_NETVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "domains.h"

#define NETVIEW_MAX_PEERS 5

struct vif_view {
	char name[16];                 /* the tap */
	char watch[256];               /* "on", or why the vif is not watched */
	struct dom_addr addrs[DOM_MAX_ADDRS];
	unsigned naddrs;
	uint64_t pps, bps, drops;      /* over the last interval; drops since start */
	struct {
		char addr[46];
		uint64_t packets, bytes;
	} peers[NETVIEW_MAX_PEERS];
	unsigned npeers;
};

struct net_view {
	unsigned long interval_ms;
	unsigned nvifs;
	struct vif_view vifs[DOM_MAX_VIFS];
};

/* Ask a running domain for its peers reply. 0; -ENOENT if it is not
 * running; -EPROTO with lodge-hyp's message in err (a domain without
 * watched vifs); another -errno on a transport failure. */
int netview_fetch(const char *rundir, const char *name, struct net_view *nv, char *err, size_t errlen);
/* Parse "ADDR,HOW,AGE ..." (a vifN_addrs value) for vif into out[*n...max). */
void netview_parse_addrs(const char *value, unsigned vif, struct dom_addr *out, unsigned max, unsigned *n);
/* The addresses of a status, comma-separated, IPv4 first: "10.0.0.2,fe80::1"; "-" if none. */
void netview_join_addrs(const struct dom_status *st, char *buf, size_t len);

/* The addresses every running domain's watcher credits it with, by
 * bridge: each lodge-hyp watches only its own vifs, so only here can two
 * domains claiming one address be seen.  Neither is taken to be the owner
 * (the one that spoke first may be the impostor, and a guest may take
 * over an address on purpose): both keep it, with a warning naming both. */
#define NETVIEW_MAX_CLAIMS 512
struct addr_claims {
	unsigned n;
	struct {
		char name[CFG_NAME_MAX];
		char bridge[16];
		char addr[46];
	} c[NETVIEW_MAX_CLAIMS];
};
/* Note st's addresses, with each vif's bridge from its runtime config. */
void netview_claims_add(struct addr_claims *c, const char *rundir, const struct host_config *hc,
			const struct dom_status *st);
/* The other domains on bridge that claim addr, comma-separated, into
 * buf ("" if none); returns how many. */
unsigned netview_claims_others(const struct addr_claims *c, const char *name, const char *bridge,
			       const char *addr, char *buf, size_t len);
/* On stderr, one warning per address two or more domains on one bridge
 * claim: "address A on bridge B is claimed by st and ev". */
void netview_claims_warn(const struct addr_claims *c);

#endif
