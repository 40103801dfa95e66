#include "console.h"
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define CONSOLE_RING_SIZE (64 * 1024)

static struct {
	int in_fd, out_fd;
	int is_tty;
	int termios_saved;
	struct termios saved;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;       /* output queued, or drained */
	uint8_t ring[CONSOLE_RING_SIZE];
	size_t head, count;        /* bytes [head, head+count) are queued */
	int writing;               /* the output thread holds bytes in flight */
	int dead;                  /* out_fd failed: discard from now on */
	uint64_t dropped;
} con = { .in_fd = -1, .out_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER,
	  .cond = PTHREAD_COND_INITIALIZER };

void console_restore(void)
{
	if (con.termios_saved)
		tcsetattr(con.in_fd, TCSAFLUSH, &con.saved);
}

int console_is_tty(void) { return con.is_tty; }

/* A crash must not leave the user's terminal raw: restore, then let the
 * default action (core dump) happen. */
static void console_fatal_signal(int sig)
{
	console_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void *console_output_thread(void *arg)
{
	uint8_t chunk[4096];

	(void)arg;
	pthread_setname_np(pthread_self(), "console");
	pthread_mutex_lock(&con.lock);
	for (;;) {
		size_t n, first;

		while (con.count == 0) {
			con.writing = 0;
			pthread_cond_broadcast(&con.cond);
			pthread_cond_wait(&con.cond, &con.lock);
		}
		n = con.count < sizeof(chunk) ? con.count : sizeof(chunk);
		first = CONSOLE_RING_SIZE - con.head;
		if (first > n)
			first = n;
		memcpy(chunk, con.ring + con.head, first);
		memcpy(chunk + first, con.ring, n - first);
		con.head = (con.head + n) % CONSOLE_RING_SIZE;
		con.count -= n;
		con.writing = 1;
		pthread_mutex_unlock(&con.lock);

		for (size_t off = 0; off < n && !con.dead;) {
			ssize_t w = write(con.out_fd, chunk + off, n - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				con.dead = 1;   /* reader gone: the guest keeps running */
				break;
			}
			off += w;
		}
		pthread_mutex_lock(&con.lock);
	}
	return NULL;
}

void console_output(const uint8_t *buf, size_t len)
{
	size_t i;

	if (con.dead)
		return;
	pthread_mutex_lock(&con.lock);
	for (i = 0; i < len; i++) {
		if (con.count == CONSOLE_RING_SIZE) {   /* full: drop the oldest */
			con.head = (con.head + 1) % CONSOLE_RING_SIZE;
			con.count--;
			con.dropped++;
		}
		con.ring[(con.head + con.count) % CONSOLE_RING_SIZE] = buf[i];
		con.count++;
	}
	pthread_cond_signal(&con.cond);
	pthread_mutex_unlock(&con.lock);
}

void console_flush(int timeout_ms)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&con.lock);
	while ((con.count || con.writing) && !con.dead)
		if (pthread_cond_timedwait(&con.cond, &con.lock, &deadline) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&con.lock);
}

int console_init(int in_fd, int out_fd)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	unsigned i;
	int rc;

	con.in_fd = in_fd;
	con.out_fd = out_fd;
	con.is_tty = isatty(in_fd);
	if (con.is_tty && tcgetattr(in_fd, &con.saved) == 0) {
		struct termios raw = con.saved;

		con.termios_saved = 1;
		atexit(console_restore);
		for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
			signal(fatal[i], console_fatal_signal);
		cfmakeraw(&raw);
		/* Keep output post-processing off but let our own log lines
		 * (which carry \r\n) read well. */
		if (tcsetattr(in_fd, TCSAFLUSH, &raw) < 0)
			log_warn("cannot put the terminal in raw mode: %s", strerror(errno));
	}
	rc = pthread_create(&con.thread, NULL, console_output_thread, NULL);
	if (rc)
		return -rc;
	pthread_detach(con.thread);
	return 0;
}
