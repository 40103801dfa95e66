/* lodge-hyp's least privilege (issue 10).  Once a domain's process has
 * opened everything it will ever need (/dev/kvm, the VM, disks, taps,
 * the control socket, logs, cgroup files, /proc files), it gives up the
 * rest: an empty root, an unprivileged user with no groups and no
 * capabilities, no_new_privs, and a seccomp filter that admits only the
 * system calls (and ioctl requests) a running domain makes.  A call
 * outside the filter ends the process with one log line naming it.
 *
 * The supervisor (supervise.c) stays privileged and unsandboxed; only the
 * process that runs the guest is confined. */
#ifndef LODGE_SANDBOX_H
#define LODGE_SANDBOX_H

#include <stdbool.h>
#include <sys/types.h>

#define SANDBOX_DEFAULT_USER  "lodge"
#define SANDBOX_FALLBACK_USER "nobody"
/* Where the empty root comes from when a mount namespace is refused:
 * an empty directory `make install` creates. */
#define SANDBOX_EMPTY_DIR     "/var/empty"

struct sandbox {
	bool off;                 /* --no-sandbox */
	bool as_root;             /* started as root: change user and root */
	bool own_ns;              /* sandbox_early() made a private mount namespace */
	bool test_forbidden;      /* LODGE_HYP_TEST_FORBIDDEN_SYSCALL (tests only) */
	bool test_pause_reader;   /* LODGE_HYP_TEST_PAUSE_READER: the boot reader stops itself once confined (tests only) */
	uid_t uid;
	gid_t gid;
	char user[64];
};

/* In the supervisor, before any domain process: which user to become
 * (name NULL: lodge, else nobody).  0, or -errno with one message logged. */
int sandbox_init(struct sandbox *sb, const char *name, bool off);
/* In the domain process first thing, while it has one thread: a private
 * mount namespace for sandbox_enter() to make an empty root in, and an
 * empty capability bounding set (per thread, so it must precede threads). */
void sandbox_early(struct sandbox *sb);
/* Confine this process, every thread of it included.  0, or -errno with
 * one message logged. */
int sandbox_enter(struct sandbox *sb);
/* The boot-disk reader (bootload.c), a child of the domain process that
 * holds only the disk and its outputs: an empty root in a mount namespace
 * of its own (else /var/empty), the sandbox's user, no_new_privs and a
 * seccomp filter of its own (reading, writing what it holds, memory).
 * 0, or -errno with why. */
int sandbox_enter_reader(const struct sandbox *sb, char *why, size_t whylen);
/* Test only: one forbidden call, if LODGE_HYP_TEST_FORBIDDEN_SYSCALL asked. */
void sandbox_test_forbidden(const struct sandbox *sb);

#endif
