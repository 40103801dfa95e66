/* A host disk opened once, as the caller may (src/lib/domain/disk-open.c): what
 * it opens, what it refuses without opening (a FIFO, a character device:
 * no driver's open runs), and for a caller lent only lodge.conf's storage
 * (a web user), a symlink or ".." out of storage_dirs refused on what the
 * name led to.  Files under a --root of the test's own. */
#include "lodge.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/lodge-test-disk-open.XXXXXX";
static struct lodge lg;

/* fd is open on path's inode, with access mode want. */
static bool is(int fd, const char *path, int want)
{
	struct stat a, b;
	int mode = fd >= 0 ? fcntl(fd, F_GETFL) : -1;

	return fd >= 0 && fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
	       mode >= 0 && (mode & O_ACCMODE) == want && (fcntl(fd, F_GETFD) & FD_CLOEXEC);
}

int main(void)
{
	char store[96], outside[96], conf[128], text[512], p[256], q[256], real[4096], secret[128];
	struct lodge_err err;
	int fd;

	if (!mkdtemp(root)) {
		printf("FAIL: mkdtemp\n");
		return 1;
	}
	snprintf(store, sizeof(store), "%s/store", root);
	snprintf(outside, sizeof(outside), "%s/outside", root);
	snprintf(conf, sizeof(conf), "%s/etc/lodge", root);
	snprintf(text, sizeof(text), "mkdir -p %s %s %s", store, outside, conf);
	if (system(text) != 0) {
		printf("FAIL: %s\n", text);
		return 1;
	}
	snprintf(text, sizeof(text), "storage_dirs = [ \"%s\" ]\n", store);
	strcat(conf, "/lodge.conf");
	unit_write_file(conf, text);
	CHECK("lodge_open under a root of the test's", lodge_open(&lg, root, &err) == 0);
	snprintf(p, sizeof(p), "%s/a.img", store);
	unit_write_file(p, "a disk");
	snprintf(secret, sizeof(secret), "%s/secret.img", outside);
	unit_write_file(secret, "not lent");

	fd = lodge_disk_open(&lg, p, false, true, real, &err);
	CHECK("a file in storage_dirs: opened read-write, close-on-exec, its real path", is(fd, p, O_RDWR) &&
	      !strcmp(real, p));
	close(fd);
	fd = lodge_disk_open(&lg, p, true, true, real, &err);
	CHECK("readonly: opened read-only", is(fd, p, O_RDONLY));
	close(fd);

	snprintf(q, sizeof(q), "%s/link.img", store);
	if (symlink(secret, q) < 0)
		printf("FAIL: symlink\n");
	fd = lodge_disk_open(&lg, q, false, true, real, &err);
	CHECK("lent only: a symlink in storage_dirs to a file outside is -EACCES, naming where it leads",
	      fd == -EACCES && strstr(err.msg, "storage_dirs") && strstr(err.msg, secret));
	fd = lodge_disk_open(&lg, q, false, false, real, &err);
	CHECK("as the caller: the same symlink is followed, the real path is the file's", is(fd, secret, O_RDWR) &&
	      !strcmp(real, secret));
	close(fd);

	snprintf(q, sizeof(q), "%s/../outside/secret.img", store);
	fd = lodge_disk_open(&lg, q, false, true, real, &err);
	CHECK("lent only: '..' out of storage_dirs is -EACCES", fd == -EACCES);

	snprintf(q, sizeof(q), "%s/inner.img", store);
	if (symlink("a.img", q) < 0)
		printf("FAIL: symlink\n");
	fd = lodge_disk_open(&lg, q, false, true, real, &err);
	CHECK("lent only: a symlink that stays in storage_dirs is the file it names", is(fd, p, O_RDWR) &&
	      !strcmp(real, p));
	close(fd);

	/* A FIFO opened read-only would wait for a writer forever: it must
	 * be refused before any open (this test would hang otherwise). */
	snprintf(q, sizeof(q), "%s/fifo", store);
	if (mkfifo(q, 0600) < 0)
		printf("FAIL: mkfifo\n");
	fd = lodge_disk_open(&lg, q, true, false, real, &err);
	CHECK("a FIFO is -EINVAL, never opened (no wait for a writer)", fd == -EINVAL &&
	      strstr(err.msg, "neither a regular file nor a block device"));
	fd = lodge_disk_open(&lg, "/dev/null", false, false, real, &err);
	CHECK("a character device is -EINVAL", fd == -EINVAL);
	snprintf(q, sizeof(q), "%s", store);
	fd = lodge_disk_open(&lg, q, true, false, real, &err);
	CHECK("a directory is -EINVAL", fd == -EINVAL);
	snprintf(q, sizeof(q), "%s/none.img", store);
	fd = lodge_disk_open(&lg, q, false, true, real, &err);
	CHECK("a missing file is -ENOENT, naming it", fd == -ENOENT && strstr(err.msg, "none.img"));

	snprintf(text, sizeof(text), "rm -rf %s", root);
	if (system(text) != 0)
		printf("FAIL: %s\n", text);
	UNIT_EXIT();
}
