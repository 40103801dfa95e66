/* A domain's runtime directory, made whole (rundir.h). */
#include "rundir.h"
#include "ctl/ctl.h"
#include "log.h"
#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* RUNDIR locked against other starts and removals: the fd to close to
 * unlock, or -errno logged. */
static int lock_rundir(const char *rundir)
{
	int fd = runtime_lock(rundir);

	if (fd < 0)
		log_err("cannot open %s: %s", rundir, strerror(-fd));
	return fd;
}

/* The control socket, bound at path and listening. */
static int listen_at(const char *path, bool shared)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0) {
		log_err("cannot listen on %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	if (shared && chmod(path, 0666) < 0) {
		log_err("cannot set the mode of %s: %s", path, strerror(errno));
		close(fd);
		return -EIO;
	}
	return fd;
}

/* Put the complete directory tmp at dir: renamed there, or where a dead
 * domain left its directory, its socket renamed into that one (replacing
 * the dead socket in one step) and tmp removed.  0 or -errno, logged. */
static int install(const char *tmp, const char *dir, mode_t mode)
{
	char from[4200], to[4200];
	struct stat st;
	int tries;

	runtime_file_path(from, sizeof(from), tmp, RT_CONTROL);
	runtime_file_path(to, sizeof(to), dir, RT_CONTROL);
	/* The leftovers may be removed under us by a lodge list that found
	 * them dead: then the plain rename is free again. */
	for (tries = 0; tries < 3; tries++) {
		if (rename(tmp, dir) == 0)
			return 0;
		if (errno != ENOTEMPTY && errno != EEXIST) {
			log_err("cannot create %s: %s", dir, strerror(errno));
			return -errno;
		}
		if (lstat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
			log_err("cannot create %s: something else than a directory is there", dir);
			return -ENOTDIR;
		}
		if (chmod(dir, mode) < 0 || rename(from, to) < 0) {
			if (errno == ENOENT)
				continue;
			log_err("cannot set up %s: %s", dir, strerror(errno));
			return -errno;
		}
		rmdir(tmp);
		return 0;
	}
	log_err("cannot create %s: it keeps changing under us", dir);
	return -EAGAIN;
}

int rundir_create(const char *rundir, const char *name, const struct ctl_access *access,
		  char *dir, size_t dirlen)
{
	bool shared = access->control_gid >= 0 || access->stats_gid >= 0;
	/* Shared: others may reach the socket by name, never list or read. */
	mode_t mode = shared ? 0711 : 0700;
	char tmp[4096], sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int lock_fd, fd = -1, rc;

	mkdir(rundir, 0755);
	if (runtime_dir_path(dir, dirlen, rundir, name) || runtime_dir_temp_path(tmp, sizeof(tmp), rundir, name) ||
	    runtime_file_path(sock, sizeof(sock), tmp, RT_CONTROL)) {
		log_err("runtime directory path %s/%s is too long for a socket", rundir, name);
		return -ENAMETOOLONG;
	}
	/* One start at a time: none finds another's RUNDIR/.NAME. */
	if ((lock_fd = lock_rundir(rundir)) < 0)
		return lock_fd;
	runtime_file_path(sock, sizeof(sock), dir, RT_CONTROL);
	if (runtime_socket_live(sock)) {
		log_err("a domain is already running in %s", dir);
		rc = -EEXIST;
		goto out;
	}
	if ((rc = runtime_dir_remove(tmp)) && rc != -ENOENT) {
		log_err("cannot remove %s, left by a start that was killed: %s", tmp, strerror(-rc));
		goto out;
	}
	if (mkdir(tmp, mode) < 0 || chmod(tmp, mode) < 0) {
		rc = -errno;
		log_err("cannot create %s: %s", tmp, strerror(-rc));
		goto out;
	}
	runtime_file_path(sock, sizeof(sock), tmp, RT_CONTROL);
	if ((rc = fd = listen_at(sock, shared)) < 0 || (rc = install(tmp, dir, mode))) {
		if (fd >= 0)
			close(fd);
		fd = -1;
		runtime_dir_remove(tmp);
		goto out;
	}
	rc = 0;
out:
	close(lock_fd);
	return rc ? rc : fd;
}

int rundir_remove(const char *rundir, const char *name, int *keep_lock)
{
	char dir[4200], tmp[4200];
	int lock_fd, rc;

	if (keep_lock)
		*keep_lock = -1;
	if (runtime_dir_path(dir, sizeof(dir), rundir, name) || runtime_dir_temp_path(tmp, sizeof(tmp), rundir, name))
		return -ENAMETOOLONG;
	if ((lock_fd = lock_rundir(rundir)) < 0)
		return lock_fd;
	/* Out of sight first, whole: a domain that is going is not a dead one. */
	rc = rename(dir, tmp) < 0 ? -errno : runtime_dir_remove(tmp);
	if (keep_lock)
		*keep_lock = lock_fd;
	else
		close(lock_fd);
	return rc;
}
