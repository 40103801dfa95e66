/* liblodge: the one client library beneath every face of Lodge (the
 * lodge command, the dashboard, and the faces to come).  It speaks the
 * control protocol (src/common/proto.h) to each domain's lodge-hyp,
 * starts lodge-hyp for a new domain, writes and reads saved streams, and
 * samples the host.
 *
 * Conventions
 *   - A call returns 0 (or a count or a descriptor where it says so), or
 *     a negative errno.  A call that can fail for a reason a user should
 *     read fills a struct lodge_err with it: the whole reason, ready to
 *     show ("no domain named web is running").
 *   - Nothing here prints.  A warning (a dead domain's directory cleaned
 *     up, an address two domains claim) and each line lodge-hyp writes
 *     while a domain starts go to the face's notice hook.
 *   - DOMAIN, below, is what a user types for a domain, as in xl: its
 *     name, or its ID (digits) when no running domain has that name.  A
 *     word that is neither a valid name nor an ID is refused (-EINVAL).
 *   - The library's own children (lodge-hyp, a bzip2 pump, a migration
 *     receiver's workers) are its business: each is waited for before
 *     the call that started it returns (the receiver's, before it does).
 *   - One thread at a time: some calls keep their large buffers static. */
#ifndef LODGE_H
#define LODGE_H

/* The whole API, one header per concern; a face may include just the parts it uses. */
#include "lodge/handle.h"
#include "lodge/status.h"
#include "lodge/devices.h"
#include "lodge/domain.h"
#include "lodge/migrate.h"
#include "lodge/host.h"
#include "lodge/network.h"
#include "lodge/install.h"
#include "lodge/events.h"

#endif
