/* lodge-hyp's control loop (src/hyp/ctl/ctl.c, ctl-commands.c) with clients
 * that interleave: the real ctl_step over socketpairs, each client's bytes
 * in chunks the input chooses, clients of root and of other uids (stats
 * or control level) connecting, closing midway and reading late, guest
 * console output, and a clock the input moves.  The domain is a
 * stand-in: one vCPU that is this thread, parked for good (pause returns
 * at once; vcpu-pin pins this thread), a real virtio-balloon (mem-set),
 * a real UART that a pretend guest drains (console input).
 *
 * Input: byte 0 sets the idle timeout (1 + low 5 bits s) and, bit 6,
 * whether a guest's reboot keeps the domain (preserve: the loop runs on
 * with it ended).  Then ops, one byte each and their operands:
 *   0 B      connect 1 + B>>4 clients as uid (B & 7: 0-2 root, else 1000 +
 *            it), level control if B & 8 else stats (root: control)
 *   1 K L .. client K sends the next L bytes (as many as are left)
 *   2 K C    client K sends canned request C (a whole valid line)
 *   3 K      client K closes
 *   4 T      the clock moves T * 250 ms
 *   5 N      the loop runs 1 + N % 4 iterations
 *   6 K      client K reads what has come
 *   7 N      the guest prints N * 32 bytes
 * Properties: users other than root never hold more than 16 slots, nor
 * one uid more than 8; root is refused only when every slot is busy; a
 * refused client gets one "error too many clients" line and its end; no
 * client outlives its deadline (a line unfinished past the line timeout,
 * idle past the idle timeout) unless busy (console, dump, save); a client
 * that never sent a whole line hears only "error" lines; with no
 * control-level client the domain is never changed (not ended, paused
 * or ballooned); after ctl_finish every client reads to its end. */
#include "fuzz.h"
#include "console.h"
#include "ctl/ctl-loop.h"
#include "dev/devices.h"
#include "dev/pci.h"
#include "domain.h"
#include "bus.h"
#include "log.h"
#include "virtio/balloon.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define UART_PORT   0x3f8
#define MAX_CLIENTS 96             /* past CTL_MAX_CLIENTS: refusals and evictions */

struct client {
	int fd;                    /* the harness's end; -1 once closed */
	bool sent_line;            /* has sent a '\n' */
};

static struct domain dom = { DOMAIN_DEFAULTS, .name = "fuzz", .kernel = "fuzz.elf",
			     .memory_mib = 256, .maxmem_mib = 1024 };
static struct uart *uart;
static struct ctl c;
static struct client cl[MAX_CLIENTS];
static unsigned ncl;
static uint64_t fake_ms;
static bool any_control, running;
static cpu_set_t affinity;

static const char *const canned[] = {
	"lodge/1 status\n", "lodge/1 pause\n", "lodge/1 unpause\n", "lodge/1 destroy\n",
	"lodge/1 reboot\n", "lodge/1 shutdown\n", "lodge/1 mem-set 128\n", "lodge/1 vcpu-list\n",
	"lodge/1 peers\n", "lodge/1 console\n", "lodge/1 console force\n", "lodge/1 console-log\n",
	"lodge/1 console-log 100\n", "lodge/1 save\n", "lodge/1 save-end resume\n", "lodge/1 migrate\n",
	"lodge/1 sched 256 0\n", "lodge/1 vcpu-pin 0 all\n", "lodge/2 status\n", "lodge/1 nonesuch\n",
	"lodge/1 sta", "tus\n",
};

static uint64_t fake_clock(void) { return fake_ms; }
static void kicked(int sig) { }

static void setup(void)
{
	struct sigaction sa = { .sa_handler = kicked };

	log_init("fuzz-ctl-clients");
	log_set_level(LOG_ERR);
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGUSR1, &sa, NULL);               /* vcpu.c's kick, to this thread */
	FUZZ_CHECK(pci_init() == 0, "pci_init");
	FUZZ_CHECK(virtio_balloon_create(&dom, 768 * 256, &dom.balloon) == 0, "virtio_balloon_create");
	FUZZ_CHECK((uart = uart_create(&dom, UART_PORT, 4)) != NULL, "uart_create");
	FUZZ_CHECK((dom.end_eventfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) >= 0, "eventfd");
	FUZZ_CHECK(ctl_keep_open() == 0, "ctl_keep_open");
	dom.nvcpus = 1;
	dom.vcpus[0].dom = &dom;
	dom.vcpus[0].thread = pthread_self();
	dom.vcpus[0].tid = gettid();
	dom.parked = 1;
	sched_getaffinity(0, sizeof(affinity), &affinity);
}

/* What a guest reading its serial port does: take every byte received. */
static void guest_reads_uart(void)
{
	uint32_t lsr = 0, rbr;
	unsigned n;

	for (n = 0; n < 64; n++) {
		bus_access(BUS_PIO, UART_PORT + 5, 1, 0, &lsr);
		if (!(lsr & 1))
			break;
		bus_access(BUS_PIO, UART_PORT, 1, 0, &rbr);
	}
}

static unsigned long balloon_target(void)
{
	struct balloon_info bi;

	virtio_balloon_info(dom.balloon, &bi);
	return bi.target_pages;
}

static void check_slots(void)
{
	unsigned i, j, others = 0;

	for (i = 0; i < CTL_MAX_CLIENTS; i++) {
		const struct ctl_client *s = &c.clients[i];
		unsigned same = 0;

		if (s->fd < 0)
			continue;
		if (s->uid != 0)
			others++;
		for (j = 0; j < CTL_MAX_CLIENTS; j++)
			same += c.clients[j].fd >= 0 && s->uid != 0 && c.clients[j].uid == s->uid;
		FUZZ_CHECK(same <= CTL_MAX_PER_USER, "one uid holds more than its share");
		if (ctl_client_busy(&c, s))
			continue;
		FUZZ_CHECK(fake_ms < (s->in_len ? s->line_ms + c.line_ms : s->active_ms + c.idle_ms),
			   "a client kept past its deadline");
	}
	FUZZ_CHECK(others <= CTL_MAX_UNPRIVILEGED, "users other than root hold more than their share");
}

/* Read what has come to client k; true if its end came too. */
static bool drain(struct client *k)
{
	char buf[8192];
	ssize_t n;

	for (;;) {
		n = recv(k->fd, buf, sizeof(buf), MSG_DONTWAIT);
		/* A reset: the loop closed it with bytes of ours unread. */
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return true;
		if (n < 0)
			return false;
		if (!k->sent_line)
			FUZZ_CHECK(n >= 6 && memcmp(buf, "error ", 6) == 0,
				   "a client that asked nothing got something other than an error");
	}
}

static void connect_clients(uint8_t b)
{
	uid_t uid = (b & 7) < 3 ? 0 : 1000 + (b & 7);
	enum ctl_level level = uid == 0 || (b & 8) ? CTL_CONTROL : CTL_STATS;
	unsigned n = 1 + (b >> 4), i, busy;
	int sv[2], rc;

	while (n-- && ncl < MAX_CLIENTS) {
		struct client *k = &cl[ncl++];

		FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
		*k = (struct client){ .fd = sv[1] };
		for (i = busy = 0; i < CTL_MAX_CLIENTS; i++)
			busy += c.clients[i].fd >= 0 && ctl_client_busy(&c, &c.clients[i]);
		rc = ctl_add_client(&c, sv[0], level, uid);
		if (rc == 0) {
			any_control |= level == CTL_CONTROL;
			continue;
		}
		FUZZ_CHECK(rc == -EUSERS, "a refusal other than -EUSERS");
		FUZZ_CHECK(uid != 0 || busy == CTL_MAX_CLIENTS, "root refused with a slot to be had");
		{
			char buf[512];
			ssize_t got = recv(k->fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

			FUZZ_CHECK(got > 0 && memcmp(buf, "error too many clients", 22) == 0 &&
				   memchr(buf, '\n', got) == buf + got - 1, "a refusal that is not one error line");
			FUZZ_CHECK(recv(k->fd, buf, sizeof(buf), MSG_DONTWAIT) == 0, "a refused client left open");
		}
	}
}

static void client_sends(struct client *k, const void *buf, size_t len)
{
	if (k->fd < 0 || !len)
		return;
	if (send(k->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) > 0 && memchr(buf, '\n', len))
		k->sent_line = true;
}

static void step(unsigned n)
{
	while (n-- && running) {
		if (!(running = ctl_step(&c, 0)))
			break;                    /* done: the domain is going, no more rounds */
		guest_reads_uart();
		check_slots();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	size_t off = 1;
	unsigned long target;
	unsigned i;

	if (!ready) {
		setup();
		ready = true;
	}
	if (size < 1)
		return 0;
	/* A fresh domain, running, and a fresh loop. */
	atomic_store(&dom.end_claimed, false);
	atomic_store(&dom.end, DOMAIN_RUNNING);
	dom.end_reason[0] = '\0';
	dom.paused = false;
	dom.on_reboot = (data[0] & 0x40) ? ACTION_PRESERVE : ACTION_DESTROY;
	{
		uint64_t v;

		if (read(dom.end_eventfd, &v, sizeof(v)) < 0) {
			/* nothing to drain */
		}
	}
	target = balloon_target();
	ncl = 0;
	any_control = false;
	running = true;
	fake_ms = 1000000;
	ctl_init(&c, &dom, uart, -1, -1, -1, &(struct ctl_access){ -1, -1, 1 + (data[0] & 31), 0 });
	c.clock_ms = fake_clock;
	c.now_ms = fake_ms;

	while (off < size) {
		uint8_t op = data[off++] % 8, a = off < size ? data[off++] : 0;
		struct client *k = ncl ? &cl[a % ncl] : NULL;

		switch (op) {
		case 0:
			connect_clients(a);
			break;
		case 1: {
			size_t len = off < size ? data[off++] : 0;

			if (len > size - off)
				len = size - off;
			if (k)
				client_sends(k, data + off, len);
			off += len;
			break;
		}
		case 2: {
			const char *req = canned[(off < size ? data[off++] : 0) % (sizeof(canned) / sizeof(canned[0]))];

			if (k)
				client_sends(k, req, strlen(req));
			break;
		}
		case 3:
			if (k && k->fd >= 0) {
				close(k->fd);
				k->fd = -1;
			}
			break;
		case 4:
			fake_ms += a * 250ULL;
			break;
		case 5:
			step(1 + a % 4);
			break;
		case 6:
			if (k && k->fd >= 0 && drain(k)) {
				close(k->fd);
				k->fd = -1;
			}
			break;
		case 7: {
			static uint8_t text[255 * 32];

			memset(text, 'x', sizeof(text));
			console_output(text, a * 32);
			break;
		}
		}
	}
	step(2);
	if (!any_control) {
		FUZZ_CHECK(atomic_load(&dom.end) == DOMAIN_RUNNING && !dom.paused && !c.destroyed,
			   "the stats group changed the domain");
		FUZZ_CHECK(balloon_target() == target, "the stats group ballooned the domain");
	}
	ctl_finish(&c);
	for (i = 0; i < ncl; i++) {
		if (cl[i].fd < 0)
			continue;
		FUZZ_CHECK(drain(&cl[i]), "a client still open after the loop finished");
		close(cl[i].fd);
	}
	/* Put back what the commands changed outside the domain. */
	vcpu_unpause_all(&dom);
	sched_setaffinity(0, sizeof(affinity), &affinity);
	return 0;
}
