#include "disk.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

int disk_parse(const char *spec, struct disk *d, char *err, size_t errlen)
{
	char buf[4200], *opt, *save = NULL;
	const char *slash;

	memset(d, 0, sizeof(*d));
	d->fd = d->fd_buffered = -1;
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
		else {
			snprintf(err, errlen, "disk '%s': unknown option '%s' (ro, id=NAME up to %d bytes, direct)",
				 spec, opt, DISK_ID_MAX);
			return -EINVAL;
		}
	}
	if (!d->id[0]) {
		slash = strrchr(d->path, '/');
		snprintf(d->id, sizeof(d->id), "%.20s", slash ? slash + 1 : d->path);
	}
	return 0;
}

int disk_open(struct disk *d, char *err, size_t errlen)
{
	int flags = (d->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	struct stat st;
	uint64_t size;

	d->fd_buffered = open(d->path, flags);
	if (d->fd_buffered < 0) {
		snprintf(err, errlen, "cannot open disk %s: %s", d->path, strerror(errno));
		return -errno;
	}
	if (!d->lock_later && disk_lock(d, err, errlen)) {
		disk_close(d);
		return -EBUSY;
	}
	if (fstat(d->fd_buffered, &st) < 0)
		goto fail_errno;
	if (S_ISBLK(st.st_mode)) {
		d->is_blockdev = true;
		if (ioctl(d->fd_buffered, BLKGETSIZE64, &size) < 0)
			goto fail_errno;
	} else if (S_ISREG(st.st_mode)) {
		size = st.st_size;
	} else {
		snprintf(err, errlen, "disk %s is neither a regular file nor a block device", d->path);
		disk_close(d);
		return -EINVAL;
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
	d->fd = d->fd_buffered;
	if (d->direct) {
		d->fd = open(d->path, flags | O_DIRECT);
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

int disk_lock(struct disk *d, char *err, size_t errlen)
{
	/* One writer, or any number of readers, across all domains on the host. */
	if (flock(d->fd_buffered, (d->readonly ? LOCK_SH : LOCK_EX) | LOCK_NB) < 0) {
		int e = errno;

		snprintf(err, errlen, e == EWOULDBLOCK
			 ? "disk %s is in use by another domain%s"
			 : "cannot lock disk %s: %s", d->path,
			 e == EWOULDBLOCK ? (d->readonly ? " (opened writable there)" : "") : strerror(e));
		return -EBUSY;
	}
	return 0;
}

void disk_unlock(struct disk *d)
{
	if (d->fd_buffered >= 0)
		flock(d->fd_buffered, LOCK_UN);
}

void disk_close(struct disk *d)
{
	if (d->fd >= 0 && d->fd != d->fd_buffered)
		close(d->fd);
	if (d->fd_buffered >= 0)
		close(d->fd_buffered);
	d->fd = d->fd_buffered = -1;
}
