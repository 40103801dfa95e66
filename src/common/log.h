/* Logging: one line per message, prefixed with the program name.
 * Runtime paths return negative errno; the edge (main, a socket reply)
 * turns it into exactly one message with log_err(). */
#ifndef LODGE_LOG_H
#define LODGE_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdnoreturn.h>
#include <time.h>

enum log_level { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_init(const char *progname);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/* Each line is prefixed with the time (log_time_iso): for a file kept
 * beside a running domain (its lodge-hyp.log), not a terminal. */
void log_set_timestamps(bool on);
/* How a line on stderr ends: "\r\n" while it is a terminal in raw mode
 * (a guest's console on it), which no longer turns \n into both; "\n"
 * else.  Async-signal-safe. */
const char *log_eol(void);
/* ts as ISO 8601 local time with milliseconds and the offset,
 * 2026-12-04T22:30:01.123+01:00, into out (33 bytes hold it). */
char *log_time_iso(char *out, size_t len, const struct timespec *ts);

void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define log_err(...)   log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* Every message is written with its control characters escaped (see
 * text_escape): text from a file, a guest or a peer can neither move the
 * terminal's cursor, send it escape sequences, nor fake a second line. */

/* Control characters: C0 (0x00-0x1f), DEL, and C1 (U+0080-U+009F, as
 * UTF-8 c2 80-c2 9f), which terminals may act on.  Bytes of the one at
 * s, 0 if s is not at one. */
size_t text_control_len(const char *s);
/* The first control character in s, or NULL: names and paths with one
 * are refused where they come in. */
const char *text_find_control(const char *s);
/* The first n bytes of the string in, each control character written as \n \t \r \e or
 * \xNN, into out (always terminated; cut at an escape, not inside one).
 * Backslashes are kept as they are, so escaping twice changes nothing. */
char *text_escape_n(char *out, size_t outlen, const char *in, size_t n);
char *text_escape(char *out, size_t outlen, const char *in);

/* Start-up only: print the message and exit(1). */
noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
