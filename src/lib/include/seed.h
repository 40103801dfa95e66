/* A guest's own settings as a cloud-init NoCloud seed: a small read-only
 * disk labelled cidata (vfat, made with mkfs.vfat and mcopy) holding
 * meta-data (instance-id, local-hostname) and user-data (ssh keys, a
 * password hash, packages, and the user's own #cloud-config).  `lodge
 * install` attaches it as the guest's second disk; `lodge seed` makes one
 * on its own.
 *
 * Every input is checked here, before anything is written: a hostname by
 * RFC 1123, package names by Debian policy, each key line as OpenSSH
 * reads it (a private key is refused), the user's user-data as a single
 * YAML mapping after a #cloud-config line.  Lodge's YAML is written by
 * libyaml with every value double-quoted and every byte outside printable
 * ASCII escaped.  The password is read into a buffer of our own, hashed
 * with yescrypt (libxcrypt) and wiped: only its hash is ever written.
 *
 * The user's user-data is merged as cloud-init merges: user-data is then
 * a MIME multipart of two text/cloud-config parts, the user's file byte
 * for byte (base64) and then Lodge's, whose Merge-Type
 * (SEED_MERGE_TYPE) appends Lodge's lists to the user's (both files' keys
 * and packages are kept) and recurses into mappings, keeping the user's
 * value where both set one.  Re-serialising the user's YAML ourselves
 * would lose its anchors, tags and comments and duplicate cloud-init's
 * merger; a multipart is what cloud-init's own `devel make-mime` writes. */
#ifndef LODGE_SEED_H
#define LODGE_SEED_H

#include <stdbool.h>
#include <stddef.h>

#include "lodge.h"

#define SEED_HOSTNAME_MAX    253          /* RFC 1123, dots included */
#define SEED_LABEL_MAX       63           /* one label of a hostname */
#define SEED_PACKAGES_MAX    256          /* packages in one seed */
#define SEED_PACKAGE_MAX     128          /* bytes of one NAME[=VERSION] */
#define SEED_KEYS_MAX        64           /* ssh keys in one file */
#define SEED_KEY_FILE_MAX    (256 * 1024) /* bytes of --ssh-key FILE */
#define SEED_KEY_LINE_MAX    16384        /* one key line (an RSA-16384 certificate fits) */
#define SEED_PASSWORD_MAX    512          /* bytes of the password */
#define SEED_USER_DATA_MAX   (1024 * 1024)/* bytes of the user's user-data */
#define SEED_INSTANCE_ID_MAX (DOMAIN_NAME_MAX + 20)   /* NAME-16 hex digits */
#define SEED_LABEL           "cidata"     /* NoCloud's volume label */
#define SEED_VDEV            "vdb"        /* the guest's second disk */
#define SEED_DEFAULT_USER    "debian"     /* cloud.cfg's default_user in Debian's cloud-init */
#define SEED_MERGE_TYPE      "list(append)+dict(no_replace,recurse_list)+str()"

struct lodge_seed_result {
	char instance_id[SEED_INSTANCE_ID_MAX];
	unsigned nkeys, npackages;
	bool password, user_data;      /* a password hash, the user's user-data are in it */
	bool schema_checked;           /* cloud-init schema found every part valid */
	char schema_note[160];         /* "checked with cloud-init schema", or why not */
};

struct lodge_seed {
	const char *name;              /* the domain's: the instance-id's start */
	const char *hostname;          /* NULL: name (if it is a valid hostname) */
	const char *instance_id;       /* NULL: fresh, NAME-<16 random hex digits> */
	const char *ssh_key_file;      /* OpenSSH public keys, one a line; NULL: none */
	const char *password_file;     /* its one line is the password; NULL: none */
	const char *packages;          /* "a,b" (NAME or NAME=VERSION); NULL: none */
	const char *user_data_file;    /* the user's own #cloud-config; NULL: none */
	bool no_schema_check;          /* do not run cloud-init schema even if it is installed */
	struct lodge_seed_result *result;   /* NULL: not wanted; filled on success */
};

/* Write the seed disk for s at out_path: made unnamed in out_path's
 * directory and named (replacing a regular file there) only once whole
 * and on disk, so a failure or a kill leaves nothing.  0, or -errno with
 * the one reason in err: -EINVAL for a bad setting (its file and line
 * named), -ENOENT for a tool not installed, -EIO for one that failed
 * (its own words). */
int lodge_seed_build(const struct lodge_seed *s, const char *out_path, struct lodge_err *err);

/* The same, left unnamed for a caller that names it only once all else
 * it makes is whole (lodge install: disk, seed and config appear
 * together): 0 with *fd the finished seed, an O_TMPFILE file in
 * out_path's directory, fsynced, which lodge_seed_name names out_path
 * (replacing a regular file there); closing fd unnamed drops it. */
int lodge_seed_build_fd(const struct lodge_seed *s, const char *out_path, int *fd, struct lodge_err *err);
int lodge_seed_name(int fd, const char *out_path, struct lodge_err *err);

/* Every check lodge_seed_build makes, cloud-init schema included, and
 * nothing written (install --dry-run, a form): 0 with s->result filled
 * (its instance-id one a build would not reuse), or -errno with err. */
int lodge_seed_check(const struct lodge_seed *s, struct lodge_err *err);

/* Where a domain's seed goes: IMAGE_DIR/NAME-seed.img.  0, -EINVAL for a
 * name that is not a domain name, -ENAMETOOLONG. */
int lodge_seed_path(const struct lodge *lg, const char *name, char *out, size_t len, struct lodge_err *err);

/* The config's disk line for the seed at path, read-only, as vdev (NULL:
 * SEED_VDEV): "file:PATH,vdb,r".  -EINVAL for a path a disk line cannot
 * hold (a ',' or '=', a control character, not absolute). */
int lodge_seed_disk_line(const char *path, const char *vdev, char *out, size_t len, struct lodge_err *err);

/* ---- the seed's text (seed.c), for seed-disk.c and the unit tests ---------------------- */

struct seed_text {
	char *user_data, *meta_data;   /* malloc'd, NUL-terminated */
	size_t user_data_len, meta_data_len;
	/* For cloud-init schema, which reads one #cloud-config at a time:
	 * Lodge's part and the user's (NULL without --user-data), pointing
	 * into bufs of their own. */
	char *lodge_part, *user_part;
	size_t lodge_part_len, user_part_len;
	struct lodge_seed_result res;
};
/* Check every setting and write the seed's files in memory: 0, or -errno
 * with err. */
int seed_text_make(const struct lodge_seed *s, struct seed_text *t, struct lodge_err *err);
void seed_text_free(struct seed_text *t);

/* The rules, for the faces' forms and the tests: true if valid. */
bool seed_hostname_valid(const char *h);
bool seed_package_valid(const char *p);

#endif
