/* What a domain that arrives in a stream may use on this host.
 *
 * A saved file (lodge restore) and a migration (lodge migrate-receive)
 * carry the domain's config in their HEAD, as the host that wrote them
 * resolved it.  Whoever wrote the stream chose every path and name in
 * that config, and root opens them: a disk is read and written, a kernel
 * or ramdisk is copied into guest memory on every boot, a vif joins a
 * bridge.  So the receiving host lends only what it would lend to a
 * config its own administrator wrote:
 *
 *   disk file         named (same real path, at least the access asked)
 *                     by this host's config of the domain
 *                     (domains_dir/NAME.cfg), or under storage_dirs
 *   block device      named by that config, or matching storage_devices
 *   kernel, ramdisk   named by that config, or under kernel_dirs
 *   bridge            default_bridge, named by that config, or in bridges
 *                     (a vif on a Lodge network: the network's bridge)
 *   vifname           named by that config (a tap the host chose)
 *
 * The name of the domain's cgroup and runtime directory come from its
 * name, which the config checks already hold to a plain word. */
#ifndef LODGE_INCOMING_H
#define LODGE_INCOMING_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"

/* Admit dc, a config read from a stream: 0, with every admitted path
 * replaced by its real path (what was checked is what lodge-hyp opens);
 * or -EACCES (-errno) with why naming the first resource refused and the
 * setting that would allow it. */
int incoming_admit(struct domain_config *dc, const struct host_config *hc, char *why, size_t whylen);
/* The same, saying which part was refused (a form puts the refusal beside
 * its field). */
enum incoming_part { INCOMING_NONE, INCOMING_DISK, INCOMING_KERNEL, INCOMING_RAMDISK, INCOMING_VIF };
int incoming_admit_part(struct domain_config *dc, const struct host_config *hc, enum incoming_part *part, char *why,
			size_t whylen);
/* Whether lodge.conf lends a disk of this type (S_IFREG, S_IFBLK) asked
 * for as GIVEN, whose real path is REAL: a file under storage_dirs, a
 * block device matching storage_devices.  Used on an open descriptor's
 * path and type (lodge_disk_open), never on a name opened again. */
bool incoming_lends(const char *given, const char *real, mode_t type, const struct host_config *hc);

#endif
