#include "tap.h"
#include "disk.h"
#include "netlink.h"
#include "tapdev.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define VNET_HDR_LEN 12   /* struct virtio_net_hdr_v1 (virtio 1.x, num_buffers included) */

int mac_parse(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char tail;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6 ||
	    strlen(s) != 17)
		return -EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = v[i];
	if (mac[0] & 1)          /* multicast bit: not a station address */
		return -EINVAL;
	return 0;
}

int tap_parse(const char *spec, struct tap *t, char *err, size_t errlen)
{
	char buf[256], *opt, *save = NULL;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "net spec too long");
		return -EINVAL;
	}
	strcpy(buf, spec);
	for (opt = strtok_r(buf, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
		if (strncmp(opt, "tap=", 4) == 0) {
			if (netif_name_check(opt + 4, err, errlen))
				return -EINVAL;
			snprintf(t->name, sizeof(t->name), "%s", opt + 4);
		} else if (strncmp(opt, "bridge=", 7) == 0) {
			if (netif_name_check(opt + 7, err, errlen))
				return -EINVAL;
			snprintf(t->bridge, sizeof(t->bridge), "%s", opt + 7);
		} else if (strncmp(opt, "mac=", 4) == 0) {
			if (mac_parse(opt + 4, t->mac)) {
				snprintf(err, errlen, "net '%s': malformed MAC address '%s' "
					 "(six hex pairs, unicast, e.g. 02:00:00:00:00:01)", spec, opt + 4);
				return -EINVAL;
			}
		} else if (strncmp(opt, "slot=", 5) == 0 && parse_slot(opt + 5, &t->slot) == 0) {
			/* a PCI slot kept across a restore */
		} else {
			snprintf(err, errlen, "net '%s': unknown option '%s' (tap=NAME, mac=MAC, bridge=BR, slot=N)", spec, opt);
			return -EINVAL;
		}
	}
	if (!t->name[0]) {
		snprintf(err, errlen, "net '%s': no tap=NAME", spec);
		return -EINVAL;
	}
	if (!(t->mac[0] | t->mac[1] | t->mac[2] | t->mac[3] | t->mac[4] | t->mac[5])) {
		/* Locally administered, derived from the tap name: stable across runs. */
		uint32_t h = 2166136261u;
		const char *c;

		for (c = t->name; *c; c++)
			h = (h ^ (uint8_t)*c) * 16777619u;
		t->mac[0] = 0x02; t->mac[1] = 0x4c; /* 'L' */
		t->mac[2] = h >> 24; t->mac[3] = h >> 16; t->mac[4] = h >> 8; t->mac[5] = h;
	}
	return 0;
}

int tap_open(struct tap *t, char *err, size_t errlen)
{
	int fd = tapdev_open(t->name, t->bridge, err, errlen);

	if (fd < 0)
		return fd;
	return tap_adopt(t, fd, err, errlen);
}

int tap_adopt(struct tap *t, int fd, char *err, size_t errlen)
{
	int hdr = VNET_HDR_LEN;

	t->fd = fd;
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0 ||
	    ioctl(fd, TUNSETVNETHDRSZ, &hdr) < 0) {
		snprintf(err, errlen, "tap %s: cannot set the vnet header size: %s", t->name, strerror(errno));
		close(fd);
		t->fd = -1;
		return -EINVAL;
	}
	tap_set_offload(t, 0);
	return 0;
}

int tap_set_offload(struct tap *t, unsigned tun_flags)
{
	if (ioctl(t->fd, TUNSETOFFLOAD, tun_flags) < 0)
		return -errno;
	return 0;
}
