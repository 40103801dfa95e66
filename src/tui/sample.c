/* Sampling: every question the dashboard asks, asked here and never
 * waited for.  The host through the library's sampler; each domain's
 * status over connections kept between samples, all asked at once and
 * taken in as they come; for the domain in the detail view, its config
 * and disk sizes once per start, its taps' counters, its watcher's view
 * and its console's tail while the view is open.  Drawing reads only
 * what is kept here, with its age. */
#include "tui.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct dom_sample *find(struct tui *t, const char *name)
{
	unsigned i;

	for (i = 0; i < t->ndoms; i++)
		if (strcmp(t->doms[i].st.name, name) == 0)
			return &t->doms[i];
	return NULL;
}

static struct dom_sample *find_or_add(struct tui *t, const char *name)
{
	struct dom_sample *d = find(t, name);

	if (d || t->ndoms == TUI_MAX_DOMAINS)
		return d;
	d = &t->doms[t->ndoms++];
	memset(d, 0, sizeof(*d));
	snprintf(d->st.name, sizeof(d->st.name), "%s", name);
	return d;
}

void detail_free(struct dom_detail *x)
{
	if (!x)
		return;
	lodge_query_close(&x->netq);
	lodge_query_close(&x->conq);
	free(x);
}

/* Bytes a second between two readings of a counter (0 if it went back). */
static double rate(uint64_t now, uint64_t before, double dt_ns)
{
	return now >= before ? (double)(now - before) * 1e9 / dt_ns : 0;
}

/* A status reply: rates from the one before it, over the time between. */
static void on_domain(const struct lodge_status *st, void *arg)
{
	struct tui *t = arg;
	struct dom_sample *d = find_or_add(t, st->name);
	uint64_t now = tui_now_ns();
	double dt_ns;
	unsigned i;

	if (!d)
		return;
	d->remote = false;             /* a domain of the pool that came here */
	d->off = false;                /* a defined domain, started */
	install_forget(t, d);          /* an installed domain, started: a domain like any */
	dt_ns = d->answered_ns ? (double)(now - d->answered_ns) : 0;
	if (dt_ns > 0 && d->st.pid == st->pid) {
		d->cpu_pct = (double)(st->cpu_ns - d->st.cpu_ns) * 100.0 / dt_ns;
		for (i = 0; i < st->vcpus && i < DOMAIN_VCPUS_MAX; i++) {
			d->vcpu_pct[i] = (double)(st->vcpu_ns[i] - d->st.vcpu_ns[i]) * 100.0 / dt_ns;
			/* Signed: a vCPU thread that restarted (reboot) counts from 0. */
			d->vcpu_wait_pct[i] = (double)(int64_t)(st->vcpu_wait_ns[i] - d->st.vcpu_wait_ns[i]) *
					      100.0 / dt_ns;
			if (d->vcpu_wait_pct[i] < 0)
				d->vcpu_wait_pct[i] = 0;
		}
		d->wait_pct = (double)(int64_t)(st->cpu_wait_ns - d->st.cpu_wait_ns) * 100.0 / dt_ns;
		if (d->wait_pct < 0)
			d->wait_pct = 0;
		if (d->cpu_pct < 0)
			d->cpu_pct = 0;
		d->net_rx_bps = rate(st->vif_sum.in_bytes, d->st.vif_sum.in_bytes, dt_ns);
		d->net_tx_bps = rate(st->vif_sum.out_bytes, d->st.vif_sum.out_bytes, dt_ns);
		d->disk_rd_bps = rate(st->disk_sum.in_bytes, d->st.disk_sum.in_bytes, dt_ns);
		d->disk_wr_bps = rate(st->disk_sum.out_bytes, d->st.disk_sum.out_bytes, dt_ns);
		for (i = 0; i < st->ndisks && i < d->st.ndisks; i++) {
			d->disk_rd_dev_bps[i] = rate(st->disk[i].in_bytes, d->st.disk[i].in_bytes, dt_ns);
			d->disk_wr_dev_bps[i] = rate(st->disk[i].out_bytes, d->st.disk[i].out_bytes, dt_ns);
		}
	}
	d->st = *st;
	d->answered_ns = now;
	memmove(d->cpu_hist + 1, d->cpu_hist, sizeof(d->cpu_hist) - sizeof(d->cpu_hist[0]));
	memmove(d->rss_hist + 1, d->rss_hist, sizeof(d->rss_hist) - sizeof(d->rss_hist[0]));
	d->cpu_hist[0] = d->cpu_pct;
	d->rss_hist[0] = st->rss_kib / 1024.0;
	if (d->hist_len < TUI_HISTORY)
		d->hist_len++;
	t->replies++;
}

/* A domain that would not say how it is (too many clients, no
 * permission): its row stays, or appears, with state '?' and the reason
 * for the detail view, rather than vanishing as if it were gone. */
static void on_unasked(const char *name, const char *why, void *arg)
{
	struct tui *t = arg;
	struct dom_sample *d = find_or_add(t, name);

	if (!d)
		return;
	d->st.state = DOMAIN_STATE_UNKNOWN;
	snprintf(d->st.end_reason, sizeof(d->st.end_reason), "%s", why);
	t->replies++;
}

bool sample_stale(const struct tui *t, const struct dom_sample *d, uint64_t now_ns)
{
	return d->answered_ns && now_ns - d->answered_ns > (uint64_t)(t->delay_ms + TUI_STALE_MS) * 1000000;
}

bool fetch_overdue(const struct fetch *f, bool out, uint64_t now_ns)
{
	return out && now_ns - f->asked_ns > (uint64_t)TUI_STALE_MS * 1000000;
}

static void fetch_failed(struct fetch *f, int rc, const char *why)
{
	f->rc = rc;
	snprintf(f->err, sizeof(f->err), "%.*s", (int)sizeof(f->err) - 1, why);     /* a line of the view */
}

static void fetch_got(struct fetch *f, uint64_t now)
{
	f->rc = 0;
	f->err[0] = '\0';
	f->got_ns = now;
}

/* The resolved config and the devices of this start, the disks' sizes:
 * files, read once per start (or until the read succeeds). */
static void fetch_config(struct tui *t, struct dom_sample *d, struct dom_detail *x, uint64_t now)
{
	static struct domain_config dc;
	struct lodge_err err;
	unsigned i;
	int rc;

	if (x->config.got_ns && x->id == d->st.id && x->pid == d->st.pid)
		return;
	x->config.asked_ns = now;
	x->config.got_ns = 0;
	if ((rc = lodge_devices_of(t->lg, &d->st, &dc, &x->dev, &err))) {
		fetch_failed(&x->config, rc, err.msg);
		return;
	}
	x->id = d->st.id;
	x->pid = d->st.pid;
	if (dc.bootloader)      /* read from the disk at each boot */
		snprintf(x->kernel, sizeof(x->kernel), "from its first disk (bootloader = \"lodge\")");
	else
		snprintf(x->kernel, sizeof(x->kernel), "%s", dc.kernel);
	for (i = 0; i < x->dev.ndisks; i++)
		if (lodge_disk_size(x->dev.disk[i].path, &x->disk_bytes[i]))
			x->disk_bytes[i] = 0;
	fetch_got(&x->config, now);
}

/* Each vif's tap counters: netlink, answered by the host's kernel. */
static void fetch_links(struct dom_detail *x)
{
	struct lodge_err err;
	unsigned i;

	for (i = 0; i < x->dev.nvifs; i++) {
		x->link_err[i][0] = '\0';
		if (lodge_link_stats(x->dev.vif[i].ifname, &x->link[i], &err))
			snprintf(x->link_err[i], sizeof(x->link_err[i]), "%.*s", (int)sizeof(x->link_err[i]) - 1,
				 err.msg);
	}
}

/* Send the watcher's and the console's queries, unless one is still out:
 * a domain slow to answer has at most one of each waiting on it. */
static void fetch_start(struct tui *t, struct dom_sample *d, struct dom_detail *x, uint64_t now)
{
	struct lodge_err err;
	int rc;

	if (x->dev.nvifs && x->netq.fd < 0) {
		x->net.asked_ns = now;
		if ((rc = lodge_net_start(t->lg, d->st.name, &x->netq, &err)))
			fetch_failed(&x->net, rc, err.msg);
	}
	if (x->conq.fd < 0) {
		x->console.asked_ns = now;
		if ((rc = lodge_console_log_start(t->lg, d->st.name, TUI_TAIL_BYTES, &x->conq, &err)))
			fetch_failed(&x->console, rc, err.msg);
	}
}

void sample_detail(struct tui *t)
{
	struct dom_sample *d = t->view == VIEW_DETAIL ? tui_selected(t) : NULL;
	uint64_t now = tui_now_ns();
	struct dom_detail *x;

	snprintf(t->detail_name, sizeof(t->detail_name), "%s", d ? d->st.name : "");
	if (!d || !d->answered_ns)
		return;              /* Domain-0, or a domain that never answered: nothing to ask */
	if (!d->detail) {
		if (!(d->detail = calloc(1, sizeof(*d->detail))))
			return;
		d->detail->netq = d->detail->conq = LODGE_QUERY_CLOSED;
	}
	x = d->detail;
	fetch_config(t, d, x, now);
	if (!x->config.got_ns)
		return;
	fetch_links(x);
	fetch_start(t, d, x, now);
}

/* Take in the detail queries' replies: true if any came. */
static bool collect_details(struct tui *t, uint64_t now)
{
	struct lodge_err err;
	bool any = false;
	unsigned i;

	for (i = 0; i < t->ndoms; i++) {
		struct dom_detail *x = t->doms[i].detail;
		char *text;
		size_t len;
		int rc;

		if (!x)
			continue;
		if (x->netq.fd >= 0 && (rc = lodge_net_collect(&x->netq, &x->dev, &x->view, &err))) {
			if (rc > 0)
				fetch_got(&x->net, now);
			else
				fetch_failed(&x->net, rc, err.msg);
			any = true;
		}
		if (x->conq.fd >= 0 && (rc = lodge_console_log_collect(&x->conq, &text, &len, &err))) {
			if (rc > 0) {
				/* The last of it that fits. */
				const char *from = len > TUI_TAIL_BYTES ? text + len - TUI_TAIL_BYTES : text;

				snprintf(x->tail, sizeof(x->tail), "%s", from);
				free(text);
				fetch_got(&x->console, now);
			} else {
				fetch_failed(&x->console, rc, err.msg);
			}
			any = true;
		}
	}
	return any;
}

void sample_start(struct tui *t)
{
	uint64_t now = tui_now_ns();
	unsigned i, j;

	lodge_host_sample(&t->host);
	if (t->view == VIEW_NETWORKS)
		networks_sample(t);
	pool_sample_start(t);
	if (!t->poller && (t->poller = lodge_poller_new()))
		lodge_poller_on_unasked(t->poller, on_unasked);
	if (!t->poller)
		return;
	lodge_poller_send(t->poller, t->lg, t);
	/* Domains that are gone leave the table; an install's row stays; a
	 * defined one's comes back off below, as domains_dir has it now. */
	for (i = j = 0; i < t->ndoms; i++) {
		if (t->doms[i].install || t->doms[i].remote ||
		    (!t->doms[i].off && lodge_poller_knows(t->poller, t->doms[i].st.name)))
			t->doms[j++] = t->doms[i];
		else
			detail_free(t->doms[i].detail);
	}
	t->ndoms = j;
	defined_sample(t, find_or_add);
	t->gathering = true;
	t->gather_until_ns = now + (uint64_t)(t->delay_ms / 2 < TUI_SETTLE_MS ? t->delay_ms / 2 : TUI_SETTLE_MS) *
				   1000000;
	sample_sort(t);
	sample_detail(t);
}

unsigned sample_pollfds(struct tui *t, struct pollfd *fds, unsigned max)
{
	unsigned n = t->poller ? lodge_poller_pollfds(t->poller, fds, max) : 0, i;

	t->npoller_fds = n;

	for (i = 0; i < t->ndoms; i++) {
		const struct dom_detail *x = t->doms[i].detail;

		if (x && x->netq.fd >= 0 && n < max)
			fds[n++] = (struct pollfd){ x->netq.fd, POLLIN, 0 };
		if (x && x->conq.fd >= 0 && n < max)
			fds[n++] = (struct pollfd){ x->conq.fd, POLLIN, 0 };
	}
	return n + pool_pollfds(t, fds + n, max - n);
}

bool sample_collect(struct tui *t, uint64_t now, const struct pollfd *fds)
{
	int due = t->poller ? lodge_poller_collect(t->poller, t->lg, fds, t->npoller_fds, on_domain, t) : 0;
	bool show = collect_details(t, now);

	if (pool_collect(t))
		show = true;

	/* The sample's replies are shown together once all are in (or the
	 * slow ones are left for later); a late one, when it comes. */
	if (t->gathering && (due == 0 || now >= t->gather_until_ns)) {
		t->gathering = false;
		show = true;               /* the sample as a whole, the clock with it */
	}
	if (!t->gathering && t->replies) {
		t->replies = 0;
		sample_sort(t);
		show = true;
	}
	return show;
}

int sample_wait_ms(struct tui *t, uint64_t now)
{
	if (!t->gathering)
		return INT_MAX;
	return t->gather_until_ns > now ? (int)((t->gather_until_ns - now) / 1000000) + 1 : 0;
}

void sample_all(struct tui *t)
{
	static struct pollfd fds[1024];

	sample_start(t);
	while (t->gathering || pool_waiting(t)) {
		unsigned n = sample_pollfds(t, fds, sizeof(fds) / sizeof(fds[0]));
		uint64_t now = tui_now_ns();

		if (n && poll(fds, n, sample_wait_ms(t, now)) < 0 && errno != EINTR)
			break;
		sample_collect(t, tui_now_ns(), fds);
		if (!n)
			break;
	}
}

void sample_free(struct tui *t)
{
	unsigned i;

	for (i = 0; i < t->ndoms; i++)
		detail_free(t->doms[i].detail);
	t->ndoms = 0;
	lodge_poller_free(t->poller);
	t->poller = NULL;
	pool_free(t);
}

static const char *const sort_names[SORT_NKEYS] = {
	"ID", "NAME", "STATE", "%CPU", "MEM", "RSS", "VCPUS", "UPTIME", "NET", "DISK",
};

const char *sort_name(enum sort_key k) { return sort_names[k]; }

static struct tui *sort_tui;

static int cmp(const void *a, const void *b)
{
	const struct dom_sample *x = &sort_tui->doms[*(const unsigned *)a];
	const struct dom_sample *y = &sort_tui->doms[*(const unsigned *)b];
	double d = 0;

	switch (sort_tui->sort) {
	case SORT_ID: d = (double)x->st.id - y->st.id; break;
	case SORT_NAME: d = strcmp(x->st.name, y->st.name); break;
	case SORT_STATE: d = (double)x->st.state - y->st.state; break;    /* the enum's order: live first (proto.h) */
	case SORT_CPU: d = y->cpu_pct - x->cpu_pct; break;         /* busiest first */
	case SORT_MEM: d = (double)y->st.target_mib - x->st.target_mib; break;
	case SORT_RSS: d = (double)y->st.rss_kib - x->st.rss_kib; break;
	case SORT_VCPUS: d = (double)y->st.vcpus - x->st.vcpus; break;
	case SORT_UPTIME: d = (double)y->st.uptime_s - x->st.uptime_s; break;
	case SORT_NET: d = (y->net_rx_bps + y->net_tx_bps) - (x->net_rx_bps + x->net_tx_bps); break;
	case SORT_DISK: d = (y->disk_rd_bps + y->disk_wr_bps) - (x->disk_rd_bps + x->disk_wr_bps); break;
	case SORT_NKEYS: break;
	}
	if (d == 0)
		d = (double)x->st.id - y->st.id;
	if (d == 0)
		d = strcmp(x->st.name, y->st.name);     /* rows not yet answered have no ID */
	if (sort_tui->sort_reverse)
		d = -d;
	return d < 0 ? -1 : d > 0;
}

void sample_sort(struct tui *t)
{
	unsigned i, n = 0;

	for (i = 0; i < t->ndoms; i++)
		if (!t->filter[0] || strstr(t->doms[i].st.name, t->filter))
			t->order[n++] = i;
	sort_tui = t;
	qsort(t->order, n, sizeof(t->order[0]), cmp);
	t->nshown = n;
	/* The selection stays on its domain, wherever the sort put it. */
	if (t->selected_name[0])
		for (i = 0; i < n; i++)
			if (strcmp(t->doms[t->order[i]].st.name, t->selected_name) == 0) {
				t->selected = i + 1;
				return;
			}
	tui_select(t, t->selected);
}
