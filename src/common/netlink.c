#include "netlink.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/bridge.h>
#include <netlink/route/route.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct nl_sock *nl_open(char *err, size_t errlen)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (nl_connect(sk, NETLINK_ROUTE) < 0) {
		snprintf(err, errlen, "cannot open a netlink socket");
		nl_socket_free(sk);
		return NULL;
	}
	return sk;
}

/* libnl error codes to errno, for the few that callers tell apart. */
static int nl_errno(int nlerr)
{
	switch (-nlerr) {
	case NLE_EXIST: return -EEXIST;
	case NLE_OBJ_NOTFOUND: case NLE_NODEV: return -ENODEV;
	case NLE_PERM: return -EPERM;
	case NLE_BUSY: return -EBUSY;
	default: return -EIO;
	}
}

static int nl_get_link(struct nl_sock *sk, const char *name, struct rtnl_link **link,
		       char *err, size_t errlen)
{
	int rc = rtnl_link_get_kernel(sk, 0, name, link);

	if (rc < 0) {
		snprintf(err, errlen, "no interface named %s", name);
		return -ENODEV;
	}
	return 0;
}

int nl_bridge_create(const char *name, char *err, size_t errlen)
{
	struct nl_sock *sk;
	struct rtnl_link *link;
	int rc;

	if ((rc = netif_name_check(name, err, errlen)))
		return rc;
	if (!(sk = nl_open(err, errlen)))
		return -EIO;
	link = rtnl_link_bridge_alloc();
	rtnl_link_set_name(link, name);
	rtnl_link_set_flags(link, IFF_UP);
	rc = rtnl_link_add(sk, link, NLM_F_CREATE | NLM_F_EXCL);
	if (rc < 0) {
		snprintf(err, errlen, "cannot create bridge %s: %s", name, nl_geterror(rc));
		rc = nl_errno(rc);
	}
	rtnl_link_put(link);
	nl_socket_free(sk);
	return rc;
}

struct port_count { int ifindex, ports; };

static void count_ports(struct nl_object *obj, void *arg)
{
	struct port_count *pc = arg;

	if (rtnl_link_get_master((struct rtnl_link *)obj) == pc->ifindex)
		pc->ports++;
}

static int bridge_ports(struct nl_cache *cache, int ifindex)
{
	struct port_count pc = { ifindex, 0 };

	nl_cache_foreach(cache, count_ports, &pc);
	return pc.ports;
}

int nl_bridge_delete(const char *name, char *err, size_t errlen)
{
	struct nl_sock *sk;
	struct nl_cache *cache = NULL;
	struct rtnl_link *link = NULL;
	int rc, ports;

	if ((rc = netif_name_check(name, err, errlen)))
		return rc;
	if (!(sk = nl_open(err, errlen)))
		return -EIO;
	rc = rtnl_link_alloc_cache(sk, AF_UNSPEC, &cache);
	if (rc < 0) {
		snprintf(err, errlen, "cannot list interfaces: %s", nl_geterror(rc));
		rc = -EIO;
		goto out;
	}
	link = rtnl_link_get_by_name(cache, name);
	if (!link || !rtnl_link_is_bridge(link)) {
		snprintf(err, errlen, "no bridge named %s", name);
		rc = -ENODEV;
		goto out;
	}
	ports = bridge_ports(cache, rtnl_link_get_ifindex(link));
	if (ports) {
		snprintf(err, errlen, "bridge %s still has %d interface%s attached; "
			 "destroy or detach them first", name, ports, ports == 1 ? "" : "s");
		rc = -ENOTEMPTY;
		goto out;
	}
	rc = rtnl_link_delete(sk, link);
	if (rc < 0) {
		snprintf(err, errlen, "cannot delete bridge %s: %s", name, nl_geterror(rc));
		rc = nl_errno(rc);
	}
out:
	if (link)
		rtnl_link_put(link);
	if (cache)
		nl_cache_free(cache);
	nl_socket_free(sk);
	return rc;
}

struct bridge_walk {
	struct nl_cache *cache;
	void (*fn)(const char *, int, int, void *);
	void *arg;
};

static void walk_bridge(struct nl_object *obj, void *arg)
{
	struct rtnl_link *link = (struct rtnl_link *)obj;
	struct bridge_walk *w = arg;

	if (rtnl_link_is_bridge(link))
		w->fn(rtnl_link_get_name(link), bridge_ports(w->cache, rtnl_link_get_ifindex(link)),
		      !!(rtnl_link_get_flags(link) & IFF_UP), w->arg);
}

int nl_bridge_list(void (*fn)(const char *name, int ports, int up, void *arg), void *arg,
		   char *err, size_t errlen)
{
	struct nl_sock *sk;
	struct bridge_walk w = { .fn = fn, .arg = arg };
	int rc;

	if (!(sk = nl_open(err, errlen)))
		return -EIO;
	rc = rtnl_link_alloc_cache(sk, AF_UNSPEC, &w.cache);
	if (rc < 0) {
		snprintf(err, errlen, "cannot list interfaces: %s", nl_geterror(rc));
		nl_socket_free(sk);
		return -EIO;
	}
	nl_cache_foreach(w.cache, walk_bridge, &w);
	nl_cache_free(w.cache);
	nl_socket_free(sk);
	return 0;
}

int nl_link_stats(const char *ifname, struct link_stats *st, char *err, size_t errlen)
{
	struct nl_sock *sk;
	struct rtnl_link *link;
	int rc;

	if (!(sk = nl_open(err, errlen)))
		return -EIO;
	rc = nl_get_link(sk, ifname, &link, err, errlen);
	if (!rc) {
		*st = (struct link_stats){
			.rx_packets = rtnl_link_get_stat(link, RTNL_LINK_RX_PACKETS),
			.rx_bytes = rtnl_link_get_stat(link, RTNL_LINK_RX_BYTES),
			.rx_dropped = rtnl_link_get_stat(link, RTNL_LINK_RX_DROPPED),
			.rx_errors = rtnl_link_get_stat(link, RTNL_LINK_RX_ERRORS),
			.tx_packets = rtnl_link_get_stat(link, RTNL_LINK_TX_PACKETS),
			.tx_bytes = rtnl_link_get_stat(link, RTNL_LINK_TX_BYTES),
			.tx_dropped = rtnl_link_get_stat(link, RTNL_LINK_TX_DROPPED),
			.tx_errors = rtnl_link_get_stat(link, RTNL_LINK_TX_ERRORS),
		};
		rtnl_link_put(link);
	}
	nl_socket_free(sk);
	return rc;
}

int nl_link_exists(const char *ifname)
{
	return if_nametoindex(ifname) != 0;
}

/* ---- a host NIC on a bridge, as Xen's network-bridge script did -------------- */


struct move_ctx {
	struct nl_sock *sk;
	int from, to;
	int moved, failed;
};

/* Move one address from one interface to another (delete, then add). */
static void move_addr(struct nl_object *obj, void *arg)
{
	struct rtnl_addr *a = (struct rtnl_addr *)obj, *copy;
	struct move_ctx *m = arg;

	if (rtnl_addr_get_ifindex(a) != m->from || rtnl_addr_get_scope(a) == RT_SCOPE_LINK)
		return;
	copy = (struct rtnl_addr *)nl_object_clone(obj);
	if (rtnl_addr_delete(m->sk, a, 0) < 0) {
		m->failed++;
	} else {
		rtnl_addr_set_ifindex(copy, m->to);
		if (rtnl_addr_add(m->sk, copy, 0) < 0)
			m->failed++;
		else
			m->moved++;
	}
	rtnl_addr_put(copy);
}

static void nh_to(struct rtnl_nexthop *nh, void *arg)
{
	rtnl_route_nh_set_ifindex(nh, *(int *)arg);
}

static int route_uses(struct rtnl_route *r, int ifindex)
{
	return rtnl_route_get_nnexthops(r) == 1 &&
	       rtnl_route_nh_get_ifindex(rtnl_route_nexthop_n(r, 0)) == ifindex;
}

/* Move the routes through an interface that its addresses did not bring
 * (the default route and other gateways) onto the other interface. */
static void move_route(struct nl_object *obj, void *arg)
{
	struct rtnl_route *r = (struct rtnl_route *)obj, *copy;
	struct move_ctx *m = arg;

	if (!route_uses(r, m->from) || rtnl_route_get_protocol(r) == RTPROT_KERNEL ||
	    rtnl_route_get_table(r) != RT_TABLE_MAIN)
		return;
	copy = (struct rtnl_route *)nl_object_clone(obj);
	rtnl_route_delete(m->sk, r, 0);
	rtnl_route_foreach_nexthop(copy, nh_to, &m->to);
	if (rtnl_route_add(m->sk, copy, NLM_F_CREATE) < 0)
		m->failed++;
	else
		m->moved++;
	rtnl_route_put(copy);
}

/* Move addresses, then routes (which need the addresses in place). */
static int move_ip_config(struct nl_sock *sk, int from, int to)
{
	struct move_ctx m = { sk, from, to, 0, 0 };
	struct nl_cache *addrs = NULL, *routes4 = NULL, *routes6 = NULL;

	if (rtnl_route_alloc_cache(sk, AF_INET, 0, &routes4) < 0 ||
	    rtnl_route_alloc_cache(sk, AF_INET6, 0, &routes6) < 0 ||
	    rtnl_addr_alloc_cache(sk, &addrs) < 0) {
		m.failed = 1;
		goto out;
	}
	nl_cache_foreach(addrs, move_addr, &m);
	nl_cache_foreach(routes4, move_route, &m);
	nl_cache_foreach(routes6, move_route, &m);
out:
	if (addrs) nl_cache_free(addrs);
	if (routes4) nl_cache_free(routes4);
	if (routes6) nl_cache_free(routes6);
	return m.failed ? -EIO : 0;
}

struct addr_find { int ifindex; const char *ip; int found; };

static void find_addr(struct nl_object *obj, void *arg)
{
	struct rtnl_addr *a = (struct rtnl_addr *)obj;
	struct addr_find *f = arg;
	char buf[INET6_ADDRSTRLEN + 8], *slash;

	if (rtnl_addr_get_ifindex(a) != f->ifindex || !rtnl_addr_get_local(a))
		return;
	nl_addr2str(rtnl_addr_get_local(a), buf, sizeof(buf));
	if ((slash = strchr(buf, '/')))
		*slash = '\0';
	if (strcmp(buf, f->ip) == 0)
		f->found = 1;
}

/* Does this interface hold the address the current ssh session came in on? */
static int carries_ssh_session(struct nl_sock *sk, int ifindex, char *ip, size_t len)
{
	const char *conn = getenv("SSH_CONNECTION");
	struct nl_cache *addrs;
	struct addr_find f = { ifindex, ip, 0 };

	/* "client_ip client_port server_ip server_port" */
	if (!conn || sscanf(conn, "%*s %*s %63s", ip) != 1 || len < 64)
		return 0;
	if (rtnl_addr_alloc_cache(sk, &addrs) < 0)
		return 0;
	nl_cache_foreach(addrs, find_addr, &f);
	nl_cache_free(addrs);
	return f.found;
}

int nl_bridge_adopt_nic(const char *bridge, const char *nic, int force, char *err, size_t errlen)
{
	struct nl_sock *sk;
	struct rtnl_link *link = NULL, *br = NULL, *change = NULL;
	char ip[64];
	int rc;

	if ((rc = netif_name_check(nic, err, errlen)))
		return rc;
	if (!(sk = nl_open(err, errlen)))
		return -EIO;
	if ((rc = nl_get_link(sk, nic, &link, err, errlen)))
		goto out;
	if (rtnl_link_is_bridge(link) || rtnl_link_get_master(link)) {
		snprintf(err, errlen, "%s is a bridge or already on one", nic);
		rc = -EBUSY;
		goto out;
	}
	if (!force && carries_ssh_session(sk, rtnl_link_get_ifindex(link), ip, sizeof(ip))) {
		snprintf(err, errlen, "%s carries this ssh session (%s); moving its addresses could cut it off "
			 "(--force to do it anyway)", nic, ip);
		rc = -EPERM;
		goto out;
	}
	if (!nl_link_exists(bridge) && (rc = nl_bridge_create(bridge, err, errlen)))
		goto out;
	if (rtnl_link_get_kernel(sk, 0, bridge, &br) < 0 || !rtnl_link_is_bridge(br)) {
		snprintf(err, errlen, "%s is not a bridge", bridge);
		rc = -EINVAL;
		goto out;
	}
	/* The bridge takes the NIC's MAC, so DHCP leases and neighbours keep
	 * recognising the host. */
	change = rtnl_link_alloc();
	rtnl_link_set_addr(change, rtnl_link_get_addr(link));
	rtnl_link_set_flags(change, IFF_UP);
	if ((rc = rtnl_link_change(sk, br, change, 0)) < 0) {
		snprintf(err, errlen, "cannot set up bridge %s: %s", bridge, nl_geterror(rc));
		rc = nl_errno(rc);
		goto out;
	}
	rtnl_link_put(change);
	change = rtnl_link_alloc();
	rtnl_link_set_master(change, rtnl_link_get_ifindex(br));
	rtnl_link_set_flags(change, IFF_UP);
	if ((rc = rtnl_link_change(sk, link, change, 0)) < 0) {
		snprintf(err, errlen, "cannot attach %s to %s: %s", nic, bridge, nl_geterror(rc));
		rc = nl_errno(rc);
		goto out;
	}
	if ((rc = move_ip_config(sk, rtnl_link_get_ifindex(link), rtnl_link_get_ifindex(br))))
		snprintf(err, errlen, "could not move every address and route of %s to %s", nic, bridge);
out:
	if (change) rtnl_link_put(change);
	if (br) rtnl_link_put(br);
	if (link) rtnl_link_put(link);
	nl_socket_free(sk);
	return rc;
}

/* A port that is not a tap is a host NIC the bridge adopted. */
static int is_tap(const char *ifname)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/net/%s/tun_flags", ifname);
	return access(path, F_OK) == 0;
}

struct nic_find { int bridge; char name[IFNAMSIZ]; int taps, nics; };

static void find_ports(struct nl_object *obj, void *arg)
{
	struct rtnl_link *l = (struct rtnl_link *)obj;
	struct nic_find *f = arg;

	if (rtnl_link_get_master(l) != f->bridge)
		return;
	if (is_tap(rtnl_link_get_name(l))) {
		f->taps++;
	} else {
		f->nics++;
		snprintf(f->name, sizeof(f->name), "%s", rtnl_link_get_name(l));
	}
}

int nl_bridge_release_nic(const char *bridge, char *nic_out, size_t niclen, char *err, size_t errlen)
{
	struct nl_sock *sk;
	struct nl_cache *cache = NULL;
	struct rtnl_link *br, *nic, *change;
	struct nic_find f = { 0 };
	int rc = 0;

	nic_out[0] = '\0';
	if (!(sk = nl_open(err, errlen)))
		return -EIO;
	if (rtnl_link_alloc_cache(sk, AF_UNSPEC, &cache) < 0 ||
	    !(br = rtnl_link_get_by_name(cache, bridge)) || !rtnl_link_is_bridge(br)) {
		snprintf(err, errlen, "no bridge named %s", bridge);
		rc = -ENODEV;
		goto out;
	}
	f.bridge = rtnl_link_get_ifindex(br);
	nl_cache_foreach(cache, find_ports, &f);
	if (f.taps || f.nics != 1) {
		rtnl_link_put(br);
		goto out;     /* nothing adopted here (or vifs still attached) */
	}
	nic = rtnl_link_get_by_name(cache, f.name);
	move_ip_config(sk, f.bridge, rtnl_link_get_ifindex(nic));
	change = rtnl_link_alloc();
	rtnl_link_set_master(change, 0);
	rc = rtnl_link_change(sk, nic, change, 0);
	if (rc < 0) {
		snprintf(err, errlen, "cannot detach %s from %s: %s", f.name, bridge, nl_geterror(rc));
		rc = nl_errno(rc);
	} else {
		rc = 0;
		/* The addresses follow the NIC once it is off the bridge. */
		move_ip_config(sk, f.bridge, rtnl_link_get_ifindex(nic));
		snprintf(nic_out, niclen, "%s", f.name);
	}
	rtnl_link_put(change);
	rtnl_link_put(nic);
	rtnl_link_put(br);
out:
	if (cache)
		nl_cache_free(cache);
	nl_socket_free(sk);
	return rc;
}

/* ---- a network's gateway address, and the routes a new subnet must not overlap ---- */

int nl_addr4_add(const char *ifname, uint32_t addr_be, unsigned prefix, char *err, size_t errlen)
{
	struct nl_sock *sk;
	struct rtnl_addr *a;
	struct nl_addr *local;
	int ifindex = (int)if_nametoindex(ifname), rc;

	if (!ifindex) {
		snprintf(err, errlen, "no interface named %s", ifname);
		return -ENODEV;
	}
	if (!(sk = nl_open(err, errlen)))
		return -EIO;
	a = rtnl_addr_alloc();
	local = nl_addr_build(AF_INET, &addr_be, 4);
	if (!a || !local) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	nl_addr_set_prefixlen(local, (int)prefix);
	rtnl_addr_set_ifindex(a, ifindex);
	rtnl_addr_set_local(a, local);
	rc = rtnl_addr_add(sk, a, 0);
	if (rc < 0 && -rc != NLE_EXIST) {
		snprintf(err, errlen, "cannot give %s its address: %s", ifname, nl_geterror(rc));
		rc = nl_errno(rc);
	} else {
		rc = 0;
	}
out:
	if (local)
		nl_addr_put(local);
	if (a)
		rtnl_addr_put(a);
	nl_socket_free(sk);
	return rc;
}

struct overlap_ctx {
	uint32_t net, mask;            /* host order */
	int skip_ifindex;
	char *what;
	size_t len;
	int found;
};

static void route_overlap(struct nl_object *obj, void *arg)
{
	struct rtnl_route *r = (struct rtnl_route *)obj;
	struct overlap_ctx *o = arg;
	struct nl_addr *dst = rtnl_route_get_dst(r);
	unsigned plen;
	uint32_t rnet, rmask, common;
	char text[64], dev[IFNAMSIZ] = "";

	if (o->found || rtnl_route_get_table(r) != RT_TABLE_MAIN || !dst || nl_addr_get_family(dst) != AF_INET)
		return;
	plen = (unsigned)nl_addr_get_prefixlen(dst);
	/* The default route overlaps everything: it is the way out, not a network. */
	if (plen == 0 || (o->skip_ifindex && route_uses(r, o->skip_ifindex)))
		return;
	memcpy(&rnet, nl_addr_get_binary_addr(dst), 4);
	rnet = ntohl(rnet);
	rmask = plen >= 32 ? ~0u : ~(~0u >> plen);
	common = o->mask & rmask;      /* the shorter prefix's */
	if ((o->net & common) != (rnet & common))
		return;
	o->found = 1;
	nl_addr2str(dst, text, sizeof(text));
	if (rtnl_route_get_nnexthops(r) >= 1)
		if_indextoname((unsigned)rtnl_route_nh_get_ifindex(rtnl_route_nexthop_n(r, 0)), dev);
	if (!strchr(text, '/'))
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "/%u", plen);
	snprintf(o->what, o->len, "%s%s%s", text, dev[0] ? " dev " : "", dev);
}

int nl_route4_overlap(uint32_t net_be, unsigned prefix, const char *skip_ifname, char *what, size_t whatlen,
		      char *err, size_t errlen)
{
	struct overlap_ctx o = { ntohl(net_be), prefix ? ~(~0u >> prefix) : 0,
				 skip_ifname ? (int)if_nametoindex(skip_ifname) : 0, what, whatlen, 0 };
	struct nl_cache *cache = NULL;
	struct nl_sock *sk;
	int rc;

	what[0] = '\0';
	if (!(sk = nl_open(err, errlen)))
		return -EIO;
	rc = rtnl_route_alloc_cache(sk, AF_INET, 0, &cache);
	if (rc < 0) {
		snprintf(err, errlen, "cannot list routes: %s", nl_geterror(rc));
		nl_socket_free(sk);
		return -EIO;
	}
	nl_cache_foreach(cache, route_overlap, &o);
	nl_cache_free(cache);
	nl_socket_free(sk);
	return o.found;
}
