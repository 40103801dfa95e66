/* How a pool domain's last boot on this host ended, from the event log
 * (pool.h, pool_boot_ended). */
#include "pool.h"

#include <stdio.h>
#include <string.h>

#include "evlog.h"
#include "log.h"

/* How a boot ends, by the event its supervisor wrote in the event log
 * (evlog.h), in an operator's words, and whether an HA domain that ended
 * so is started again by its owner: yes for a crash or a death of its
 * lodge-hyp, never for its own power-off or a stop someone asked for. */
static const struct pool_boot_end boot_ends[] = {
	{ EV_CRASHED, true, "the guest crashed" },
	{ EV_CRASH_KEPT, true, "the guest crashed (its state kept for lodge dump-core)" },
	{ EV_KILLED, true, "its lodge-hyp was killed" },
	{ EV_FAILED, true, "its lodge-hyp failed" },
	{ EV_POWERED_OFF, false, "the guest powered off" },
	{ EV_STOPPED, false, "it was shut down on this host, outside the pool" },
	{ EV_DESTROYED, false, "it was destroyed on this host, outside the pool" },
	{ EV_SAVED, false, "it was saved to a file on this host, outside the pool" },
	{ EV_MIGRATED_OUT, false, "it was migrated away from this host, outside the pool" },
	/* no word after the boot's own start: its supervisor died with it */
	{ EV_COUNT, true, "its lodge-hyp died without a word (supervisor and guest killed: kill -9, the OOM killer)" },
};
/* The events that begin a boot: whatever came before them is another boot's. */
static const enum evlog_event boot_starts[] = { EV_CREATED, EV_RESTORED, EV_MIGRATED_IN };
/* How many of the domain's last event-log lines are read for the one
 * that ended its boot (a boot writes few: pause, mem-set, hot-plug...). */
#define BOOT_LINES 64

static const struct pool_boot_end *boot_end_of(enum evlog_event ev)
{
	size_t i;

	for (i = 0; i < sizeof(boot_ends) / sizeof(boot_ends[0]); i++)
		if (boot_ends[i].event == ev)
			return &boot_ends[i];
	return NULL;
}

static int end_event(const char *line, void *arg)
{
	enum evlog_event *how = arg, ev;
	char word[32];
	size_t i;

	/* TIME DOMAIN EVENT WHO DETAIL (evlog.h), oldest first */
	if (sscanf(line, "%*s %*s %31s", word) != 1 || (ev = evlog_event_of(word)) == EV_COUNT)
		return 0;
	for (i = 0; i < sizeof(boot_starts) / sizeof(boot_starts[0]); i++)
		if (ev == boot_starts[i])
			*how = EV_COUNT;   /* a (re)start: only what follows is this boot's */
	if (boot_end_of(ev))
		*how = ev;
	return 0;
}

/* How the domain's last boot here ended: by the line its supervisor wrote
 * after the boot's own start, never one of an older boot; none = it died
 * with its supervisor.  An event log that cannot be read is no evidence
 * of a stop: taken as a death. */
const struct pool_boot_end *pool_boot_ended(const struct lodge *lg, const char *name)
{
	struct lodge_err err;
	enum evlog_event how = EV_COUNT;

	if (lodge_log_read(lg, name, BOOT_LINES, false, end_event, &how, &err))
		log_warn("%s: cannot read the event log: %s", name, err.msg);
	return boot_end_of(how);
}
