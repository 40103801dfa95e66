/* lodge save and lodge restore, as xl save and xl restore.
 *
 * The agent writes the stream's magic and HEAD (savestream.h) and hands
 * lodge-hyp the rest: the file itself, or with --compress a pipe into a
 * child that bzip2s it (libbz2).  The file is made unnamed (O_TMPFILE)
 * and given its name only once lodge-hyp has written all of it and it is
 * fsynced: a save that fails or is killed leaves no partial file, and the
 * domain is destroyed only after that. */
#include "agent.h"
#include "client.h"
#include "domains.h"
#include "log.h"
#include "incoming.h"
#include "savestream.h"

#include <bzlib.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BZ_BLOCK 9        /* 900 KiB blocks: the best ratio, as bzip2 -9 */
#define SAVE_REPLY_MS (10 * 60 * 1000)

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* Wait until the domain has ended and its runtime directory is gone (a
 * domain of the same name may then start at once, as restore does). */
static int wait_gone(const char *rundir, const char *name, long ms)
{
	char dir[4200];
	long until = now_ms() + ms;

	snprintf(dir, sizeof(dir), "%s/%s", rundir, name);
	while (access(dir, F_OK) == 0) {
		if (now_ms() > until)
			return -ETIMEDOUT;
		usleep(1000);
	}
	return 0;
}

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
	if (!compress && pipe2(l, O_CLOEXEC) < 0) {
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

int cmd_save(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "compress", no_argument, NULL, 'c' }, { "keep", no_argument, NULL, 'k' }, { 0 },
	};
	struct host_config hc;
	struct dom_status st;
	bool compress = false, keep = false;
	char why[512], line[512];
	const char *name, *file;
	int c, fd, out, ctl = -1, rc;
	pid_t bz = -1;
	long t0 = now_ms();
	struct stat sb;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+ck", opts, NULL)) != -1) {
		if (c == 'c')
			compress = true;
		else if (c == 'k')
			keep = true;
		else
			return EXIT_USAGE;
	}
	if (argc - optind != 2) {
		log_err("usage: lodge save [--compress] [--keep] NAME FILE");
		return EXIT_USAGE;
	}
	name = argv[optind];
	file = argv[optind + 1];
	if (agent_host_config(&hc))
		return 1;
	if (domain_status(hc.runtime_dir, name, &st)) {
		log_err("no domain %s is running", name);
		return 1;
	}
	if ((fd = open_unnamed(file)) < 0) {
		log_err("cannot create %s: %s", file, strerror(-fd));
		return 1;
	}
	out = fd;
	if (compress && (bz = bz_child(fd, true, &out, NULL)) < 0) {
		log_err("cannot start the compressor: %s", strerror(errno));
		close(fd);
		return 1;
	}
	if ((rc = head_write(out, &hc, name, why, sizeof(why)))) {
		log_err("cannot save domain %s to %s: %s", name, file, why);
		goto fail;
	}
	if ((ctl = client_connect(hc.runtime_dir, name)) < 0 || (rc = client_request_fd(ctl, "save", out))) {
		log_err("cannot reach domain %s: %s", name, strerror(ctl < 0 ? -ctl : -rc));
		goto fail;
	}
	if (out != fd)
		close(out);               /* lodge-hyp's now: the compressor ends when it does */
	out = -1;
	if ((rc = client_read_line(ctl, line, sizeof(line), SAVE_REPLY_MS)) < 0) {
		log_err("domain %s did not finish its save: %s", name, strerror(-rc));
		goto fail;
	}
	if (strncmp(line, "ok", 2) != 0) {
		/* With a compressor, its own failure (the disk full) is the
		 * cause of lodge-hyp's broken pipe: say that. */
		if (bz > 0 && (rc = child_status(bz)) > 0 && rc < BZ_CORRUPT) {
			bz = -1;
			log_err("cannot save domain %s to %s: %s (it runs on)", name, file, strerror(rc));
		} else {
			log_err("cannot save domain %s: %s (it runs on)", name,
				strncmp(line, "error ", 6) == 0 ? line + 6 : line);
		}
		goto fail;
	}
	if (bz > 0 && (rc = child_status(bz)) != 0) {
		bz = -1;
		log_err("cannot save domain %s to %s: %s", name, file,
			rc > 0 && rc < BZ_CORRUPT ? strerror(rc) : "the compressor failed");
		goto fail_held;
	}
	bz = -1;
	if (fsync(fd) < 0) {
		log_err("cannot save domain %s to %s: %s", name, file, strerror(errno));
		goto fail_held;
	}
	if ((rc = name_file(fd, file))) {
		log_err("cannot name %s: %s", file, strerror(-rc));
		goto fail_held;
	}
	fstat(fd, &sb);
	close(fd);
	/* The file is whole and on disk: now the domain may go. */
	{
		struct reply r;

		if (client_request(ctl, keep ? "save-end resume" : "save-end destroy", 0, &r, 5000) || r.error[0])
			log_warn("domain %s was saved, but did not take save-end: %s", name,
				 r.error[0] ? r.error : "no answer");
	}
	close(ctl);
	if (!keep && wait_gone(hc.runtime_dir, name, 10000))
		log_warn("domain %s was saved but is slow to go", name);
	printf("saved domain %s to %s (%.1f MiB%s, %ld ms)%s\n", name, file,
	       sb.st_size / 1048576.0, compress ? ", bzip2" : "", now_ms() - t0,
	       keep ? "; it runs on" : "");
	return 0;

fail_held:
	/* Written but not kept: the domain runs on. */
	if (ctl >= 0) {
		struct reply r;

		client_request(ctl, "save-end resume", 0, &r, 5000);
	}
fail:
	if (out >= 0 && out != fd)
		close(out);
	if (bz > 0)
		child_status(bz);
	close(fd);                 /* unnamed: it goes with its last descriptor */
	if (ctl >= 0)
		close(ctl);
	return 1;
}

/* ---- restore --------------------------------------------------------------------- */

/* Why the decompressor ended, for a restore it failed. */
static const char *bz_failure(int status)
{
	if (status == BZ_TOOBIG)
		return "its bzip2 data holds more than a saved domain of its size can (a bzip2 bomb?)";
	if (status == BZ_CORRUPT)
		return "its bzip2 data is corrupt or truncated";
	return "its bzip2 data could not be read";
}

int cmd_restore(int argc, char **argv)
{
	struct host_config hc;
	struct domain_config dc;
	struct stream_head h;
	char why[CFG_PATH_MAX + 2048], magic[3];
	bool paused = false;
	const char *file;
	int c, fd, in, limit_fd = -1, rc, st;
	pid_t bz = -1;
	long t0 = now_ms();

	optind = 1;
	while ((c = getopt(argc, argv, "+p")) != -1) {
		if (c == 'p')
			paused = true;
		else
			return EXIT_USAGE;
	}
	if (argc - optind != 1) {
		log_err("usage: lodge restore [-p] FILE");
		return EXIT_USAGE;
	}
	file = argv[optind];
	if (agent_host_config(&hc))
		return 1;
	if ((fd = open(file, O_RDONLY | O_CLOEXEC)) < 0) {
		log_err("cannot open %s: %s", file, strerror(errno));
		return 1;
	}
	in = fd;
	/* bzip2's own magic, or ours. */
	if (pread(fd, magic, 3, 0) == 3 && memcmp(magic, "BZh", 3) == 0 &&
	    (bz = bz_child(fd, false, &in, &limit_fd)) < 0) {
		log_err("cannot start the decompressor: %s", strerror(errno));
		close(fd);
		return 1;
	}
	if ((rc = head_read(in, &h, why, sizeof(why)))) {
		/* Stop the decompressor before asking how it ended: it may be
		 * blocked writing what no one will read. */
		if (bz > 0) {
			close(in);
			in = fd;
			kill(bz, SIGTERM);
			if ((st = child_status(bz)) == BZ_CORRUPT || st == BZ_TOOBIG)
				snprintf(why, sizeof(why), "%s", bz_failure(st));
			bz = -1;
		}
		log_err("%s: %s", file, why);
		goto fail;
	}
	rc = head_config(&h, file, &hc, &dc, why, sizeof(why));
	head_free(&h);
	if (rc) {
		log_err("%s", why);
		goto fail;
	}
	/* Whoever wrote the file chose every path in it. */
	if ((rc = incoming_admit(&dc, &hc, why, sizeof(why)))) {
		log_err("%s: %s", file, why);
		goto fail;
	}
	if (limit_fd >= 0) {
		uint64_t bound = head_stream_bound(&dc);

		if (write(limit_fd, &bound, sizeof(bound)) != sizeof(bound))
			log_warn("cannot tell the decompressor its limit: %s", strerror(errno));
		close(limit_fd);
		limit_fd = -1;
	}
	/* lodge-hyp reads the rest and says itself what is wrong with it.  A
	 * compressed file is whole only when its decompressor ends well,
	 * after lodge-hyp has read the last byte: until then the domain
	 * waits, paused, having run not one guest instruction. */
	if ((rc = domain_start(&dc, &hc, paused || bz > 0, in)))
		goto fail;                /* lodge-hyp said what was wrong */
	if (in != fd)
		close(in);
	close(fd);
	if (bz > 0 && (st = child_status(bz)) != 0) {
		struct reply r;

		client_call(hc.runtime_dir, dc.name, "destroy", 0, &r);
		wait_gone(hc.runtime_dir, dc.name, 10000);
		log_err("%s: %s", file, bz_failure(st));
		return 1;
	}
	if (bz > 0 && !paused) {
		struct reply r;

		if (client_call(hc.runtime_dir, dc.name, "unpause", 0, &r) || r.error[0]) {
			log_err("domain %s was restored but does not unpause: %s", dc.name,
				r.error[0] ? r.error : "no answer");
			return 1;
		}
	}
	printf("restored domain %s from %s (%ld ms)\n", dc.name, file, now_ms() - t0);
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
	return 1;
}
