/* The seed disk: the text of seed.c checked by cloud-init schema where it
 * is installed, then a vfat image labelled cidata made by mkfs.vfat and
 * filled by mcopy (dosfstools, mtools: what cloud-localds -f vfat runs).
 *
 * Nothing is ever named before it is whole: the texts are memfds and the
 * image an O_TMPFILE file in the output's directory, handed to the tools
 * as /proc/self/fd/N, and the image gets its name (linkat, rename) only
 * once fsynced.  A failure, a Ctrl-C or a kill leaves nothing behind.
 *
 * The tools are run by tool.c's runner with an argv (never a shell),
 * found in the system's sbin and bin directories only, with an
 * environment of their own (no HOME: no ~/.mtoolsrc), their output kept
 * for the message if they fail; each is waited for before this returns. */
#include "seed.h"
#include "internal.h"
#include "log.h"
#include "schema.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOOL_OUTPUT_MAX 1024        /* of a tool's words kept for the message */
#define SEED_IMAGE_MIN  (1u << 20)  /* vfat (FAT12) wants room for its tables */
#define SEED_IMAGE_ALIGN (64u << 10)

/* Each tool and the Debian package it comes in, for the message when it is missing. */
static const char *tool_package(const char *tool)
{
	static const struct { const char *tool, *package; } map[] = {
		{ "mkfs.vfat", "dosfstools" }, { "mcopy", "mtools" }, { "cloud-init", "cloud-init" },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i].tool, tool) == 0)
			return map[i].package;
	return tool;
}

/* A tool's words, kept for the message if it fails. */
struct words {
	char *out;
	size_t len, n;
};

static void keep_words(const char *line, void *arg)
{
	struct words *w = arg;

	if (w->n + 1 < w->len)
		w->n += (size_t)snprintf(w->out + w->n, w->len - w->n, "%s%s", w->n ? "; " : "", line);
	if (w->n >= w->len)
		w->n = w->len - 1;
}

/* Run argv[0] (tool.c: from the system's sbin and bin, PATH and LC_ALL
 * its whole environment), with keep[nkeep] open in it and its stdout and
 * stderr into out (the first outlen bytes, its lines joined by "; ").  0
 * if it exited 0; -ENOENT if it is not installed; -EIO if it failed (out
 * says how); another -errno if it could not be run. */
static int run_tool(const char *const *argv, const int *keep, unsigned nkeep, char *out, size_t outlen)
{
	struct words w = { out, outlen, 0 };
	struct tool_run t = { .argv = argv, .keep = keep, .nkeep = nkeep, .bare_env = true, .line = keep_words, .arg = &w };
	int rc;

	out[0] = '\0';
	if ((rc = tool_run(&t)) <= 0)
		return rc;
	if (!out[0] && rc > 128)
		snprintf(out, outlen, "killed by signal %d", rc - 128);
	else if (!out[0])
		snprintf(out, outlen, "exit status %d", rc);
	return -EIO;
}

/* Run a tool the seed needs: 0, or -errno with its one message. */
static int seed_tool(const char *const *argv, const int *keep, unsigned nkeep, const char *doing,
		     struct lodge_err *err)
{
	char out[TOOL_OUTPUT_MAX];
	int rc = run_tool(argv, keep, nkeep, out, sizeof(out));

	if (rc == -ENOENT)
		return lodge_fail(err, rc, "%s is not installed (Debian package %s): it %s", argv[0],
				  tool_package(argv[0]), doing);
	if (rc == -EIO)
		return lodge_fail(err, rc, "%s failed (it %s): %s", argv[0], doing, out);
	if (rc)
		return lodge_fail(err, rc, "cannot run %s: %s", argv[0], strerror(-rc));
	return 0;
}

/* An unnamed file in memory holding text: the descriptor, or -errno. */
static int memfd_of(const char *name, const char *text, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC), rc = 0;
	size_t done = 0;

	if (fd < 0)
		return -errno;
	while (!rc && done < len) {
		ssize_t w = write(fd, text + done, len - done);

		if (w < 0 && errno != EINTR)
			rc = -errno;
		else if (w > 0)
			done += (size_t)w;
	}
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

static void fd_path(char out[32], int fd)
{
	snprintf(out, 32, "/proc/self/fd/%d", fd);
}

/* cloud-init schema on one #cloud-config: 1 checked, 0 cloud-init is not
 * here, -errno with err if it says the text is not valid. */
static int schema_check(int fd, const char *whose, struct lodge_err *err)
{
	char path[32], out[TOOL_OUTPUT_MAX];
	const char *argv[] = { "cloud-init", "schema", "--config-file", path, NULL };
	int rc;

	fd_path(path, fd);
	rc = run_tool(argv, &fd, 1, out, sizeof(out));
	if (rc == -ENOENT)
		return 0;
	if (rc == -EIO) {
		/* Its report without its empty headings (22.4's). */
		static const char *const noise[] = { "Error:; ", "; Cloud config schema deprecations:" };
		const char *words = out;
		size_t i, n;

		for (i = 0; i < 2; i++) {
			n = strlen(noise[i]);
			if (i == 0 && strncmp(words, noise[0], n) == 0)
				words += n;
			if (i == 1 && strlen(words) >= n && strcmp(words + strlen(words) - n, noise[1]) == 0)
				out[strlen(out) - n] = '\0';
		}
		return lodge_fail(err, -EINVAL, "%s is not valid cloud-config (cloud-init schema): %s", whose, words);
	}
	if (rc)
		return lodge_fail(err, rc, "cannot run cloud-init schema: %s", strerror(-rc));
	return 1;
}

/* Name the finished unnamed file fd as path, replacing what had it. */
static int name_file(int fd, const char *path, struct lodge_err *err)
{
	char proc[32], tmp[CFG_PATH_MAX + 32], dir[CFG_PATH_MAX];
	int dfd, rc;

	fd_path(proc, fd);
	snprintf(tmp, sizeof(tmp), "%s.tmp-%d", path, (int)getpid());
	if (fsync(fd) < 0) {
		rc = -errno;
		return lodge_fail(err, rc, "%s: %s", path, strerror(-rc));
	}
	if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) < 0) {
		rc = -errno;
		return lodge_fail(err, rc, "%s: %s", tmp, strerror(-rc));
	}
	if (rename(tmp, path) < 0) {
		rc = -errno;
		unlink(tmp);
		return lodge_fail(err, rc, "%s: %s", path, strerror(-rc));
	}
	snprintf(dir, sizeof(dir), "%s", path);
	if ((dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

/* The image: vfat labelled cidata, user-data and meta-data at its root,
 * named out_path, or with keep left unnamed in *keep (fsynced). */
static int make_image(const char *out_path, const struct seed_text *t, int ud, int md, int *keep,
		      struct lodge_err *err)
{
	char dir[CFG_PATH_MAX], img[32], udp[32], mdp[32];
	uint64_t size = t->user_data_len + t->meta_data_len + SEED_IMAGE_MIN;
	const char *mkfs[] = { "mkfs.vfat", "-n", SEED_LABEL, img, NULL };
	const char *cp_ud[] = { "mcopy", "-i", img, udp, "::user-data", NULL };
	const char *cp_md[] = { "mcopy", "-i", img, mdp, "::meta-data", NULL };
	const char *d;
	int fd, rc;

	snprintf(dir, sizeof(dir), "%s", out_path);
	d = dirname(dir);
	fd = open(d, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		return lodge_fail(err, rc, "cannot make the seed in %s: %s", d, strerror(-rc));
	}
	size = (size + SEED_IMAGE_ALIGN - 1) / SEED_IMAGE_ALIGN * SEED_IMAGE_ALIGN;
	if (ftruncate(fd, (off_t)size) < 0) {
		rc = -errno;
		close(fd);
		return lodge_fail(err, rc, "cannot make the seed in %s: %s", d, strerror(-rc));
	}
	fd_path(img, fd);
	fd_path(udp, ud);
	fd_path(mdp, md);
	rc = seed_tool(mkfs, &fd, 1, "makes the seed's filesystem", err);
	if (!rc)
		rc = seed_tool(cp_ud, (int[]){ fd, ud }, 2, "copies user-data into the seed", err);
	if (!rc)
		rc = seed_tool(cp_md, (int[]){ fd, md }, 2, "copies meta-data into the seed", err);
	if (!rc && keep && fsync(fd) < 0)
		rc = lodge_fail(err, -errno, "%s: %s", out_path, strerror(errno));
	if (!rc && keep) {
		*keep = fd;
		return 0;
	}
	if (!rc)
		rc = name_file(fd, out_path, err);
	close(fd);
	return rc;
}

/* lodge_seed_build (keep NULL), lodge_seed_build_fd, or with out_path
 * NULL lodge_seed_check. */
static int seed_build(const struct lodge_seed *s, const char *out_path, int *keep, struct lodge_err *err)
{
	char whose[CFG_PATH_MAX + 16];
	struct seed_text t;
	struct stat st;
	int ud = -1, md = -1, part = -1, rc, checked = 0;

	if (out_path && (!out_path[0] || strlen(out_path) >= CFG_PATH_MAX - 32))
		return lodge_fail(err, -EINVAL, "the seed's path is empty or too long");
	/* Replacing a file is what a rename does; a device node, a link or
	 * a directory there is not the seed's to replace. */
	if (out_path && lstat(out_path, &st) == 0 && !S_ISREG(st.st_mode))
		return lodge_fail(err, -EEXIST, "%s exists and is not a regular file", out_path);
	if ((rc = seed_text_make(s, &t, err)))
		return rc;
	if ((ud = memfd_of("user-data", t.user_data, t.user_data_len)) < 0 ||
	    (md = memfd_of("meta-data", t.meta_data, t.meta_data_len)) < 0) {
		rc = lodge_fail(err, ud < 0 ? ud : md, "cannot hold the seed's files: %s", strerror(-(ud < 0 ? ud : md)));
		goto out;
	}
	if (!s->no_schema_check) {
		/* One #cloud-config at a time: cloud-init schema reads no multipart. */
		if (t.user_part) {
			if ((part = memfd_of("user-part", t.user_part, t.user_part_len)) < 0) {
				rc = lodge_fail(err, part, "cannot hold the user-data: %s", strerror(-part));
				goto out;
			}
			snprintf(whose, sizeof(whose), "user-data %s", s->user_data_file);
			if ((checked = schema_check(part, whose, err)) < 0) {
				rc = checked;
				goto out;
			}
			close(part);
			part = -1;
		}
		if (!t.user_part || checked) {
			part = t.user_part ? memfd_of("lodge-part", t.lodge_part, t.lodge_part_len) : ud;
			if (part < 0) {
				rc = lodge_fail(err, part, "cannot hold the user-data: %s", strerror(-part));
				goto out;
			}
			if ((checked = schema_check(part, "Lodge's own user-data", err)) < 0) {
				rc = checked;
				goto out;
			}
		}
	}
	rc = out_path ? make_image(out_path, &t, ud, md, keep, err) : 0;
out:
	if (part >= 0 && part != ud)
		close(part);
	if (ud >= 0)
		close(ud);
	if (md >= 0)
		close(md);
	if (!rc && s->result) {
		*s->result = t.res;
		s->result->schema_checked = checked > 0;
		snprintf(s->result->schema_note, sizeof(s->result->schema_note), "%s",
			 s->no_schema_check ? "not checked with cloud-init schema (not asked to)"
			 : checked > 0 ? "checked with cloud-init schema"
				       : "not checked: cloud-init (for cloud-init schema) is not installed");
	}
	seed_text_free(&t);
	return rc;
}

int lodge_seed_build(const struct lodge_seed *s, const char *out_path, struct lodge_err *err)
{
	if (!out_path)
		return lodge_fail(err, -EINVAL, "the seed's path is empty or too long");
	return seed_build(s, out_path, NULL, err);
}

int lodge_seed_build_fd(const struct lodge_seed *s, const char *out_path, int *fd, struct lodge_err *err)
{
	*fd = -1;
	if (!out_path)
		return lodge_fail(err, -EINVAL, "the seed's path is empty or too long");
	return seed_build(s, out_path, fd, err);
}

int lodge_seed_name(int fd, const char *out_path, struct lodge_err *err)
{
	struct stat st;

	if (lstat(out_path, &st) == 0 && !S_ISREG(st.st_mode))
		return lodge_fail(err, -EEXIST, "%s exists and is not a regular file", out_path);
	return name_file(fd, out_path, err);
}

int lodge_seed_check(const struct lodge_seed *s, struct lodge_err *err)
{
	return seed_build(s, NULL, NULL, err);
}

int lodge_seed_path(const struct lodge *lg, const char *name, char *out, size_t len, struct lodge_err *err)
{
	char sn[96];

	if (!domain_name_valid(name))
		return lodge_fail(err, -EINVAL, "'%s' is not a domain name (%s)", text_escape(sn, sizeof(sn), name),
				  domain_name_rule());
	if ((size_t)snprintf(out, len, "%s/%s-seed.img", lg->hc.image_dir, name) >= len)
		return lodge_fail(err, -ENAMETOOLONG, "%s/%s-seed.img: path too long", lg->hc.image_dir, name);
	return 0;
}

int lodge_seed_disk_line(const char *path, const char *vdev, char *out, size_t len, struct lodge_err *err)
{
	char sp[CFG_PATH_MAX];

	text_escape(sp, sizeof(sp), path);
	if (path[0] != '/' || strpbrk(path, ",=") || text_find_control(path))
		return lodge_fail(err, -EINVAL, "a disk line cannot name %s: the seed's path must be absolute, "
				  "without ',', '=' or control characters", sp);
	if ((size_t)snprintf(out, len, "file:%s,%s,r", path, vdev ? vdev : SEED_VDEV) >= len)
		return lodge_fail(err, -ENAMETOOLONG, "%s: path too long for a disk line", sp);
	return 0;
}
