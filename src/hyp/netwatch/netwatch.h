/* The network watcher: each vif's tap seen through libpcap, by one thread
 * of the lodge-hyp that owns the taps (so no daemon has to stay up, and the
 * watch lives and ends with the domain).  It learns the addresses the guest
 * claims (netwatch/frame.h says from which frames) with their last-seen
 * time, and counts packets, bytes and the top peers per interval. */
#ifndef LODGE_NETWATCH_H
#define LODGE_NETWATCH_H

#include <stddef.h>

struct tap;
struct netwatch;

/* Watch n taps (already open, on their bridges).  A vif that cannot be
 * watched (no permission, an interface that is down) is reported in the
 * replies with libpcap's reason; the guest runs regardless.  NULL only if
 * the thread could not start (logged). */
struct netwatch *netwatch_start(const struct tap *taps, unsigned n);
/* Stop the thread and close every capture. NULL is fine. */
void netwatch_stop(struct netwatch *w);
/* The vif on tap name leaves the domain (detached): its captures close
 * before its tap does, and it is no longer in the replies.  A vif not
 * watched, or NULL, is fine. */
void netwatch_forget(struct netwatch *w, const char *name);

/* The replies name the domain's vifs as they are now, in the order the
 * runtime config has them (vifN is the N-th): names[0..n), their taps.  A
 * vif attached while the domain runs has no capture (opening one needs
 * CAP_NET_RAW, which the sandbox dropped): shown as not watched. */

/* Status reply lines: "vifN_addrs ADDR,HOW,AGE_S ..." ("-" for none).
 * Returns the length written (always NUL-terminated). */
size_t netwatch_format_addrs(struct netwatch *w, const char *const *names, unsigned n, char *buf, size_t len);
/* The peers reply: per vif its watch state, addresses, the last interval's
 * rates and drops, and its top peers (src/common/proto.h). */
size_t netwatch_format_peers(struct netwatch *w, const char *const *names, unsigned n, char *buf, size_t len);

#endif
