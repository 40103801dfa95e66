/* Every descriptor but a few closed (closefds.h). */
#include "closefds.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#define CLOSEFDS_KEEP_MAX 64

static int by_value(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int kept(int fd, const int *keep, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (keep[i] == fd)
			return 1;
	return 0;
}

void close_fds_but(const int *keep, unsigned n)
{
	int sorted[CLOSEFDS_KEEP_MAX];
	struct rlimit rl;
	unsigned lo = 3, i, m = 0;
	int fd;

	for (i = 0; i < n && m < CLOSEFDS_KEEP_MAX; i++)
		if (keep[i] >= 3)
			sorted[m++] = keep[i];
	qsort(sorted, m, sizeof(sorted[0]), by_value);
	for (i = 0; i < m; i++) {
		if (sorted[i] < (int)lo)
			continue;              /* a duplicate */
		if (sorted[i] > (int)lo && close_range(lo, (unsigned)sorted[i] - 1, 0) < 0)
			goto by_hand;
		lo = (unsigned)sorted[i] + 1;
	}
	if (close_range(lo, ~0U, 0) == 0)
		return;
by_hand:
	/* A kernel before 5.9 has no close_range. */
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > INT_MAX)
		rl.rlim_cur = 1 << 20;
	for (fd = 3; fd < (int)rl.rlim_cur; fd++)
		if (!kept(fd, sorted, m))
			close(fd);
}
