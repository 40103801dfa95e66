/* After a live migration the network must learn where the guest went
 * before the guest says anything: lodge-hyp sends, on each vif and on the
 * guest's behalf, a RARP (as QEMU does: the bridges and switches learn the
 * MAC's new port) and a gratuitous ARP for every IPv4 address the source's
 * watcher had seen the guest use (as Xen did: neighbours update their
 * caches).  The addresses travel in the stream as the "announce" entry. */
#ifndef LODGE_SAVE_ANNOUNCE_H
#define LODGE_SAVE_ANNOUNCE_H

struct domain;

/* The "announce" entry, for the domain's vifs (dom->nics). */
int announce_register(struct domain *dom);
/* Send the announcement on every vif (the guest runs here now), and four
 * times more in the next 800 ms from a thread of its own. */
void announce_send(void);

#endif
