/* Paths built and made (paths.h). */
#include "paths.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int path_printf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int make_dirs_at(const char *path, mode_t mode, char *failed, size_t len)
{
	char p[PATH_MAX], *s;
	int rc;

	if ((rc = path_printf(p, sizeof(p), "%s", path)))
		return rc;
	/* From the second byte: "/" of an absolute path is no directory to make. */
	for (s = p + (p[0] != '\0');; s++) {
		bool end = *s == '\0';

		if (*s != '/' && !end)
			continue;
		*s = '\0';
		if (mkdir(p, end ? mode : 0755) < 0 && errno != EEXIST) {
			rc = -errno;
			if (failed)
				snprintf(failed, len, "%s", p);
			return rc;
		}
		if (end)
			return 0;
		*s = '/';
	}
}

int make_dirs(const char *path, mode_t mode)
{
	return make_dirs_at(path, mode, NULL, 0);
}
