/* xl rename (lodge.h): a domain's name changed, running or not.  A
 * running domain is found by its runtime directory's name (RUNDIR/NAME,
 * whose control socket every face connects to): that directory is moved in
 * one rename under RUNDIR's lock, which every start and end takes, so a
 * face sees the old name or the new, never both or neither.  Its cgroup
 * beside it, its runtime config's name key and its config file in
 * domains_dir follow; lodge-hyp is told last (rename NAME, proto.h), and
 * any step that fails puts back the ones before it. */
#include "config.h"
#include "internal.h"
#include "runtime.h"
#include "schema.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The cgroup directory a running domain's runtime directory names (its
 * cgroup file, written by lodge-hyp), if it ends in /name: into out, 1;
 * 0 if it has none of that name. */
static int cgroup_of(const char *dir, const char *name, char *out, size_t len)
{
	char path[4200];
	size_t n, at;
	FILE *f;

	if (runtime_file_path(path, sizeof(path), dir, RT_CGROUP) || !(f = fopen(path, "re")))
		return 0;
	if (!fgets(out, (int)len, f))
		out[0] = '\0';
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
	n = strlen(out);
	at = n - strlen(name);
	return n > strlen(name) && out[at - 1] == '/' && strcmp(out + at, name) == 0;
}

/* The cgroup file of dir rewritten to name cgroup (root's only, as
 * lodge-hyp writes it): 0 or -errno. */
static int cgroup_note(const char *dir, const char *cgroup)
{
	char path[4200];
	FILE *f;
	int fd;

	runtime_file_path(path, sizeof(path), dir, RT_CGROUP);
	if ((fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)) < 0)
		return -errno;
	if (!(f = fdopen(fd, "w"))) {
		close(fd);
		return -ENOMEM;
	}
	fprintf(f, "%s\n", cgroup);
	return fclose(f) ? -errno : 0;
}

/* What moved, so that a later failure puts it back. */
struct moved {
	char from_dir[4200], to_dir[4200];
	char from_cg[4200], to_cg[4200];
	bool dir, cg;
};

static void move_back(struct moved *m)
{
	if (m->cg && rename(m->to_cg, m->from_cg) == 0)
		cgroup_note(m->dir ? m->to_dir : m->from_dir, m->from_cg);
	if (m->dir)
		rename(m->to_dir, m->from_dir);
	m->cg = m->dir = false;
}

/* The running domain old becomes new: its runtime directory and cgroup
 * moved, then its lodge-hyp told.  RUNDIR locked by the caller. */
static int move_running(const struct lodge *lg, const char *old, const char *new_name, struct moved *m,
			struct lodge_err *err)
{
	char sock[4300], cg_dir[4200], req[24 + DOMAIN_NAME_MAX];
	struct reply r;
	int rc;

	memset(m, 0, sizeof(*m));
	if (runtime_dir_path(m->from_dir, sizeof(m->from_dir), lg->hc.runtime_dir, old) ||
	    runtime_dir_path(m->to_dir, sizeof(m->to_dir), lg->hc.runtime_dir, new_name))
		return lodge_fail(err, -ENAMETOOLONG, "%s/%s: path too long", lg->hc.runtime_dir, new_name);
	/* A directory a dead domain left under the new name goes first, as
	 * lodge list would remove it; a live one's was refused before. */
	runtime_file_path(sock, sizeof(sock), m->to_dir, RT_CONTROL);
	if (access(m->to_dir, F_OK) == 0) {
		if (runtime_socket_live(sock))
			return lodge_fail(err, -EEXIST, "a domain named %s is running", new_name);
		if ((rc = runtime_dir_remove(m->to_dir)) && rc != -ENOENT)
			return lodge_fail(err, rc, "cannot remove %s, left by a domain that ended: %s", m->to_dir,
					  strerror(-rc));
	}
	if (renameat2(AT_FDCWD, m->from_dir, AT_FDCWD, m->to_dir, RENAME_NOREPLACE)) {
		rc = -errno;
		return lodge_fail(err, rc, "cannot rename %s to %s: %s", m->from_dir, m->to_dir, strerror(-rc));
	}
	m->dir = true;
	if (cgroup_of(m->to_dir, old, cg_dir, sizeof(cg_dir))) {
		snprintf(m->from_cg, sizeof(m->from_cg), "%s", cg_dir);
		snprintf(m->to_cg, sizeof(m->to_cg), "%.*s%s", (int)(strlen(cg_dir) - strlen(old)), cg_dir, new_name);
		/* cgroupfs takes no RENAME_NOREPLACE: looked at first (another
		 * root's domain of that name has a parent of its own). */
		if (access(m->to_cg, F_OK) == 0) {
			move_back(m);
			return lodge_fail(err, -EEXIST, "cannot rename domain %s: cgroup %s exists already", old,
					  m->to_cg);
		}
		if (rename(m->from_cg, m->to_cg) == 0) {
			m->cg = true;
		} else if (errno == EPERM || errno == EINVAL || errno == EOPNOTSUPP) {
			/* cgroup v2 renames no cgroup: it keeps the old name, and
			 * lodge-hyp keeps using it (it follows only a cgroup that
			 * moved). */
			lodge_warn(lg, "domain %s's cgroup keeps its old name %s (this cgroup hierarchy renames none): "
				   "a new domain named %s cannot use its own until %s ends", new_name, m->from_cg, old,
				   new_name);
		} else {
			rc = -errno;
			move_back(m);
			return lodge_fail(err, rc, "cannot rename cgroup %s to %s: %s", m->from_cg, m->to_cg,
					  strerror(-rc));
		}
		if (m->cg && (rc = cgroup_note(m->to_dir, m->to_cg))) {
			move_back(m);
			return lodge_fail(err, rc, "cannot note domain %s's cgroup: %s", new_name, strerror(-rc));
		}
	}
	snprintf(req, sizeof(req), "%s %s%s", proto_command_rule(PROTO_RENAME)->name, new_name, m->cg ? " cgroup" : "");
	rc = lodge_ask_name(lg, new_name, req, false, &r, err);
	if (rc) {
		char why[sizeof(err->msg)];

		snprintf(why, sizeof(why), "%s", rc == -EPROTO ? r.error : err->msg);
		move_back(m);
		return lodge_fail(err, rc, "cannot rename domain %s: %s", old, why);
	}
	return 0;
}

/* Its runtime config's name key: what a save's header and lodge config
 * read.  0 or -errno with err. */
static int runtime_config_rename(const struct lodge *lg, const char *new_name, struct lodge_err *err)
{
	static struct domain_config dc;
	char path[4300], why[512];
	int rc;

	if ((rc = lodge_runtime_config(lg, new_name, &dc, err)))
		return rc;
	snprintf(dc.name, sizeof(dc.name), "%s", new_name);
	runtime_path(path, sizeof(path), lg->hc.runtime_dir, new_name, RT_CONFIG);
	if ((rc = lodge_keep_config(lg, path, &dc, why, sizeof(why))))
		return lodge_fail(err, rc, "cannot rewrite %s: %s", path, why);
	return 0;
}

int lodge_rename(const struct lodge *lg, const char *domain, const char *new_name, struct lodge_err *err)
{
	static struct domain_config dc;
	char path[CFG_PATH_MAX + 80], new_path[CFG_PATH_MAX + 80], msg[LODGE_ERR_MAX], over[DOMAIN_NAME_MAX + 16];
	char old[DOMAIN_NAME_MAX], *overrides[1] = { over }, *text = NULL;
	struct lodge_status st;
	struct moved m = { .dir = false };
	bool running, file;
	size_t len = 0;
	int rc, lock = -1;

	/* A running domain by its name or ID; else the config's name. */
	running = lodge_resolve(lg, domain, old, err) == 0 && lodge_status_of(lg, old, &st) == 0;
	if (!running)
		snprintf(old, sizeof(old), "%s", domain);
	if ((rc = lodge_config_path(lg, old, path, sizeof(path), err)) ||
	    (rc = lodge_config_path(lg, new_name, new_path, sizeof(new_path), err)))
		return rc;
	if (strcmp(old, new_name) == 0)
		return lodge_fail(err, -EINVAL, "domain %s is called %s already", old, new_name);
	if (lodge_status_of(lg, new_name, &st) == 0)
		return lodge_fail(err, -EEXIST, "a domain named %s is running", new_name);
	if (access(new_path, F_OK) == 0)
		return lodge_fail(err, -EEXIST, "a domain named %s is defined: %s exists already", new_name, new_path);
	file = access(path, F_OK) == 0;
	if (!running && !file)
		return lodge_fail(err, -ENOENT, "domain %s is not running and has no config in %s", old,
				  lg->hc.domains_dir);
	if (file) {
		/* Read and checked before anything changes. */
		snprintf(over, sizeof(over), "name = \"%s\"", new_name);
		rc = domain_config_load_overrides(path, overrides, 1, &lg->hc, false, &dc, &text, &len, msg,
						  sizeof(msg));
		if (rc)
			return lodge_fail(err, rc < 0 ? rc : -EINVAL, "%s", msg);
	}
	if (running) {
		/* No start or end of a domain meanwhile: the new name stays
		 * free, and the old directory is not removed under us. */
		if ((lock = runtime_lock(lg->hc.runtime_dir)) < 0) {
			free(text);
			return lodge_fail(err, lock, "cannot lock %s: %s", lg->hc.runtime_dir, strerror(-lock));
		}
		if (lodge_status_of(lg, new_name, &st) == 0)
			rc = lodge_fail(err, -EEXIST, "a domain named %s is running", new_name);
		else
			rc = move_running(lg, old, new_name, &m, err);
		if (rc == 0 && (rc = runtime_config_rename(lg, new_name, err)))
			lodge_warn(lg, "domain %s: %s (lodge config shows its old name)", new_name, err->msg), rc = 0;
	}
	/* The new file first (never over another's), then the old one goes. */
	if (rc == 0 && file && (rc = lodge_config_write(new_path, text, len, true, err)) == 0 && unlink(path)) {
		rc = -errno;
		unlink(new_path);
		lodge_fail(err, rc, "cannot remove %s: %s", path, strerror(-rc));
	}
	if (rc && m.dir) {
		/* put back what moved; lodge-hyp told its old name again */
		char req[24 + DOMAIN_NAME_MAX];
		struct lodge_err ignored;
		struct reply r;
		bool cg = m.cg;

		move_back(&m);
		snprintf(req, sizeof(req), "%s %s%s", proto_command_rule(PROTO_RENAME)->name, old, cg ? " cgroup" : "");
		lodge_ask_name(lg, old, req, false, &r, &ignored);
		runtime_config_rename(lg, old, &ignored);
	}
	if (lock >= 0)
		close(lock);
	free(text);
	return rc;
}
