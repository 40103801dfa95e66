/* bootloader = "lodge" in lodge-hyp (bootload.h).
 *
 * Why here, and at each boot: the library only starts a domain, and
 * lodge-hyp's supervisor restarts it (on_reboot, on_crash) without the
 * library; reading the disk in each boot's own process is the one place
 * that sees every start and every restart.  Why in a process of its own:
 * libext2fs and libblkid parse what the guest wrote, so they run as the
 * sandbox's user, with no capability and no_new_privs, in an empty root
 * of their own, under a seccomp filter of their own (sandbox.h), holding
 * only the disk (read-only), the two files to fill and the pipe to tell;
 * what it reports is checked again here (sizes, the UUID) before it is
 * used.  Xen learnt this with
 * pygrub (XSA-443: its parsing of guest disks ran as root). */
#include "bootload.h"
#include "bootdisk.h"
#include "bootdisk-lib.h"
#include "closefds.h"
#include "log.h"
#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the reader tells: one write, under PIPE_BUF. */
struct reader_result {
	int rc;
	struct bootdisk_found found;
	char why[1024];
};
_Static_assert(sizeof(struct reader_result) <= 4096, "one atomic write to a pipe");

/* The reader: hold only the disk and the outputs, confine itself, read,
 * tell, exit.  The libraries are loaded first: once confined it can
 * open nothing. */
static noreturn void reader(const struct sandbox *sb, int disk_fd, const char *disk, int kfd, int ifd, int tell_fd)
{
	static struct reader_result res;
	struct rlimit fsize = { BOOTDISK_INITRD_MAX, BOOTDISK_INITRD_MAX };
	const int keep[] = { disk_fd, kfd, ifd, tell_fd };

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	/* The domain's listening control socket, its id lock, its logs and
	 * whatever else the domain process has open are not the reader's. */
	close_fds_but(keep, sizeof(keep) / sizeof(keep[0]));
	if (bootdisk_lib_load(res.why, sizeof(res.why))) {
		res.rc = -ELIBACC;
	} else if (setrlimit(RLIMIT_FSIZE, &fsize) < 0) {
		res.rc = -errno;
		snprintf(res.why, sizeof(res.why), "cannot confine its reader: %s", strerror(errno));
	} else if (!(res.rc = sandbox_enter_reader(sb, res.why, sizeof(res.why)))) {
		if (sb->test_pause_reader)
			raise(SIGSTOP);        /* tests/integ/bootloader.sh looks at it, then SIGCONT */
		res.rc = bootdisk_read(disk_fd, disk, kfd, ifd, &res.found, res.why, sizeof(res.why));
	}
	if (write(tell_fd, &res, sizeof(res)) != (ssize_t)sizeof(res))
		_exit(1);
	_exit(0);
}

/* Run the reader and hear it: 0 with res filled, or -errno with res->why. */
static int run_reader(const struct sandbox *sb, int disk_fd, const char *disk, int kfd, int ifd,
		      struct reader_result *res)
{
	int p[2], st, rc = 0;
	struct pollfd pfd;
	ssize_t n = 0;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(res->why, sizeof(res->why), "cannot start its reader: %s", strerror(errno));
		return -errno;
	}
	if ((pid = fork()) < 0) {
		rc = -errno;
		snprintf(res->why, sizeof(res->why), "cannot start its reader: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return rc;
	}
	if (pid == 0) {
		close(p[0]);
		reader(sb, disk_fd, disk, kfd, ifd, p[1]);
	}
	close(p[1]);
	pfd = (struct pollfd){ p[0], POLLIN, 0 };
	while ((rc = poll(&pfd, 1, BOOTDISK_READ_TIMEOUT_S * 1000)) < 0 && errno == EINTR)
		;
	if (rc > 0)
		while ((n = read(p[0], res, sizeof(*res))) < 0 && errno == EINTR)
			;
	if (rc <= 0)
		kill(pid, SIGKILL);    /* it reads a disk made to keep it busy */
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (rc == 0) {
		snprintf(res->why, sizeof(res->why), "reading it took more than %d s", BOOTDISK_READ_TIMEOUT_S);
		return -ETIMEDOUT;
	}
	if (n != (ssize_t)sizeof(*res)) {
		snprintf(res->why, sizeof(res->why), "its reader ended without a word (%s %d)",
			 WIFSIGNALED(st) ? "signal" : "exit status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		return -EIO;
	}
	res->why[sizeof(res->why) - 1] = '\0';
	return res->rc < 0 ? res->rc : res->rc ? -EIO : 0;
}

/* The reader's word is checked, not trusted: the strings end, the UUID is
 * one, the copies are as large as it says and within the caps. */
static int check_result(struct reader_result *res, int kfd, int ifd)
{
	struct bootdisk_found *f = &res->found;
	struct stat ks, is;

	f->kernel[sizeof(f->kernel) - 1] = f->initrd[sizeof(f->initrd) - 1] = '\0';
	f->where[sizeof(f->where) - 1] = f->uuid[sizeof(f->uuid) - 1] = '\0';
	if (strlen(f->uuid) != BOOTDISK_UUID_LEN - 1 || strspn(f->uuid, "0123456789abcdef-") != BOOTDISK_UUID_LEN - 1 ||
	    fstat(kfd, &ks) < 0 || fstat(ifd, &is) < 0 || (uint64_t)ks.st_size != f->kernel_size ||
	    (uint64_t)is.st_size != f->initrd_size || !f->kernel_size || f->kernel_size > BOOTDISK_KERNEL_MAX ||
	    f->initrd_size > BOOTDISK_INITRD_MAX || (f->initrd_size && !f->initrd[0])) {
		snprintf(res->why, sizeof(res->why), "its reader's report does not match the copies it made");
		return -EIO;
	}
	return 0;
}

/* A file of the runtime directory, empty, or one in memory standalone. */
static int open_copy(const char *dir, enum runtime_file which, char *path, size_t len)
{
	int fd;

	if (!dir[0]) {
		fd = memfd_create(which == RT_BOOT_KERNEL ? "lodge-boot-kernel" : "lodge-boot-initrd", MFD_CLOEXEC);
		if (fd >= 0)
			snprintf(path, len, "/proc/self/fd/%d", fd);
		return fd < 0 ? -errno : fd;
	}
	if (runtime_file_path(path, len, dir, which))
		return -ENAMETOOLONG;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	return fd < 0 ? -errno : fd;
}

int bootload(struct options *o, const struct sandbox *sb, const char *dir, char *why, size_t whylen)
{
	static char kernel_path[4200], initrd_path[4200], cmdline[DOMAIN_CMDLINE_MAX];
	static struct reader_result res;
	int disk_fd, kfd = -1, ifd = -1, rc;

	memset(&res, 0, sizeof(res));
	if (o->bootloader_fd >= 0) {
		char self[64];

		/* The disk the agent opened, read-only for the reader: a new
		 * open of that descriptor's own inode, not of the path. */
		snprintf(self, sizeof(self), "/proc/self/fd/%d", o->bootloader_fd);
		disk_fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	} else {
		disk_fd = open(o->bootloader_disk, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	}
	if (disk_fd < 0) {
		rc = -errno;
		snprintf(why, whylen, "domain %s: cannot boot from its disk %s: %s", o->name, o->bootloader_disk,
			 strerror(errno));
		return rc;
	}
	if ((kfd = open_copy(dir, RT_BOOT_KERNEL, kernel_path, sizeof(kernel_path))) < 0 ||
	    (ifd = open_copy(dir, RT_BOOT_INITRD, initrd_path, sizeof(initrd_path))) < 0) {
		rc = kfd < 0 ? kfd : ifd;
		snprintf(why, whylen, "domain %s: cannot make the copy of its kernel (%s): %s", o->name,
			 dir[0] ? dir : "in memory", strerror(-rc));
		goto out;
	}
	if ((rc = run_reader(sb, disk_fd, o->bootloader_disk, kfd, ifd, &res)) ||
	    (rc = check_result(&res, kfd, ifd))) {
		snprintf(why, whylen, "domain %s: cannot boot from its disk %s: %s", o->name, o->bootloader_disk,
			 res.why);
		goto out;
	}
	if (bootdisk_cmdline(cmdline, sizeof(cmdline), o->cmdline, res.found.uuid)) {
		snprintf(why, whylen, "domain %s: its command line with root=UUID=%s is longer than %d bytes",
			 o->name, res.found.uuid, DOMAIN_CMDLINE_MAX - 1);
		rc = -E2BIG;
		goto out;
	}
	o->kernel = kernel_path;
	o->initrd = res.found.initrd[0] ? initrd_path : NULL;
	o->cmdline = cmdline;
	log_info("domain %s boots %s%s%s from its disk %s (%s): %s", o->name, res.found.kernel,
		 res.found.initrd[0] ? " with " : "", res.found.initrd, o->bootloader_disk, res.found.where, cmdline);
out:
	/* The copies of a failed read, and an initrd that is not, go now;
	 * standalone, the ones in use stay open (their paths are in
	 * /proc/self/fd) until the process ends. */
	if (dir[0] && ifd >= 0 && (rc || !res.found.initrd[0]))
		unlink(initrd_path);
	if (dir[0] && kfd >= 0 && rc)
		unlink(kernel_path);
	if (kfd >= 0 && (dir[0] || rc))
		close(kfd);
	if (ifd >= 0 && (dir[0] || rc || !res.found.initrd[0]))
		close(ifd);
	close(disk_fd);
	return rc;
}
