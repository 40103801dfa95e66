/* A vif's tap (tapdev.h). */
#include "tapdev.h"
#include "netlink.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int tapdev_open(const char *name, const char *bridge, char *err, size_t errlen)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR };
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC), rc;

	if (fd < 0) {
		snprintf(err, errlen, "cannot open /dev/net/tun: %s", strerror(errno));
		return -errno;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		int e = errno;

		snprintf(err, errlen, "cannot attach to tap %s: %s%s", name, strerror(e),
			 e == EBUSY ? " (in use by another domain?)" :
			 e == EPERM ? " (needs CAP_NET_ADMIN or a tap owned by this user)" : "");
		close(fd);
		return -e;
	}
	if (bridge && bridge[0] && (rc = nl_link_attach(name, bridge, err, errlen))) {
		close(fd);               /* the tap goes with its last descriptor */
		return rc;
	}
	return fd;
}
