/* The domain's serial console.  Guest output goes into a history ring of
 * CONSOLE_HISTORY bytes that several readers follow at their own pace: the
 * terminal (standalone mode), the size-capped console log, an attached
 * `lodge console` client.  A reader that falls behind loses the oldest
 * bytes; a vCPU never waits for any of them. */
#ifndef LODGE_CONSOLE_H
#define LODGE_CONSOLE_H

#include <stddef.h>
#include <stdint.h>

#define CONSOLE_HISTORY (1u << 20)
/* The key that detaches from the console and, in standalone mode, stops
 * the domain: Ctrl-] (as in telnet, virsh console and xl console). */
#define CONSOLE_ESCAPE 0x1d

/* Start the console: out_fd (-1: none) gets everything live; log_path
 * (NULL: none) is appended to and rotated to log_path.1 past log_cap
 * bytes.  in_fd is put in raw mode if it is a terminal. */
int console_init(int in_fd, int out_fd, const char *log_path, size_t log_cap);
/* From any thread: add guest output. */
void console_output(const uint8_t *buf, size_t len);
/* Position just past the newest byte (bytes ever written). */
uint64_t console_head(void);
/* Copy bytes from *pos on into dst; a reader that fell more than the
 * history behind is moved up to the oldest byte kept. Returns the count. */
size_t console_read(uint64_t *pos, void *dst, size_t max);
/* Readable (eventfd) whenever output was added; drain it with
 * console_event_drain() before reading the new output. */
int console_event_fd(void);
void console_event_drain(void);
/* Wait up to timeout_ms for the output thread to write everything. */
void console_flush(int timeout_ms);
/* Restore the terminal; async-signal-safe, idempotent. */
void console_restore(void);
int console_is_tty(void);

#endif
