#include "disk.h"
#include "log.h"
#include "schema.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The disks this process has open: two of them may be one (a domain given
 * a file and a loop device over it), which the message should say. */
static struct disk *open_disks[32];

/* A PCI slot a device may be given (schema.h). */
int parse_slot(const char *s, unsigned *slot)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || v < DOMAIN_PCI_SLOT_MIN || v > DOMAIN_PCI_SLOT_MAX)
		return -EINVAL;
	*slot = (unsigned)v;
	return 0;
}

/* fd=N: a descriptor number (3 and up: never stdio). */
static int parse_fd(const char *s, int *fd)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || v < 3 || v > INT_MAX)
		return -EINVAL;
	*fd = (int)v;
	return 0;
}

int disk_parse(const char *spec, struct disk *d, char *err, size_t errlen)
{
	char buf[4200], *opt, *save = NULL;
	const char *slash;

	memset(d, 0, sizeof(*d));
	d->fd = d->fd_buffered = d->given_fd = -1;
	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "disk spec too long");
		return -EINVAL;
	}
	strcpy(buf, spec);
	opt = strtok_r(buf, ",", &save);
	if (!opt || !*opt) {
		snprintf(err, errlen, "disk '%s': no path", spec);
		return -EINVAL;
	}
	snprintf(d->path, sizeof(d->path), "%s", opt);
	while ((opt = strtok_r(NULL, ",", &save))) {
		if (strcmp(opt, "ro") == 0)
			d->readonly = true;
		else if (strcmp(opt, "rw") == 0)
			d->readonly = false;
		else if (strcmp(opt, "direct") == 0 || strcmp(opt, "cache=none") == 0)
			d->direct = true;
		else if (strncmp(opt, "id=", 3) == 0 && strlen(opt + 3) <= DISK_ID_MAX)
			snprintf(d->id, sizeof(d->id), "%s", opt + 3);
		else if (strncmp(opt, "slot=", 5) == 0 && parse_slot(opt + 5, &d->slot) == 0)
			;
		else if (strncmp(opt, "fd=", 3) == 0 && parse_fd(opt + 3, &d->given_fd) == 0)
			;
		else {
			snprintf(err, errlen, "disk '%s': unknown option '%s' (ro, id=NAME up to %d bytes, direct, "
				 "slot=%d-%d, fd=N)", spec, opt, DISK_ID_MAX, DOMAIN_PCI_SLOT_MIN, DOMAIN_PCI_SLOT_MAX);
			return -EINVAL;
		}
	}
	if (!d->id[0]) {
		slash = strrchr(d->path, '/');
		snprintf(d->id, sizeof(d->id), "%.20s", slash ? slash + 1 : d->path);
	}
	return 0;
}

/* Every name of the disk (before the sandbox: by path). */
static void disk_name(struct disk *d)
{
	struct disk_names dn;

	disk_names_collect(&dn, d->path, d->fd_buffered, d->readonly);
	if (dn.warn[0])
		log_warn("%s", dn.warn);
	memcpy(d->names, dn.names, sizeof(d->names));
	d->nnames = dn.n;
}

/* Once its names are open: lock the disk (unless a migration brings it
 * in) and read its size.  0, or -errno with err set and d closed. */
static int disk_finish(struct disk *d, const struct stat *st, char *err, size_t errlen)
{
	uint64_t size;
	unsigned i;

	for (i = 0; i < sizeof(open_disks) / sizeof(open_disks[0]) && open_disks[i]; i++)
		;
	if (i < sizeof(open_disks) / sizeof(open_disks[0]))
		open_disks[i] = d;
	if (!d->lock_later && disk_lock(d, err, errlen)) {
		disk_close(d);
		return -EBUSY;
	}
	if (S_ISBLK(st->st_mode)) {
		d->is_blockdev = true;
		if (ioctl(d->fd_buffered, BLKGETSIZE64, &size) < 0) {
			snprintf(err, errlen, "disk %s: %s", d->path, strerror(errno));
			disk_close(d);
			return -EIO;
		}
	} else {
		struct statfs fs;

		size = st->st_size;
		d->in_memory = fstatfs(d->fd_buffered, &fs) == 0 &&
			       (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC);
	}
	if (size % 512)
		log_warn("disk %s: size %llu is not a multiple of 512; the last %llu bytes are not used",
			 d->path, (unsigned long long)size, (unsigned long long)(size % 512));
	d->size = size & ~511ULL;
	if (d->size == 0) {
		snprintf(err, errlen, "disk %s is empty", d->path);
		disk_close(d);
		return -EINVAL;
	}
	return 0;
}

int disk_open(struct disk *d, char *err, size_t errlen)
{
	int flags = (d->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	struct stat st;
	int rc;

	if (d->given_fd >= 0) {
		/* Opened once by the agent (lodge_disk_open), the path only
		 * its name: this boot's own copy of the descriptor, which
		 * must be open as the disk's mode says. */
		int mode = fcntl(d->given_fd, F_GETFL);

		if (mode < 0 || (mode & O_ACCMODE) != (flags & O_ACCMODE)) {
			snprintf(err, errlen, "disk %s: fd=%d is not a descriptor open %s", d->path, d->given_fd,
				 d->readonly ? "read-only" : "for reading and writing");
			return -EBADF;
		}
		d->fd_buffered = fcntl(d->given_fd, F_DUPFD_CLOEXEC, 3);
	} else {
		/* O_NONBLOCK until it is known to be a file or a device:
		 * opening a FIFO read-only would wait for a writer forever. */
		d->fd_buffered = open(d->path, flags | O_NONBLOCK);
	}
	if (d->fd_buffered < 0) {
		int e = errno;

		snprintf(err, errlen, "cannot open disk %s: %s", d->path, strerror(e));
		return -e;
	}
	if (fstat(d->fd_buffered, &st) < 0)
		goto fail_errno;
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "disk %s is neither a regular file nor a block device", d->path);
		disk_close(d);
		return -EINVAL;
	}
	if (fcntl(d->fd_buffered, F_SETFL, fcntl(d->fd_buffered, F_GETFL) & ~O_NONBLOCK) < 0)
		goto fail_errno;
	disk_name(d);
	if ((rc = disk_finish(d, &st, err, errlen)))
		return rc;
	d->fd = d->fd_buffered;
	if (d->direct) {
		char self[64];

		/* The file just checked, not whatever the path names by now. */
		snprintf(self, sizeof(self), "/proc/self/fd/%d", d->fd_buffered);
		d->fd = open(self, flags | O_DIRECT);
		if (d->fd < 0) {
			log_warn("disk %s: O_DIRECT not possible (%s); using the page cache",
				 d->path, strerror(errno));
			d->fd = d->fd_buffered;
		}
	}
	return 0;

fail_errno:
	snprintf(err, errlen, "disk %s: %s", d->path, strerror(errno));
	disk_close(d);
	return -EIO;
}

/* Another disk of this domain that holds name n of d, if any. */
static const struct disk *held_here(const struct disk *d, const struct disk_name *n)
{
	unsigned i, k;

	for (i = 0; i < sizeof(open_disks) / sizeof(open_disks[0]); i++) {
		const struct disk *o = open_disks[i];

		if (!o || o == d || !o->locked)
			continue;
		for (k = 0; k < o->nnames; k++)
			if (o->names[k].dev == n->dev && o->names[k].ino == n->ino)
				return o;
	}
	return NULL;
}

/* The value of option opt ("--name") in a process's command line cmd
 * (got bytes, NUL-separated): NULL if it has none. */
static const char *cmdline_value(const char *cmd, ssize_t got, const char *opt)
{
	size_t olen = strlen(opt);
	ssize_t at;

	for (at = 0; at < got; at += (ssize_t)strlen(cmd + at) + 1) {
		const char *arg = cmd + at;

		if (strncmp(arg, opt, olen) == 0 && arg[olen] == '=')
			return arg + olen + 1;
		if (strcmp(arg, opt) == 0 && at + (ssize_t)olen + 1 < got)
			return arg + olen + 1;
	}
	return NULL;
}

/* The name a renamed domain has now (lodge rename moves its runtime
 * directory as it runs, and its command line keeps the old --name): the
 * directory under rundir that process pid or its parent (the supervisor,
 * which follows it: events_follow) holds open.  1 with name, else 0. */
static int followed_name(int pid, const char *rundir, char *name, size_t len)
{
	char path[64], link[4200], stat_line[512], *close_paren;
	size_t rlen = strlen(rundir);
	int tries, fd, ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (file_first_line(path, stat_line, sizeof(stat_line)) == 0 && (close_paren = strrchr(stat_line, ')')))
		sscanf(close_paren + 1, " %*c %d", &ppid);
	for (tries = 0; tries < 2; tries++, pid = ppid) {
		if (pid <= 1)
			break;
		for (fd = 0; fd < 64; fd++) {
			ssize_t k;

			snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
			if ((k = readlink(path, link, sizeof(link) - 1)) <= 0)
				continue;
			link[k] = '\0';
			if ((size_t)k > rlen + 1 && strncmp(link, rundir, rlen) == 0 && link[rlen] == '/' &&
			    domain_name_valid(link + rlen + 1)) {
				snprintf(name, len, "%s", link + rlen + 1);
				return 1;
			}
		}
	}
	return 0;
}

/* The domain holding name n's lock, for the refusal: /proc/locks gives
 * the process that took a flock on that device and inode, and a
 * lodge-hyp's runtime directory its name now (else its command line's
 * --name).  "" if that cannot be said (a process gone, a lock taken by
 * something else than a lodge-hyp, or /proc out of reach in the
 * sandbox). */
static void lock_holder(const struct disk_name *n, char *name, size_t len)
{
	char line[256], path[64], cmd[8192], self[32], other[32], real[PATH_MAX];
	const char *v, *rundir;
	unsigned maj, min;
	unsigned long long ino;
	int pid = 0, fd;
	ssize_t got;
	FILE *f;

	name[0] = '\0';
	if (!(f = fopen("/proc/locks", "re")))
		return;
	while (!pid && fgets(line, sizeof(line), f)) {
		int p;

		/* "1: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE START END";
		 * a waiter's line has "->" before FLOCK and is not a holder. */
		if (sscanf(line, "%*d: FLOCK %*s %*s %d %x:%x:%llu", &p, &maj, &min, &ino) == 4 &&
		    maj == major(n->dev) && min == minor(n->dev) && ino == n->ino && p > 0 && p != getpid())
			pid = p;
	}
	fclose(f);
	/* Only a lodge-hyp's --name names a domain: the holder's command
	 * must be this one's. */
	if (!pid || file_first_line("/proc/self/comm", self, sizeof(self)) ||
	    (snprintf(path, sizeof(path), "/proc/%d/comm", pid), file_first_line(path, other, sizeof(other))) ||
	    strcmp(self, other) != 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	got = read(fd, cmd, sizeof(cmd) - 1);
	close(fd);
	if (got <= 0)
		return;
	cmd[got] = '\0';
	rundir = cmdline_value(cmd, got, "--runtime-dir");
	/* as the kernel spells the directories it holds */
	if (rundir && realpath(rundir, real))
		rundir = real;
	if (rundir && rundir[0] == '/' && followed_name(pid, rundir, name, len))
		return;
	/* Whatever the other process's arguments say, only a valid domain
	 * name is repeated. */
	if ((v = cmdline_value(cmd, got, "--name")) && domain_name_valid(v))
		snprintf(name, len, "%s", v);
}

int disk_lock(struct disk *d, char *err, size_t errlen)
{
	unsigned i, k;

	/* One writer, or any number of readers, of each name on the host. */
	for (i = 0; i < d->nnames; i++) {
		const struct disk_name *n = &d->names[i];
		bool shared = n->shared;
		const struct disk *here;
		int e;

		if (flock(n->fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0)
			continue;
		e = errno;
		for (k = 0; k < i; k++)
			flock(d->names[k].fd, LOCK_UN);
		if (e != EWOULDBLOCK)
			snprintf(err, errlen, "cannot lock disk %s%s%s: %s", d->path, n->what[0] ? " through " : "",
				 n->what, strerror(e));
		else if ((here = held_here(d, n)))
			snprintf(err, errlen, "disks %s and %s of this domain are the same blocks%s%s",
				 here->path, d->path, n->what[0] ? ": both use " : "", n->what);
		else {
			char holder[DOMAIN_NAME_MAX + 1];

			lock_holder(n, holder, sizeof(holder));
			snprintf(err, errlen, "disk %s is in use by %s%s%s%s%s%s", d->path,
				 holder[0] ? "domain " : "another domain", holder,
				 n->what[0] ? ": " : "", n->what, n->what[0] ? " is in use" : "",
				 shared ? " (opened writable there)" : "");
		}
		return -EBUSY;
	}
	d->locked = true;
	return 0;
}

void disk_unlock(struct disk *d)
{
	unsigned i;

	for (i = 0; i < d->nnames; i++)
		flock(d->names[i].fd, LOCK_UN);
	d->locked = false;
}

void disk_close(struct disk *d)
{
	unsigned i;

	for (i = 0; i < sizeof(open_disks) / sizeof(open_disks[0]); i++)
		if (open_disks[i] == d)
			open_disks[i] = NULL;
	for (i = 0; i < d->nnames; i++)
		if (d->names[i].fd != d->fd_buffered)
			close(d->names[i].fd);
	d->nnames = 0;
	d->locked = false;
	if (d->fd >= 0 && d->fd != d->fd_buffered)
		close(d->fd);
	if (d->fd_buffered >= 0)
		close(d->fd_buffered);
	d->fd = d->fd_buffered = -1;
}

int disk_adopt(struct disk *d, const int *fds, unsigned nfds, uint32_t shared, char *err, size_t errlen)
{
	int want = d->readonly ? O_RDONLY : O_RDWR, mode, rc;
	struct stat st;
	unsigned i;

	if (nfds < 1 || nfds > DISK_NAMES_MAX) {
		snprintf(err, errlen, "disk %s: %u descriptors sent, 1 to %d expected", d->path, nfds,
			 DISK_NAMES_MAX);
		goto refuse;
	}
	if (fstat(fds[0], &st) < 0 || (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))) {
		snprintf(err, errlen, "disk %s is neither a regular file nor a block device", d->path);
		goto refuse;
	}
	mode = fcntl(fds[0], F_GETFL);
	if (mode < 0 || (mode & O_ACCMODE) != want) {
		snprintf(err, errlen, "disk %s: the descriptor sent is not open %s", d->path,
			 d->readonly ? "read-only" : "for reading and writing");
		goto refuse;
	}
	if (fcntl(fds[0], F_SETFL, mode & ~O_NONBLOCK) < 0) {
		snprintf(err, errlen, "disk %s: %s", d->path, strerror(errno));
		goto refuse;
	}
	d->fd_buffered = fds[0];
	d->nnames = 0;
	for (i = 0; i < nfds; i++) {
		struct stat ns;

		if (fstat(fds[i], &ns) < 0) {
			snprintf(err, errlen, "disk %s: name %u: %s", d->path, i, strerror(errno));
			for (; i < nfds; i++)
				close(fds[i]);
			disk_close(d);
			return -EINVAL;
		}
		d->names[d->nnames++] = (struct disk_name){
			.fd = fds[i], .shared = d->readonly || (i > 0 && (shared & (1u << i))),
			.dev = ns.st_dev, .ino = ns.st_ino };
		if (i > 0)
			snprintf(d->names[i].what, sizeof(d->names[i].what), "another name of its blocks (%u:%u inode %llu)",
				 major(ns.st_dev), minor(ns.st_dev), (unsigned long long)ns.st_ino);
	}
	if (d->direct)
		log_warn("disk %s: attached without O_DIRECT (the page cache is used)", d->path);
	d->direct = false;
	if ((rc = disk_finish(d, &st, err, errlen)))
		return rc;
	d->fd = d->fd_buffered;
	return 0;

refuse:
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	return -EINVAL;
}
