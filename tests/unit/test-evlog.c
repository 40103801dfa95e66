/* The event log's lines (src/common/evlog.c) and its way from a domain's
 * processes to the file (src/hyp/events.c): one line per event whatever
 * a client or guest put in its text, fields that stay in their places,
 * ISO 8601 times with the offset, and a log that root appends to without
 * following a link or blocking on a FIFO planted where it goes. */
#include "events.h"
#include "evlog.h"
#include "log.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

/* log_eol() with stderr on a pseudo-terminal, cooked then raw. */
static void check_eol(void)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY), slave, saved = dup(STDERR_FILENO);
	const char *cooked, *raw;
	struct termios t;

	if (master < 0 || grantpt(master) || unlockpt(master) || (slave = open(ptsname(master), O_RDWR | O_NOCTTY)) < 0) {
		printf("SKIP: line ends on a terminal: no pseudo-terminal\n");
		return;
	}
	dup2(slave, STDERR_FILENO);
	cooked = log_eol();
	tcgetattr(slave, &t);
	cfmakeraw(&t);
	tcsetattr(slave, TCSANOW, &t);
	raw = log_eol();
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(slave);
	close(master);
	CHECK("lines end in \\n on a file and a cooked terminal, \\r\\n only on a raw terminal",
	      strcmp(log_eol(), "\n") == 0 && strcmp(cooked, "\n") == 0 && strcmp(raw, "\r\n") == 0);
}

static char tmp[] = "/tmp/test-evlog-XXXXXX";

static size_t count_char(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

static char *read_all(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

int main(void)
{
	struct timespec t = { 1, 234000000 };
	char line[EVLOG_LINE_MAX], path[256], dir[256], big[2000];
	const char *dom;
	struct stat st;
	size_t n;

	setenv("TZ", "UTC", 1);
	log_init("test-evlog");
	n = evlog_format(line, sizeof(line), &t, "web", EV_PAUSED, "uid=0,pid=1", NULL);
	CHECK("a line: time, domain, event, who, '-' for no detail, one newline",
	      strcmp(line, "1970-01-01T00:00:01.234+00:00 web paused uid=0,pid=1 -\n") == 0 && n == strlen(line));

	setenv("TZ", "IST-5:30", 1);
	tzset();
	log_time_iso(line, sizeof(line), &t);
	CHECK("the offset as ISO 8601 writes it (+05:30)", strcmp(line, "1970-01-01T05:30:01.234+05:30") == 0);
	setenv("TZ", "UTC", 1);
	tzset();

	evlog_format(line, sizeof(line), &t, "web", EV_CRASHED, "guest", "triple fault\nFAKE web destroyed uid=0\r\e[2J");
	CHECK("a detail's newline, CR and escape sequence are escaped: still one line",
	      count_char(line, '\n') == 1 && !strchr(line, '\r') && !strchr(line, '\033') &&
	      strstr(line, "triple fault\\nFAKE web destroyed uid=0\\r\\e[2J\n"));

	evlog_format(line, sizeof(line), &t, "web", EV_PAUSED, "uid=0 pid=1\nx", NULL);
	CHECK("a WHO keeps its place: spaces and control characters become '?'",
	      strcmp(line, "1970-01-01T00:00:01.234+00:00 web paused uid=0?pid=1?x -\n") == 0);

	CHECK("a number that is no event makes no line",
	      evlog_format(line, sizeof(line), &t, "web", EV_COUNT, "guest", NULL) == 0 &&
	      evlog_format(line, sizeof(line), &t, "web", 0xffffffffu, "guest", NULL) == 0);

	memset(big, '\n', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	n = evlog_format(line, 200, &t, "web", EV_SAVED, "guest", big);
	CHECK("a detail too long is cut, the line still ends in its one newline",
	      n == strlen(line) && n < 200 && line[n - 1] == '\n' && count_char(line, '\n') == 1);

	evlog_format(line, sizeof(line), &t, "web-2", EV_MIGRATED_OUT, "uid=0,pid=7,via=dashboard", "to h2");
	dom = evlog_line_domain(line, &n);
	CHECK("the DOMAIN field is found again", dom && n == 5 && strncmp(dom, "web-2", 5) == 0);
	CHECK("every event has a word without spaces", ({
		bool ok = true;
		for (unsigned e = 0; e < EV_COUNT; e++)
			ok = ok && evlog_event_name(e) && !strchr(evlog_event_name(e), ' ');
		ok;
	}));

	if (!mkdtemp(tmp))
		return 1;
	snprintf(dir, sizeof(dir), "%s/var/log/lodge", tmp);
	evlog_format(line, sizeof(line), &t, "web", EV_CREATED, "uid=0,pid=1", "id 1");
	CHECK("the log's directories are made: the log's 0750, the file 0640",
	      evlog_append(dir, line, strlen(line)) == 0 && stat(dir, &st) == 0 && (st.st_mode & 07777) == 0750 &&
	      snprintf(path, sizeof(path), "%s/%s", dir, EVLOG_FILE) > 0 && stat(path, &st) == 0 &&
	      (st.st_mode & 07777) == 0640 && strcmp(read_all(path), line) == 0);

	/* A link where the file goes: refused, its target untouched. */
	unlink(path);
	snprintf(big, sizeof(big), "%s/target", tmp);
	close(open(big, O_CREAT | O_WRONLY, 0600));
	CHECK("a symbolic link in place of the file is not followed",
	      symlink(big, path) == 0 && evlog_append(dir, line, strlen(line)) == -ELOOP && read_all(big)[0] == '\0');
	unlink(path);
	CHECK("a FIFO in place of the file is refused at once",
	      mkfifo(path, 0600) == 0 && evlog_append(dir, line, strlen(line)) < 0);
	unlink(path);
	rmdir(dir);
	CHECK("a symbolic link in place of the directory is not followed",
	      symlink(tmp, dir) == 0 && evlog_append(dir, line, strlen(line)) < 0 &&
	      snprintf(path, sizeof(path), "%s/%s", tmp, EVLOG_FILE) > 0 && access(path, F_OK) < 0);
	unlink(dir);

	/* From a domain's process down the pipe to the file. */
	CHECK("an event sent is written by the supervisor's drain, the name its own",
	      events_open(dir, "web") == 0 && (event_send(EV_PAUSED, "uid=5,pid=6", "x\ny"), events_drain(), 1) &&
	      snprintf(path, sizeof(path), "%s/%s", dir, EVLOG_FILE) > 0 &&
	      strstr(read_all(path), " web paused uid=5,pid=6 x\\ny\n") && count_char(read_all(path), '\n') == 1);

	/* A flood from a process taken over: a burst, then 20 a second. */
	for (int i = 0; i < 25; i++) {
		for (int k = 0; k < 10; k++)
			event_send(EV_MEM_SET, "uid=0,pid=1", "flood");
		events_drain();
	}
	n = count_char(read_all(path), '\n');
	CHECK("a flood of events is cut to the burst (200 lines in all) and the rate", n >= 200 && n <= 205);
	check_eol();
	snprintf(big, sizeof(big), "rm -rf %s", tmp);
	if (system(big) != 0)
		return 1;
	UNIT_EXIT();
}
