/* The host's side of a domain's devices (lodge.h): a disk's size, a tap's
 * counters, the block devices a new domain could use, and whether a disk
 * is already taken.  Each reads the host (files, netlink) and never asks
 * a domain, so a face may call them without waiting on one. */
#include "internal.h"
#include "netlink.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

int lodge_disk_size(const char *path, uint64_t *bytes)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), rc = 0;

	*bytes = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0)
		rc = -errno;
	else if (!S_ISBLK(sb.st_mode))
		*bytes = (uint64_t)sb.st_size;
	else if (ioctl(fd, BLKGETSIZE64, bytes) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int lodge_link_stats(const char *ifname, struct lodge_link *out, struct lodge_err *err)
{
	char why[LODGE_ERR_MAX];
	struct link_stats ls;
	int rc = nl_link_stats(ifname, &ls, why, sizeof(why));

	memset(out, 0, sizeof(*out));
	if (rc)
		return lodge_fail(err, rc < 0 ? rc : -EIO, "%s", why);
	*out = (struct lodge_link){ ls.rx_packets, ls.rx_bytes, ls.rx_dropped, ls.tx_packets, ls.tx_bytes,
				    ls.tx_dropped };
	return 0;
}

/* A block device mounted on the host (/proc/self/mounts) with a's device number. */
static bool mounted(const struct stat *a)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	char line[1024], dev[512];
	struct stat b;
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%511s", dev) == 1 && dev[0] == '/' && stat(dev, &b) == 0 &&
			S_ISBLK(b.st_mode) && a->st_rdev == b.st_rdev;
	if (f)
		fclose(f);
	return found;
}

/* A block device the kernel has given someone exclusively (a mounted
 * filesystem, swap, a device-mapper or md member, or any of its
 * partitions for a whole disk): an exclusive open is refused. */
static bool held(const char *path)
{
	int fd = open(path, O_RDONLY | O_EXCL | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
	return fd < 0 && errno == EBUSY;
}

bool lodge_disk_taken(const struct lodge *lg, const char *path, char *why, size_t len)
{
	static struct domain_config dc;
	struct stat a, b;
	struct dirent *de;
	DIR *d;
	unsigned k;
	bool taken = false;

	why[0] = '\0';
	if (stat(path, &a) < 0)
		return false;
	if (S_ISBLK(a.st_mode) && mounted(&a)) {
		snprintf(why, len, "mounted on the host");
		return true;
	}
	/* The running domains' resolved configs, as they were started. */
	d = opendir(lg->hc.runtime_dir);
	while (d && !taken && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !domain_name_valid(de->d_name) ||
		    lodge_runtime_config(lg, de->d_name, &dc, NULL))
			continue;
		for (k = 0; k < dc.ndisks && !taken; k++)
			if (stat(dc.disks[k].path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev &&
			    a.st_rdev == b.st_rdev) {
				snprintf(why, len, "used by domain %s", de->d_name);
				taken = true;
			}
	}
	if (d)
		closedir(d);
	if (!taken && S_ISBLK(a.st_mode) && held(path)) {
		snprintf(why, len, "in use on the host (a mounted filesystem, swap, LVM or RAID holds it or one of "
			 "its partitions)");
		taken = true;
	}
	return taken;
}

unsigned lodge_host_blockdevs(const struct lodge *lg, struct lodge_blockdev *out, unsigned max)
{
	DIR *d = opendir("/sys/class/block");
	struct dirent *de;
	unsigned n = 0;

	while (d && n < max && (de = readdir(d))) {
		char path[512];
		unsigned long long sectors = 0;
		FILE *f;

		if (de->d_name[0] == '.' || strncmp(de->d_name, "ram", 3) == 0 ||
		    strlen(de->d_name) + 6 > sizeof(out->path))
			continue;
		snprintf(path, sizeof(path), "/sys/class/block/%s/size", de->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		if (fscanf(f, "%llu", &sectors) != 1)
			sectors = 0;
		fclose(f);
		if (!sectors)
			continue;
		snprintf(out[n].path, sizeof(out[n].path), "/dev/%s", de->d_name);
		out[n].bytes = (uint64_t)sectors * 512;
		lodge_disk_taken(lg, out[n].path, out[n].taken, sizeof(out[n].taken));
		n++;
	}
	if (d)
		closedir(d);
	return n;
}
