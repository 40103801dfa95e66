/* The web interface's users: ROOT/etc/lodge/web-users, one a line,
 *
 *   NAME:ROLE:HASH
 *
 * ROLE admin or viewer, HASH crypt(3)'s (yescrypt, "$y$...", from
 * libxcrypt, as Debian's own passwd writes).  Root's alone: written 0600
 * by lodge web-passwd, and a file others may write is refused (whoever
 * could write it could make themselves admin). */
#include "web.h"
#include "config.h"
#include "mkdirs.h"

#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LINE_MAX_WEB (WEB_USER_MAX + 16 + CRYPT_OUTPUT_SIZE)
#define USERS_MAX 256

static const char *const role_names[] = { [WEB_VIEWER] = "viewer", [WEB_ADMIN] = "admin" };

const char *web_role_name(enum web_role r)
{
	return role_names[r == WEB_ADMIN];
}

int web_role_parse(const char *word, enum web_role *r)
{
	if (strcmp(word, "admin") == 0)
		*r = WEB_ADMIN;
	else if (strcmp(word, "viewer") == 0)
		*r = WEB_VIEWER;
	else
		return -EINVAL;
	return 0;
}

int web_user_valid(const char *name, char *why, size_t len)
{
	size_t n = strlen(name);

	if (n < 1 || n > WEB_USER_MAX || name[0] < 'a' || name[0] > 'z' ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz-") != n) {
		snprintf(why, len, "a web user's name is a lowercase letter, then up to %d of a-z and '-' "
			 "(the event log names it web-NAME)", WEB_USER_MAX - 1);
		return -EINVAL;
	}
	return 0;
}

void web_users_path(char *out, size_t len)
{
	snprintf(out, len, "%s%s", cfg_root(), WEB_USERS_FILE);
}

/* A line into its fields (cut in place): 0, or -EINVAL for a line that
 * is not one of ours. */
static int split_line(char *line, char **name, enum web_role *role, char **hash)
{
	char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

	if (!c2)
		return -EINVAL;
	*c1 = *c2 = '\0';
	*name = line;
	*hash = c2 + 1;
	(*hash)[strcspn(*hash, "\n")] = '\0';
	return web_role_parse(c1 + 1, role);
}

/* The file open for reading, refused if others may write it. */
static FILE *users_open(int *rc)
{
	char path[CFG_PATH_MAX];
	struct stat sb;
	FILE *f;

	web_users_path(path, sizeof(path));
	if (!(f = fopen(path, "re"))) {
		*rc = -errno;
		return NULL;
	}
	if (fstat(fileno(f), &sb) || !S_ISREG(sb.st_mode) || (sb.st_mode & 022) ||
	    (sb.st_uid != 0 && sb.st_uid != geteuid())) {
		fclose(f);
		*rc = -EPERM;
		return NULL;
	}
	return f;
}

int web_users_verify(const char *user, const char *password, enum web_role *role)
{
	static struct crypt_data cd;      /* 32 KiB: not on the stack */
	static char dummy[CRYPT_GENSALT_OUTPUT_SIZE];
	char line[LINE_MAX_WEB], *name, *hash;
	const char *got;
	enum web_role r;
	int rc = 0, found = 0;
	FILE *f = users_open(&rc);

	if (!f)
		return rc;
	while (fgets(line, sizeof(line), f))
		if (!split_line(line, &name, &r, &hash) && strcmp(name, user) == 0) {
			found = 1;
			break;
		}
	fclose(f);
	memset(&cd, 0, sizeof(cd));
	/* A user who is not there costs a hash all the same: the time does
	 * not tell which names exist. */
	if (!found && !dummy[0] && !crypt_gensalt_rn("$y$", 0, NULL, 0, dummy, sizeof(dummy)))
		dummy[0] = '\0';
	got = crypt_r(password, found ? hash : dummy, &cd);
	rc = found && got && got[0] != '*' && web_token_equal(got, hash);
	if (rc)
		*role = r;
	memset(&cd, 0, sizeof(cd));
	return rc;
}

int web_users_set(const char *user, const char *password, enum web_role role, char *why, size_t len)
{
	static struct crypt_data cd;
	char path[CFG_PATH_MAX], tmp[CFG_PATH_MAX + 16], salt[CRYPT_GENSALT_OUTPUT_SIZE];
	char *lines[USERS_MAX], line[LINE_MAX_WEB], *name, *hash;
	const char *hashed;
	unsigned n = 0, i;
	enum web_role r;
	int rc = 0, fd;
	FILE *in, *out;
	bool replaced = false;

	if ((rc = web_user_valid(user, why, len)))
		return rc;
	web_users_path(path, sizeof(path));
	if (!(in = users_open(&rc)) && rc != -ENOENT) {
		snprintf(why, len, "%s: %s", path, rc == -EPERM ? "others may write it (chmod 600 it)" : strerror(-rc));
		return rc;
	}
	rc = 0;                           /* no file yet: this is its first user */
	if (!crypt_gensalt_rn("$y$", 0, NULL, 0, salt, sizeof(salt))) {
		rc = -errno;
		snprintf(why, len, "no yescrypt salt: %s", strerror(errno));
		goto out;
	}
	memset(&cd, 0, sizeof(cd));
	hashed = crypt_r(password, salt, &cd);
	if (!hashed || hashed[0] == '*') {
		rc = -EINVAL;
		snprintf(why, len, "crypt(3) could not hash the password");
		goto out;
	}
	while (in && n < USERS_MAX && fgets(line, sizeof(line), in)) {
		char keep[LINE_MAX_WEB];

		snprintf(keep, sizeof(keep), "%s", line);
		if (split_line(line, &name, &r, &hash))
			continue;        /* not ours: not written back */
		if (strcmp(name, user) == 0) {
			snprintf(keep, sizeof(keep), "%s:%s:%s\n", user, web_role_name(role), hashed);
			replaced = true;
		}
		if (!(lines[n++] = strdup(keep))) {
			rc = -ENOMEM;
			goto out;
		}
	}
	if (!replaced) {
		if (n == USERS_MAX) {
			rc = -ENOSPC;
			snprintf(why, len, "%s has %d users, the most it may", path, USERS_MAX);
			goto out;
		}
		snprintf(line, sizeof(line), "%s:%s:%s\n", user, web_role_name(role), hashed);
		if (!(lines[n++] = strdup(line))) {
			rc = -ENOMEM;
			goto out;
		}
	}
	/* A fresh host has no /etc/lodge yet. */
	snprintf(tmp, sizeof(tmp), "%s", path);
	*strrchr(tmp, '/') = '\0';
	if ((rc = mkdirs(tmp, DIR_MODE_PUBLIC, NULL, 0))) {
		snprintf(why, len, "cannot make %s: %s", tmp, strerror(-rc));
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		rc = -errno;
		snprintf(why, len, "cannot write %s: %s", tmp, strerror(errno));
		goto out;
	}
	fchmod(fd, 0600);
	if (!(out = fdopen(fd, "w"))) {
		rc = -errno;
		close(fd);
		unlink(tmp);
		goto out;
	}
	for (i = 0; i < n; i++)
		fputs(lines[i], out);
	if (fflush(out) || fsync(fd) || ferror(out)) {
		rc = -errno ? -errno : -EIO;
		snprintf(why, len, "cannot write %s: %s", tmp, strerror(-rc));
		fclose(out);
		unlink(tmp);
		goto out;
	}
	fclose(out);
	if (rename(tmp, path)) {
		rc = -errno;
		snprintf(why, len, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
		unlink(tmp);
	}
out:
	memset(&cd, 0, sizeof(cd));
	for (i = 0; i < n; i++)
		free(lines[i]);
	if (in)
		fclose(in);
	return rc;
}
