/* A crash's evidence directory's name (crashdir.h). */
#include "crashdir.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

void crash_stamp(char out[CRASH_STAMP_MAX], const struct timespec *ts)
{
	struct tm tm;

	size_t n;

	gmtime_r(&ts->tv_sec, &tm);
	n = strftime(out, CRASH_STAMP_MAX, "%Y%m%dT%H%M%S", &tm);
	snprintf(out + n, CRASH_STAMP_MAX - n, ".%03dZ", (int)(ts->tv_nsec / 1000000 % 1000));
}

bool crash_stamp_valid(const char *s)
{
	static const char shape[] = "99999999T999999.999Z";
	size_t i;

	for (i = 0; shape[i]; i++)
		if (shape[i] == '9' ? !isdigit((unsigned char)s[i]) : s[i] != shape[i])
			return false;
	/* A second crash in the same millisecond got -2 .. -9. */
	return !s[i] || (s[i] == '-' && s[i + 1] >= '2' && s[i + 1] <= '9' && !s[i + 2]);
}

bool crash_entry_of(const char *entry, const char *name)
{
	size_t n = strlen(name);

	return strncmp(entry, name, n) == 0 && entry[n] == '-' && crash_stamp_valid(entry + n + 1);
}

int crash_dir_path(char *out, size_t len, const char *crash_dir, const char *name, const char *stamp)
{
	int n = snprintf(out, len, "%s/%s-%s", crash_dir, name, stamp);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
