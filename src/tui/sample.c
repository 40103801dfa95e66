/* Sampling: the host from /proc, the domains from their control sockets;
 * rates from the difference between two samples. */
#include "tui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct scan_ctx {
	struct tui *t;
	double dt_ns;
};

static struct dom_sample *find_or_add(struct tui *t, const char *name)
{
	unsigned i;

	for (i = 0; i < t->ndoms; i++)
		if (strcmp(t->doms[i].st.name, name) == 0)
			return &t->doms[i];
	if (t->ndoms == TUI_MAX_DOMAINS)
		return NULL;
	memset(&t->doms[t->ndoms], 0, sizeof(t->doms[0]));
	return &t->doms[t->ndoms++];
}

/* Bytes a second between two readings of a counter (0 if it went back). */
static double rate(uint64_t now, uint64_t before, double dt_ns)
{
	return now >= before ? (double)(now - before) * 1e9 / dt_ns : 0;
}

static void on_domain(const struct lodge_status *st, void *arg)
{
	struct scan_ctx *c = arg;
	struct dom_sample *d = find_or_add(c->t, st->name);
	unsigned i;

	if (!d)
		return;
	if (d->st.name[0] && c->dt_ns > 0 && d->st.pid == st->pid) {
		d->cpu_pct = (double)(st->cpu_ns - d->st.cpu_ns) * 100.0 / c->dt_ns;
		for (i = 0; i < st->vcpus && i < DOMAIN_VCPUS_MAX; i++) {
			d->vcpu_pct[i] = (double)(st->vcpu_ns[i] - d->st.vcpu_ns[i]) * 100.0 / c->dt_ns;
			/* Signed: a vCPU thread that restarted (reboot) counts from 0. */
			d->vcpu_wait_pct[i] = (double)(int64_t)(st->vcpu_wait_ns[i] - d->st.vcpu_wait_ns[i]) *
					      100.0 / c->dt_ns;
			if (d->vcpu_wait_pct[i] < 0)
				d->vcpu_wait_pct[i] = 0;
		}
		d->wait_pct = (double)(int64_t)(st->cpu_wait_ns - d->st.cpu_wait_ns) * 100.0 / c->dt_ns;
		if (d->wait_pct < 0)
			d->wait_pct = 0;
		if (d->cpu_pct < 0)
			d->cpu_pct = 0;
		d->net_rx_bps = rate(st->vif_sum.in_bytes, d->st.vif_sum.in_bytes, c->dt_ns);
		d->net_tx_bps = rate(st->vif_sum.out_bytes, d->st.vif_sum.out_bytes, c->dt_ns);
		d->disk_rd_bps = rate(st->disk_sum.in_bytes, d->st.disk_sum.in_bytes, c->dt_ns);
		d->disk_wr_bps = rate(st->disk_sum.out_bytes, d->st.disk_sum.out_bytes, c->dt_ns);
		for (i = 0; i < st->ndisks && i < d->st.ndisks; i++) {
			d->disk_rd_dev_bps[i] = rate(st->disk[i].in_bytes, d->st.disk[i].in_bytes, c->dt_ns);
			d->disk_wr_dev_bps[i] = rate(st->disk[i].out_bytes, d->st.disk[i].out_bytes, c->dt_ns);
		}
	}
	d->st = *st;
	d->seen = true;
	memmove(d->cpu_hist + 1, d->cpu_hist, sizeof(d->cpu_hist) - sizeof(d->cpu_hist[0]));
	memmove(d->rss_hist + 1, d->rss_hist, sizeof(d->rss_hist) - sizeof(d->rss_hist[0]));
	d->cpu_hist[0] = d->cpu_pct;
	d->rss_hist[0] = st->rss_kib / 1024.0;
	if (d->hist_len < TUI_HISTORY)
		d->hist_len++;
}

/* A domain that has not answered this time: keep what we knew. */
static void on_late(const char *name, void *arg)
{
	struct scan_ctx *c = arg;
	unsigned i;

	for (i = 0; i < c->t->ndoms; i++)
		if (strcmp(c->t->doms[i].st.name, name) == 0)
			c->t->doms[i].seen = true;
}

/* A domain that would not say how it is (too many clients, no
 * permission): its row stays, or appears, with state '?' and the reason
 * for the detail view, rather than vanishing as if it were gone. */
static void on_unasked(const char *name, const char *why, void *arg)
{
	struct scan_ctx *c = arg;
	struct dom_sample *d = find_or_add(c->t, name);

	if (!d)
		return;
	if (!d->st.name[0])
		snprintf(d->st.name, sizeof(d->st.name), "%s", name);
	snprintf(d->st.state, sizeof(d->st.state), "?");
	snprintf(d->st.end_reason, sizeof(d->st.end_reason), "%s", why);
	d->seen = true;
}

void sample_all(struct tui *t)
{
	uint64_t now = tui_now_ns();
	struct scan_ctx c = { t, t->last_sample_ns ? (double)(now - t->last_sample_ns) : 0 };
	unsigned i, j;

	lodge_host_sample(&t->host);
	for (i = 0; i < t->ndoms; i++)
		t->doms[i].seen = false;
	if (!t->poller && (t->poller = lodge_poller_new())) {
		/* A slow domain keeps its last row; the screen does not wait. */
		lodge_poller_patient(t->poller, 100, on_late);
		lodge_poller_on_unasked(t->poller, on_unasked);
	}
	if (t->poller)
		lodge_poller_scan(t->poller, t->lg, on_domain, &c);
	/* Domains that are gone leave the table. */
	for (i = j = 0; i < t->ndoms; i++)
		if (t->doms[i].seen)
			t->doms[j++] = t->doms[i];
	t->ndoms = j;
	t->last_sample_ns = now;
	sample_sort(t);
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
	case SORT_STATE: d = strcmp(x->st.state, y->st.state); break;
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
	if (t->selected >= n + 1)
		t->selected = n;       /* row 0 is Domain-0; rows 1..n the domains */
}
