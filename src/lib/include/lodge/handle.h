/* liblodge: the handle, its errors and notices: what every call of liblodge takes. */
#ifndef LODGE_API_HANDLE_H
#define LODGE_API_HANDLE_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"      /* struct domain_config, struct host_config: the schema's */
#include "proto.h"       /* enum domain_state: a status's state, by its word */

/* ---- the handle, errors and notices ----------------------------------------------- */

#define LODGE_ERR_MAX 2048

struct lodge_err {
	char msg[LODGE_ERR_MAX];       /* why, one line (lodge-hyp's: its own lines) */
	bool from_hyp;                 /* msg is what lodge-hyp wrote, each line with its own prefix */
};

enum lodge_notice {
	LODGE_NOTICE_WARNING,          /* the library's: a sentence without prefix */
	LODGE_NOTICE_HYP,              /* a line lodge-hyp wrote while starting, prefix and all */
};
typedef void lodge_notice_fn(enum lodge_notice kind, const char *text, void *arg);

struct lodge {
	struct host_config hc;         /* lodge.conf, the root applied */
	lodge_notice_fn *notice;       /* NULL: notices are dropped */
	void *notice_arg;
};

/* Read lodge.conf under ROOT (NULL or "": /) into lg: 0, or -errno with
 * FILE:LINE: KEY: why. */
int lodge_open(struct lodge *lg, const char *root, struct lodge_err *err);
void lodge_on_notice(struct lodge *lg, lodge_notice_fn *fn, void *arg);

/* The running domain DOMAIN names (see above) into name: 0; -EINVAL for
 * a word that is no name or ID, or Domain-0; -ENOENT for an ID no running
 * domain has.  A valid name that is not running resolves to itself: the
 * call that uses it says it is not running. */
int lodge_resolve(const struct lodge *lg, const char *domain, char name[DOMAIN_NAME_MAX],
		  struct lodge_err *err);

#endif
