/* The sandbox of a domain's lodge-hyp process (see sandbox.h). */
#include "sandbox.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/blkzoned.h>
#include <linux/cdrom.h>
#include <linux/kvm.h>
#include <linux/fs.h>
#include <linux/if_tun.h>
#include <malloc.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

int sandbox_init(struct sandbox *sb, const char *name, bool off)
{
	const struct passwd *pw;

	memset(sb, 0, sizeof(*sb));
	sb->off = off;
	sb->as_root = geteuid() == 0;
	/* Read at start, not when the test call is made: by then the
	 * environment is all there is, but reading it early keeps the
	 * trigger next to the other options.  Test only (tests/integ/sandbox.sh). */
	sb->test_forbidden = getenv("LODGE_HYP_TEST_FORBIDDEN_SYSCALL") != NULL;
	sb->test_pause_reader = getenv("LODGE_HYP_TEST_PAUSE_READER") != NULL;
	if (off || !sb->as_root)
		return 0;
	pw = getpwnam(name ? name : SANDBOX_DEFAULT_USER);
	if (!pw && !name)
		pw = getpwnam(SANDBOX_FALLBACK_USER);
	if (!pw) {
		log_err("--user %s: no such user", name ? name : SANDBOX_FALLBACK_USER);
		return -ENOENT;
	}
	if (pw->pw_uid == 0) {
		log_err("--user %s is root: the sandbox needs an unprivileged user", pw->pw_name);
		return -EINVAL;
	}
	sb->uid = pw->pw_uid;
	sb->gid = pw->pw_gid;
	snprintf(sb->user, sizeof(sb->user), "%s", pw->pw_name);
	return 0;
}

void sandbox_early(struct sandbox *sb)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct caps[2];
	int cap;

	if (sb->off || !sb->as_root)
		return;
	/* Slave, not private: the host's unmounts still reach this copy of
	 * its mounts, and nothing mounted here goes back out. */
	if (unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) == 0)
		sb->own_ns = true;
	else
		log_debug("no mount namespace of our own (%s): the root will be %s", strerror(errno),
			  SANDBOX_EMPTY_DIR);
	/* The bounding set and the inheritable set are per thread: emptied
	 * here, every thread started from now on has none.  The effective
	 * set stays until the user changes. */
	for (cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno == EINVAL)
			break;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (syscall(SYS_capget, &hdr, caps) == 0) {
		caps[0].inheritable = caps[1].inheritable = 0;
		syscall(SYS_capset, &hdr, caps);
	}
}

/* ---- the empty root ------------------------------------------------------ */

/* A new tmpfs, read-only and empty, becomes / and the host's tree is
 * detached: nothing of the host's file system is reachable by path any
 * more, only through the descriptors already open.  /tmp is only where
 * the tmpfs is mounted for a moment in this process's own namespace (as
 * bubblewrap does): the host's /tmp is not touched. */
static int pivot_to_tmpfs(void)
{
	if (mount("lodge-empty", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "size=4k,nr_inodes=2,mode=0555") < 0)
		return -errno;
	if (chdir("/tmp") < 0)
		return -errno;
	if (syscall(SYS_pivot_root, ".", ".") == 0) {
		/* The old root is now stacked on the new one: take it away. */
		if (umount2(".", MNT_DETACH) < 0)
			return -errno;
	} else if (chroot(".") < 0) {
		/* pivot_root refuses where / is no mount point (a chroot):
		 * the tmpfs as a plain chroot is still an empty root. */
		return -errno;
	}
	if (chdir("/") < 0)
		return -errno;
	mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	return 0;
}

static int enter_empty_root(struct sandbox *sb, const char **how)
{
	int rc = -ENOSYS;

	if (sb->own_ns && (rc = pivot_to_tmpfs()) == 0) {
		*how = "an empty tmpfs in its own mount namespace";
		return 0;
	}
	if (chroot(SANDBOX_EMPTY_DIR) == 0 && chdir("/") == 0) {
		*how = SANDBOX_EMPTY_DIR;
		return 0;
	}
	log_warn("the sandbox keeps the host's root: no mount namespace (%s) and cannot chroot to %s (%s)",
		 strerror(-rc), SANDBOX_EMPTY_DIR, strerror(errno));
	*how = "the host's /";
	return 0;
}

static int drop_user(const struct sandbox *sb)
{
	uid_t r, e, s;

	/* glibc makes every thread take these, not just this one. */
	if (setgroups(0, NULL) < 0 || setresgid(sb->gid, sb->gid, sb->gid) < 0 ||
	    setresuid(sb->uid, sb->uid, sb->uid) < 0)
		return -errno;
	/* From root to a user with every id non-zero: the kernel clears the
	 * permitted and effective sets.  Make sure there is no way back. */
	if (getresuid(&r, &e, &s) < 0 || r != sb->uid || e != sb->uid || s != sb->uid ||
	    setresuid(0, 0, 0) == 0)
		return -EPERM;
	return 0;
}

/* ---- the seccomp filter -------------------------------------------------- */

/* Everything a running domain calls: the control loop, vCPU and device
 * threads, the console, the network watcher (libpcap's ring), thread
 * start and end for devices the guest starts later, and what save,
 * restore and live migration will call (descriptors passed over the
 * control socket, streams written and read, mincore, madvise). */
static const char *const allowed[] = {
	"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev",
	"preadv2", "pwritev2", "lseek", "close", "dup", "dup2", "dup3", "fcntl",
	"fstat", "newfstatat", "statx",
	"fstatfs",             /* is a disk attached later a file in memory (disk.c) */
	/* Allowed: there is nothing to open in the empty root (pthread
	 * names, glibc's lazy files fail with ENOENT), and no directory
	 * descriptor is kept to open relative to. */
	"openat",
	"poll", "ppoll", "select", "pselect6", "epoll_create1", "epoll_ctl", "epoll_wait",
	"epoll_pwait", "eventfd2",
	"munmap", "mremap", "madvise", "mincore", "brk",
	"futex", "set_robust_list", "get_robust_list", "rseq", "exit", "exit_group",
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "rt_sigtimedwait",
	"restart_syscall",
	"getpid", "gettid", "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep",
	"gettimeofday", "time", "sched_yield", "sched_getaffinity", "sched_setaffinity",
	"getrandom", "sysinfo",
	"accept4", "recvfrom", "recvmsg", "sendto", "sendmsg", "getsockopt", "shutdown",
	/* libpcap asks its own capture socket's address when a watched vif's
	 * interface goes away (a vif detached while the domain runs), then
	 * SIOCGIFINDEX (the ioctls below). */
	"getsockname",
	"io_uring_enter", "fdatasync", "fsync", "fallocate", "ftruncate",
	"flock",               /* a migration hands its disks over; a disk attached later is locked */
	"io_uring_setup",      /* the ring of a disk attached to the running domain */
};

/* ioctl requests: KVM (what runs a guest now, and the state save,
 * restore and migration move), the tap's offloads, the terminal of a
 * standalone domain, bytes waiting on a descriptor, and a hot-plugged
 * block device's size. */
static const unsigned long ioctls[] = {
	KVM_CHECK_EXTENSION, KVM_GET_VCPU_MMAP_SIZE, KVM_GET_MSR_INDEX_LIST, KVM_GET_SUPPORTED_CPUID,
	KVM_RUN, KVM_NMI, KVM_IRQ_LINE, KVM_SIGNAL_MSI, KVM_IOEVENTFD, KVM_ENABLE_CAP,
	KVM_SET_USER_MEMORY_REGION, KVM_GET_DIRTY_LOG, KVM_CLEAR_DIRTY_LOG,
	KVM_GET_REGS, KVM_SET_REGS, KVM_GET_SREGS, KVM_SET_SREGS,
#ifdef KVM_GET_SREGS2
	KVM_GET_SREGS2, KVM_SET_SREGS2,
#endif
	KVM_GET_FPU, KVM_SET_FPU, KVM_GET_XSAVE, KVM_SET_XSAVE,
#ifdef KVM_GET_XSAVE2
	KVM_GET_XSAVE2,
#endif
	KVM_GET_XCRS, KVM_SET_XCRS, KVM_GET_MSRS, KVM_SET_MSRS, KVM_GET_LAPIC, KVM_SET_LAPIC,
	KVM_GET_VCPU_EVENTS, KVM_SET_VCPU_EVENTS, KVM_GET_DEBUGREGS, KVM_SET_DEBUGREGS,
	KVM_GET_MP_STATE, KVM_SET_MP_STATE, KVM_GET_IRQCHIP, KVM_SET_IRQCHIP,
	KVM_GET_PIT2, KVM_SET_PIT2, KVM_GET_CLOCK, KVM_SET_CLOCK, KVM_GET_CPUID2, KVM_SET_CPUID2,
	KVM_GET_TSC_KHZ, KVM_SET_TSC_KHZ,
	KVM_TRANSLATE,         /* emulate/: an instruction's bytes and operands through the guest's page tables */
	KVM_SET_GUEST_DEBUG,   /* emulate/syscall.c: PVM only, the breakpoint that completes user-mode system calls */
	TUNSETOFFLOAD, TUNSETVNETHDRSZ,
	BLKGETSIZE64,          /* the size of a block device attached to the running domain */
	/* libpcap's check, when a watched vif's capture fails, whether its
	 * interface went away (a vif detached while the domain runs). */
	SIOCGIFINDEX, SIOCGIFFLAGS,
	TCGETS, TCSETS, TCSETSW, TCSETSF, TIOCGWINSZ,
	FIONREAD, FIONBIO,
};

/* The boot-disk reader (bootload.c): libblkid and libext2fs reading the
 * one disk descriptor, the copies written, the word written to its pipe,
 * memory.  Nothing opened (openat fails: there is nothing to open in its
 * empty root, and libc's lazy files must see an error, not a kill), no
 * socket, no process, no thread. */
static const char *const reader_allowed[] = {
	"read", "write", "pread64", "pwrite64", "readv", "writev", "lseek", "close",
	"fstat", "newfstatat", "statx", "fstatfs", "ftruncate", "fcntl",
	"fadvise64",           /* libblkid: the probe reads at random */
	"munmap", "mremap", "madvise", "brk", "futex",
	"exit", "exit_group", "rt_sigprocmask", "rt_sigreturn", "rt_sigaction",
	"getpid", "gettid", "clock_gettime", "gettimeofday", "time", "getrandom",
};

/* libblkid's questions of a block device: its size, its sector sizes,
 * whether it is a CD, a zoned disk (each answered by the kernel from the
 * descriptor it was given); and whether stderr is a raw terminal (the
 * line a forbidden call leaves ends as the terminal needs). */
static const unsigned long reader_ioctls[] = {
	BLKGETSIZE64, BLKSSZGET, BLKPBSZGET, BLKIOMIN, BLKIOOPT, BLKALIGNOFF, BLKGETZONESZ,
	CDROM_GET_CAPABILITY, FIONREAD, TCGETS,
};

/* Names for the SIGSYS handler, resolved now: it may not allocate. */
#define NAMED_CALLS 512
static char call_name[NAMED_CALLS][24];

static size_t put_str(char *buf, size_t n, const char *s)
{
	while (*s && n < 160)
		buf[n++] = *s++;
	return n;
}

/* A forbidden call: say which, then die of SIGSYS.  SA_RESETHAND has put
 * back the default action, so the same trap again (a call that is never
 * allowed) kills the whole process; exiting by the signal tells the
 * supervisor this was no ordinary end, and it leaves the runtime
 * directory, this line in lodge-hyp.log included, for a post-mortem. */
static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	char line[200], num[16];
	int nr = si->si_syscall, i = 0;
	size_t n = 0;
	unsigned v = nr < 0 ? 0 : (unsigned)nr;

	(void)sig;
	(void)uc;
	do
		num[i++] = '0' + v % 10;
	while ((v /= 10) && i < 15);
	n = put_str(line, n, "lodge-hyp: error: seccomp: forbidden system call ");
	n = put_str(line, n, nr >= 0 && nr < NAMED_CALLS && call_name[nr][0] ? call_name[nr] : "?");
	n = put_str(line, n, " (");
	while (i)
		line[n++] = num[--i];
	n = put_str(line, n, ")");
	n = put_str(line, n, log_eol());        /* \r\n only on a raw terminal */
	if (write(STDERR_FILENO, line, n) < 0) {
		/* nowhere left to say it */
	}
	syscall(SYS_kexec_load, 0, 0, 0, 0);
	_exit(1);
}

/* Memory, never executable: no new code once sandboxed. */
static int rules_no_exec(scmp_filter_ctx ctx)
{
	int rc;

	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0))))
		return rc;
	return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
}

/* Signals to its own threads only (raise, abort, the vCPU kick). */
static int rules_own_signals(scmp_filter_ctx ctx)
{
	return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
}

/* A running domain's calls with arguments: see each. */
static int rules_domain(scmp_filter_ctx ctx)
{
	int rc;

	if ((rc = rules_no_exec(ctx)) || (rc = rules_own_signals(ctx)))
		return rc;
	/* Threads (devices the guest starts later), never processes; clone3
	 * hides its flags in memory, so it reports ENOSYS and glibc falls
	 * back to clone. */
	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				   SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD))) ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)))
		return rc;
	/* libpcap's pcap_close() takes its packet ring down with
	 * setsockopt(SOL_PACKET, PACKET_RX_RING) when the watcher stops
	 * (a domain with vifs ending, or migrated away): that level only. */
	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(setsockopt), 1, SCMP_A1(SCMP_CMP_EQ, SOL_PACKET))))
		return rc;
	/* A thread's own name. */
	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME))))
		return rc;
	return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, PR_GET_NAME));
}

/* The reader's: no executable memory, signals to itself (abort), and
 * open refused with an error rather than a kill. */
static int rules_reader(scmp_filter_ctx ctx)
{
	int rc;

	if ((rc = rules_no_exec(ctx)) || (rc = rules_own_signals(ctx)))
		return rc;
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(openat), 0);
}

/* One filter, as data: the calls allowed whatever their arguments, the
 * ioctl requests allowed, and the rules with arguments. */
struct filter {
	const char *const *calls;
	size_t ncalls;
	const unsigned long *ioctls;
	size_t nioctls;
	int (*rules)(scmp_filter_ctx ctx);
	bool every_thread;         /* threads run already: TSYNC */
};

static const struct filter domain_filter = {
	allowed, sizeof(allowed) / sizeof(allowed[0]), ioctls, sizeof(ioctls) / sizeof(ioctls[0]), rules_domain, true,
};
static const struct filter reader_filter = {
	reader_allowed, sizeof(reader_allowed) / sizeof(reader_allowed[0]),
	reader_ioctls, sizeof(reader_ioctls) / sizeof(reader_ioctls[0]), rules_reader, false,
};

static int load_filter(const struct filter *f)
{
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO | SA_RESETHAND };
	scmp_filter_ctx ctx;
	unsigned i;
	int rc = -ENOMEM, nr;

	for (i = 0; i < NAMED_CALLS; i++) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, (int)i);

		if (name)
			snprintf(call_name[i], sizeof(call_name[i]), "%s", name);
		free(name);
	}
	if (!(ctx = seccomp_init(SCMP_ACT_TRAP)))
		return -ENOMEM;
	/* Every thread, not just this one: the vCPU and device threads are
	 * already running. */
	if (f->every_thread && (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1)))
		goto out;
	for (i = 0; i < f->ncalls; i++) {
		if ((nr = seccomp_syscall_resolve_name(f->calls[i])) == __NR_SCMP_ERROR)
			continue;              /* not a call on this architecture */
		if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0)))
			goto out;
	}
	/* The kernel takes ioctl's request as 32 bits: compare those. */
	for (i = 0; i < f->nioctls; i++)
		if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
					   SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, f->ioctls[i] & 0xffffffffUL))))
			goto out;
	if ((rc = f->rules(ctx)))
		goto out;
	if (sigaction(SIGSYS, &sa, NULL) < 0) {
		rc = -errno;
		goto out;
	}
	rc = seccomp_load(ctx);
out:
	seccomp_release(ctx);
	return rc;
}

int sandbox_enter(struct sandbox *sb)
{
	const char *root = "the host's /";
	pid_t parent = getppid();
	int rc;

	if (sb->off) {
		log_warn("THE SANDBOX IS OFF (--no-sandbox): this domain's lodge-hyp keeps root, the "
			 "host's files and every system call; for debugging only");
		return 0;
	}
#if SANITIZED
	/* The sanitizers' run time calls what no domain does and reads
	 * /proc/self (maps, task) at exit: their builds keep the host's
	 * root and go without the filter. */
	log_info("sandbox: sanitizer build: no empty root, no seccomp filter");
#endif
	if (sb->as_root) {
		if (!SANITIZED && (rc = enter_empty_root(sb, &root)))
			return rc;
		if ((rc = drop_user(sb))) {
			log_err("cannot become user %s: %s", sb->user, strerror(-rc));
			return rc;
		}
		/* A change of user clears the parent-death signal: set again,
		 * so a killed supervisor still takes its domain with it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != parent)
			_exit(1);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		rc = -errno;
		log_err("cannot set no_new_privs: %s", strerror(errno));
		return rc;
	}
	if (!SANITIZED && (rc = load_filter(&domain_filter))) {
		log_err("cannot install the seccomp filter: %s", strerror(-rc));
		return rc;
	}
	/* Building the filter (libseccomp's rule database) left some 150 KiB
	 * of the heap freed but resident, for the domain's whole life: give
	 * it back. */
	malloc_trim(0);
	if (sb->as_root)
		log_debug("sandboxed: user %s, root %s, no capabilities, seccomp", sb->user, root);
	else
		log_debug("sandboxed: no_new_privs, seccomp (not root: user and root unchanged)");
	return 0;
}

int sandbox_enter_reader(const struct sandbox *sb, char *why, size_t whylen)
{
	int rc;

	if (sb->off)
		return 0;
	if (sb->as_root) {
		/* A namespace of its own: the domain process's (sandbox_early)
		 * is the one it shares, and its root must stay until the
		 * domain is built. */
		if (!SANITIZED &&
		    !(unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) == 0 &&
		      pivot_to_tmpfs() == 0) &&
		    !(chroot(SANDBOX_EMPTY_DIR) == 0 && chdir("/") == 0)) {
			rc = -errno;
			snprintf(why, whylen, "cannot give its reader an empty root (no mount namespace, no %s): %s",
				 SANDBOX_EMPTY_DIR, strerror(errno));
			return rc;
		}
		if ((rc = drop_user(sb))) {
			snprintf(why, whylen, "cannot become user %s to read it: %s", sb->user, strerror(-rc));
			return rc;
		}
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		rc = -errno;
		snprintf(why, whylen, "cannot confine its reader: no_new_privs: %s", strerror(errno));
		return rc;
	}
	if (!SANITIZED && (rc = load_filter(&reader_filter))) {
		snprintf(why, whylen, "cannot confine its reader: seccomp: %s", strerror(-rc));
		return rc;
	}
	return 0;
}

void sandbox_test_forbidden(const struct sandbox *sb)
{
	/* Test only: a call no domain makes, to see the filter end the
	 * process with its name in the log. */
	if (sb->test_forbidden)
		syscall(SYS_socket, 2 /* AF_INET */, 1 /* SOCK_STREAM */, 0);
}
