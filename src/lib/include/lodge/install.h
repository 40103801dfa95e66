/* liblodge: debian guests: templates, installs and their seeds. */
#ifndef LODGE_API_INSTALL_H
#define LODGE_API_INSTALL_H

#include "lodge/handle.h"
#include "lodge/network.h"

/* ---- Debian guests: templates and installs (template.c, clone.c, install.c) ---------------- */

/* A guest is a clone of a template: one ext4 image per distribution and
 * architecture (DIST-ARCH.img under ROOT/var/lib/lodge/templates), built
 * once by mmdebstrap from the host's apt sources (their Debian entries,
 * the suite made DIST's), its downloaded packages kept under
 * ROOT/var/cache/lodge so a rebuild fetches nothing it has.  A template
 * is there only whole: built under a temporary name and renamed. */
#define LODGE_DIST_DEFAULT "bookworm"
#define LODGE_DIST_MAX     32

enum lodge_phase {
	LODGE_PHASE_CHECK,             /* the input checked: nothing written yet */
	LODGE_PHASE_UPDATE,            /* template: the package lists fetched (apt-get update) */
	LODGE_PHASE_FETCH,             /* template: the essential packages fetched */
	LODGE_PHASE_UNPACK,            /* template: ... unpacked */
	LODGE_PHASE_CONFIGURE,         /* template: ... configured */
	LODGE_PHASE_INSTALL,           /* template: the rest (kernel, ssh, cloud-init) fetched and installed */
	LODGE_PHASE_IMAGE,             /* template: its ext4 image made */
	LODGE_PHASE_CLONE,             /* the template copied onto the disk */
	LODGE_PHASE_FILESYSTEM,        /* the copy grown to the disk, a fresh UUID, fstab */
	LODGE_PHASE_SEED,              /* the cloud-init seed disk */
	LODGE_PHASE_CONFIG,            /* the domain's config */
	LODGE_PHASE_DONE,
	LODGE_NPHASES
};
/* The phase in words: "fetching packages". */
const char *lodge_phase_words(enum lodge_phase p);

struct lodge_job_progress {
	enum lodge_phase phase;
	int phase_pct;                 /* of the phase, 0-100; -1 unknown */
	int pct;                       /* of the whole job, 0-100 (the dashboard's "installing 42%") */
	const char *note;              /* NULL, or a warning of mmdebstrap's to show as it is */
};
/* Called as a job moves, and at least every 200 ms while it runs: false
 * cancels it (the job then undoes what it made and returns -ECANCELED). */
typedef bool lodge_job_fn(const struct lodge_job_progress *p, void *arg);

struct lodge_template {
	char name[LODGE_DIST_MAX + 16];        /* bookworm-amd64 */
	char dist[LODGE_DIST_MAX], arch[16];
	char path[CFG_PATH_MAX];       /* its image */
	uint64_t bytes;                /* its filesystem's size: the smallest disk a clone fits on */
	uint64_t used_bytes;           /* what the image holds (it is sparse) */
	char kernel[64];               /* the kernel's version, e.g. 6.1.0-28-cloud-amd64 */
	long long built;               /* when (Unix time); 0 unknown */
	long build_s;                  /* how long the build took */
};

/* Every template, sorted by name, into out[max]: how many there are (may
 * exceed max), or -errno. */
int lodge_template_list(const struct lodge *lg, struct lodge_template *out, unsigned max, struct lodge_err *err);
/* DIST's template for this host's architecture: 0, -ENOENT if there is
 * none yet, -EINVAL for a distribution Lodge does not know. */
int lodge_template_get(const struct lodge *lg, const char *dist, struct lodge_template *t, struct lodge_err *err);
/* Build DIST's template anew (root only: mmdebstrap's root mode) and put
 * it in place of the old one, which clones under way keep reading.  fn
 * (may be NULL) hears the phases update to image.  0 with *t. */
int lodge_template_update(const struct lodge *lg, const char *dist, lodge_job_fn *fn, void *arg,
			  struct lodge_template *t, struct lodge_err *err);
/* The mmdebstrap command line a build of DIST runs, one argument a line,
 * quoted as for a shell (lodge template-update --dry-run). */
int lodge_template_command(const struct lodge *lg, const char *dist, char *buf, size_t len, struct lodge_err *err);
int lodge_template_delete(const struct lodge *lg, const char *dist, struct lodge_err *err);

#define LODGE_INSTALL_SIZE_DEFAULT (2ull << 30)
/* A size as a person types it: a number with an optional unit (b, k, m,
 * g, t; none: MiB), a whole number of MiB: 0 with *mib, or -EINVAL. */
int lodge_parse_mib(const char *text, unsigned long *mib);
#define LODGE_INSTALL_MEMORY_DEFAULT 512      /* MiB: cloud-init and apt want more than Mini-OS */

struct lodge_install_opts {
	const char *name;              /* the new domain's */
	const char *dist;              /* NULL: LODGE_DIST_DEFAULT */
	uint64_t size;                 /* a file disk's bytes; 0: LODGE_INSTALL_SIZE_DEFAULT */
	const char *disk;              /* NULL: image_dir/NAME.img; a new file, or a block device
					* (a partition), which is written whole */
	unsigned memory_mib, vcpus;    /* 0: the defaults */
	const char *bridge;            /* an existing bridge; NULL: a network */
	const char *network;           /* an existing Lodge network; NULL with no bridge:
					* LODGE_NETWORK_DEFAULT, made on first use */
	/* The guest's own settings, for its cloud-init seed disk. */
	const char *packages;          /* "a,b" */
	const char *ssh_key_file, *password_file, *user_data_file;
	bool dry_run;                  /* check and say what would be done; write nothing */
	lodge_job_fn *progress;        /* NULL: none */
	void *arg;
};
struct lodge_install_result {
	char config[CFG_PATH_MAX];     /* the domain's config */
	char disk[CFG_PATH_MAX];
	char seed[CFG_PATH_MAX];       /* "" if none */
	uint64_t disk_bytes;
	char uuid[37];                 /* its root filesystem's */
	bool is_partition;
	struct lodge_template tmpl;
	bool template_built;           /* the template was built first (or would be, dry run) */
	long template_ms, clone_ms, total_ms;
	char config_text[4096];        /* what the config says */
	struct lodge_network_default net;   /* with neither bridge nor network: the default network */
};
/* Install a Debian guest: its disk (a clone of DIST's template, built
 * first if there is none) and its config, bootloader = "lodge".  Every
 * check comes before anything is written; the disk, the seed and the
 * config appear only once all are whole, and a failure or a cancel
 * leaves none of them (a partition is left without a filesystem).  0 with
 * *res, or -errno with why.  It returns when done (minutes for a first
 * install, seconds after): a face with a main loop of its own runs it in
 * a child process, its progress hook writing to a pipe. */
int lodge_install(const struct lodge *lg, const struct lodge_install_opts *o, struct lodge_install_result *res,
		  struct lodge_err *err);

#endif
