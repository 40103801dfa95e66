/* What a pool host starts from a config read from etcd (pool.h,
 * pool_config_admit). */
#include "pool.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "incoming.h"

/* A config read from etcd is untrusted input, as a stream is (SECURITY.md,
 * "The pool's etcd"): whoever can write the pool's keys chose every path
 * and name in it, and root opens them.  So it is read first without this
 * host's checks (which open the kernel and look for the bridges), held to
 * what this host lends a stream (incoming_admit: lodge.conf's
 * storage_dirs, storage_devices, kernel_dirs, bridges, or this host's own
 * config of the domain), and only then read again with them, admitted
 * once more (the second reading is what runs: the real paths checked are
 * the paths lodge-hyp opens). */

/* One reading of text: loaded (with this host's checks or not), its name
 * the key's, admitted. */
static int admit_once(const struct lodge *lg, const char *name, const char *file, const char *text, bool host_checks,
		      struct domain_config *dc, char *err, size_t errlen)
{
	char why[LODGE_ERR_MAX];
	int rc;

	if ((rc = domain_config_load_text(file, text, strlen(text), &lg->hc, host_checks, dc, err, errlen)))
		return rc;
	if (strcmp(dc->name, name)) {
		snprintf(err, errlen, "its config names %s", dc->name);
		return -EINVAL;
	}
	if ((rc = incoming_admit(dc, &lg->hc, why, sizeof(why))))
		snprintf(err, errlen, "refused by this host's lodge.conf: %s", why);
	return rc;
}

int pool_config_admit(const struct lodge *lg, const char *name, const char *file, const char *text,
		      struct domain_config *dc, char *err, size_t errlen)
{
	int rc = admit_once(lg, name, file, text, false, dc, err, errlen);

	return rc ? rc : admit_once(lg, name, file, text, true, dc, err, errlen);
}
