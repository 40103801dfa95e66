/* The domain's serial console on lodge-hyp's terminal (standalone mode):
 * raw mode while it runs, restored on every exit path; guest output through
 * a bounded ring so a vCPU never waits for a slow or absent reader. */
#ifndef LODGE_CONSOLE_H
#define LODGE_CONSOLE_H

#include <stddef.h>
#include <stdint.h>

/* The key that detaches from the console and stops the domain: Ctrl-]
 * (as in telnet, virsh console and xl console). */
#define CONSOLE_ESCAPE 0x1d

/* Start the output thread; put in_fd in raw mode if it is a terminal. */
int console_init(int in_fd, int out_fd);
/* From any thread: queue guest output; drops the oldest bytes when full. */
void console_output(const uint8_t *buf, size_t len);
/* Wait up to timeout_ms for queued output to reach out_fd. */
void console_flush(int timeout_ms);
/* Restore the terminal; async-signal-safe, idempotent. */
void console_restore(void);
/* Is the console input a terminal (so the escape key applies)? */
int console_is_tty(void);

#endif
