#include "console.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static struct {
	int in_fd, out_fd, log_fd, old_fd;   /* old_fd: console.log.1 */
	size_t log_cap, log_size;
	int is_tty;
	int termios_saved;
	struct termios saved;
	int event_fd;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;        /* output added, or the writer caught up */
	uint8_t *ring;              /* CONSOLE_HISTORY bytes, allocated on first output */
	uint64_t head;              /* bytes ever written */
	uint64_t written;           /* how far the output thread got */
	int event_pending;          /* event_fd written and not yet drained */
} con = { .in_fd = -1, .out_fd = -1, .log_fd = -1, .old_fd = -1, .event_fd = -1,
	  .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

void console_restore(void)
{
	if (con.termios_saved)
		tcsetattr(con.in_fd, TCSAFLUSH, &con.saved);
}

int console_is_tty(void) { return con.is_tty; }
int console_event_fd(void) { return con.event_fd; }

void console_event_drain(void)
{
	uint64_t v;

	pthread_mutex_lock(&con.lock);
	if (read(con.event_fd, &v, sizeof(v)) < 0)
		v = 0;
	con.event_pending = 0;
	pthread_mutex_unlock(&con.lock);
}

/* A crash must not leave the user's terminal raw: restore, then let the
 * default action (core dump) happen. */
static void console_fatal_signal(int sig)
{
	console_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

uint64_t console_head(void)
{
	uint64_t h;

	pthread_mutex_lock(&con.lock);
	h = con.head;
	pthread_mutex_unlock(&con.lock);
	return h;
}

/* Lock held. */
static size_t console_copy_out(uint64_t *pos, void *dst, size_t max)
{
	size_t n, first, off;

	if (con.head - *pos > CONSOLE_HISTORY)
		*pos = con.head - CONSOLE_HISTORY;      /* fell behind: lose the oldest */
	n = con.head - *pos;
	if (n > max)
		n = max;
	off = *pos % CONSOLE_HISTORY;
	first = CONSOLE_HISTORY - off < n ? CONSOLE_HISTORY - off : n;
	memcpy(dst, con.ring + off, first);
	memcpy((uint8_t *)dst + first, con.ring, n - first);
	*pos += n;
	return n;
}

size_t console_read(uint64_t *pos, void *dst, size_t max)
{
	size_t n = 0;

	pthread_mutex_lock(&con.lock);
	if (con.ring)
		n = console_copy_out(pos, dst, max);
	pthread_mutex_unlock(&con.lock);
	return n;
}

void console_output(const uint8_t *buf, size_t len)
{
	uint64_t one = 1;
	size_t i;
	int notify;

	pthread_mutex_lock(&con.lock);
	if (!con.ring && !(con.ring = malloc(CONSOLE_HISTORY))) {
		pthread_mutex_unlock(&con.lock);
		return;
	}
	notify = !con.event_pending;
	con.event_pending = 1;
	for (i = 0; i < len; i++)
		con.ring[(con.head + i) % CONSOLE_HISTORY] = buf[i];
	con.head += len;
	pthread_cond_signal(&con.cond);
	pthread_mutex_unlock(&con.lock);
	/* One eventfd write per wake-up of the control loop, not per byte. */
	if (notify && con.event_fd >= 0 && write(con.event_fd, &one, sizeof(one)) < 0) {
		/* counter saturated: the reader is awake anyway */
	}
}

static void console_write_all(int *fd, const uint8_t *buf, size_t n)
{
	size_t off = 0;

	while (*fd >= 0 && off < n) {
		ssize_t w = write(*fd, buf + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			*fd = -1;     /* reader gone: keep the guest running, drop output */
			return;
		}
		off += w;
	}
}

/* console.log's bytes become console.log.1's, and console.log starts
 * empty.  Copied through the two descriptors opened at start rather than
 * renamed: the sandboxed lodge-hyp may not write the runtime directory. */
static void console_log_rotate(void)
{
	static uint8_t chunk[65536];
	off_t off = 0;
	ssize_t n;

	if (con.old_fd >= 0 && ftruncate(con.old_fd, 0) == 0)
		while ((n = pread(con.log_fd, chunk, sizeof(chunk), off)) > 0 &&
		       pwrite(con.old_fd, chunk, n, off) == n)
			off += n;
	if (ftruncate(con.log_fd, 0) < 0) {
		/* cannot happen to a regular file we opened for writing */
	}
	con.log_size = 0;
}

/* Keep the log under its cap: console.log moves to console.log.1. */
static void console_log_write(const uint8_t *buf, size_t n)
{
	if (con.log_fd < 0)
		return;
	if (con.log_size + n > con.log_cap)
		console_log_rotate();
	console_write_all(&con.log_fd, buf, n);
	con.log_size += n;
}

static void *console_output_thread(void *arg)
{
	uint8_t chunk[4096];

	(void)arg;
	pthread_setname_np(pthread_self(), "console");
	pthread_mutex_lock(&con.lock);
	for (;;) {
		size_t n;

		while (con.written == con.head) {
			pthread_cond_broadcast(&con.cond);
			pthread_cond_wait(&con.cond, &con.lock);
		}
		n = console_copy_out(&con.written, chunk, sizeof(chunk));
		pthread_mutex_unlock(&con.lock);
		console_write_all(&con.out_fd, chunk, n);
		console_log_write(chunk, n);
		pthread_mutex_lock(&con.lock);
	}
	return NULL;
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
	while (con.written != con.head)
		if (pthread_cond_timedwait(&con.cond, &con.lock, &deadline) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&con.lock);
}

/* A domain restarted in place (on_reboot = restart) keeps what its
 * previous boot printed: the history starts with the log's tail. */
static void console_history_from_log(off_t size)
{
	size_t want = size < (off_t)CONSOLE_HISTORY ? (size_t)size : CONSOLE_HISTORY;
	ssize_t n;

	if (!want || !(con.ring = malloc(CONSOLE_HISTORY)))
		return;
	n = pread(con.log_fd, con.ring, want, size - want);
	if (n > 0)
		con.head = con.written = n;   /* already in the log: not written again */
}

int console_init(int in_fd, int out_fd, const char *log_path, size_t log_cap)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	unsigned i;
	int rc;

	con.in_fd = in_fd;
	con.out_fd = out_fd;
	con.event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (con.event_fd < 0)
		return -errno;
	if (log_path) {
		char old[4200];
		struct stat st;

		con.log_cap = log_cap;
		con.log_fd = open(log_path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (con.log_fd < 0)
			return -errno;
		snprintf(old, sizeof(old), "%s.1", log_path);
		con.old_fd = open(old, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (con.old_fd < 0)
			return -errno;
		if (fstat(con.log_fd, &st) == 0) {
			con.log_size = st.st_size;
			console_history_from_log(st.st_size);
		}
	}
	con.is_tty = in_fd >= 0 && isatty(in_fd);
	if (con.is_tty && tcgetattr(in_fd, &con.saved) == 0) {
		struct termios raw = con.saved;

		con.termios_saved = 1;
		atexit(console_restore);
		for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
			signal(fatal[i], console_fatal_signal);
		cfmakeraw(&raw);
		if (tcsetattr(in_fd, TCSAFLUSH, &raw) < 0)
			log_warn("cannot put the terminal in raw mode: %s", strerror(errno));
	}
	rc = pthread_create(&con.thread, NULL, console_output_thread, NULL);
	if (rc)
		return -rc;
	pthread_detach(con.thread);
	return 0;
}
