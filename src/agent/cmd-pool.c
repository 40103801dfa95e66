/* lodge pool-join, pool-leave, pool-list and pool-agent: this host in a
 * pool of Lodge hosts on etcd (src/pool/README.md). */
#include "agent.h"
#include "output.h"
#include "pool-list.h"
#include "pool.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


#include "log.h"

static int pool_fail(const char *why)
{
	log_err("%s", why);
	return EXIT_FAILED;
}

/* An option naming a file for lodge.conf: into to as its real path
 * (lodge.conf is read from anywhere); false with the message said. */
static bool option_file(struct cli *c, int opt, const char *name, char *to, size_t len)
{
	char real[PATH_MAX];

	if (!c->set[opt])
		return true;
	if (!realpath(c->text[opt], real)) {
		log_err("--%s %s: %s", name, c->text[opt], strerror(errno));
		return false;
	}
	if (strlen(real) >= len || strpbrk(real, "\"\\\n")) {
		log_err("--%s %s: a path lodge.conf cannot hold (too long, or a quote, backslash or newline)", name,
			real);
		return false;
	}
	memcpy(to, real, strlen(real) + 1);
	return true;
}

/* A password asked on the terminal is kept where the agent reads it at
 * every authentication: ROOT/etc/lodge/pool-password, root's, mode 600.
 * It is written beside it first (asked_file) and takes that name only
 * once etcd took it; a join that fails removes it. */
static char asked_file[CFG_PATH_MAX];

static int password_file_path(char *out, size_t len, const char *suffix)
{
	return snprintf(out, len, "%s/etc/lodge/pool-password%s", cfg_root(), suffix) < (int)len ? 0 : -ENAMETOOLONG;
}

/* --user without --password-file: asked on the terminal, without echo. */
static bool ask_password(const char *user, struct host_config *hc)
{
	struct termios old, quiet;
	char pw[256] = "";
	bool ok = false;
	FILE *tty = fopen("/dev/tty", "r+e");
	int fd;

	if (!tty || tcgetattr(fileno(tty), &old)) {
		log_err("--user %s needs --password-file FILE, or a terminal to ask the password on (it is never "
			"taken on the command line)", user);
		if (tty)
			fclose(tty);
		return false;
	}
	quiet = old;
	quiet.c_lflag &= ~(tcflag_t)ECHO;
	/* echo off before the prompt: what is typed after it is never shown */
	tcsetattr(fileno(tty), TCSAFLUSH, &quiet);
	fprintf(tty, "etcd password for %s: ", user);
	fflush(tty);
	if (!fgets(pw, sizeof(pw), tty))
		pw[0] = '\0';
	tcsetattr(fileno(tty), TCSANOW, &old);
	fputc('\n', tty);
	fclose(tty);
	pw[strcspn(pw, "\r\n")] = '\0';
	if (!pw[0]) {
		log_err("no password given for etcd user %s", user);
		return false;
	}
	if (password_file_path(asked_file, sizeof(asked_file), ".new")) {
		log_err("--root %s: path too long", cfg_root());
		goto out;
	}
	unlink(asked_file);
	fd = open(asked_file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || fchmod(fd, 0600) || dprintf(fd, "%s\n", pw) < 0 || fsync(fd)) {
		log_err("cannot keep the password in %s: %s", asked_file, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(asked_file);
		}
		asked_file[0] = '\0';
		goto out;
	}
	close(fd);
	memcpy(hc->pool_password_file, asked_file, sizeof(asked_file));
	ok = true;
out:
	explicit_bzero(pw, sizeof(pw));
	return ok;
}

/* pool-join's way to etcd over lodge.conf's: its TLS files and user. */
static bool join_access(struct cli *c, struct host_config *hc)
{
	if (c->set['u']) {
		if (!domain_name_valid(c->text['u'])) {
			log_err("--user %.64s: not an etcd user Lodge takes: %s", c->text['u'], domain_name_rule());
			return false;
		}
		snprintf(hc->pool_user, sizeof(hc->pool_user), "%s", c->text['u']);
		if (!c->set['w'] && !ask_password(c->text['u'], hc))
			return false;
	}
	return option_file(c, 'a', "cacert", hc->pool_cacert, sizeof(hc->pool_cacert)) &&
	       option_file(c, 'c', "cert", hc->pool_cert, sizeof(hc->pool_cert)) &&
	       option_file(c, 'k', "key", hc->pool_key, sizeof(hc->pool_key)) &&
	       option_file(c, 'w', "password-file", hc->pool_password_file, sizeof(hc->pool_password_file));
}

/* pool-join --etcd URL[,URL...] [--host NAME] [--prefix KEY] [--cacert F
 * --cert F --key F] [--user NAME [--password-file F]]: the pool answers
 * and speaks our protocol, the name is free (or this host's own, joining
 * again), then lodge.conf says so. */
static int join_run(struct cli *c);

int cmd_pool_join(struct cli *c)
{
	int rc = join_run(c);

	if (asked_file[0])              /* asked, and not kept: nothing half-made */
		unlink(asked_file);
	return rc;
}

static int join_run(struct cli *c)
{
	static struct host_config hc;      /* lodge.conf's, with the options' access */
	char why[ETCD_WHY_MAX], kept[sizeof(asked_file)], joined[DOMAIN_NAME_MAX];
	const char *prefix = c->set['p'] ? c->text['p'] : NULL;

	if (!c->set['e'])
		return cli_usage_error(c->cmd, "--etcd URL[,URL...] is required");
	if (*c->lg.hc.pool_etcd && strcmp(c->lg.hc.pool_etcd, c->text['e']))
		log_warn("this host was in the pool at %s: it joins %s instead", c->lg.hc.pool_etcd, c->text['e']);
	if (prefix && !pool_prefix_valid(prefix))
		return cli_usage_error(c->cmd, "--prefix %s: not a key prefix like /lodge/pool (%s)", prefix,
				       pool_prefix_rule());
	hc = c->lg.hc;
	if (!join_access(c, &hc))
		return EXIT_FAILED;
	if (asked_file[0] && password_file_path(kept, sizeof(kept), ""))
		return pool_fail("--root: path too long");
	if (pool_join(&hc, c->text['e'], c->set['n'] ? c->text['n'] : NULL, prefix, asked_file[0] ? kept : NULL,
		      joined, why, sizeof(why)))
		return pool_fail(why);
	asked_file[0] = '\0';            /* kept under its own name */
	printf("host %s joined the pool at %s; start its agent: lodge pool-agent\n", joined, c->text['e']);
	return 0;
}

static void leave_progress(void *arg, const char *domain, const char *to, const char *failed)
{
	(void)arg;
	if (to)
		printf("migrated %s to %s\n", domain, to);
	else
		log_warn("%s cannot be migrated away: %s", domain, failed);
}

/* pool-leave: the domains this host owns migrated away first (README.md,
 * "Leaving"); refused if one could not be. */
int cmd_pool_leave(struct cli *c)
{
	char why[ETCD_WHY_MAX], left[DOMAIN_NAME_MAX];

	if (pool_leave(&c->lg.hc, leave_progress, NULL, left, why, sizeof(why)))
		return pool_fail(why);
	printf("host %s left the pool\n", left);
	return 0;
}

/* ---- pool-list -------------------------------------------------------------------------------- */

struct host_row {
	const struct pool_host *h;
	char domains[1024];
	unsigned long free_mib;
};

OUT_GETTER(get_host, struct host_row, out_str(v, r->h->name))
OUT_GETTER(get_state, struct host_row, out_str(v, pool_host_state_name(pool_host_state(r->h))))
OUT_GETTER(get_cpus, struct host_row, r->h->live ? out_uint(v, r->h->cpus) : out_null(v))
OUT_GETTER(get_total, struct host_row, r->h->live ? out_uint(v, r->h->mem_total_mib) : out_null(v))
OUT_GETTER(get_free, struct host_row, r->h->live ? out_uint(v, r->free_mib) : out_null(v))
OUT_GETTER(get_committed, struct host_row, out_uint(v, r->h->committed_mib))
OUT_GETTER(get_domains, struct host_row, out_list(v, r->domains))

static const struct out_col host_cols[] = {
	{ "Host", "host", -16, 0, 0, get_host, NULL },
	{ "State", "state", -8, 0, 0, get_state, NULL },
	{ "CPUs", "cpus", 4, 0, 0, get_cpus, NULL },
	{ "Mem(MiB)", "memory_mib", 9, 0, 0, get_total, NULL },
	{ "Free", "free_mib", 9, 0, 0, get_free, NULL },
	{ "Placed", "committed_mib", 9, 0, 0, get_committed, NULL },
	{ "Domains", "domains", -1, 0, OUT_GAP2, get_domains, NULL },
};

/* The pool as it is now read into V, and O begun with COLS: the start of
 * every table of the pool.  On an error nothing is left to free. */
static int view_begin(struct cli *c, struct pool_view *v, struct out *o, const struct out_col *cols, size_t ncols)
{
	char why[ETCD_WHY_MAX];
	struct pool p;
	int rc;

	if ((rc = pool_open(&p, &c->lg.hc, NULL, NULL, NULL, why, sizeof(why))))
		return pool_fail(why);
	rc = pool_view_read(&p, v, why, sizeof(why));
	if (rc == -ETIMEDOUT)
		pool_unanswered(&p, &c->lg.hc, why, sizeof(why));
	pool_close(&p);
	if (rc)
		return pool_fail(why);
	if ((rc = out_begin(o, c, cols, ncols)))
		pool_view_free(v);
	return rc;
}

int cmd_pool_list(struct cli *c)
{
	struct pool_view v;
	struct out o;
	unsigned i, k;
	int rc;

	if ((rc = view_begin(c, &v, &o, host_cols, OUT_NCOLS(host_cols))))
		return rc;
	for (i = 0; i < v.nhosts; i++) {
		struct host_row r = { .h = &v.host[i] };
		size_t n = 0;

		if (!v.host[i].member && !v.host[i].live)
			continue;
		/* What this host may still place: its memory less what is placed there. */
		r.free_mib = r.h->mem_total_mib > r.h->committed_mib ? r.h->mem_total_mib - r.h->committed_mib : 0;
		for (k = 0; k < v.ndomains; k++)
			if (strcmp(v.domain[k].placement, v.host[i].name) == 0 && n + DOMAIN_NAME_MAX + 2 < sizeof(r.domains))
				n += (size_t)snprintf(r.domains + n, sizeof(r.domains) - n, "%s%s", n ? "," : "",
						      v.domain[k].name);
		out_row(&o, &r);
	}
	out_end(&o);
	pool_view_free(&v);
	return 0;
}

/* lodge create NAME on a host of a pool: placed, then watched until its
 * host runs it; a start that failed there leaves nothing in the pool. */
int cmd_pool_create(struct cli *c)
{
	char why[ETCD_WHY_MAX], name[DOMAIN_NAME_MAX], host[DOMAIN_NAME_MAX], state[64], err[ETCD_WHY_MAX];
	struct pool p;
	int rc;

	if (c->set['p'] || c->set['c'])
		return cli_usage_error(c->cmd, "--paused and --console are not for a pool's domains");
	if ((rc = pool_open(&p, &c->lg.hc, NULL, NULL, NULL, why, sizeof(why))))
		return pool_fail(why);
	if ((rc = pool_domain_place(&p, &c->lg.hc, c->argv[0], c->set['O'] ? c->text['O'] : NULL, name, host, why,
				    sizeof(why)))) {
		if (rc == -ETIMEDOUT)
			pool_unanswered(&p, &c->lg.hc, why, sizeof(why));
		pool_close(&p);
		log_err("cannot place %s in the pool: %s", c->argv[0], why);
		return EXIT_FAILED;
	}
	rc = pool_domain_wait(&p, name, 60000, state, sizeof(state), why, sizeof(why));
	if (rc == -EIO && pool_domain_forget(&p, name, err, sizeof(err)))
		log_warn("%s", err);
	pool_close(&p);
	if (rc == -EIO) {
		log_err("%s cannot start on host %s: %s", name, host, why);
		return EXIT_FAILED;
	}
	if (rc) {
		log_err("%s is placed on host %s but %s", name, host,
			rc == -ETIMEDOUT ? "not running after 60 s (lodge list --pool)" : why);
		return EXIT_FAILED;
	}
	printf("%s runs on host %s\n", name, host);
	return 0;
}

/* A stop the pool could not record (POOL_STOP_HERE): a domain that runs
 * here is stopped here alone (-ENOENT: the caller's local way), as when
 * the host is in no pool: its agent, once it reaches etcd again, sees it
 * gone by a power-off or a destroy and records it stopped. */
static int stop_unrecorded(struct cli *c, int rc, const char *why)
{
	if (rc == POOL_STOP_HERE) {
		log_warn("%s", why);
		return -ENOENT;
	}
	if (rc == -ENOENT)
		return rc;
	return rc ? pool_fail(why) : 0;
}

/* lodge destroy NAME on a pool host: -ENOENT if the pool has no NAME
 * (destroyed here as a local one), else an exit status. */
int cmd_pool_destroy(struct cli *c)
{
	char why[ETCD_WHY_MAX];

	return stop_unrecorded(c, pool_stop_domain(&c->lg, c->argv[0], POOL_STOP_DESTROY, 30000, why, sizeof(why)),
			       why);
}

/* lodge shutdown NAME on a pool host: desired stopped in the pool first,
 * then its owner's agent asks the guest to power off (README.md,
 * "Stopping"); with --wait, until its host has let it go.  -ENOENT: not
 * the pool's (shut down here as a local one). */
int cmd_pool_shutdown(struct cli *c)
{
	unsigned wait_s = c->set['w'] ? (c->set['t'] ? (unsigned)c->num['t'] : CLI_WAIT_DEFAULT_S) : 0;
	char why[ETCD_WHY_MAX];

	return stop_unrecorded(c, pool_stop_domain(&c->lg, c->argv[0], POOL_STOP_SHUTDOWN, wait_s * 1000, why,
						   sizeof(why)), why);
}

/* lodge pool-forget NAME: a stopped domain's keys gone from the pool. */
int cmd_pool_forget(struct cli *c)
{
	char why[ETCD_WHY_MAX];
	struct pool p;
	int rc;

	if ((rc = pool_open(&p, &c->lg.hc, NULL, NULL, NULL, why, sizeof(why))))
		return pool_fail(why);
	rc = pool_domain_drop(&p, c->argv[0], why, sizeof(why));
	pool_close(&p);
	if (rc) {
		log_err("cannot forget %s: %s", c->argv[0], why);
		return EXIT_FAILED;
	}
	printf("%s is no longer in the pool\n", c->argv[0]);
	return 0;
}

/* lodge create --local NAME on a pool host: refused if the pool has a
 * domain of that name (its agent would take the local one for a stray
 * copy); 0 when the pool has none or cannot say (a warning: a local
 * domain must not need etcd). */
int cmd_pool_local_check(struct cli *c, const char *name)
{
	char why[ETCD_WHY_MAX];
	struct pool p;
	int rc;

	if ((rc = pool_open(&p, &c->lg.hc, NULL, NULL, NULL, why, sizeof(why))) == 0) {
		rc = pool_domain_known(&p, name, why, sizeof(why));
		pool_close(&p);
	}
	if (rc < 0) {
		log_warn("cannot ask the pool whether it has a domain %s: %s", name, why);
		return 0;
	}
	if (rc) {
		log_err("the pool has a domain %s: a local one of that name would be taken for its copy", name);
		return -EEXIST;
	}
	return 0;
}

/* lodge rename on a pool host: a pool domain keeps its name (the pool's
 * keys and every host's agent know it by that name), and a local one
 * takes no name the pool has (cmd_pool_local_check). */
int cmd_pool_rename_check(struct cli *c, const char *old, const char *new_name)
{
	char why[ETCD_WHY_MAX];
	struct pool p;
	int rc;

	if ((rc = pool_open(&p, &c->lg.hc, NULL, NULL, NULL, why, sizeof(why))) == 0) {
		rc = pool_domain_known(&p, old, why, sizeof(why));
		pool_close(&p);
	}
	if (rc < 0) {
		log_err("cannot ask the pool whether %s is its domain: %s", old, why);
		return rc;
	}
	if (rc) {
		log_err("%s is the pool's domain: it keeps its name (the pool and its hosts know it by it)", old);
		return -EBUSY;
	}
	return cmd_pool_local_check(c, new_name);
}

/* lodge migrate NAME HOST of a pool domain: its owner's agent moves it
 * and hands ownership over (src/pool/README.md); -ENOENT: not the
 * pool's (migrated as a local domain). */
static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int cmd_pool_migrate(struct cli *c)
{
	char why[ETCD_WHY_MAX], from[DOMAIN_NAME_MAX];
	const char *name = c->argv[0], *to = c->argv[1];
	uint64_t t0 = now_ms();
	struct pool p;
	int rc;

	if ((rc = pool_open(&p, &c->lg.hc, NULL, NULL, NULL, why, sizeof(why))))
		return pool_fail(why);
	if ((rc = pool_domain_migrate(&p, name, to, from, why, sizeof(why))) == 0)
		rc = pool_migrate_wait(&p, name, to, 120000, why, sizeof(why));
	pool_close(&p);
	if (rc == -ENOENT)
		return rc;
	if (rc)
		return pool_fail(why);
	printf("migrated %s from %s to %s in %llu ms\n", name, from, to, (unsigned long long)(now_ms() - t0));
	return 0;
}

/* lodge list --pool: every domain of the pool with its host. */
int cmd_pool_domains(struct cli *c)
{
	char why[ETCD_WHY_MAX];
	struct pool_domains d;
	struct out o;
	size_t i;
	int rc;

	if (pool_domains(&c->lg.hc, &d, why, sizeof(why)))
		return pool_fail(why);
	if ((rc = out_begin(&o, c, pool_list_cols, pool_list_ncols))) {
		pool_domains_free(&d);
		return rc;
	}
	for (i = 0; i < d.n; i++)
		out_row(&o, &d.row[i]);
	out_end(&o);
	pool_domains_free(&d);
	return 0;
}

/* pool-agent: this host's agent, in the foreground (lodge-pool.service). */
int cmd_pool_agent(struct cli *c)
{
	char why[ETCD_WHY_MAX];
	struct pool p;
	int rc;

	log_set_timestamps(true);
	if ((rc = pool_timing_check(&c->lg.hc, why, sizeof(why))) ||
	    (rc = pool_open(&p, &c->lg.hc, NULL, NULL, NULL, why, sizeof(why))))
		return pool_fail(why);
	rc = pool_agent_run(&c->lg, &p, why, sizeof(why));
	pool_close(&p);
	return rc ? pool_fail(why) : 0;
}
