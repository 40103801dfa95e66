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

static void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	static const char *const prefix[] = {
		[LOG_ERR] = "error: ", [LOG_WARN] = "warning: ",
		[LOG_INFO] = "", [LOG_DEBUG] = "debug: ",
	};
	char msg[1024], buf[4 * sizeof(msg) + 64];
	int n;

	if (level > log_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = snprintf(buf, sizeof(buf), "%s: %s", log_prog, prefix[level]);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return;
	text_escape(buf + n, sizeof(buf) - n - 2, msg);
	/* One write per line, with \r\n: the terminal may be in raw mode
	 * while a guest console is attached. */
	n = strlen(buf);
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
