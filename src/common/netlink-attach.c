/* What lodge-hyp needs of netlink.h: an interface name's check, and a tap
 * put on its bridge, through libnl-route-3 loaded on first use.
 *
 * Why apart from netlink.c, and loaded: linked, libnl-3 and libnl-route-3
 * were loaded and relocated in every lodge-hyp process, each domain's
 * supervisor and domain process, with a vif or not: 56 KiB of private
 * pages in each for the one call that puts a tap on its bridge, made once
 * at start-up (a hot-plugged vif's tap comes made, from lodge).  The
 * library's programs, which link libnl, load nothing more: the dlopen finds
 * it loaded. */
#include "netlink.h"
#include "schema.h"

#include <dlfcn.h>
#include <errno.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/link/bridge.h>
#include <stdio.h>
#include <string.h>

/* The soname lodge-hyp is built against (GNUmakefile); libnl-3's comes
 * with it, as a dependency. */
#ifndef NL_ROUTE_SONAME
#define NL_ROUTE_SONAME "libnl-route-3.so.200"
#endif

#define NL_ATTACH_FUNCS(X) \
	X(nl_socket_alloc) X(nl_connect) X(nl_socket_free) X(nl_geterror) \
	X(rtnl_link_get_kernel) X(rtnl_link_is_bridge) X(rtnl_link_alloc) X(rtnl_link_put) \
	X(rtnl_link_get_ifindex) X(rtnl_link_set_master) X(rtnl_link_set_flags) X(rtnl_link_change)

static struct {
#define NL_ATTACH_POINTER(f) __typeof__(f) *f;
	NL_ATTACH_FUNCS(NL_ATTACH_POINTER)
#undef NL_ATTACH_POINTER
} nl;

int netif_name_check(const char *name, char *err, size_t errlen)
{
	return ifname_check(name, err, errlen);
}

/* Load libnl-route-3 (once; before the sandbox, whose empty root has no
 * library): 0, or -ELIBACC with the reason in err. */
static int nl_load(char *err, size_t errlen)
{
	static int loaded;
	void *h;

	if (loaded)
		return 0;
	/* RTLD_NOW: a missing symbol is found here; never closed, so the
	 * pointers stay good.  dlsym on the handle searches libnl-3 too. */
	if (!(h = dlopen(NL_ROUTE_SONAME, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(err, errlen, "cannot load %s: %s", NL_ROUTE_SONAME, dlerror());
		return -ELIBACC;
	}
#define NL_ATTACH_LOOKUP(f) \
	if (!(*(void **)&nl.f = dlsym(h, #f))) { \
		snprintf(err, errlen, "%s has no %s", NL_ROUTE_SONAME, #f); \
		return -ELIBACC; \
	}
	NL_ATTACH_FUNCS(NL_ATTACH_LOOKUP)
#undef NL_ATTACH_LOOKUP
	loaded = 1;
	return 0;
}

int nl_link_attach(const char *ifname, const char *bridge, char *err, size_t errlen)
{
	struct nl_sock *sk;
	struct rtnl_link *link = NULL, *br = NULL, *change = NULL;
	int rc;

	if ((rc = nl_load(err, errlen)))
		return rc;
	if (!(sk = nl.nl_socket_alloc())) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (nl.nl_connect(sk, NETLINK_ROUTE) < 0) {
		snprintf(err, errlen, "cannot open a netlink socket");
		rc = -EIO;
		goto out;
	}
	if (nl.rtnl_link_get_kernel(sk, 0, ifname, &link) < 0) {
		snprintf(err, errlen, "no interface named %s", ifname);
		rc = -ENODEV;
		goto out;
	}
	if (nl.rtnl_link_get_kernel(sk, 0, bridge, &br) < 0 || !nl.rtnl_link_is_bridge(br)) {
		snprintf(err, errlen, "no bridge named %s", bridge);
		rc = -ENODEV;
		goto out;
	}
	if (!(change = nl.rtnl_link_alloc())) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	nl.rtnl_link_set_master(change, nl.rtnl_link_get_ifindex(br));
	nl.rtnl_link_set_flags(change, IFF_UP);
	if ((rc = nl.rtnl_link_change(sk, link, change, 0)) < 0) {
		snprintf(err, errlen, "cannot attach %s to bridge %s: %s", ifname, bridge, nl.nl_geterror(rc));
		/* libnl's codes to errno, as netlink.c's callers get them. */
		switch (-rc) {
		case NLE_EXIST: rc = -EEXIST; break;
		case NLE_OBJ_NOTFOUND: case NLE_NODEV: rc = -ENODEV; break;
		case NLE_PERM: rc = -EPERM; break;
		case NLE_BUSY: rc = -EBUSY; break;
		default: rc = -EIO; break;
		}
	}
out:
	if (change)
		nl.rtnl_link_put(change);
	if (br)
		nl.rtnl_link_put(br);
	if (link)
		nl.rtnl_link_put(link);
	nl.nl_socket_free(sk);
	return rc;
}
