/* This host's key (savestream.h): what makes a saved file or a migration
 * stream provably this host's own, so that its restore may lend it what
 * it named when it was saved. */
#include "config.h"
#include "migrate.h"
#include "savestream.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* The key's place, under --root as every default path; made with the
 * modes SECURITY.md gives: the file 0600 root's, its directory 0755. */
#define HOST_KEY_FILE  "/var/lib/lodge/host.key"
#define HOST_KEY_DIR_MODE 0755
#define HOST_KEY_BYTES 32

void host_key_path(char *out, size_t len)
{
	snprintf(out, len, "%s%s", cfg_root(), HOST_KEY_FILE);
}

/* Read the key at path: 0, -ENOENT if there is none, else -errno with
 * why.  A key anyone but its owner (root) could read, or that is no
 * plain file of the right size, is refused: it proves nothing. */
static int key_read(const char *path, struct secret *k, char *why, size_t whylen)
{
	struct stat st;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) < 0) {
		if (errno != ENOENT)
			snprintf(why, whylen, "cannot read this host's key %s: %s", path, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) ||
	    st.st_size != HOST_KEY_BYTES) {
		close(fd);
		snprintf(why, whylen, "this host's key %s must be a file of %d bytes that only root reads (mode 0600)",
			 path, HOST_KEY_BYTES);
		return -EPERM;
	}
	n = read(fd, k->key, HOST_KEY_BYTES);
	close(fd);
	if (n != HOST_KEY_BYTES) {
		snprintf(why, whylen, "cannot read this host's key %s: %s", path, n < 0 ? strerror(errno) : "short read");
		return n < 0 ? -errno : -EIO;
	}
	k->len = HOST_KEY_BYTES;
	return 0;
}

/* The directories above path, made if missing (0755: /var/lib/lodge
 * itself holds nothing secret but the key, which is 0600). */
static int make_parents(const char *path)
{
	char dir[PATH_MAX], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(dir, HOST_KEY_DIR_MODE) < 0 && errno != EEXIST)
			return -errno;
		*slash = '/';
	}
	return 0;
}

/* A new key, written whole under a temporary name and then linked to
 * its own: two saves at once agree on one key, and none reads half of
 * one. */
static int key_make(const char *path, char *why, size_t whylen)
{
	unsigned char key[HOST_KEY_BYTES];
	char tmp[PATH_MAX + 8];
	int fd, rc = 0;

	if ((rc = make_parents(path))) {
		snprintf(why, whylen, "cannot make the directory of this host's key %s: %s", path, strerror(-rc));
		return rc;
	}
	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key)) {
		snprintf(why, whylen, "cannot make this host's key: getrandom: %s", strerror(errno));
		return -errno;
	}
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {           /* 0600 */
		rc = -errno;
		snprintf(why, whylen, "cannot make this host's key %s: %s", path, strerror(errno));
		return rc;
	}
	if (write(fd, key, sizeof(key)) != (ssize_t)sizeof(key) || fsync(fd) < 0 ||
	    (link(tmp, path) < 0 && errno != EEXIST)) {
		rc = -errno;
		snprintf(why, whylen, "cannot make this host's key %s: %s", path, strerror(errno));
	}
	close(fd);
	unlink(tmp);
	explicit_bzero(key, sizeof(key));
	return rc;
}

int host_key_get(struct secret *k, bool create, char *why, size_t whylen)
{
	char path[PATH_MAX];
	int rc;

	k->len = 0;
	host_key_path(path, sizeof(path));
	rc = key_read(path, k, why, whylen);
	if (rc != -ENOENT)
		return rc;
	if (!create) {
		snprintf(why, whylen, "this host has no key (%s): it has signed nothing", path);
		return rc;
	}
	if ((rc = key_make(path, why, whylen)))
		return rc;
	return key_read(path, k, why, whylen);
}

const struct secret *stream_key(const struct secret *shared, struct secret *own, bool create, char *why,
				size_t whylen)
{
	if (shared && shared->len)
		return shared;
	return host_key_get(own, create, why, whylen) == 0 ? own : NULL;
}
