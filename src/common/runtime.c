/* A domain's runtime directory (runtime.h). */
#include "runtime.h"
#include "paths.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <stdio.h>
#include <unistd.h>

static const char *const file_names[RT_NFILES] = {
	[RT_CONTROL] = "control",
	[RT_CONFIG] = "config",
	[RT_CONSOLE_LOG] = "console.log",
	[RT_CONSOLE_LOG_OLD] = "console.log.1",
	[RT_HYP_LOG] = "lodge-hyp.log",
	[RT_CGROUP] = "cgroup",
	[RT_BOOT_KERNEL] = "boot-kernel",
	[RT_BOOT_INITRD] = "boot-initrd",
};

const char *runtime_file_name(enum runtime_file f)
{
	return f < RT_NFILES ? file_names[f] : "";
}

int runtime_dir_path(char *out, size_t len, const char *rundir, const char *name)
{
	return path_printf(out, len, "%s/%s", rundir, name);
}

int runtime_dir_temp_path(char *out, size_t len, const char *rundir, const char *name)
{
	return path_printf(out, len, "%s/.%s", rundir, name);
}

int runtime_file_path(char *out, size_t len, const char *dir, enum runtime_file f)
{
	return path_printf(out, len, "%s/%s", dir, runtime_file_name(f));
}

int runtime_path(char *out, size_t len, const char *rundir, const char *name, enum runtime_file f)
{
	return path_printf(out, len, "%s/%s/%s", rundir, name, runtime_file_name(f));
}

int runtime_dir_remove(const char *dir)
{
	char path[4200];
	unsigned f;

	for (f = 0; f < RT_NFILES; f++)
		if (runtime_file_path(path, sizeof(path), dir, (enum runtime_file)f) == 0)
			unlink(path);
	return rmdir(dir) < 0 ? -errno : 0;
}

bool runtime_socket_live(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;
	bool live;

	if (strlen(path) >= sizeof(sa.sun_path))
		return false;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return false;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	live = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EAGAIN;
	close(fd);
	return live;
}

int runtime_lock(const char *rundir)
{
	int fd = open(rundir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
		;
	return fd;
}
