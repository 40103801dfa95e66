/* The network watcher's thread: two libpcap captures per vif, one poll
 * loop over all of them.
 *
 * Two captures, not one, because the direction is what makes learning
 * safe and libpcap's callback does not give it: "in" on a tap is what the
 * guest sent (lodge-hyp wrote it into the tap), "out" what the bridge
 * delivers to the guest.  The direction is pcap_setdirection()'s, checked
 * by libpcap per frame, not BPF's "inbound": libpcap runs a new filter in
 * user space over the frames already in the ring, where "inbound" cannot
 * be evaluated, and so dropped the first frame a guest sent (often its
 * only ARP reply).  The price: each ring also carries the other
 * direction's frames, skipped in user space.
 *
 * Bounded work: the snap length keeps headers only (enough for a DHCP
 * reply's message type option); each capture has a ring of NW_RING_BYTES
 * in the kernel that libpcap maps; nothing is allocated per packet
 * (addresses and peers live in fixed tables).
 *
 * Immediate mode, so libpcap uses a TPACKET_V2 ring: on this project's
 * kernels a TPACKET_V3 block of frames a tap received is not handed over
 * on its timer, only once full, which would hold a guest's one ARP reply
 * back indefinitely.  Immediate mode wakes per frame, so the loop batches
 * by itself: when a pass over the rings found frames, it sleeps NW_TICK_MS
 * before the next pass and lets the rings fill; when it found none, it
 * waits in poll() for the next frame.  A flood costs NW_TICK_MS-spaced
 * passes; an idle vif costs nothing; a lone frame is seen at once. */
#include "netwatch/netwatch.h"
#include "netwatch/frame.h"
#include "netwatch/pcap-lib.h"
#include "backend/tap.h"
#include "log.h"
#include "proto.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NW_MAX_VIFS     8
#define NW_SNAPLEN      320         /* Ethernet, IP, UDP, BOOTP and its first options */
#define NW_RING_BYTES   (1 << 20)   /* about 2,600 frames: 100,000 a second for NW_TICK_MS */
#define NW_TICK_MS      20
#define NW_INTERVAL_MS  1000        /* the traffic view's interval */
#define NW_MAX_ADDRS    6           /* per vif; the least recently seen makes room */
#define NW_PEER_SLOTS   128         /* open addressing, a power of two */
#define NW_PEER_FILL    96          /* beyond this, new peers count as "other" */
#define NW_TOP_PEERS    5

/* The direction of a capture, as libpcap says it for the tap. */
enum nw_dir { NW_FROM_GUEST, NW_TO_GUEST };
static const pcap_direction_t dir_pcap[] = { [NW_FROM_GUEST] = PCAP_D_IN, [NW_TO_GUEST] = PCAP_D_OUT };
#define NW_FILTER "arp or ip or ip6"

struct nw_known {
	struct nw_addr addr;
	enum nw_how how;
	uint64_t seen_ns;           /* CLOCK_MONOTONIC; 0: empty slot */
};

struct nw_peer {
	struct nw_addr addr;
	uint64_t packets, bytes;
};

struct nw_vif {
	char name[16];              /* "": forgotten (its vif was detached) */
	uint8_t mac[6];
	pcap_t *cap[2];             /* by enum nw_dir */
	char error[PCAP_ERRBUF_SIZE];   /* why it is not watched; "" if it is */
	struct nw_known known[NW_MAX_ADDRS];
	/* The interval being counted. */
	struct nw_peer peers[NW_PEER_SLOTS];
	unsigned npeers;
	uint64_t packets, bytes;
	struct nw_peer other;       /* peers beyond NW_PEER_FILL, and non-IP frames */
	/* The last whole interval, for replies. */
	uint64_t last_packets, last_bytes, drops;
	struct nw_peer top[NW_TOP_PEERS];
	unsigned ntop;
};

struct netwatch {
	struct nw_vif vifs[NW_MAX_VIFS];
	unsigned nvifs;
	pthread_t thread;
	int stop_fd;
	/* Held by the thread while it takes a batch or closes an interval,
	 * and by the control socket while it formats a reply. */
	pthread_mutex_t lock;
	unsigned generation;        /* a vif forgotten: the thread's poll set is stale */
	uint64_t batch_ns;          /* when the current batch was taken */
	uint64_t interval_start_ns, last_interval_ns;
};

struct nw_batch {
	struct netwatch *w;
	struct nw_vif *vif;
	enum nw_dir dir;
};

static const char *const how_names[] = { [NW_ARP] = "arp", [NW_DHCP] = "dhcp", [NW_ND] = "nd" };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static bool addr_eq(const struct nw_addr *a, const struct nw_addr *b)
{
	return a->family == b->family && memcmp(a->bytes, b->bytes, a->family == AF_INET ? 4 : 16) == 0;
}

static void learn(struct nw_vif *v, const struct nw_addr *a, enum nw_how how, uint64_t now)
{
	struct nw_known *slot = &v->known[0];
	unsigned i;

	for (i = 0; i < NW_MAX_ADDRS; i++) {
		if (v->known[i].seen_ns && addr_eq(&v->known[i].addr, a)) {
			slot = &v->known[i];
			break;
		}
		if (v->known[i].seen_ns < slot->seen_ns)
			slot = &v->known[i];        /* empty (0) or least recently seen */
	}
	slot->addr = *a;
	slot->how = how;
	slot->seen_ns = now;
}

/* FNV-1a over the address bytes. */
static unsigned peer_hash(const struct nw_addr *a)
{
	unsigned n = a->family == AF_INET ? 4 : 16, i;
	uint32_t h = 2166136261u;

	for (i = 0; i < n; i++)
		h = (h ^ a->bytes[i]) * 16777619u;
	return h & (NW_PEER_SLOTS - 1);
}

static struct nw_peer *peer_slot(struct nw_vif *v, const struct nw_addr *a)
{
	unsigned i = peer_hash(a), probes;

	for (probes = 0; probes < NW_PEER_SLOTS; probes++, i = (i + 1) & (NW_PEER_SLOTS - 1)) {
		struct nw_peer *p = &v->peers[i];

		if (!p->addr.family) {
			if (v->npeers >= NW_PEER_FILL)
				return &v->other;
			v->npeers++;
			p->addr = *a;
			return p;
		}
		if (addr_eq(&p->addr, a))
			return p;
	}
	return &v->other;
}

static void on_frame(u_char *arg, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct nw_batch *b = (struct nw_batch *)arg;
	struct nw_vif *v = b->vif;
	struct nw_peer *p;
	struct nw_frame fr;

	nw_frame_parse(bytes, h->caplen, b->dir == NW_FROM_GUEST, v->mac, &fr);
	if (fr.claim_valid)
		learn(v, &fr.claim, fr.how, b->w->batch_ns);
	v->packets++;
	v->bytes += h->len;
	p = fr.peer_valid ? peer_slot(v, &fr.peer) : &v->other;
	p->packets++;
	p->bytes += h->len;
}

/* The interval is over: keep its totals and top peers, start the next. */
static void close_interval(struct netwatch *w, uint64_t now)
{
	unsigned i, k, j;

	for (i = 0; i < w->nvifs; i++) {
		struct nw_vif *v = &w->vifs[i];
		uint64_t drops = 0;

		v->last_packets = v->packets;
		v->last_bytes = v->bytes;
		v->ntop = 0;
		/* Insertion into a short sorted list: NW_PEER_SLOTS x NW_TOP_PEERS, once a second. */
		for (k = 0; k < NW_PEER_SLOTS; k++) {
			const struct nw_peer *p = &v->peers[k];

			if (!p->addr.family)
				continue;
			for (j = v->ntop; j > 0 && v->top[j - 1].bytes < p->bytes; j--)
				if (j < NW_TOP_PEERS)
					v->top[j] = v->top[j - 1];
			if (j < NW_TOP_PEERS) {
				v->top[j] = *p;
				if (v->ntop < NW_TOP_PEERS)
					v->ntop++;
			}
		}
		for (k = 0; k < 2; k++) {
			struct pcap_stat st;

			if (v->cap[k] && pcap_lib.pcap_stats(v->cap[k], &st) == 0)
				drops += (uint64_t)st.ps_drop + st.ps_ifdrop;
		}
		v->drops = drops;
		memset(v->peers, 0, sizeof(v->peers));
		memset(&v->other, 0, sizeof(v->other));
		v->npeers = 0;
		v->packets = v->bytes = 0;
	}
	w->last_interval_ns = now - w->interval_start_ns;
	w->interval_start_ns = now;
}

/* Read every frame the rings hold. Returns how many there were. */
static int drain(struct netwatch *w, struct pollfd *pfd, struct nw_batch *batch, unsigned n)
{
	unsigned i;
	int got = 0, r;

	w->batch_ns = now_ns();
	for (i = 0; i < n; i++) {
		struct nw_vif *v = batch[i].vif;

		if (pfd[i].fd < 0)
			continue;
		/* -1: all the ring holds; the capture is non-blocking. */
		r = pcap_lib.pcap_dispatch(v->cap[batch[i].dir], -1, on_frame, (u_char *)&batch[i]);
		if (r == PCAP_ERROR) {
			snprintf(v->error, sizeof(v->error), "%s", pcap_lib.pcap_geterr(v->cap[batch[i].dir]));
			pfd[i].fd = -1;           /* the interface went away */
		} else if (r > 0) {
			got += r;
		}
	}
	return got;
}

/* The poll set and batches over the captures there are now. Returns n. */
static unsigned poll_set(struct netwatch *w, struct pollfd *pfd, struct nw_batch *batch)
{
	unsigned i, k, n = 0;

	for (i = 0; i < w->nvifs; i++)
		for (k = 0; k < 2; k++) {
			if (!w->vifs[i].cap[k])
				continue;
			batch[n] = (struct nw_batch){ w, &w->vifs[i], (enum nw_dir)k };
			pfd[1 + n++] = (struct pollfd){ .fd = pcap_lib.pcap_get_selectable_fd(w->vifs[i].cap[k]),
							.events = POLLIN };
		}
	return n;
}

static void *netwatch_thread(void *arg)
{
	struct netwatch *w = arg;
	struct pollfd pfd[1 + 2 * NW_MAX_VIFS];
	struct nw_batch batch[2 * NW_MAX_VIFS];
	unsigned n, generation;
	bool busy = false;

	pfd[0] = (struct pollfd){ .fd = w->stop_fd, .events = POLLIN };
	pthread_mutex_lock(&w->lock);
	generation = w->generation;
	n = poll_set(w, pfd, batch);
	pthread_mutex_unlock(&w->lock);
	for (;;) {
		uint64_t now = now_ns(), due = w->interval_start_ns + NW_INTERVAL_MS * 1000000ULL;
		int timeout = now >= due ? 0 : (int)((due - now) / 1000000) + 1;

		/* Busy: only the stop descriptor, for one tick, while the rings fill. */
		if (busy && timeout > NW_TICK_MS)
			timeout = NW_TICK_MS;
		if (poll(pfd, busy ? 1 : 1 + n, timeout) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		pthread_mutex_lock(&w->lock);
		/* A vif forgotten since: its captures are closed (its descriptors
		 * maybe another's already), so nothing of the old set is read.
		 * The poll above waits at most an interval, so this comes soon. */
		if (generation != w->generation) {
			generation = w->generation;
			n = poll_set(w, pfd, batch);
			busy = false;
		} else {
			busy = drain(w, pfd + 1, batch, n) > 0;
		}
		if (w->batch_ns >= due)
			close_interval(w, w->batch_ns);
		pthread_mutex_unlock(&w->lock);
	}
	return NULL;
}

/* Open one direction's capture; NULL with the reason in v->error. */
static pcap_t *open_capture(struct nw_vif *v, enum nw_dir dir)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	struct bpf_program prog;
	pcap_t *p = pcap_lib.pcap_create(v->name, errbuf);
	int rc;

	if (!p) {
		snprintf(v->error, sizeof(v->error), "%s", errbuf);
		return NULL;
	}
	pcap_lib.pcap_set_snaplen(p, NW_SNAPLEN);
	pcap_lib.pcap_set_promisc(p, 0);              /* a tap hands over every frame anyway */
	pcap_lib.pcap_set_immediate_mode(p, 1);
	pcap_lib.pcap_set_buffer_size(p, NW_RING_BYTES);
	rc = pcap_lib.pcap_activate(p);
	if (rc < 0) {
		snprintf(v->error, sizeof(v->error), "%s", rc == PCAP_ERROR_PERM_DENIED ?
			 "no permission to capture (needs CAP_NET_RAW)" : pcap_lib.pcap_geterr(p));
		goto fail;
	}
	if (pcap_lib.pcap_datalink(p) != DLT_EN10MB) {
		snprintf(v->error, sizeof(v->error), "not an Ethernet interface");
		goto fail;
	}
	if (pcap_lib.pcap_setdirection(p, dir_pcap[dir]) < 0 ||
	    pcap_lib.pcap_compile(p, &prog, NW_FILTER, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		snprintf(v->error, sizeof(v->error), "%s", pcap_lib.pcap_geterr(p));
		goto fail;
	}
	rc = pcap_lib.pcap_setfilter(p, &prog);
	pcap_lib.pcap_freecode(&prog);
	if (rc < 0 || pcap_lib.pcap_setnonblock(p, 1, errbuf) < 0) {
		snprintf(v->error, sizeof(v->error), "%s", rc < 0 ? pcap_lib.pcap_geterr(p) : errbuf);
		goto fail;
	}
	return p;
fail:
	pcap_lib.pcap_close(p);
	return NULL;
}

static void close_vif(struct nw_vif *v)
{
	unsigned k;

	for (k = 0; k < 2; k++)
		if (v->cap[k]) {
			pcap_lib.pcap_close(v->cap[k]);
			v->cap[k] = NULL;
		}
}

static void close_captures(struct netwatch *w)
{
	unsigned i;

	for (i = 0; i < w->nvifs; i++)
		close_vif(&w->vifs[i]);
}

void netwatch_forget(struct netwatch *w, const char *name)
{
	unsigned i;

	if (!w || !name[0])
		return;
	pthread_mutex_lock(&w->lock);
	for (i = 0; i < w->nvifs; i++)
		if (!strcmp(w->vifs[i].name, name)) {
			close_vif(&w->vifs[i]);
			w->vifs[i].name[0] = '\0';
			w->generation++;
		}
	pthread_mutex_unlock(&w->lock);
}

/* The watched vif on tap name, NULL if there is none (forgotten, or
 * attached while the domain runs). */
static const struct nw_vif *vif_named(const struct netwatch *w, const char *name)
{
	unsigned i;

	for (i = 0; i < w->nvifs; i++)
		if (w->vifs[i].name[0] && !strcmp(w->vifs[i].name, name))
			return &w->vifs[i];
	return NULL;
}

#define NW_NOT_WATCHED "attached while the domain runs (a capture needs CAP_NET_RAW, " \
	"which the sandbox dropped)"

struct netwatch *netwatch_start(const struct tap *taps, unsigned n)
{
	struct netwatch *w = calloc(1, sizeof(*w));
	char errbuf[PCAP_ERRBUF_SIZE];
	unsigned i, k;

	if (!w) {
		log_warn("netwatch: out of memory; guests' addresses will not be shown");
		return NULL;
	}
	if (pcap_lib_load(errbuf, sizeof(errbuf))) {
		log_warn("netwatch: %s; guests' addresses will not be shown", errbuf);
		free(w);
		return NULL;
	}
	pcap_lib.pcap_init(PCAP_CHAR_ENC_UTF_8, errbuf);
	w->nvifs = n < NW_MAX_VIFS ? n : NW_MAX_VIFS;
	for (i = 0; i < w->nvifs; i++) {
		struct nw_vif *v = &w->vifs[i];

		snprintf(v->name, sizeof(v->name), "%s", taps[i].name);
		memcpy(v->mac, taps[i].mac, 6);
		for (k = 0; k < 2 && !v->error[0]; k++)
			v->cap[k] = open_capture(v, (enum nw_dir)k);
		if (v->error[0]) {
			log_warn("netwatch: vif %s is not watched: %s", v->name, v->error);
			for (k = 0; k < 2; k++)
				if (v->cap[k]) {
					pcap_lib.pcap_close(v->cap[k]);
					v->cap[k] = NULL;
				}
		}
	}
	pthread_mutex_init(&w->lock, NULL);
	w->interval_start_ns = now_ns();
	w->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (w->stop_fd < 0 || pthread_create(&w->thread, NULL, netwatch_thread, w)) {
		log_warn("netwatch: cannot start its thread; guests' addresses will not be shown");
		if (w->stop_fd >= 0)
			close(w->stop_fd);
		close_captures(w);
		free(w);
		return NULL;
	}
	pthread_setname_np(w->thread, "netwatch");
	return w;
}

void netwatch_stop(struct netwatch *w)
{
	uint64_t one = 1;

	if (!w)
		return;
	if (write(w->stop_fd, &one, sizeof(one)) == sizeof(one))
		pthread_join(w->thread, NULL);
	close(w->stop_fd);
	close_captures(w);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* Append to a reply buffer, never past its end (a full buffer stays full). */
static void put(char *buf, size_t len, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (*n + 1 >= len)
		return;
	va_start(ap, fmt);
	r = vsnprintf(buf + *n, len - *n, fmt, ap);
	va_end(ap);
	if (r > 0)
		*n = *n + r < len ? *n + r : len - 1;
}

/* "ADDR,HOW,AGE ..." of one vif, or "-". */
static void put_known(const struct nw_vif *v, uint64_t now, char *buf, size_t len, size_t *n)
{
	char addr[64];
	unsigned i, shown = 0;

	for (i = 0; i < NW_MAX_ADDRS; i++) {
		const struct nw_known *k = &v->known[i];

		if (!k->seen_ns)
			continue;
		nw_addr_format(&k->addr, addr, sizeof(addr));
		put(buf, len, n, "%s%s,%s,%llu", shown++ ? " " : "", addr, how_names[k->how],
		    (unsigned long long)((now - k->seen_ns) / 1000000000ULL));
	}
	if (!shown)
		put(buf, len, n, "-");
}

size_t netwatch_format_addrs(struct netwatch *w, const char *const *names, unsigned nnames, char *buf, size_t len)
{
	uint64_t now = now_ns();
	size_t n = 0;
	unsigned i;

	buf[0] = '\0';
	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	for (i = 0; i < nnames; i++) {
		const struct nw_vif *v = vif_named(w, names[i]);
		char key[PROTO_KEY_MAX];

		put(buf, len, &n, "%s ", proto_status_key_name(PROTO_KEY_VIF_ADDRS, i, key));
		if (v)
			put_known(v, now, buf, len, &n);
		else
			put(buf, len, &n, "-");
		put(buf, len, &n, "\n");
	}
	pthread_mutex_unlock(&w->lock);
	return n;
}

size_t netwatch_format_peers(struct netwatch *w, const char *const *names, unsigned nnames, char *buf, size_t len)
{
	uint64_t now = now_ns(), ms;
	char addr[64];
	size_t n = 0;
	unsigned i, k;

	buf[0] = '\0';
	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	ms = w->last_interval_ns / 1000000;
	put(buf, len, &n, "interval_ms %llu\n", (unsigned long long)ms);
	for (i = 0; i < nnames; i++) {
		const struct nw_vif *v = vif_named(w, names[i]);

		if (!v) {
			put(buf, len, &n, "vif%u_name %s\nvif%u_watch %s\nvif%u_addrs -\nvif%u_rate 0 0 0\n"
			    "vif%u_peers -\n", i, names[i], i, NW_NOT_WATCHED, i, i, i);
			continue;
		}
		put(buf, len, &n, "vif%u_name %s\nvif%u_watch %s\nvif%u_addrs ", i, v->name, i,
		    v->error[0] ? v->error : "on", i);
		put_known(v, now, buf, len, &n);
		put(buf, len, &n, "\nvif%u_rate %llu %llu %llu\nvif%u_peers", i,
		    (unsigned long long)(ms ? v->last_packets * 1000 / ms : 0),
		    (unsigned long long)(ms ? v->last_bytes * 1000 / ms : 0), (unsigned long long)v->drops, i);
		for (k = 0; k < v->ntop; k++) {
			nw_addr_format(&v->top[k].addr, addr, sizeof(addr));
			put(buf, len, &n, " %s,%llu,%llu", addr, (unsigned long long)v->top[k].packets,
			    (unsigned long long)v->top[k].bytes);
		}
		put(buf, len, &n, "%s\n", v->ntop ? "" : " -");
	}
	pthread_mutex_unlock(&w->lock);
	return n;
}
