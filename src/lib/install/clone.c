/* A guest's disk: a copy of its template (install.h).  Into a file, the
 * copy is made unnamed (O_TMPFILE) in the file's directory and named only
 * once whole, so a failure, a full disk or a Ctrl-C leaves nothing: the
 * kernel drops an unnamed file with its last descriptor.  It shares the
 * template's blocks where the filesystem can (FICLONE: btrfs, XFS), else
 * only the template's data is copied (SEEK_DATA, SEEK_HOLE) and the rest
 * stays a hole.  Into a partition, the whole template's size is written
 * (its holes zeroed: a partition's old bytes are no hole) through an
 * exclusive descriptor, so nothing mounts it meanwhile.  Then, in the
 * copy: e2fsck -f, resize2fs to the disk's size, tune2fs -U random and
 * the files clone-fs.c writes. */
#include "install.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define COPY_CHUNK  (32u << 20)    /* between two progress reports, and cancel checks */
#define ZERO_CHUNK  (256ull << 20)
#define WIPE_BYTES  (1u << 20)     /* a partition's start: its superblock and group descriptors */

static const char *mib(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0)
		snprintf(buf, len, "%llu GiB", (unsigned long long)(bytes >> 30));
	else
		snprintf(buf, len, "%llu MiB", (unsigned long long)((bytes + (1u << 20) - 1) >> 20));
	return buf;
}

int clone_check(const struct lodge *lg, const struct lodge_template *t, const char *path, uint64_t size,
		bool dir_made_later, struct clone_target *c, struct lodge_err *err)
{
	char why[256], a[32], b[32], dir[CFG_PATH_MAX];
	struct stat sb;
	const char *p;
	bool found;
	int rc;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	for (p = path; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == ',' || *p == '"' || *p == '\'' || *p == '\\')
			return lodge_fail(err, -EINVAL, "a disk's path may hold no comma, quote, backslash or control "
					  "character (it goes in the config's disk spec)");
	if (path[0] != '/') {
		if (!getcwd(dir, sizeof(dir)))
			return lodge_fail(err, -errno, "cannot tell the current directory: %s", strerror(errno));
		if ((size_t)snprintf(c->path, sizeof(c->path), "%s/%s", dir, path) >= sizeof(c->path))
			return lodge_fail(err, -ENAMETOOLONG, "the disk's path is too long");
	} else if ((size_t)snprintf(c->path, sizeof(c->path), "%s", path) >= sizeof(c->path)) {
		return lodge_fail(err, -ENAMETOOLONG, "the disk's path is too long");
	}
	if ((found = stat(c->path, &sb) == 0) && S_ISBLK(sb.st_mode)) {
		/* A partition is used whole: the dashboard's picker rules. */
		if (size)
			return lodge_fail(err, -EINVAL, "%s is a block device: it is used whole (no --size)", c->path);
		if (lodge_disk_taken(lg, c->path, why, sizeof(why)))
			return lodge_fail(err, -EBUSY, "%s is taken: %s", c->path, why);
		if ((rc = lodge_disk_size(c->path, &c->bytes)))
			return lodge_fail(err, rc, "cannot open %s: %s", c->path, strerror(-rc));
		if (c->bytes < t->bytes)
			return lodge_fail(err, -ENOSPC, "%s is too small: %s, the %s template needs %s", c->path,
					  mib(c->bytes, a, sizeof(a)), t->dist, mib(t->bytes, b, sizeof(b)));
		c->partition = true;
		snprintf(c->fs_path, sizeof(c->fs_path), "%s", c->path);
		return 0;
	}
	if (!found && errno != ENOENT)
		return lodge_fail(err, -errno, "cannot use %s: %s", c->path, strerror(errno));
	if (found)
		return lodge_fail(err, -EEXIST, "%s exists: lodge install makes a new disk file, never over one "
				  "(or give a block device, /dev/...)", c->path);
	if (!strncmp(c->path, "/dev/", 5))
		return lodge_fail(err, -ENODEV, "there is no block device %s", c->path);
	snprintf(dir, sizeof(dir), "%s", c->path);
	if (!dir_made_later && (stat(dirname(dir), &sb) < 0 || !S_ISDIR(sb.st_mode)))
		return lodge_fail(err, -ENOENT, "cannot make %s: no directory %s", c->path, dir);
	c->bytes = size ? size : LODGE_INSTALL_SIZE_DEFAULT;
	if (c->bytes < t->bytes)
		return lodge_fail(err, -EINVAL, "a %s disk is too small: the %s template needs %s", mib(c->bytes, a, sizeof(a)),
				  t->dist, mib(t->bytes, b, sizeof(b)));
	return 0;
}

/* ---- the copy ------------------------------------------------------------------------- */

struct copy {
	int src, dst;
	bool partition;
	uint64_t total, done;          /* the template's data bytes, and how many are copied */
	bool plain;                    /* copy_file_range refused: read and write */
	char buf[1 << 20];
	struct job *j;
};

static int copy_data(struct copy *k, off_t off, off_t end)
{
	while (off < end) {
		size_t n = (size_t)(end - off) < COPY_CHUNK ? (size_t)(end - off) : COPY_CHUNK;
		ssize_t got;

		if (!k->plain) {
			loff_t in = off, out = off;

			got = copy_file_range(k->src, &in, k->dst, &out, n, 0);
			if (got < 0 && (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP || errno == ENOSYS)) {
				k->plain = true;
				continue;
			}
			if (got < 0)
				return -errno;
			if (got == 0)
				return -EIO;      /* the template shrank under us */
		} else {
			size_t m = n < sizeof(k->buf) ? n : sizeof(k->buf);

			ssize_t put = 0, w;

			if ((got = pread(k->src, k->buf, m, off)) <= 0)
				return got < 0 ? -errno : -EIO;
			for (; put < got; put += w)
				if ((w = pwrite(k->dst, k->buf + put, (size_t)(got - put), off + put)) <= 0)
					return w < 0 ? -errno : -EIO;
		}
		off += got;
		k->done += (uint64_t)got;
		if (!job_report(k->j, LODGE_PHASE_CLONE, (int)(k->done * 100 / (k->total ? k->total : 1)), NULL))
			return -ECANCELED;
	}
	return 0;
}

/* A partition's bytes where the template has a hole: zeros, as the
 * template reads there (the device zeroes them itself where it can). */
static int zero_range(struct copy *k, off_t off, off_t end)
{
	while (off < end) {
		uint64_t range[2] = { (uint64_t)off, (uint64_t)(end - off) < ZERO_CHUNK ? (uint64_t)(end - off) : ZERO_CHUNK };

		if (ioctl(k->dst, BLKZEROOUT, range) < 0)
			return -errno;
		off += (off_t)range[1];
		if (!job_tick(k->j))
			return -ECANCELED;
	}
	return 0;
}

/* The template's data extent by extent, its holes holes (a file) or zeros
 * (a partition). */
static int copy_sparse(struct copy *k, off_t size)
{
	off_t data, hole = 0, at = 0;
	int rc;

	for (data = 0; data < size; data = hole) {      /* the data's total, for the progress */
		if ((data = lseek(k->src, data, SEEK_DATA)) < 0)
			break;
		hole = lseek(k->src, data, SEEK_HOLE);
		k->total += (uint64_t)((hole < 0 ? size : hole) - data);
		if (hole < 0)
			break;
	}
	while (at < size) {
		if ((data = lseek(k->src, at, SEEK_DATA)) < 0) {
			if (errno != ENXIO)
				return -errno;
			data = size;              /* a hole to the end */
		}
		if (k->partition && data > at && (rc = zero_range(k, at, data)))
			return rc;
		if (data >= size)
			break;
		if ((hole = lseek(k->src, data, SEEK_HOLE)) < 0)
			return -errno;
		if ((rc = copy_data(k, data, hole)))
			return rc;
		at = hole;
	}
	return 0;
}

/* Run one of e2fsprogs' tools on the copy: 0, or -errno with why.
 * e2fsck's 1 (errors fixed) is success. */
static int e2fs_tool(const char *const *argv, struct job *j, bool fsck, char *why, size_t whylen)
{
	struct tool_run run = { .argv = argv, .tick = job_tick, .arg = j };
	int rc = tool_run(&run);

	if (rc == 0 || (fsck && rc == 1))
		return 0;
	if (rc == -ECANCELED)
		return rc;
	tool_describe(&run, rc, why, whylen);
	return rc < 0 ? rc : -EIO;
}

static int fail_at(struct lodge_err *err, int rc, const struct clone_target *c, const char *what, const char *why)
{
	if (rc == -ECANCELED)
		return job_cancelled(err);
	return lodge_fail(err, rc, "%s %s: %s", what, c->path, why);
}

int clone_make(const struct lodge_template *t, struct clone_target *c, struct job *j, struct lodge_err *err)
{
	static struct copy k;
	char dir[CFG_PATH_MAX], why[1024];
	struct stat sb;
	int rc = 0;

	memset(&k, 0, sizeof(k));
	k.j = j;
	k.partition = c->partition;
	if ((k.src = open(t->path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(k.src, &sb) < 0) {
		rc = -errno;
		if (k.src >= 0)
			close(k.src);
		return lodge_fail(err, rc, "cannot read the template %s: %s", t->path, strerror(-rc));
	}
	if (!job_report(j, LODGE_PHASE_CLONE, 0, NULL)) {
		close(k.src);
		return job_cancelled(err);
	}
	if (c->partition) {
		/* Exclusive: refused if anything has it now, and nothing
		 * mounts it while it is written. */
		if ((k.dst = open(c->path, O_RDWR | O_EXCL | O_CLOEXEC)) < 0) {
			rc = -errno;
			close(k.src);
			return lodge_fail(err, rc, "cannot open %s: %s", c->path,
					  rc == -EBUSY ? "it is in use on the host" : strerror(-rc));
		}
		c->written = true;
		rc = copy_sparse(&k, sb.st_size);
		if (!rc && fsync(k.dst) < 0)
			rc = -errno;
		close(k.dst);
	} else {
		snprintf(dir, sizeof(dir), "%s", c->path);
		if ((c->fd = open(dirname(dir), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)) < 0) {
			rc = -errno;
			close(k.src);
			return lodge_fail(err, rc, "cannot make a file in %s: %s", dir, strerror(-rc));
		}
		k.dst = c->fd;
		snprintf(c->fs_path, sizeof(c->fs_path), "/proc/%d/fd/%d", (int)getpid(), c->fd);
		if (ioctl(c->fd, FICLONE, k.src) == 0)
			job_report(j, LODGE_PHASE_CLONE, 100, NULL);
		else
			rc = copy_sparse(&k, sb.st_size);
		if (!rc && ftruncate(c->fd, (off_t)c->bytes) < 0)
			rc = -errno;
	}
	close(k.src);
	if (rc)
		return fail_at(err, rc, c, "cannot write", strerror(-rc));

	/* The copy's filesystem: checked, grown, its own.  The fresh
	 * template's needs no repair; the check is the tools' condition
	 * and the copy's proof. */
	{
		const char *fsck[] = { "e2fsck", "-f", "-y", c->fs_path, NULL };
		const char *resize[] = { "resize2fs", c->fs_path, NULL };
		const char *uuid[] = { "tune2fs", "-U", "random", c->fs_path, NULL };

		if (!job_report(j, LODGE_PHASE_FILESYSTEM, 0, NULL))
			return job_cancelled(err);
		if ((rc = e2fs_tool(fsck, j, true, why, sizeof(why))))
			return fail_at(err, rc, c, "checking the copy on", why);
		if (!job_report(j, LODGE_PHASE_FILESYSTEM, 40, NULL))
			return job_cancelled(err);
		if ((rc = e2fs_tool(resize, j, false, why, sizeof(why))))
			return fail_at(err, rc, c, "growing the filesystem on", why);
		if (!job_report(j, LODGE_PHASE_FILESYSTEM, 70, NULL))
			return job_cancelled(err);
		if ((rc = e2fs_tool(uuid, j, false, why, sizeof(why))))
			return fail_at(err, rc, c, "a fresh UUID for", why);
		if (!job_report(j, LODGE_PHASE_FILESYSTEM, 80, NULL))
			return job_cancelled(err);
	}
	if ((rc = clone_fs_customize(c->fs_path, c->partition, c->uuid, why, sizeof(why))))
		return fail_at(err, rc, c, "cannot finish the guest's files on", why);
	/* The tools wrote through descriptors of their own; the file's
	 * pages are one, whoever wrote them. */
	if (!c->partition && fdatasync(c->fd) < 0)
		return fail_at(err, -errno, c, "cannot write", strerror(errno));
	job_report(j, LODGE_PHASE_FILESYSTEM, 100, NULL);
	return 0;
}

int clone_commit(struct clone_target *c, struct lodge_err *err)
{
	char proc[64], dir[CFG_PATH_MAX];
	int dfd;

	if (c->partition)
		return 0;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", c->fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, c->path, AT_SYMLINK_FOLLOW) < 0)
		return lodge_fail(err, -errno, "cannot name the disk %s: %s", c->path,
				  errno == EEXIST ? "a file of that name appeared meanwhile" : strerror(errno));
	snprintf(dir, sizeof(dir), "%s", c->path);
	if ((dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
	close(c->fd);
	c->fd = -1;
	return 0;
}

void clone_abandon(struct clone_target *c, bool named)
{
	static const char zeros[WIPE_BYTES];
	int fd;

	if (!c->partition) {
		if (named)
			unlink(c->path);
		if (c->fd >= 0)
			close(c->fd);
		c->fd = -1;
		return;
	}
	if (!c->written || (fd = open(c->path, O_WRONLY | O_EXCL | O_CLOEXEC)) < 0)
		return;
	if (pwrite(fd, zeros, sizeof(zeros), 0) == (ssize_t)sizeof(zeros))
		fsync(fd);
	close(fd);
}
