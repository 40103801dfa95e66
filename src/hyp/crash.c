/* Crash evidence that outlives the domain (crash.h). */
#include "crash.h"
#include "console.h"
#include "crashdir.h"
#include "mkdirs.h"
#include "domain.h"
#include "emulate.h"
#include "log.h"
#include "options.h"
#include "runtime.h"
#include "save/core.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Set by the supervisor; the domain's process has its copy. */
static struct {
	const char *root;          /* --crash-dir; NULL: none */
	const char *name;
	enum domain_action on_crash;
	int root_fd;               /* the crash directory, opened once */
	int report_fd;             /* this boot's report (memfd) */
	int core_fd;               /* this boot's core (O_TMPFILE in root), or -1 */
	char last_dir[4200];       /* the last crash's evidence directory */
	char last_reason[256];     /* ... and its reason, as the domain reported it */
} kit = { .root_fd = -1, .report_fd = -1, .core_fd = -1 };

/* The domain's process: the crash's stamp, chosen once. */
static char crash_stamp_now[CRASH_STAMP_MAX];

/* ---- the domain's process -------------------------------------------------- */

void crash_child(void)
{
	if (kit.root_fd >= 0)
		close(kit.root_fd);
	kit.root_fd = -1;
}

void crash_announce(struct domain *dom)
{
	char dir[4200], line[4600];
	struct timespec ts;
	int n;

	if (atomic_load(&dom->end) != DOMAIN_CRASH || crash_stamp_now[0])
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	crash_stamp(crash_stamp_now, &ts);
	if (kit.root && kit.report_fd >= 0 &&
	    crash_dir_path(dir, sizeof(dir), kit.root, dom->name, crash_stamp_now) == 0) {
		log_err("domain %s crashed: %s; evidence in %s", dom->name, dom->end_reason, dir);
		n = snprintf(line, sizeof(line), "\r\n[lodge: %s crashed: %s; evidence in %s]\r\n", dom->name,
			     dom->end_reason, dir);
	} else {
		log_err("domain %s crashed: %s", dom->name, dom->end_reason);
		n = snprintf(line, sizeof(line), "\r\n[lodge: %s crashed: %s]\r\n", dom->name, dom->end_reason);
	}
	if (n > 0)
		console_output((const uint8_t *)line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static void report_write(const char *text, size_t len)
{
	if (write(kit.report_fd, text, len) < 0) {
		/* the supervisor finds less: nothing more to do about it */
	}
}

void crash_report(struct domain *dom)
{
	char core[300] = "none", regs[1024], why[256];
	unsigned i;
	int n;

	if (atomic_load(&dom->end) != DOMAIN_CRASH || kit.report_fd < 0)
		return;
	crash_announce(dom);
	if (domain_action_dumps_core(dom->on_crash)) {
		if (kit.core_fd < 0)
			snprintf(core, sizeof(core), "not written: no file for it (see the supervisor's message)");
		else if (core_write(dom, kit.core_fd, why, sizeof(why)) < 0)
			snprintf(core, sizeof(core), "not written: %s", why);
		else
			snprintf(core, sizeof(core), "written");
		log_info("domain %s's core: %s", dom->name, core);
	}
	n = snprintf(regs, sizeof(regs), "stamp %s\nreason %s\ncore %s\n", crash_stamp_now, dom->end_reason, core);
	report_write(regs, (size_t)n < sizeof(regs) ? (size_t)n : sizeof(regs) - 1);
	for (i = 0; i < dom->nvcpus; i++) {
		n = vcpu_registers_text(&dom->vcpus[i], regs, sizeof(regs));
		report_write(regs, (size_t)n < sizeof(regs) ? (size_t)n : sizeof(regs) - 1);
	}
	/* What lodge-hyp completed for a PVM host's KVM before the end. */
	emulate_counts_text(why, sizeof(why));
	n = snprintf(regs, sizeof(regs), "completed for the host's KVM: %s\n", why);
	report_write(regs, (size_t)n < sizeof(regs) ? (size_t)n : sizeof(regs) - 1);
}

/* ---- the supervisor ---------------------------------------------------------- */

void crash_open(const struct options *o)
{
	struct stat st;
	int rc;

	kit.root = o->crash_dir;
	kit.name = o->name;
	kit.on_crash = o->on_crash;
	if (!kit.root)
		return;
	if ((rc = mkdirs(kit.root, DIR_MODE_PRIVATE, NULL, 0)) ||
	    (kit.root_fd = open(kit.root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		log_warn("crash evidence will not be kept: cannot make %s: %s", kit.root,
			 strerror(rc ? -rc : errno));
		kit.root = NULL;
		return;
	}
	/* Whoever else may write there could plant what root then writes
	 * through. */
	if (fstat(kit.root_fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		log_warn("crash evidence will not be kept: %s is not this user's alone (owner %u, mode %o)",
			 kit.root, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		close(kit.root_fd);
		kit.root_fd = -1;
		kit.root = NULL;
	}
}

void crash_arm(void)
{
	if (kit.report_fd >= 0)
		close(kit.report_fd);
	if (kit.core_fd >= 0)
		close(kit.core_fd);
	kit.report_fd = kit.core_fd = -1;
	if (!kit.root)
		return;
	if ((kit.report_fd = memfd_create("lodge-crash-report", MFD_CLOEXEC)) < 0)
		log_warn("crash evidence will not be kept: memfd_create: %s", strerror(errno));
	if (kit.report_fd >= 0 && domain_action_dumps_core(kit.on_crash) &&
	    (kit.core_fd = openat(kit.root_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)) < 0)
		log_warn("a crash's core will not be written: no unnamed file in %s: %s", kit.root,
			 strerror(errno));
}

/* A new file in dfd, made by us alone (never through a link). */
static int create_file(int dfd, const char *name)
{
	return openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
}

static void put_text(int dfd, const char *name, const char *text, size_t len)
{
	int fd = create_file(dfd, name);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len)
		log_warn("cannot write %s of domain %s's crash: %s", name, kit.name, strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* A regular file of the runtime directory, never through a link. */
static int open_runtime_file(int rfd, enum runtime_file f, off_t *size)
{
	struct stat st;
	int fd = openat(rfd, runtime_file_name(f), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	*size = 0;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	*size = st.st_size;
	return fd;
}

/* Append the last want bytes of fd (size bytes) to out. */
static void copy_tail(int fd, off_t size, off_t want, int out)
{
	char buf[65536];
	off_t off = size > want ? size - want : 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		if (write(out, buf, (size_t)n) != n)
			break;
		off += n;
	}
}

/* The console's last CRASH_CONSOLE_BYTES (from the rotated part too),
 * and the end of lodge-hyp's log. */
static void copy_logs(const char *rundir, int dfd)
{
	off_t cur_size, old_size;
	int rfd = open(rundir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), cur, old, out;

	if (rfd < 0) {
		log_warn("cannot copy domain %s's logs for its crash: %s: %s", kit.name, rundir, strerror(errno));
		return;
	}
	cur = open_runtime_file(rfd, RT_CONSOLE_LOG, &cur_size);
	old = open_runtime_file(rfd, RT_CONSOLE_LOG_OLD, &old_size);
	if ((cur >= 0 || old >= 0) && (out = create_file(dfd, CRASH_FILE_CONSOLE)) >= 0) {
		if (old >= 0 && cur_size < CRASH_CONSOLE_BYTES)
			copy_tail(old, old_size, CRASH_CONSOLE_BYTES - cur_size, out);
		if (cur >= 0)
			copy_tail(cur, cur_size, CRASH_CONSOLE_BYTES, out);
		close(out);
	}
	if (cur >= 0)
		close(cur);
	if (old >= 0)
		close(old);
	cur = open_runtime_file(rfd, RT_HYP_LOG, &cur_size);
	if (cur >= 0 && (out = create_file(dfd, CRASH_FILE_HYP_LOG)) >= 0) {
		copy_tail(cur, cur_size, CRASH_HYP_LOG_BYTES, out);
		close(out);
	}
	if (cur >= 0)
		close(cur);
	close(rfd);
}

/* Remove one crash's directory (files only: that is all it holds). */
static void remove_crash(const char *entry)
{
	int dfd = openat(kit.root_fd, entry, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *e;
	DIR *d;

	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dfd, e->d_name, 0);
	closedir(d);
	if (unlinkat(kit.root_fd, entry, AT_REMOVEDIR) < 0)
		log_warn("cannot remove domain %s's old crash %s/%s: %s", kit.name, kit.root, entry, strerror(errno));
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The newest CRASH_KEEP_PER_DOMAIN of this domain's crashes stay. */
static void prune(void)
{
	char **names = NULL, **more;
	size_t n = 0, cap = 0, i;
	struct dirent *e;
	int fd = dup(kit.root_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		if (!crash_entry_of(e->d_name, kit.name))
			continue;
		if (n == cap) {
			if (!(more = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*names))))
				break;
			names = more;
		}
		if (!(names[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), by_name);
	for (i = 0; i + CRASH_KEEP_PER_DOMAIN < n; i++)
		remove_crash(names[i]);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The directory for this crash: its stamp, or with -2 .. -9 if taken. */
static int make_crash_dir(const char *stamp, char *entry, size_t len)
{
	int k;

	for (k = 1; k <= 9; k++) {
		if (k == 1)
			snprintf(entry, len, "%s-%s", kit.name, stamp);
		else
			snprintf(entry, len, "%s-%s-%d", kit.name, stamp, k);
		if (mkdirat(kit.root_fd, entry, 0750) == 0)
			return openat(kit.root_fd, entry, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

const char *crash_collect(const char *rundir)
{
	static char report[CRASH_REPORT_BYTES + 1];
	char stamp[CRASH_STAMP_MAX], entry[512], *reason, *core, *regs;
	struct timespec ts;
	ssize_t len;
	size_t i;
	int dfd;

	if (!kit.root || kit.report_fd < 0 || (len = pread(kit.report_fd, report, CRASH_REPORT_BYTES, 0)) <= 0)
		return NULL;
	report[len] = '\0';
	/* Written by a sandboxed process a guest may have taken over: lines
	 * of printable text only (the reason was escaped when the domain
	 * ended; registers are hex), each part checked for its shape. */
	for (i = 0; i < (size_t)len; i++)
		if (report[i] != '\n' && (report[i] < 0x20 || report[i] > 0x7e))
			report[i] = '?';
	reason = strstr(report, "\nreason ");
	core = strstr(report, "\ncore ");
	if (strncmp(report, "stamp ", 6) || !reason || !core || (size_t)(reason - report) != 6 + CRASH_STAMP_LEN ||
	    strchr(reason + 1, '\n') != core)
		snprintf(stamp, sizeof(stamp), "bad");
	else
		snprintf(stamp, sizeof(stamp), "%.*s", CRASH_STAMP_LEN, report + 6);
	if (!crash_stamp_valid(stamp)) {
		clock_gettime(CLOCK_REALTIME, &ts);
		crash_stamp(stamp, &ts);
		reason = core = NULL;
	}
	if ((dfd = make_crash_dir(stamp, entry, sizeof(entry))) < 0) {
		log_err("cannot keep domain %s's crash evidence in %s/%s: %s", kit.name, kit.root, entry,
			strerror(errno));
		return NULL;
	}
	snprintf(kit.last_dir, sizeof(kit.last_dir), "%s/%s", kit.root, entry);
	snprintf(kit.last_reason, sizeof(kit.last_reason), "%.*s", reason ? (int)(core - reason - 8) : 7,
		 reason ? reason + 8 : "unknown");
	if (!reason) {
		put_text(dfd, CRASH_FILE_REASON, "unknown (the domain's report was malformed)\n", 44);
	} else {
		put_text(dfd, CRASH_FILE_REASON, reason + 8, (size_t)(core - reason - 8) + 1);
		regs = strchr(core + 1, '\n');
		if (regs && regs[1])
			put_text(dfd, CRASH_FILE_REGISTERS, regs + 1, strlen(regs + 1));
	}
	/* The core goes in only if the process says it wrote it whole. */
	if (kit.core_fd >= 0 && core && strncmp(core, "\ncore written\n", 14) == 0 &&
	    (fchmod(kit.core_fd, 0640) < 0 || linkat(kit.core_fd, "", dfd, CRASH_FILE_CORE, AT_EMPTY_PATH) < 0))
		log_err("cannot keep domain %s's core in %s: %s", kit.name, kit.last_dir, strerror(errno));
	copy_logs(rundir, dfd);
	close(dfd);
	prune();
	log_info("domain %s's crash evidence is in %s", kit.name, kit.last_dir);
	return kit.last_dir;
}

const char *crash_last_dir(void)
{
	return kit.last_dir;
}

const char *crash_last_reason(void)
{
	return kit.last_reason;
}
