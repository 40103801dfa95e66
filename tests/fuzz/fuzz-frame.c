/* The network watcher's frame parser (src/hyp/netwatch/frame.c), which
 * reads every frame a guest sends and every frame on its way to it.
 * Input: one flags byte (bit 0: the guest sent it), the guest's MAC (6
 * bytes), then the captured frame, cut wherever the input ends (as a snap
 * length cuts it).  Properties, from frame.h: the parser reads nothing past
 * the capture (ASan), an address is AF_INET or AF_INET6, ARP and neighbour
 * discovery claim only for frames the guest sent from its own MAC, and a
 * DHCP claim comes only from a frame on its way to the guest. */
#include "fuzz.h"
#include "netwatch/frame.h"

#include <string.h>
#include <sys/socket.h>

static void check_addr(const struct nw_addr *a)
{
	char buf[64];

	FUZZ_CHECK(a->family == AF_INET || a->family == AF_INET6, "an address of no family marked valid");
	nw_addr_format(a, buf, sizeof(buf));
	FUZZ_CHECK(strlen(buf) < 46, "a formatted address longer than INET6_ADDRSTRLEN");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nw_frame out;
	bool from_guest;
	const uint8_t *mac, *frame;
	size_t len;

	if (size < 7)
		return 0;
	from_guest = data[0] & 1;
	mac = data + 1;
	frame = data + 7;
	len = size - 7;
	nw_frame_parse(frame, len, from_guest, mac, &out);
	if (out.peer_valid)
		check_addr(&out.peer);
	if (out.claim_valid) {
		check_addr(&out.claim);
		if (out.how == NW_DHCP) {
			FUZZ_CHECK(!from_guest, "a DHCP claim from a frame the guest sent");
		} else {
			FUZZ_CHECK(out.how == NW_ARP || out.how == NW_ND, "a claim learned no known way");
			FUZZ_CHECK(from_guest, "an ARP/ND claim from a frame toward the guest");
			FUZZ_CHECK(len >= 14 && memcmp(frame + 6, mac, 6) == 0,
				   "an ARP/ND claim from a frame not from the guest's MAC");
		}
	} else {
		FUZZ_CHECK(!out.claim.family, "a claim address set with claim_valid false");
	}
	return 0;
}
