/* What one captured frame on a vif tells the watcher: an address the
 * guest claims for itself, and the peer it talks to.  Pure parsing of the
 * captured bytes (which may be cut at the snap length), no state. */
#ifndef LODGE_NETWATCH_FRAME_H
#define LODGE_NETWATCH_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An IPv4 (first 4 bytes of a) or IPv6 address. */
struct nw_addr {
	uint8_t family;          /* AF_INET or AF_INET6; 0: none */
	uint8_t bytes[16];
};

/* How an address was learned (the status reply's word for it). */
enum nw_how { NW_ARP, NW_DHCP, NW_ND };

struct nw_frame {
	bool claim_valid;        /* the frame shows the guest owning claim */
	struct nw_addr claim;
	enum nw_how how;
	bool peer_valid;         /* an IP packet: the address at the other end */
	struct nw_addr peer;
};

/* Parse one Ethernet frame of a vif whose guest has MAC guest_mac.
 * from_guest: the guest sent it (the tap received it); else it is on its
 * way to the guest.  Addresses are claimed only by:
 *   - ARP from the guest, Ethernet source and ARP sender both guest_mac,
 *     sender address not 0.0.0.0 (a probe claims nothing yet);
 *   - ICMPv6 neighbour solicitation (its source, not ::) or advertisement
 *     (its target) from the guest, Ethernet source guest_mac;
 *   - a DHCP ACK toward the guest for chaddr guest_mac, from any server:
 *     its yiaddr.
 * So a guest forging another's MAC claims nothing for either of them: the
 * other's watcher sees the forgery only on its way to that guest. */
void nw_frame_parse(const uint8_t *f, size_t caplen, bool from_guest, const uint8_t guest_mac[6],
		    struct nw_frame *out);

/* "10.0.0.2" or "fe80::1" into buf (at least 46 bytes). */
void nw_addr_format(const struct nw_addr *a, char *buf, size_t len);

#endif
