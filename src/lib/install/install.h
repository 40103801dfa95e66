/* Private to liblodge: what templates, clones and installs share beneath
 * lodge.h (template-src.c, template.c, clone.c, clone-fs.c, install.c). */
#ifndef LODGE_INSTALL_H
#define LODGE_INSTALL_H

#include "internal.h"
#include "mkdirs.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- a job's progress (install.c) ---------------------------------------------------- */

#define PHASE_BIT(p) (1u << (p))
#define JOB_TEMPLATE_PHASES (PHASE_BIT(LODGE_PHASE_UPDATE) | PHASE_BIT(LODGE_PHASE_FETCH) | \
			     PHASE_BIT(LODGE_PHASE_UNPACK) | PHASE_BIT(LODGE_PHASE_CONFIGURE) | \
			     PHASE_BIT(LODGE_PHASE_INSTALL) | PHASE_BIT(LODGE_PHASE_IMAGE))

struct job {
	lodge_job_fn *fn;              /* NULL: nobody listens, nothing cancels */
	void *arg;
	unsigned phases;               /* PHASE_BITs of what this job does: the whole of its percent */
	enum lodge_phase phase;
	int phase_pct;
	bool cancelled;
	long last_ms;                  /* the last report */
};
void job_init(struct job *j, unsigned phases, lodge_job_fn *fn, void *arg);
/* The job is at phase, pct of it (-1: unknown), with a note to show (or
 * NULL): false once the listener has cancelled it. */
bool job_report(struct job *j, enum lodge_phase phase, int pct, const char *note);
/* The same phase again, reported at most 5 times a second: a tool's tick
 * (tool.h; arg is the job). */
bool job_tick(void *job);
/* -ECANCELED with the message a cancelled job gives. */
int job_cancelled(struct lodge_err *err);

/* ---- distributions and the mmdebstrap command (template-src.c) ------------------------ */

struct dist_info {
	const char *name;              /* bookworm */
	const char *version;           /* 12 */
	const char *packages;          /* what the template has beyond apt's variant, comma-separated */
};
/* The distribution of that name, or NULL. */
const struct dist_info *dist_find(const char *name);
/* The known ones in words: "bullseye, bookworm, trixie". */
const char *dist_known(void);
/* This host's Debian architecture (amd64): the templates' (a guest runs
 * on the host's own kind of CPU). */
const char *host_arch(void);

#define TEMPLATE_ARGS_MAX 48
struct template_cmd {
	const char *argv[TEMPLATE_ARGS_MAX];
	unsigned argc;
	char store[16384];             /* the arguments' text */
	size_t used;
};
/* The mmdebstrap command line that builds dist into target, its packages
 * kept in cache, from mirror (lodge.conf's template_mirror; "" or NULL:
 * the host's apt sources): 0, or -errno with why. */
int template_cmd(struct template_cmd *c, const struct dist_info *dist, const char *target, const char *cache,
		 const char *mirror, char *why, size_t whylen);

/* ---- templates (template.c) ------------------------------------------------------------- */

/* ROOT/var/lib/lodge/templates and ROOT/var/cache/lodge: 0, -ENAMETOOLONG. */
int template_dir(char *out, size_t len);
int template_cache_dir(char *out, size_t len);
/* dist's template, built first if there is none (built says whether). */
int template_ensure(const struct lodge *lg, const char *dist, struct job *j, struct lodge_template *t, bool *built,
		    struct lodge_err *err);
/* Remove a directory tree, never crossing into another filesystem (a
 * mount left in a chroot): 0 or -errno. */
int remove_tree(const char *path);

/* ---- clones (clone.c, clone-fs.c) ------------------------------------------------------- */

struct clone_target {
	char path[CFG_PATH_MAX];       /* the file to make (it must not exist), or the block device */
	bool partition;                /* a block device, written whole */
	uint64_t bytes;                /* the disk's size */
	int fd;                        /* a file's unnamed copy until clone_commit; -1 */
	bool written;                  /* a partition's first byte has been written */
	char fs_path[64 + CFG_PATH_MAX];   /* what the tools open */
	char uuid[37];                 /* out: the new filesystem's */
};
/* Why path may not take a clone of t (not written yet): a partition that
 * is taken (lodge_disk_taken: mounted, held, a running domain's) or
 * smaller than the template, a file that exists, a directory missing
 * (unless dir_made_later), a size below the template's.  Fills c. */
int clone_check(const struct lodge *lg, const struct lodge_template *t, const char *path, uint64_t size,
		bool dir_made_later, struct clone_target *c, struct lodge_err *err);
/* The template onto the disk, grown to its size, a fresh UUID, fstab, no
 * machine-id and no ssh host keys.  A file stays unnamed. */
int clone_make(const struct lodge_template *t, struct clone_target *c, struct job *j, struct lodge_err *err);
/* Name the file (never over another): 0 or -errno. */
int clone_commit(struct clone_target *c, struct lodge_err *err);
/* Undo: a file's copy is dropped, a partition's filesystem wiped so no
 * half-made one is ever mounted; a named file is removed. */
void clone_abandon(struct clone_target *c, bool named);

/* clone-fs.c: inside the clone's filesystem, through libext2fs (no
 * mount): its UUID into uuid; /etc/fstab names it as /; /etc/machine-id
 * empty; no /etc/ssh/ssh_host_* (the guest makes its own at first boot). */
int clone_fs_customize(const char *fs_path, bool exclusive, char uuid[37], char *why, size_t whylen);

#endif
