/* Logging: one line per message, prefixed with the program name.
 * Runtime paths return negative errno; the edge (main, a socket reply)
 * turns it into exactly one message with log_err(). */
#ifndef LODGE_LOG_H
#define LODGE_LOG_H

#include <stdarg.h>
#include <stdnoreturn.h>

enum log_level { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_init(const char *progname);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define log_err(...)   log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* Start-up only: print the message and exit(1). */
noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
