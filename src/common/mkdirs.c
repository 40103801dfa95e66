/* mkdir -p (mkdirs.h): the one used by the library, lodge-hyp and
 * lodge-web. */
#include "mkdirs.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int mkdirs(const char *path, mode_t last_mode, char *failed, size_t len)
{
	char p[PATH_MAX];
	size_t i, n = strlen(path);
	int rc;

	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, path, n + 1);
	while (n > 1 && p[n - 1] == '/')      /* "dir/" is dir */
		p[--n] = '\0';
	for (i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		if (mkdir(p, i == n ? last_mode : DIR_MODE_PUBLIC) < 0 && errno != EEXIST) {
			rc = -errno;
			if (failed)
				snprintf(failed, len, "%s", p);
			return rc;
		}
		if (i < n)
			p[i] = '/';
	}
	return 0;
}
