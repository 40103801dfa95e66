/* liblodge: save, restore and migrate. */
#ifndef LODGE_API_MIGRATE_H
#define LODGE_API_MIGRATE_H

#include "lodge/handle.h"
#include "lodge/domain.h"

/* ---- save, restore, migrate --------------------------------------------------------------- */

/* Where a long job is: a migration's pre-copy rounds (round > 0 once
 * the first whole pass is done: round, pages, dirty, rate_kib), or the
 * bytes of a saved file written or read so far (bytes, of total if
 * known, and rate_kib). */
struct lodge_progress {
	unsigned round;
	uint64_t pages, dirty, rate_kib;
	uint64_t bytes, total;
};
typedef void lodge_progress_fn(const struct lodge_progress *p, void *arg);

struct lodge_save_opts {
	bool compress;                 /* bzip2 */
	bool keep;                     /* the domain runs on (else it ends once the file is safe) */
	lodge_progress_fn *progress;   /* NULL: none */
	void *arg;
};
struct lodge_save_result {
	char name[DOMAIN_NAME_MAX];
	uint64_t file_bytes;
	long ms;
};
/* Save DOMAIN to file: made unnamed and named only once whole and on
 * disk, so a failed or killed save leaves no file and the domain runs on. */
int lodge_save(const struct lodge *lg, const char *domain, const char *file, const struct lodge_save_opts *o,
	       struct lodge_save_result *res, struct lodge_err *err);

/* xl dump-core: DOMAIN's RAM and vCPU registers as an ELF core file
 * (gdb, crash(8)) at file, made with the caller's rights and named only
 * once whole; the guest is paused meanwhile and runs on after. */
int lodge_dump_core(const struct lodge *lg, const char *domain, const char *file, struct lodge_err *err);

struct lodge_restore_opts {
	bool paused;
	lodge_progress_fn *progress;
	void *arg;
};
struct lodge_restore_result {
	char name[DOMAIN_NAME_MAX];
	long ms;
};
/* Bring a saved domain back (a bzip2'd file too).  Whoever wrote the file
 * chose every path in it: the domain may use only what this host lends
 * (incoming.h). */
int lodge_restore(const struct lodge *lg, const char *file, const struct lodge_restore_opts *o,
		  struct lodge_restore_result *res, struct lodge_err *err);

struct lodge_migrate_opts {
	const char *secret_file;       /* NULL: lodge.conf's migration_secret_file */
	lodge_progress_fn *progress;
	void *arg;
};
struct lodge_migrate_result {
	char name[DOMAIN_NAME_MAX];
	char peer[CFG_PATH_MAX + 16];  /* where it went, as the user wrote it */
	long ms;
	uint64_t downtime_us, total_us, pages, bytes;
	unsigned rounds;
};
/* Move DOMAIN, live, to dest: HOST[:PORT] (TCP, the shared secret
 * required) or a Unix socket path (unix:PATH or one with a '/').  It
 * runs on here unless this returns 0.  -EINVAL: dest is neither. */
int lodge_migrate(const struct lodge *lg, const char *domain, const char *dest, const struct lodge_migrate_opts *o,
		  struct lodge_migrate_result *res, struct lodge_err *err);

/* The receiving end: a listener, each connection served in a child of
 * its own with deadlines, the number at once capped.  What happens goes
 * to the event hook, in the listener's process. */
enum lodge_recv_event {
	LODGE_RECV_RECEIVED,           /* name runs here now, from peer */
	LODGE_RECV_WARNING,            /* text: a peer refused before it authenticated, or turned away */
	LODGE_RECV_ERROR,              /* text: an authenticated peer's domain refused, or a start failed */
	LODGE_RECV_HYP,                /* text: what lodge-hyp wrote starting it, its own prefix and all */
};
struct lodge_receiver;
struct lodge_receiver_opts {
	const char *listen;            /* ADDR:PORT or a Unix socket; NULL: lodge.conf's, or
					* without a secret the root-only socket in the runtime dir */
	const char *secret_file;       /* NULL: lodge.conf's */
	bool once;                     /* return after the first authenticated peer */
	void (*event)(enum lodge_recv_event e, const char *name, const char *peer, const char *text, void *arg);
	void *arg;
};
/* Listen: 0 with *out, and where it listens in words ("PATH (root only)"),
 * or -errno (-EINVAL: a listen address that is not one). */
int lodge_receiver_open(const struct lodge *lg, const struct lodge_receiver_opts *o, struct lodge_receiver **out,
			char *where, size_t wherelen, struct lodge_err *err);
/* Serve until an error (-errno with why), or with once until the first
 * authenticated peer is served: 0 if its domain runs here, else -EIO
 * with err->msg empty (the events said why). */
int lodge_receiver_run(struct lodge_receiver *r, struct lodge_err *err);
void lodge_receiver_close(struct lodge_receiver *r);

#endif
