/* Private to liblodge: the helper programs the library runs (a template
 * build's and a clone's mmdebstrap, mkfs.ext4, e2fsck, resize2fs,
 * tune2fs; the seed's mkfs.vfat, mcopy and cloud-init; a network's
 * dnsmasq; the create form's mkfs).  Each runs with an argv (never a
 * shell), found on a fixed PATH, with LC_ALL=C (its messages are parsed,
 * and the caller's PATH may lack /sbin), its output read line by line as
 * it comes.  It can be cancelled: it is then stopped, its whole process
 * group, and waited for before tool_run returns.  Its caller's death
 * stops it too (SIGTERM): nothing goes on being made for no one. */
#ifndef LODGE_TOOL_H
#define LODGE_TOOL_H

#include <stdbool.h>
#include <stddef.h>

#define TOOL_LAST_MAX 512
#define TOOL_TICK_MS  200          /* tick at least this often while it runs */
#define TOOL_GRACE_MS 3000         /* after SIGTERM, before SIGKILL (mmdebstrap ignores SIGTERM while it waits for apt) */

struct tool_run {
	const char *const *argv;       /* argv[0] found on the fixed PATH */
	/* Under a pseudo-terminal of its own (mmdebstrap draws its progress
	 * bars only for one), else stdout and stderr on a pipe. */
	bool pty;
	/* In a mount namespace of its own, private: whatever it mounts (the
	 * chroot's /proc, /sys, /dev) goes when it ends, however it ends. */
	bool own_mounts;
	/* Descriptors it inherits (a lock held while it runs, files it is
	 * given as /proc/self/fd/N); the rest are close-on-exec. */
	const int *keep;
	unsigned nkeep;
	/* An environment of its own, PATH and LC_ALL alone (no HOME: mtools
	 * would read the caller's ~/.mtoolsrc); else the caller's, with
	 * those two replaced (mmdebstrap's apt wants its proxy settings). */
	bool bare_env;
	/* Each line of its output, without the end; a line ended by '\r'
	 * (a progress bar redrawn) too.  Terminal escapes removed. */
	void (*line)(const char *line, void *arg);
	/* Called every TOOL_TICK_MS at most apart: false cancels the run. */
	bool (*tick)(void *arg);
	void *arg;
	char last[TOOL_LAST_MAX];      /* out: its last non-empty line, for a failure's message */
};

/* Run it to its end: its exit status (0-255; 128+N if killed by signal N),
 * -ECANCELED if tick said stop (it has been stopped), or -errno if it
 * could not be started (-ENOENT: the program is not installed). */
int tool_run(struct tool_run *t);

/* "PROGRAM failed (exit status N): LAST" into buf, for rc from tool_run. */
void tool_describe(const struct tool_run *t, int rc, char *buf, size_t len);

#endif
