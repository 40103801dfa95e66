/* A tap device (IFF_TAP | IFF_NO_PI | IFF_VNET_HDR) carrying a vif's frames
 * with virtio-net headers, so checksum and segmentation offloads pass
 * through to the host's stack untouched. */
#ifndef LODGE_TAP_H
#define LODGE_TAP_H

#include <stddef.h>
#include <stdint.h>

struct tap {
	char name[16];          /* IFNAMSIZ */
	char bridge[16];        /* attach to this bridge once open; "" for none */
	uint8_t mac[6];
	int fd;
	unsigned slot;          /* its PCI slot (slot=N), 0: the first free */
};

/* Parse "tap=NAME[,mac=MAC][,bridge=BR][,slot=N]". Returns 0 or -EINVAL with err set. */
int tap_parse(const char *spec, struct tap *t, char *err, size_t errlen);
/* Open (creating if needed) the tap, non-blocking, with 12-byte vnet
 * headers, and attach it to its bridge.  A tap lodge-hyp creates is not
 * persistent: it vanishes with the process, however the process ends. */
int tap_open(struct tap *t, char *err, size_t errlen);
/* The same for a tap the caller opened (tapdev_open) and sent: takes fd
 * over (closed on error), sets the vnet header size and offloads. */
int tap_adopt(struct tap *t, int fd, char *err, size_t errlen);
/* Tell the tap which offloads the guest accepts on receive (TUN_F_*). */
int tap_set_offload(struct tap *t, unsigned tun_flags);
/* Parse "aa:bb:cc:dd:ee:ff" into mac; -EINVAL if malformed. */
int mac_parse(const char *s, uint8_t mac[6]);

#endif
