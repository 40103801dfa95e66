#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *log_prog = "lodge";
static enum log_level log_level = LOG_INFO;

void log_init(const char *progname)
{
	const char *slash = strrchr(progname, '/');

	log_prog = slash ? slash + 1 : progname;
	if (getenv("LODGE_DEBUG"))
		log_level = LOG_DEBUG;
}

void log_set_level(enum log_level level) { log_level = level; }
enum log_level log_get_level(void) { return log_level; }

static void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	static const char *const prefix[] = {
		[LOG_ERR] = "error: ", [LOG_WARN] = "warning: ",
		[LOG_INFO] = "", [LOG_DEBUG] = "debug: ",
	};
	char buf[1024];
	int n;

	if (level > log_level)
		return;
	n = snprintf(buf, sizeof(buf), "%s: %s", log_prog, prefix[level]);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return;
	vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	/* One write per line, with \r\n: the terminal may be in raw mode
	 * while a guest console is attached. */
	n = strlen(buf);
	if (n > (int)sizeof(buf) - 3)
		n = sizeof(buf) - 3;
	buf[n++] = '\r';
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, n) < 0) {
		/* nowhere left to report it */
	}
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_ERR, fmt, ap);
	va_end(ap);
	exit(1);
}
