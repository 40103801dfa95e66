/* The event log's lines (evlog.h). */
#include <syslog.h>
/* log.h's levels have syslog.h's names; this file uses syslog's
 * facility and LOG_NOTICE only. */
#undef LOG_ERR
#undef LOG_INFO
#undef LOG_DEBUG
#include "evlog.h"
#include "mkdirs.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The words, by enum evlog_event: the log's vocabulary, defined once. */
static const char *const event_names[EV_COUNT] = {
	[EV_CREATED] = "created",
	[EV_RESTORED] = "restored",
	[EV_MIGRATED_IN] = "migrated-in",
	[EV_PAUSED] = "paused",
	[EV_UNPAUSED] = "unpaused",
	[EV_SHUTDOWN_ASKED] = "shutdown-asked",
	[EV_POWERED_OFF] = "powered-off",
	[EV_REBOOTED] = "rebooted",
	[EV_CRASHED] = "crashed",
	[EV_CRASH_KEPT] = "crash-kept",
	[EV_STOPPED] = "stopped",
	[EV_FAILED] = "failed",
	[EV_KILLED] = "killed",
	[EV_DESTROYED] = "destroyed",
	[EV_SAVED] = "saved",
	[EV_MIGRATED_OUT] = "migrated-out",
	[EV_MEM_SET] = "mem-set",
	[EV_SCHED] = "sched",
	[EV_VCPU_PIN] = "vcpu-pin",
	[EV_BLOCK_ATTACH] = "block-attach",
	[EV_BLOCK_DETACH] = "block-detach",
	[EV_NETWORK_ATTACH] = "network-attach",
	[EV_NETWORK_DETACH] = "network-detach",
	[EV_DETACH_TIMED_OUT] = "detach-timed-out",
	[EV_MEM_MAX] = "mem-max",
	[EV_SYSRQ] = "sysrq",
	[EV_NMI] = "nmi",
	[EV_VCPU_SET] = "vcpu-set",
	[EV_RENAMED] = "renamed",
};

const char *evlog_event_name(unsigned ev)
{
	return ev < EV_COUNT ? event_names[ev] : NULL;
}

enum evlog_event evlog_event_of(const char *word)
{
	unsigned i;

	for (i = 0; i < EV_COUNT; i++)
		if (strcmp(word, event_names[i]) == 0)
			break;
	return (enum evlog_event)i;
}

size_t evlog_format(char *out, size_t len, const struct timespec *when, const char *domain, unsigned ev,
		    const char *who, const char *detail)
{
	char when_s[40], dom[4 * 64], who_s[EVLOG_WHO_MAX], det[4 * EVLOG_DETAIL_MAX];
	const char *name = evlog_event_name(ev);
	size_t i;
	int n;

	if (!name || len < 2)
		return 0;
	log_time_iso(when_s, sizeof(when_s), when);
	/* Names are checked where they come in; escaped all the same, and a
	 * space would shift every field after it. */
	text_escape(dom, sizeof(dom), domain && domain[0] ? domain : "-");
	for (i = 0; dom[i]; i++)
		if (dom[i] == ' ')
			dom[i] = '?';
	for (i = 0; who && who[i] && i + 1 < sizeof(who_s); i++)
		who_s[i] = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789=,._-", who[i])
			   ? who[i] : '?';
	who_s[i] = '\0';
	text_escape(det, sizeof(det), detail && detail[0] ? detail : "-");
	n = snprintf(out, len - 1, "%s %s %s %s %s", when_s, dom, name, who_s[0] ? who_s : "-", det);
	if (n < 0)
		return 0;
	if ((size_t)n >= len - 1)
		n = (int)len - 2;        /* cut, still one line */
	out[n++] = '\n';
	out[n] = '\0';
	return (size_t)n;
}

int evlog_append(const char *dir, const char *line, size_t len)
{
	struct stat st;
	int dfd, fd, rc = 0;
	ssize_t w;

	if ((rc = mkdirs(dir, DIR_MODE_LOG, NULL, 0)))
		return rc;
	/* Root writes here: a link planted in place of the directory or the
	 * file would have it append to any file of the host. */
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -errno;
	fd = openat(dfd, EVLOG_FILE, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
		    0640);
	if (fd < 0)
		rc = -errno;
	close(dfd);
	if (rc)
		return rc;
	/* Nothing but a file: a FIFO would hold the supervisor. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		rc = -EINVAL;
	else if ((w = write(fd, line, len)) < 0)
		rc = -errno;
	else if ((size_t)w != len)
		rc = -EIO;
	close(fd);
	return rc;
}

void evlog_syslog(const char *line)
{
	static bool opened;
	const char *sp = strchr(line, ' ');

	if (!opened) {
		openlog(EVLOG_SYSLOG_IDENT, LOG_PID, LOG_DAEMON);
		opened = true;
	}
	syslog(LOG_NOTICE, "%.*s", (int)strcspn(sp ? sp + 1 : line, "\n"), sp ? sp + 1 : line);
}

const char *evlog_line_domain(const char *line, size_t *n)
{
	const char *sp = strchr(line, ' ');

	if (!sp || sp == line)
		return NULL;
	sp++;
	*n = strcspn(sp, " \n");
	return *n ? sp : NULL;
}
