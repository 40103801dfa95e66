/* The domain list's columns (domain-list.h), moved here from the lodge
 * command's list so the web interface gives the same JSON.
 *
 * Mem is what the domain should have now (its balloon target), as xl
 * list shows after mem-set; the long columns add maxmem, the balloon, the
 * guest's own free memory (null until its driver reports it), a save or
 * migration under way, what KSM merged and what transparent huge pages
 * back (tsv and JSON: in KiB), before the addresses, which stay last. */
#include "domain-list.h"

#include <stdio.h>
#include <string.h>

/* xl's six-letter state: r b p s c d; "------" for the words xl has no
 * letter for. */
static const char *state_letters(enum domain_state state)
{
	static const char *const letters[DOMAIN_STATE_COUNT] = {
		[DOMAIN_STATE_RUNNING] = "r-----", [DOMAIN_STATE_PAUSED] = "--p---",
		[DOMAIN_STATE_SHUTDOWN] = "---s--", [DOMAIN_STATE_CRASHED] = "----c-",
	};

	return (unsigned)state < DOMAIN_STATE_COUNT && letters[state] ? letters[state] : "------";
}

#define KNOWN(fn, call) OUT_GETTER(fn, struct list_row, if (r->st) { const struct lodge_status *st = r->st; (void)st; call; } else out_null(v))
OUT_GETTER(get_name, struct list_row, out_str(v, r->name))
KNOWN(get_id, out_uint(v, st->id))
/* A defined domain that is not running: its config's figures, state off. */
#define OFF(r) (!(r)->st && (r)->def && !(r)->def->running)
OUT_GETTER(get_mem, struct list_row, if (r->st) out_uint(v, r->st->target_mib);
	   else if (OFF(r) && r->def->loads) out_uint(v, r->def->memory_mib); else out_null(v))
OUT_GETTER(get_vcpus, struct list_row, if (r->st) out_uint(v, r->st->vcpus);
	   else if (OFF(r) && r->def->loads) out_uint(v, r->def->vcpus); else out_null(v))
/* A row without a status is off (defined) or unknown (not answering):
 * its word, not letters. */
#define ROW_STATE(r) ((r)->st ? (r)->st->state : OFF(r) ? DOMAIN_STATE_OFF : DOMAIN_STATE_UNKNOWN)
OUT_GETTER(get_letters, struct list_row, out_str(v, r->st ? state_letters(r->st->state) : domain_state_name(ROW_STATE(r))))
OUT_GETTER(get_state, struct list_row, out_str(v, domain_state_name(ROW_STATE(r))))
OUT_GETTER(get_autostart, struct list_row, if (r->def && r->def->loads) out_bool(v, r->def->autostart);
	   else out_null(v))
KNOWN(get_cpu, out_real(v, st->cpu_ns / 1e9))
KNOWN(get_uptime, out_uint(v, st->uptime_s))
KNOWN(get_rss_mib, out_uint(v, st->rss_kib / 1024))
KNOWN(get_rss_kib, out_uint(v, st->rss_kib))
KNOWN(get_pid, out_int(v, st->pid))
KNOWN(get_maxmem, out_uint(v, st->maxmem_mib))
KNOWN(get_balloon, out_uint(v, st->balloon_mib))
KNOWN(get_gfree, if (st->guest_stats) out_uint(v, st->guest_free_kib / 1024); else out_null(v))
OUT_GETTER(get_job, struct list_row, out_str(v, r->job))
KNOWN(get_ksm_mib, out_uint(v, st->ksm_shared_kib / 1024))
KNOWN(get_ksm_kib, out_uint(v, st->ksm_shared_kib))
KNOWN(get_thp_mib, out_uint(v, st->thp_kib / 1024))
KNOWN(get_thp_kib, out_uint(v, st->thp_kib))
KNOWN(get_addrs, out_list(v, r->addrs))

/* tsv's order is what scripts count on: new columns go before addresses
 * only in text. */
#define DOMAIN_LIST_COLS \
	{ "Name", "name", -24, 0, 0, get_name, NULL }, \
	{ "ID", "id", 5, 0, 0, get_id, NULL }, \
	{ "Mem(MiB)", "memory_mib", 9, 0, 0, get_mem, NULL }, \
	{ "VCPUs", "vcpus", 5, 0, 0, get_vcpus, NULL }, \
	{ "State", "state", -6, 0, OUT_TEXT_ONLY, get_letters, NULL }, \
	{ "State", "state", 0, 0, OUT_DATA_ONLY, get_state, NULL }, \
	{ "Time(s)", "cpu_s", 10, 1, 0, get_cpu, NULL }, \
	{ "Uptime(s)", "uptime_s", 9, 0, OUT_LONG, get_uptime, NULL }, \
	{ "RSS(MiB)", "rss_mib", 9, 0, OUT_LONG | OUT_TEXT_ONLY, get_rss_mib, NULL }, \
	{ "RSS", "rss_kib", 0, 0, OUT_DATA_ONLY, get_rss_kib, NULL }, \
	{ "PID", "pid", 7, 0, OUT_LONG, get_pid, NULL }, \
	{ "Max(MiB)", "maxmem_mib", 9, 0, OUT_LONG, get_maxmem, NULL }, \
	{ "Bal(MiB)", "balloon_mib", 9, 0, OUT_LONG, get_balloon, NULL }, \
	{ "Free(MiB)", "guest_free_mib", 9, 0, OUT_LONG, get_gfree, NULL }, \
	{ "Save", "save", -9, 0, OUT_LONG | OUT_TEXT_ONLY, get_job, NULL }, \
	{ "KSM(MiB)", "ksm_mib", 8, 0, OUT_LONG | OUT_TEXT_ONLY, get_ksm_mib, NULL }, \
	{ "KSM", "ksm_shared_kib", 0, 0, OUT_DATA_ONLY, get_ksm_kib, NULL }, \
	{ "THP(MiB)", "thp_mib", 8, 0, OUT_LONG | OUT_TEXT_ONLY, get_thp_mib, NULL }, \
	{ "THP", "thp_kib", 0, 0, OUT_DATA_ONLY, get_thp_kib, NULL }, \

const struct out_col domain_list_cols[] = {
	DOMAIN_LIST_COLS
	{ "Addresses", "addresses", -1, 0, OUT_LONG | OUT_GAP2, get_addrs, NULL },
};

const size_t domain_list_ncols = OUT_NCOLS(domain_list_cols);

const struct out_col domain_list_all_cols[] = {
	DOMAIN_LIST_COLS
	{ "Auto", "autostart", -4, 0, OUT_TEXT_ONLY, get_autostart, NULL },
	{ "Addresses", "addresses", -1, 0, OUT_LONG | OUT_GAP2, get_addrs, NULL },
	{ "Autostart", "autostart", 0, 0, OUT_DATA_ONLY, get_autostart, NULL },
};

const size_t domain_list_all_ncols = OUT_NCOLS(domain_list_all_cols);

void domain_list_row(struct list_row *r, const struct lodge_status *st)
{
	*r = (struct list_row){ .st = st, .name = st->name, .gfree = "-", .job = "-" };
	if (lodge_saving(st) && st->save_kind == LODGE_SAVE_SNAPSHOT)
		snprintf(r->job, sizeof(r->job), "save");
	else if (lodge_saving(st) && st->save_phase == LODGE_SAVE_PRECOPY)
		snprintf(r->job, sizeof(r->job), "migr:%u", st->save_round);
	else if (lodge_saving(st))
		snprintf(r->job, sizeof(r->job), "migr:stop");
	lodge_addrs_join(st, r->addrs, sizeof(r->addrs));
}

void domain_list_row_unasked(struct list_row *r, const struct lodge_unasked *u)
{
	*r = (struct list_row){ .st = NULL, .name = u->name, .job = "-", .addrs = "-" };
}

void domain_list_row_defined(struct list_row *r, const struct lodge_defined *def)
{
	*r = (struct list_row){ .st = NULL, .def = def, .name = def->name, .gfree = "-", .job = "-", .addrs = "-" };
}
