/* lodge capture DOMAIN [VIF] [-w FILE] [-c N] [-t SECONDS] [FILTER...]: a
 * pcap capture of a running domain's vif, on its tap in the host, with a
 * BPF filter.  Written with pcap_dump to FILE (tcpdump -r and Wireshark
 * read it) or printed one line a frame.  -c and -t bound it; SIGINT or
 * SIGTERM ends it cleanly; the count goes to stderr either way.
 *
 * The agent opens the tap itself rather than asking lodge-hyp: a capture
 * is the user's, as long as the user wants it, with their filter and
 * their file, and lodge-hyp's own watcher keeps headers only. */
#include "agent.h"
#include "log.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CAPTURE_SNAPLEN 262144     /* whole frames, GSO included: what tcpdump takes */
#define CAPTURE_FILTER_MAX 1024

struct capture {
	pcap_t *pcap;
	pcap_dumper_t *dump;           /* NULL: print lines */
	unsigned long count, limit;    /* limit 0: no limit */
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) { stop_signal = sig; }

static void on_frame(u_char *arg, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct capture *c = (struct capture *)arg;
	char line[512], when[16];
	struct tm tm;
	time_t sec = h->ts.tv_sec;

	c->count++;
	if (c->dump) {
		pcap_dump((u_char *)c->dump, h, bytes);
		return;
	}
	localtime_r(&sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	lodge_frame_line(bytes, h->caplen, h->len, line, sizeof(line));
	printf("%s.%06ld %s\n", when, (long)h->ts.tv_usec, line);
}

/* VIF: an index ("0") or a name among the domain's vifs; -1 if neither
 * (the filter starts here), -2 for an index the domain does not have. */
static int vif_index(const struct lodge_devices *d, const char *arg)
{
	char *end;
	unsigned long n = strtoul(arg, &end, 10);
	unsigned i;

	if (*arg && !*end)
		return n < d->nvifs ? (int)n : -2;
	for (i = 0; i < d->nvifs; i++)
		if (strcmp(d->vif[i].ifname, arg) == 0)
			return (int)i;
	return -1;
}

/* Open the tap; 0, or 1 with the message printed. */
static int open_vif(struct capture *c, const char *domain, const char *vif)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	int rc;

	c->pcap = pcap_create(vif, errbuf);
	if (!c->pcap) {
		log_err("cannot capture on %s: %s", vif, errbuf);
		return 1;
	}
	pcap_set_snaplen(c->pcap, CAPTURE_SNAPLEN);
	pcap_set_promisc(c->pcap, 0);
	pcap_set_immediate_mode(c->pcap, 1);    /* -c N stops at N, lines appear as frames do */
	rc = pcap_activate(c->pcap);
	if (rc == PCAP_ERROR_NO_SUCH_DEVICE)
		log_err("vif %s of domain %s is gone (the domain ended, or its tap was removed)", vif, domain);
	else if (rc == PCAP_ERROR_PERM_DENIED)
		log_err("no permission to capture on %s (needs root or CAP_NET_RAW): %s", vif, pcap_geterr(c->pcap));
	else if (rc == PCAP_ERROR_IFACE_NOT_UP)
		log_err("vif %s of domain %s is down", vif, domain);
	else if (rc < 0)
		log_err("cannot capture on %s: %s", vif, pcap_geterr(c->pcap));
	if (rc < 0) {
		pcap_close(c->pcap);
		c->pcap = NULL;
		return 1;
	}
	return 0;
}

static int set_filter(struct capture *c, const char *expr)
{
	struct bpf_program prog;
	int rc;

	if (!expr[0])
		return 0;
	if (pcap_compile(c->pcap, &prog, expr, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		log_err("filter '%s': %s", expr, pcap_geterr(c->pcap));
		return 1;
	}
	rc = pcap_setfilter(c->pcap, &prog);
	pcap_freecode(&prog);
	if (rc < 0) {
		log_err("filter '%s': %s", expr, pcap_geterr(c->pcap));
		return 1;
	}
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* Read until the count, the time or a signal ends it. 0, or 1 with the message printed. */
static int run(struct capture *c, const char *vif, unsigned long seconds)
{
	long deadline = seconds ? now_ms() + (long)seconds * 1000 : 0;
	struct pollfd pfd = { .fd = pcap_get_selectable_fd(c->pcap), .events = POLLIN };
	char errbuf[PCAP_ERRBUF_SIZE];

	if (pcap_setnonblock(c->pcap, 1, errbuf) < 0) {
		log_err("%s: %s", vif, errbuf);
		return 1;
	}
	while (!stop_signal && (!c->limit || c->count < c->limit)) {
		int left = deadline ? (int)(deadline - now_ms()) : 1000, n;

		if (deadline && left <= 0)
			break;
		if (poll(&pfd, 1, left > 1000 ? 1000 : left) < 0 && errno != EINTR)
			break;
		n = pcap_dispatch(c->pcap, c->limit ? (int)(c->limit - c->count) : -1, on_frame, (u_char *)c);
		if (n == PCAP_ERROR) {
			log_err("vif %s: %s (did the domain end?)", vif, pcap_geterr(c->pcap));
			return 1;
		}
		if (!c->dump)
			fflush(stdout);
	}
	return 0;
}

int cmd_capture(struct cli *c)
{
	static struct lodge_devices d;
	struct capture cap = { 0 };
	const char *file = c->set['w'] ? c->text['w'] : NULL, *domain = c->argv[0];
	unsigned long seconds = c->set['t'] ? (unsigned long)c->num['t'] : 0;
	char vif[IFNAMSIZ], filter[CAPTURE_FILTER_MAX] = "";
	struct sigaction sa = { .sa_handler = on_signal };   /* no SA_RESTART: poll returns */
	struct lodge_err err;
	struct pcap_stat ps;
	size_t flen = 0;
	int idx, rc, next = 1;

	/* Options anywhere, as with tcpdump; "--" ends them.  The words: the
	 * domain, maybe a vif, the filter. */
	cap.limit = c->set['c'] ? (unsigned long)c->num['c'] : 0;
	if (lodge_devices(&c->lg, domain, &d, &err))
		return cli_fail(&err);
	domain = d.st.name;
	if (d.nvifs == 0) {
		log_err("domain %s has no vifs to capture on", domain);
		return 1;
	}
	idx = next < c->argc ? vif_index(&d, c->argv[next]) : -1;
	if (idx == -2) {
		log_err("domain %s has no vif %s (it has %u)", domain, c->argv[next], d.nvifs);
		return 1;
	}
	if (idx >= 0)
		next++;
	else
		idx = 0;
	for (; next < c->argc; next++) {
		int n = snprintf(filter + flen, sizeof(filter) - flen, "%s%s", flen ? " " : "", c->argv[next]);

		if (n < 0 || flen + n >= sizeof(filter))
			return cli_usage_error(c->cmd, "filter longer than %d bytes", CAPTURE_FILTER_MAX - 1);
		flen += n;
	}
	snprintf(vif, sizeof(vif), "%s", d.vif[idx].ifname);
	if (open_vif(&cap, domain, vif))
		return 1;
	if (set_filter(&cap, filter)) {
		pcap_close(cap.pcap);
		return 1;
	}
	if (file && !(cap.dump = pcap_dump_open(cap.pcap, file))) {
		log_err("cannot write %s: %s", file, pcap_geterr(cap.pcap));
		pcap_close(cap.pcap);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "lodge: capturing on %s (domain %s, vif %d)%s%s%s\n", vif, domain, idx,
		filter[0] ? ", filter '" : "", filter, filter[0] ? "'" : "");
	rc = run(&cap, vif, seconds);
	if (cap.dump)
		pcap_dump_close(cap.dump);
	fprintf(stderr, "lodge: %lu packet%s captured", cap.count, cap.count == 1 ? "" : "s");
	if (pcap_stats(cap.pcap, &ps) == 0 && ps.ps_drop)
		fprintf(stderr, ", %u dropped by the kernel", ps.ps_drop);
	fprintf(stderr, "\n");
	pcap_close(cap.pcap);
	return rc;
}
