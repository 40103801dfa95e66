/* Save and restore, as xl save and xl restore.
 *
 * The library writes the stream's magic and HEAD (savestream.h) and hands
 * lodge-hyp the rest: the file itself, or with compress a pipe into a
 * child that bzip2s it (libbz2).  The file is made unnamed (O_TMPFILE)
 * and given its name only once lodge-hyp has written all of it and it is
 * fsynced: a save that fails or is killed leaves no partial file, and the
 * domain is destroyed only after that. */
#include "incoming.h"
#include "internal.h"
#include "migrate.h"
#include "savestream.h"

#include <bzlib.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define BZ_BLOCK 9        /* 900 KiB blocks: the best ratio, as bzip2 -9 */
#define SAVE_REPLY_MS (10 * 60 * 1000)
#define GONE_MS 10000
#define PROGRESS_MS 500

/* ---- bzip2 in a child: fd to fd ------------------------------------------------ */

static int write_all(int fd, const void *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p = (const char *)p + w;
		len -= w;
	}
	return 0;
}

/* The compressor's exit status: 0, the errno of a failed read or write,
 * BZ_CORRUPT for bzip2 data that is not (or not all there), BZ_TOOBIG for
 * more data than the stream's domain can have saved (a bzip2 bomb). */
#define BZ_CORRUPT 100
#define BZ_TOOBIG  101

/* What the decompressor lets through before the agent, having read the
 * HEAD, says how much the whole stream may hold: the magic and a HEAD
 * (savestream.c's HEAD_CONFIG_MAX of config) fit well below it. */
#define BZ_HEAD_ALLOWANCE (1u << 20)

/* The decompressor's limit: BZ_HEAD_ALLOWANCE until the agent writes the
 * real one (8 bytes) on limit_fd; EOF there without it ends the child. */
static uint64_t bz_limit(int limit_fd, uint64_t *limit, bool *final)
{
	uint64_t v;
	ssize_t n;

	if (*final)
		return *limit;
	while ((n = read(limit_fd, &v, sizeof(v))) < 0 && errno == EINTR)
		;
	if (n != sizeof(v))
		_exit(BZ_TOOBIG);
	*final = true;
	return *limit = v;
}

/* Compress (or decompress, at most a limit, see bz_limit) everything from
 * in to out, in a child. */
static void bz_pump(int in, int out, bool compress, int limit_fd)
{
	static char ibuf[1 << 16], obuf[1 << 16];
	bz_stream z = { 0 };
	int rc = compress ? BZ2_bzCompressInit(&z, BZ_BLOCK, 0, 0) : BZ2_bzDecompressInit(&z, 0, 0);
	uint64_t total = 0, limit = BZ_HEAD_ALLOWANCE;
	bool eof = false, final = false;
	int werr;

	/* A killed lodge save or restore takes its compressor with it: the
	 * domain must not wait for a stream no one will keep. */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (rc != BZ_OK)
		_exit(ENOMEM);
	for (;;) {
		size_t produced;

		if (!z.avail_in && !eof) {
			ssize_t n = read(in, ibuf, sizeof(ibuf));

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				_exit(errno);
			eof = n == 0;
			z.next_in = ibuf;
			z.avail_in = (unsigned)n;
		}
		z.next_out = obuf;
		z.avail_out = sizeof(obuf);
		if (compress)
			rc = BZ2_bzCompress(&z, eof ? BZ_FINISH : BZ_RUN);
		else
			rc = BZ2_bzDecompress(&z);
		if (rc < 0)
			_exit(BZ_CORRUPT);
		produced = sizeof(obuf) - z.avail_out;
		total += produced;
		if (!compress && total > limit && total > bz_limit(limit_fd, &limit, &final))
			_exit(BZ_TOOBIG);
		if ((werr = write_all(out, obuf, produced)))
			_exit(-werr);
		if (rc == BZ_STREAM_END)
			break;
		if (!compress && eof && !z.avail_in && z.avail_out == sizeof(obuf))
			_exit(BZ_CORRUPT);         /* the compressed file ends early */
	}
	if (!compress && (z.avail_in || read(in, ibuf, 1) > 0))
		_exit(BZ_CORRUPT);                 /* trailing garbage after the stream */
	_exit(0);
}

/* Start a bz_pump child; returns its pid, *pipe_end the parent's end and,
 * decompressing, *limit_end where the parent writes the stream's limit. */
static pid_t bz_child(int file_fd, bool compress, int *pipe_end, int *limit_end)
{
	int p[2], l[2] = { -1, -1 };
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	/* The limit goes through a socket, not a pipe: a decompressor done
	 * within its allowance (a small save) has closed its end before the
	 * limit is sent, and a send can say EPIPE where a pipe's write
	 * kills lodge with SIGPIPE. */
	if (!compress && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, l) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		if (l[0] >= 0) {
			close(l[0]);
			close(l[1]);
		}
		return -1;
	}
	if (pid == 0) {
		if (compress) {
			close(p[1]);
			bz_pump(p[0], file_fd, true, -1);
		} else {
			close(p[0]);
			close(l[1]);
			bz_pump(file_fd, p[1], false, l[0]);
		}
	}
	close(compress ? p[0] : p[1]);
	*pipe_end = compress ? p[1] : p[0];
	if (!compress) {
		close(l[0]);
		*limit_end = l[1];
	}
	return pid;
}

static int child_status(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}
/* ---- progress: the file's offset, shared with whoever writes or reads it ---------- */

struct file_progress {
	int fd;
	uint64_t total, last_bytes;
	long last_ms;
	lodge_progress_fn *fn;
	void *arg;
};

static void file_progress_tick(void *arg)
{
	struct file_progress *fp = arg;
	off_t at = lseek(fp->fd, 0, SEEK_CUR);
	long now = lodge_now_ms();
	struct lodge_progress p = { .total = fp->total };

	if (!fp->fn || at < 0)
		return;
	p.bytes = (uint64_t)at;
	if (now > fp->last_ms && p.bytes >= fp->last_bytes)
		p.rate_kib = (p.bytes - fp->last_bytes) * 1000 / 1024 / (uint64_t)(now - fp->last_ms);
	fp->last_bytes = p.bytes;
	fp->last_ms = now;
	fp->fn(&p, fp->arg);
}

/* ---- save ------------------------------------------------------------------------ */

/* An unnamed file in FILE's directory; -errno. */
static int open_unnamed(const char *file)
{
	char dir[4096];
	int fd;

	snprintf(dir, sizeof(dir), "%s", file);
	fd = open(dirname(dir), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

/* Give the finished file its name, replacing what had it. */
static int name_file(int fd, const char *file)
{
	char proc[64], tmp[4200], dir[4096];
	int dfd, rc = 0;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	snprintf(tmp, sizeof(tmp), "%s.tmp-%d", file, (int)getpid());
	if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) < 0)
		return -errno;
	if (rename(tmp, file) < 0) {
		rc = -errno;
		unlink(tmp);
		return rc;
	}
	snprintf(dir, sizeof(dir), "%s", file);
	if ((dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}


/* After the file failed: with a compressor, its own failure (the disk
 * full) is the cause of lodge-hyp's broken pipe; say that. */
static int save_refused(struct lodge_err *err, pid_t *bz, const char *name, const char *file, const char *line)
{
	int st;

	if (*bz > 0 && (st = child_status(*bz)) > 0 && st < BZ_CORRUPT) {
		*bz = -1;
		return lodge_fail(err, -st, "cannot save domain %s to %s: %s (it runs on)", name, file, strerror(st));
	}
	return lodge_fail(err, -EIO, "cannot save domain %s: %s (it runs on)", name,
			  strncmp(line, "error ", 6) == 0 ? line + 6 : line);
}

/* Wait for lodge-hyp's one-line answer to save, telling the progress
 * hook meanwhile how much of the file is written. */
static int save_wait(int ctl, struct file_progress *fp, char *line, size_t len)
{
	long until = lodge_now_ms() + SAVE_REPLY_MS;

	for (;;) {
		struct pollfd p = { ctl, POLLIN, 0 };
		long left = until - lodge_now_ms();

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, left < PROGRESS_MS ? (int)left : PROGRESS_MS) > 0)
			return client_read_line(ctl, line, len, (int)left);
		file_progress_tick(fp);
	}
}

int lodge_save(const struct lodge *lg, const char *domain, const char *file, const struct lodge_save_opts *o,
	       struct lodge_save_result *res, struct lodge_err *err)
{
	struct file_progress fp = { .fn = o->progress, .arg = o->arg, .last_ms = lodge_now_ms() };
	struct lodge_status st;
	static struct secret own_key;
	char why[512], line[512];
	const char *name = st.name;
	int fd, out, ctl = -1, rc;
	pid_t bz = -1;
	long t0 = lodge_now_ms();
	struct stat sb;
	struct reply r;

	memset(res, 0, sizeof(*res));
	if ((rc = lodge_status(lg, domain, &st, err)))
		return rc;
	if ((fd = open_unnamed(file)) < 0)
		return lodge_fail(err, fd, "cannot create %s: %s", file, strerror(-fd));
	fp.fd = out = fd;
	if (o->compress && (bz = bz_child(fd, true, &out, NULL)) < 0) {
		rc = lodge_fail(err, -errno, "cannot start the compressor: %s", strerror(errno));
		close(fd);
		return rc;
	}
	/* Signed with this host's key: its restore here lends the domain
	 * what it names now (the key is made by the first save). */
	if (!stream_key(NULL, &own_key, true, why, sizeof(why)))
		lodge_warn(lg, "%s is not signed (%s): its restore gets only what lodge.conf lends", file, why);
	if ((rc = head_write(out, &lg->hc, name, own_key.len ? &own_key : NULL, why, sizeof(why)))) {
		lodge_fail(err, rc, "cannot save domain %s to %s: %s", name, file, why);
		goto fail;
	}
	if ((ctl = client_connect(lg->hc.runtime_dir, name)) < 0 || (rc = client_request_fd(ctl, "save", out))) {
		rc = ctl < 0 ? ctl : rc;
		lodge_fail(err, rc, "cannot reach domain %s: %s", name, strerror(-rc));
		goto fail;
	}
	if (out != fd)
		close(out);               /* lodge-hyp's now: the compressor ends when it does */
	out = -1;
	if ((rc = save_wait(ctl, &fp, line, sizeof(line))) < 0) {
		lodge_fail(err, rc, "domain %s did not finish its save: %s", name, strerror(-rc));
		goto fail;
	}
	if (strncmp(line, "ok", 2) != 0) {
		rc = save_refused(err, &bz, name, file, line);
		goto fail;
	}
	if (bz > 0 && (rc = child_status(bz)) != 0) {
		bz = -1;
		lodge_fail(err, -EIO, "cannot save domain %s to %s: %s", name, file,
			   rc > 0 && rc < BZ_CORRUPT ? strerror(rc) : "the compressor failed");
		rc = -EIO;
		goto fail_held;
	}
	bz = -1;
	if (fsync(fd) < 0) {
		rc = lodge_fail(err, -errno, "cannot save domain %s to %s: %s", name, file, strerror(errno));
		goto fail_held;
	}
	if ((rc = name_file(fd, file))) {
		lodge_fail(err, rc, "cannot name %s: %s", file, strerror(-rc));
		goto fail_held;
	}
	file_progress_tick(&fp);
	fstat(fd, &sb);
	close(fd);
	/* The file is whole and on disk: now the domain may go. */
	if (client_request(ctl, o->keep ? "save-end resume" : "save-end destroy", 0, &r, LODGE_REPLY_MS) || r.error[0])
		lodge_warn(lg, "domain %s was saved, but did not take save-end: %s", name,
			   r.error[0] ? r.error : "no answer");
	close(ctl);
	if (!o->keep && lodge_wait_gone(lg, name, GONE_MS))
		lodge_warn(lg, "domain %s was saved but is slow to go", name);
	snprintf(res->name, sizeof(res->name), "%s", name);
	res->file_bytes = (uint64_t)sb.st_size;
	res->ms = lodge_now_ms() - t0;
	return 0;

fail_held:
	/* Written but not kept: the domain runs on. */
	client_request(ctl, "save-end resume", 0, &r, LODGE_REPLY_MS);
fail:
	if (out >= 0 && out != fd)
		close(out);
	if (bz > 0)
		child_status(bz);
	close(fd);                 /* unnamed: it goes with its last descriptor */
	if (ctl >= 0)
		close(ctl);
	return rc < 0 ? rc : -EIO;
}

int lodge_dump_core(const struct lodge *lg, const char *domain, const char *file, struct lodge_err *err)
{
	char name[DOMAIN_NAME_MAX], line[512];
	int fd, ctl = -1, rc;

	if ((rc = lodge_resolve(lg, domain, name, err)))
		return rc;
	/* Made here, with the caller's rights, never by a path lodge-hyp
	 * opens; unnamed until whole, so a failure leaves nothing. */
	if ((fd = open_unnamed(file)) < 0)
		return lodge_fail(err, fd, "cannot create %s: %s", file, strerror(-fd));
	if ((ctl = client_connect(lg->hc.runtime_dir, name)) < 0) {
		rc = lodge_not_running(err, name);
		goto out;
	}
	if ((rc = client_request_fd(ctl, "dump-core", fd)) ||
	    (rc = client_read_line(ctl, line, sizeof(line), SAVE_REPLY_MS)) < 0) {
		lodge_fail(err, rc, "domain %s did not dump its core: %s", name, strerror(-rc));
		goto out;
	}
	if (strncmp(line, "ok", 2) != 0) {
		rc = lodge_fail(err, -EIO, "cannot dump domain %s's core: %s", name,
				strncmp(line, "error ", 6) == 0 ? line + 6 : line);
		goto out;
	}
	if (fsync(fd) < 0 || (rc = name_file(fd, file))) {
		rc = rc ? rc : -errno;
		lodge_fail(err, rc, "cannot name %s: %s", file, strerror(-rc));
		goto out;
	}
	rc = 0;
out:
	close(fd);                 /* unnamed unless named: it goes with its last descriptor */
	if (ctl >= 0)
		close(ctl);
	return rc;
}

/* Why the decompressor ended, for a restore it failed. */
static const char *bz_failure(int status)
{
	if (status == BZ_TOOBIG)
		return "its bzip2 data holds more than a saved domain of its size can (a bzip2 bomb?)";
	if (status == BZ_CORRUPT)
		return "its bzip2 data is corrupt or truncated";
	return "its bzip2 data could not be read";
}

/* The HEAD of the stream on in, as a config this host admits. */
static int restore_config(const struct lodge *lg, const char *file, int fd, int *in, pid_t *bz,
			  struct domain_config *dc, struct lodge_err *err)
{
	char why[CFG_PATH_MAX + 2048], why_key[512];
	static struct secret own_key;
	struct stream_head h;
	bool trusted;
	int rc, st;

	if ((rc = head_read(*in, &h, why, sizeof(why)))) {
		/* Stop the decompressor before asking how it ended: it may be
		 * blocked writing what no one will read. */
		if (*bz > 0) {
			close(*in);
			*in = fd;
			kill(*bz, SIGTERM);
			if ((st = child_status(*bz)) == BZ_CORRUPT || st == BZ_TOOBIG)
				snprintf(why, sizeof(why), "%s", bz_failure(st));
			*bz = -1;
		}
		return lodge_fail(err, rc, "%s: %s", file, why);
	}
	rc = head_config(&h, file, &lg->hc, dc, why, sizeof(why));
	/* Written and signed by this host: trusted to name what it named. */
	trusted = head_signed_by(&h, stream_key(NULL, &own_key, false, why_key, sizeof(why_key)));
	head_free(&h);
	if (rc)
		return lodge_fail(err, rc, "%s", why);
	/* Else whoever wrote the file chose every path in it. */
	if (!trusted && (rc = incoming_admit(dc, &lg->hc, why, sizeof(why))))
		return lodge_fail(err, rc, "%s: %s%s", file, why,
				  h.has_mac ? " (its signature is not this host's, or the file was changed)" : "");
	return 0;
}

int lodge_restore(const struct lodge *lg, const char *file, const struct lodge_restore_opts *o,
		  struct lodge_restore_result *res, struct lodge_err *err)
{
	struct file_progress fp = { .fn = o->progress, .arg = o->arg, .last_ms = lodge_now_ms() };
	struct domain_config *dc = malloc(sizeof(*dc));
	char magic[3];
	int fd, in, limit_fd = -1, rc, st;
	pid_t bz = -1;
	long t0 = lodge_now_ms();
	struct stat sb;
	struct reply r;

	memset(res, 0, sizeof(*res));
	if (!dc)
		return lodge_fail(err, -ENOMEM, "%s", strerror(ENOMEM));
	if ((fd = open(file, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = lodge_fail(err, -errno, "cannot open %s: %s", file, strerror(errno));
		free(dc);
		return rc;
	}
	fp.fd = in = fd;
	fp.total = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0;
	/* bzip2's own magic, or ours. */
	if (pread(fd, magic, 3, 0) == 3 && memcmp(magic, "BZh", 3) == 0 &&
	    (bz = bz_child(fd, false, &in, &limit_fd)) < 0) {
		rc = lodge_fail(err, -errno, "cannot start the decompressor: %s", strerror(errno));
		goto fail;
	}
	if ((rc = restore_config(lg, file, fd, &in, &bz, dc, err)))
		goto fail;
	if (limit_fd >= 0) {
		uint64_t bound = head_stream_bound(dc);

		/* EPIPE: it has ended, all of the stream within its allowance;
		 * how it ended is asked below. */
		if (send(limit_fd, &bound, sizeof(bound), MSG_NOSIGNAL) != sizeof(bound) && errno != EPIPE)
			lodge_warn(lg, "cannot tell the decompressor its limit: %s", strerror(errno));
		close(limit_fd);
		limit_fd = -1;
	}
	/* lodge-hyp reads the rest and says itself what is wrong with it.  A
	 * compressed file is whole only when its decompressor ends well,
	 * after lodge-hyp has read the last byte: until then the domain
	 * waits, paused, having run not one guest instruction. */
	if ((rc = lodge_start_ticking(lg, dc, o->paused || bz > 0, in, file_progress_tick, &fp, err)))
		goto fail;
	if (in != fd)
		close(in);
	file_progress_tick(&fp);
	close(fd);
	snprintf(res->name, sizeof(res->name), "%s", dc->name);
	r.error[0] = '\0';
	if (bz > 0 && (st = child_status(bz)) != 0) {
		client_call(lg->hc.runtime_dir, dc->name, "destroy", 0, &r);
		lodge_wait_gone(lg, dc->name, GONE_MS);
		free(dc);
		return lodge_fail(err, -EBADMSG, "%s: %s", file, bz_failure(st));
	}
	if (bz > 0 && !o->paused &&
	    (client_call(lg->hc.runtime_dir, dc->name, "unpause", 0, &r) || r.error[0])) {
		rc = lodge_fail(err, -EIO, "domain %s was restored but does not unpause: %s", dc->name,
				r.error[0] ? r.error : "no answer");
		free(dc);
		return rc;
	}
	free(dc);
	res->ms = lodge_now_ms() - t0;
	return 0;
fail:
	if (limit_fd >= 0)
		close(limit_fd);
	if (in != fd)
		close(in);
	close(fd);
	if (bz > 0) {
		kill(bz, SIGTERM);
		child_status(bz);
	}
	free(dc);
	return rc < 0 ? rc : -EIO;
}
