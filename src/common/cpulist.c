/* Host CPU lists: one parser for the config's cpus = key (agent) and the
 * control socket's vcpu-pin (lodge-hyp), so both accept and refuse the
 * same text with the same words. */
#include "cpulist.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ONLINE_PATH "/sys/devices/system/cpu/online"

static int online_fd = -1;

int cpulist_host_keep_open(void)
{
	if (online_fd < 0 && (online_fd = open(ONLINE_PATH, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	return 0;
}

int cpulist_host(cpu_set_t *online)
{
	char buf[4096], why[128];
	int rc = -ENOENT, fd = online_fd >= 0 ? online_fd : open(ONLINE_PATH, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	/* pread at 0: sysfs makes the text afresh, so a kept descriptor
	 * follows CPU hotplug. */
	if (fd >= 0) {
		if ((n = pread(fd, buf, sizeof(buf) - 1, 0)) > 0) {
			buf[n] = '\0';
			buf[strcspn(buf, "\n")] = '\0';
			rc = cpulist_parse(buf, NULL, online, why, sizeof(why));
		}
		if (fd != online_fd)
			close(fd);
	}
	if (rc && sched_getaffinity(0, sizeof(*online), online) < 0)
		return -errno;
	return 0;
}

static int parse_cpu(const char **p, unsigned *cpu, const char *text, char *why, size_t whylen)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)**p)) {
		snprintf(why, whylen, "'%s' is not a CPU list like 0, 0-3, 0,2 or all", text);
		return -EINVAL;
	}
	v = strtoul(*p, &end, 10);
	if (v >= CPU_SETSIZE) {
		snprintf(why, whylen, "CPU %lu in '%s' is beyond %d", v, text, CPU_SETSIZE - 1);
		return -ERANGE;
	}
	*cpu = (unsigned)v;
	*p = end;
	return 0;
}

int cpulist_parse(const char *text, const cpu_set_t *host, cpu_set_t *set, char *why, size_t whylen)
{
	const char *p = text;
	char have[256];
	unsigned lo, hi, c;
	int rc;

	CPU_ZERO(set);
	if (strcmp(text, "all") == 0) {
		if (host)
			*set = *host;
		else
			for (c = 0; c < CPU_SETSIZE; c++)
				CPU_SET(c, set);
		return 0;
	}
	for (;;) {
		int exclude = *p == '^';

		p += exclude;
		if ((rc = parse_cpu(&p, &lo, text, why, whylen)))
			return rc;
		hi = lo;
		if (*p == '-') {
			p++;
			if ((rc = parse_cpu(&p, &hi, text, why, whylen)))
				return rc;
			if (hi < lo) {
				snprintf(why, whylen, "range %u-%u in '%s' runs backwards", lo, hi, text);
				return -EINVAL;
			}
		}
		for (c = lo; c <= hi; c++) {
			if (host && !CPU_ISSET(c, host)) {
				cpulist_format(host, have, sizeof(have));
				snprintf(why, whylen, "CPU %u is not on this host (it has CPUs %s)", c, have);
				return -ERANGE;
			}
			if (exclude)
				CPU_CLR(c, set);
			else
				CPU_SET(c, set);
		}
		if (*p == '\0')
			break;
		if (*p++ != ',') {
			snprintf(why, whylen, "'%s' is not a CPU list like 0, 0-3, 0,2 or all", text);
			return -EINVAL;
		}
	}
	if (CPU_COUNT(set) == 0) {
		snprintf(why, whylen, "'%s' leaves no CPU to run on", text);
		return -EINVAL;
	}
	return 0;
}

void cpulist_format(const cpu_set_t *set, char *out, size_t len)
{
	size_t n = 0;
	unsigned c = 0, start;

	if (len)
		out[0] = '\0';
	while (c < CPU_SETSIZE) {
		int w;

		if (!CPU_ISSET(c, set)) {
			c++;
			continue;
		}
		for (start = c; c + 1 < CPU_SETSIZE && CPU_ISSET(c + 1, set); c++)
			;
		if (c == start)
			w = snprintf(out + n, len - n, "%s%u", n ? "," : "", start);
		else
			w = snprintf(out + n, len - n, "%s%u-%u", n ? "," : "", start, c);
		if (w < 0 || (size_t)w >= len - n) {
			if (len)
				out[len - 1] = '\0';
			return;
		}
		n += w;
		c++;
	}
}
