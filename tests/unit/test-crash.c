/* Crash evidence as lodge-hyp's supervisor keeps it (src/hyp/crash.c),
 * against a domain process a guest has taken over: the report it writes
 * is untrusted (a stamp that climbs out of the directory, control
 * characters, a missing part), and so is the runtime directory (a log
 * that is a link to a secret).  Names (src/common/crashdir.c), the
 * evidence made only from what is sound, and the pruning to the newest
 * CRASH_KEEP_PER_DOMAIN of one domain's crashes. */
#include "crash.h"
#include "crashdir.h"
#include "log.h"
#include "options.h"
#include "runtime.h"
#include "unit.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char base[64];

/* The descriptor of the report memfd crash_arm made. */
static int report_fd(void)
{
	char link[64], target[128];
	ssize_t n;
	int fd;

	for (fd = 3; fd < 64; fd++) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		if ((n = readlink(link, target, sizeof(target) - 1)) > 0) {
			target[n] = '\0';
			if (strstr(target, "memfd:lodge-crash-report"))
				return fd;
		}
	}
	return -1;
}

static size_t slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return n;
}

static unsigned count_crashes(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;

	while (d && (e = readdir(d)))
		n += crash_entry_of(e->d_name, name);
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	char crash[128], run[128], p[512], buf[4096], stamp[CRASH_STAMP_MAX];
	struct timespec ts = { .tv_sec = 1796422530, .tv_nsec = 123456789 };
	struct options o = { .name = "web", .on_crash = ACTION_DESTROY };
	const char *dir;
	struct stat st;
	int fd, i;

	log_init("test-crash");
	/* ---- names ---- */
	crash_stamp(stamp, &ts);
	CHECK("a stamp is the UTC time to the millisecond", strcmp(stamp, "20261204T221530.123Z") == 0);
	CHECK("... and valid", crash_stamp_valid(stamp));
	CHECK("a stamp with -2 is valid", crash_stamp_valid("20261204T221530.123Z-2"));
	CHECK("no other suffix", !crash_stamp_valid("20261204T221530.123Z-1") &&
	      !crash_stamp_valid("20261204T221530.123Z-22") && !crash_stamp_valid("20261204T221530.123Z/"));
	CHECK("no path in a stamp", !crash_stamp_valid("../../../etc/x") && !crash_stamp_valid(""));
	CHECK("web's crash is web's", crash_entry_of("web-20261204T221530.123Z", "web"));
	CHECK("web2's and web-x's crashes are not web's", !crash_entry_of("web2-20261204T221530.123Z", "web") &&
	      !crash_entry_of("web-x-20261204T221530.123Z", "web"));
	CHECK("a stranger is nobody's", !crash_entry_of("web-notes", "web"));

	/* ---- a report and a runtime directory from a domain taken over ---- */
	snprintf(base, sizeof(base), "/tmp/lodge-crash-%d", (int)getpid());
	snprintf(crash, sizeof(crash), "%s/var/crash", base);
	snprintf(run, sizeof(run), "%s/run", base);
	mkdir(base, 0755);
	mkdir(run, 0700);
	o.crash_dir = crash;
	o.runtime_dir = run;
	crash_open(&o);
	CHECK("the crash directory is made, root's alone",
	      stat(crash, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
	/* Twelve old crashes: after one more, the newest ten stay. */
	for (i = 0; i < 12; i++) {
		snprintf(p, sizeof(p), "%s/web-20000101T0000%02d.000Z", crash, i);
		mkdir(p, 0750);
		snprintf(p, sizeof(p), "%s/web-20000101T0000%02d.000Z/reason", crash, i);
		unit_write_file(p, "old\n");
	}
	snprintf(p, sizeof(p), "%s/web2-20000101T000000.000Z", crash);
	mkdir(p, 0750);

	crash_arm();
	CHECK("no boot, no report: no evidence", crash_collect(run) == NULL);
	crash_arm();
	fd = report_fd();
	CHECK("the report is a memfd the domain process inherits", fd >= 0);
	snprintf(buf, sizeof(buf), "stamp ../../../../tmp/x\nreason evil \033[2J\001 reason\ncore written\n"
		 "vcpu0: rip 0000000000106e96 \033]0;title\007\n");
	if (fd >= 0 && write(fd, buf, strlen(buf)) < 0)
		CHECK("write the report", 0);
	/* Its logs: the console log a link to a secret, lodge-hyp.log real. */
	snprintf(p, sizeof(p), "%s/secret", base);
	unit_write_file(p, "the host's secret\n");
	snprintf(buf, sizeof(buf), "%s/%s", run, runtime_file_name(RT_CONSOLE_LOG));
	if (symlink(p, buf) < 0)
		CHECK("plant the link", 0);
	snprintf(p, sizeof(p), "%s/%s", run, runtime_file_name(RT_HYP_LOG));
	unit_write_file(p, "lodge-hyp: error: vcpu0 triple fault\n");

	dir = crash_collect(run);
	CHECK("a crash reported: evidence kept", dir && strncmp(dir, crash, strlen(crash)) == 0);
	CHECK("... under the crash directory, with a stamp of the supervisor's own (not one that climbs out)",
	      dir && crash_entry_of(strrchr(dir, '/') + 1, "web") && strcmp(dir, crash_last_dir()) == 0);
	snprintf(p, sizeof(p), "%s/reason", dir ? dir : "/nonexistent");
	slurp(p, buf, sizeof(buf));
	CHECK("a malformed report's reason is unknown", strncmp(buf, "unknown", 7) == 0);
	snprintf(p, sizeof(p), "%s/%s", dir ? dir : "/nonexistent", CRASH_FILE_CONSOLE);
	CHECK("a console log that is a link is not followed (no copy of the secret)", access(p, F_OK) != 0);
	snprintf(p, sizeof(p), "%s/%s", dir ? dir : "/nonexistent", CRASH_FILE_HYP_LOG);
	slurp(p, buf, sizeof(buf));
	CHECK("lodge-hyp's log is copied", strstr(buf, "vcpu0 triple fault") != NULL);
	snprintf(p, sizeof(p), "%s/%s", dir ? dir : "/nonexistent", CRASH_FILE_CORE);
	CHECK("no core without a core file handed out (on_crash = destroy)", access(p, F_OK) != 0);
	CHECK("the newest 10 of web's crashes stay", count_crashes(crash, "web") == CRASH_KEEP_PER_DOMAIN);
	snprintf(p, sizeof(p), "%s/web-20000101T000002.000Z", crash);
	CHECK("... the oldest go", access(p, F_OK) != 0);
	snprintf(p, sizeof(p), "%s/web-20000101T000003.000Z", crash);
	CHECK("... the rest stay", access(p, F_OK) == 0);
	snprintf(p, sizeof(p), "%s/web2-20000101T000000.000Z", crash);
	CHECK("another domain's crash stays", access(p, F_OK) == 0);

	/* A well-formed report: its stamp and reason, control characters gone. */
	crash_arm();
	fd = report_fd();
	snprintf(buf, sizeof(buf), "stamp 20261204T221530.123Z\nreason vcpu0 triple \033[2J fault\ncore none\n"
		 "vcpu0: rip 0000000000106e96\n");
	if (fd < 0 || write(fd, buf, strlen(buf)) < 0)
		CHECK("write the second report", 0);
	dir = crash_collect(run);
	snprintf(p, sizeof(p), "%s/web-20261204T221530.123Z", crash);
	CHECK("a sound report's stamp names the directory", dir && strcmp(dir, p) == 0);
	snprintf(p, sizeof(p), "%s/reason", dir ? dir : "/nonexistent");
	slurp(p, buf, sizeof(buf));
	CHECK("its reason, with control characters made '?'", strcmp(buf, "vcpu0 triple ?[2J fault\n") == 0);
	CHECK("crash_last_reason() has it", strcmp(crash_last_reason(), "vcpu0 triple ?[2J fault") == 0);
	snprintf(p, sizeof(p), "%s/registers", dir ? dir : "/nonexistent");
	slurp(p, buf, sizeof(buf));
	CHECK("its registers", strcmp(buf, "vcpu0: rip 0000000000106e96\n") == 0);
	/* The same stamp again (two crashes in a millisecond): -2. */
	crash_arm();
	fd = report_fd();
	snprintf(buf, sizeof(buf), "stamp 20261204T221530.123Z\nreason again\ncore none\n");
	if (fd < 0 || write(fd, buf, strlen(buf)) < 0)
		CHECK("write the third report", 0);
	dir = crash_collect(run);
	snprintf(p, sizeof(p), "%s/web-20261204T221530.123Z-2", crash);
	CHECK("a stamp taken gets -2", dir && strcmp(dir, p) == 0);

	snprintf(p, sizeof(p), "rm -rf %s", base);
	if (system(p) != 0)
		printf("note: could not remove %s\n", base);
	UNIT_EXIT();
}
