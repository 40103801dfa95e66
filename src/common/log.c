#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

static const char *log_prog = "lodge";
static enum log_level log_level = LOG_INFO;
static bool log_timestamps;

void log_init(const char *progname)
{
	const char *slash = strrchr(progname, '/');

	log_prog = slash ? slash + 1 : progname;
	if (getenv("LODGE_DEBUG"))
		log_level = LOG_DEBUG;
	/* The zone is read now, while /etc/localtime is there to read: a
	 * sandboxed lodge-hyp stamps its lines in the same zone. */
	tzset();
}

void log_set_timestamps(bool on) { log_timestamps = on; }

const char *log_eol(void)
{
	struct termios t;

	/* Asked of the terminal each time: whichever process put it in raw
	 * mode (a standalone domain's console, its restarted child), and
	 * whether or not that one restored it before it ended. */
	return tcgetattr(STDERR_FILENO, &t) == 0 && !((t.c_oflag & OPOST) && (t.c_oflag & ONLCR)) ? "\r\n" : "\n";
}

char *log_time_iso(char *out, size_t len, const struct timespec *ts)
{
	struct tm tm;
	char zone[8];
	size_t n;

	if (!len)
		return out;
	out[0] = '\0';
	if (!localtime_r(&ts->tv_sec, &tm) || !strftime(zone, sizeof(zone), "%z", &tm) || strlen(zone) != 5)
		return out;
	n = strftime(out, len, "%Y-%m-%dT%H:%M:%S", &tm);
	/* ISO 8601's offset has a colon (+01:00); strftime's %z has none. */
	if (n)
		snprintf(out + n, len - n, ".%03ld%.3s:%s", ts->tv_nsec / 1000000, zone, zone + 3);
	return out;
}

void log_set_level(enum log_level level) { log_level = level; }
enum log_level log_get_level(void) { return log_level; }

size_t text_control_len(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	if (u[0] < 0x20 || u[0] == 0x7f)
		return u[0] ? 1 : 0;
	return u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f ? 2 : 0;
}

const char *text_find_control(const char *s)
{
	for (; *s; s++)
		if (text_control_len(s))
			return s;
	return NULL;
}

char *text_escape_n(char *out, size_t outlen, const char *in, size_t n)
{
	static const char named[] = { ['\n'] = 'n', ['\t'] = 't', ['\r'] = 'r', [033] = 'e' };
	size_t i, o = 0, k, len;
	char esc[9];

	if (!outlen)
		return out;
	for (i = 0; i < n && in[i]; i += k) {
		unsigned char c = (unsigned char)in[i];

		k = text_control_len(in + i);
		if (!k)
			len = 1, k = 1, esc[0] = (char)c;
		else if (k == 1 && c < sizeof(named) && named[c])
			len = (size_t)snprintf(esc, sizeof(esc), "\\%c", named[c]);
		else if (k == 1)
			len = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", c);
		else
			len = (size_t)snprintf(esc, sizeof(esc), "\\x%02x\\x%02x", c, (unsigned char)in[i + 1]);
		if (o + len >= outlen)
			break;
		memcpy(out + o, esc, len);
		o += len;
	}
	out[o] = '\0';
	return out;
}

char *text_escape(char *out, size_t outlen, const char *in)
{
	return text_escape_n(out, outlen, in, strlen(in));
}

static void log_vmsg_line(enum log_level level, const char *fmt, va_list ap)
{
	static const char *const prefix[] = {
		[LOG_ERR] = "error: ", [LOG_WARN] = "warning: ",
		[LOG_INFO] = "", [LOG_DEBUG] = "debug: ",
	};
	char msg[1024], buf[4 * sizeof(msg) + 128], when[40] = "";
	const char *eol;
	struct timespec ts;
	int n;

	if (level > log_level)
		return;
	eol = log_eol();
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_timestamps) {
		clock_gettime(CLOCK_REALTIME, &ts);
		log_time_iso(when, sizeof(when) - 1, &ts);
		strcat(when, " ");
	}
	n = snprintf(buf, sizeof(buf), "%s%s: %s", when, log_prog, prefix[level]);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return;
	text_escape(buf + n, sizeof(buf) - n - 2, msg);
	/* One write per line: whole lines however many processes share the file. */
	n = strlen(buf);
	memcpy(buf + n, eol, strlen(eol));
	n += strlen(eol);
	if (write(STDERR_FILENO, buf, n) < 0) {
		/* nowhere left to report it */
	}
}

/* errno as the caller left it: "log_err(..., strerror(errno)); return
 * -errno;" is a common shape, and asking the terminal (log_eol) or the
 * clock sets errno on the way. */
static void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	int saved = errno;

	log_vmsg_line(level, fmt, ap);
	errno = saved;
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
