#include "netlink.h"

#include <errno.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/link/bridge.h>
#include <stdio.h>
#include <string.h>

int netif_name_check(const char *name, char *err, size_t errlen)
{
	size_t len = strlen(name);

	if (len == 0 || len >= IFNAMSIZ) {
		snprintf(err, errlen, "interface name '%s' must be 1 to %d characters", name, IFNAMSIZ - 1);
		return -EINVAL;
	}
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strpbrk(name, "/: \t\n")) {
		snprintf(err, errlen, "interface name '%s' may not contain '/', ':' or spaces", name);
		return -EINVAL;
	}
	return 0;
}

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

int nl_link_attach(const char *ifname, const char *bridge, char *err, size_t errlen)
{
	struct nl_sock *sk;
	struct rtnl_link *link = NULL, *br = NULL, *change = NULL;
	int rc;

	if (!(sk = nl_open(err, errlen)))
		return -EIO;
	if ((rc = nl_get_link(sk, ifname, &link, err, errlen)))
		goto out;
	if (rtnl_link_get_kernel(sk, 0, bridge, &br) < 0 || !rtnl_link_is_bridge(br)) {
		snprintf(err, errlen, "no bridge named %s", bridge);
		rc = -ENODEV;
		goto out;
	}
	change = rtnl_link_alloc();
	rtnl_link_set_master(change, rtnl_link_get_ifindex(br));
	rtnl_link_set_flags(change, IFF_UP);
	rc = rtnl_link_change(sk, link, change, 0);
	if (rc < 0) {
		snprintf(err, errlen, "cannot attach %s to bridge %s: %s", ifname, bridge, nl_geterror(rc));
		rc = nl_errno(rc);
	}
out:
	if (change)
		rtnl_link_put(change);
	if (br)
		rtnl_link_put(br);
	if (link)
		rtnl_link_put(link);
	nl_socket_free(sk);
	return rc;
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
