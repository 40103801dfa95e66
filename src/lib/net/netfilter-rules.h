/* The text of a network's nftables transactions (netfilter.c), apart from
 * running it: what tests/unit/test-lib-netfilter.c checks word for word. */
#ifndef LODGE_NETFILTER_RULES_H
#define LODGE_NETFILTER_RULES_H

#include <stddef.h>

#include "netfilter.h"

#define NETFILTER_TABLE "lodge"    /* Lodge's own: table inet lodge */

/* The one transaction that puts n's rules in place, replacing whatever
 * chains of n's were there (malloc'd into *text): 0, or -EINVAL with why
 * in err for a name, bridge, subnet or mode that cannot be written. */
int netfilter_add_text(const struct netfilter_net *n, char **text, struct lodge_err *err);
/* The one transaction that removes network name's chains, given the
 * names of every chain table inet lodge holds now (chains[nchains]): the
 * whole table when no other's is left.  *text is NULL when name has no
 * chain there (nothing to do).  0, or -EINVAL for a bad name. */
int netfilter_del_text(const char *name, const char *const *chains, size_t nchains, char **text,
		       struct lodge_err *err);

#endif
