/* Who may use a domain's control socket.  Root always; members of the
 * host's control group (lodge.conf control_group) for everything; members
 * of its stats group (stats_group) for the commands that only read (the
 * table in ctl-commands.c says which those are).  The
 * kernel vouches for the peer (SO_PEERCRED, SO_PEERGROUPS) on every
 * connection: the socket's file mode only lets them knock. */
#include "ctl/ctl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif

static bool peer_in_group(int fd, gid_t primary, long gid)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);
	unsigned i;

	if (gid < 0)
		return false;
	if (primary == (gid_t)gid)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;            /* too many groups, or an old kernel: no */
	for (i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == (gid_t)gid)
			return true;
	return false;
}

enum ctl_level ctl_peer_level(int fd, const struct ctl_access *a, uid_t *uid, char *who, size_t len)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0) {
		snprintf(who, len, "an unknown peer (%s)", strerror(errno));
		return CTL_DENIED;
	}
	snprintf(who, len, "uid %u (pid %d)", (unsigned)cred.uid, (int)cred.pid);
	*uid = cred.uid;
	if (cred.uid == 0)
		return CTL_CONTROL;
	if (peer_in_group(fd, cred.gid, a->control_gid))
		return CTL_CONTROL;
	if (peer_in_group(fd, cred.gid, a->stats_gid))
		return CTL_STATS;
	return CTL_DENIED;
}
