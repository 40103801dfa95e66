/* The pool as a library for the faces (the command line, the dashboard,
 * the web page): joining, leaving and the pool's domains, each one call
 * that opens the pool of lodge.conf, does its etcd transactions and
 * closes it.  No face runs etcd transactions or reads our own command's
 * output; pool.h is the pool's inside (the agent and these calls). */
#ifndef LODGE_POOL_PUBLIC_H
#define LODGE_POOL_PUBLIC_H

#include <stdbool.h>
#include <stddef.h>

#include "lodge.h"

/* This host into the pool at etcd (URL[,URL...]) as host (NULL: its
 * hostname's first label) under prefix (NULL: lodge.conf's or the
 * default), reached with access's pool_cacert, pool_cert, pool_key,
 * pool_user, pool_password_file (lodge.conf's with the caller's options
 * over them; password_keep, if not NULL, the name pool_password_file
 * takes only once etcd took the host, so that a join that fails leaves
 * the earlier password in place): the pool answers and speaks our protocol, the name is free
 * (or this host's own, joining again), then lodge.conf says so.  0 with
 * joined the name; else -errno with why, and the pool forgets the host
 * again if it had taken it. */
int pool_join(const struct host_config *access, const char *etcd, const char *host, const char *prefix,
	      const char *password_keep, char joined[DOMAIN_NAME_MAX], char *why, size_t whylen);

/* pool_leave's word on each domain it had to move away: to the host it
 * was migrated to, or failed why it could not be. */
typedef void pool_leave_progress(void *arg, const char *domain, const char *to, const char *failed);
/* This host out of its pool (lodge.conf's): its record says leaving, the
 * domains it owns are migrated away one at a time (progress told of
 * each), then its member key goes and lodge.conf forgets the pool.
 * -EBUSY if one could not be moved (the host stays, shown up again);
 * else 0 with left its name, or -errno with why. */
int pool_leave(const struct host_config *hc, pool_leave_progress *progress, void *arg, char left[DOMAIN_NAME_MAX],
	       char *why, size_t whylen);

/* A domain of the pool as every face shows it (lodge list --pool). */
struct pool_domain_row {
	char name[DOMAIN_NAME_MAX];
	char host[DOMAIN_NAME_MAX];        /* its owner, else where it is placed; "" none */
	enum domain_state state;           /* as pool_domain_state says (pool.h) */
	unsigned long memory_mib;
	bool ha;
	char note[512];                    /* why it failed or how it last ended, escaped for a terminal; "" none */
};
struct pool_domains {
	size_t n;
	struct pool_domain_row *row;       /* n of them, sorted by name */
};
/* The pool's domains as etcd holds them now, for a host in a pool
 * (hc->pool_etcd): 0, or -errno with why (-ENOENT: in no pool;
 * -ETIMEDOUT: etcd did not answer, why says since when and what it
 * means).  Blocks on etcd: the dashboard calls it in a child. */
int pool_domains(const struct host_config *hc, struct pool_domains *out, char *why, size_t whylen);
void pool_domains_free(struct pool_domains *d);

#endif
