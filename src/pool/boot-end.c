/* How a pool domain's last boot on this host ended, from the event log
 * (pool.h, pool_boot_ended). */
#include "pool.h"

#include <stdio.h>
#include <string.h>

#include "log.h"

/* How a boot ends, by the word its supervisor wrote in the event log
 * (evlog.c), in an operator's words, and whether an HA domain that ended
 * so is started again by its owner: yes for a crash or a death of its
 * lodge-hyp, never for its own power-off or a stop someone asked for. */
static const struct pool_boot_end boot_ends[] = {
	{ "crashed", true, "the guest crashed" },
	{ "crash-kept", true, "the guest crashed (its state kept for lodge dump-core)" },
	{ "killed", true, "its lodge-hyp was killed" },
	{ "failed", true, "its lodge-hyp failed" },
	{ "powered-off", false, "the guest powered off" },
	{ "stopped", false, "it was shut down on this host, outside the pool" },
	{ "destroyed", false, "it was destroyed on this host, outside the pool" },
	{ "saved", false, "it was saved to a file on this host, outside the pool" },
	{ "migrated-out", false, "it was migrated away from this host, outside the pool" },
	/* no word after the boot's own start: its supervisor died with it */
	{ "", true, "its lodge-hyp died without a word (supervisor and guest killed: kill -9, the OOM killer)" },
};
/* The words that begin a boot: whatever came before them is another boot's. */
static const char *const boot_words[] = { "created", "restored", "migrated-in" };
/* How many of the domain's last event-log lines are read for the one
 * that ended its boot (a boot writes few: pause, mem-set, hot-plug...). */
#define BOOT_LINES 64

static const struct pool_boot_end *boot_end_of(const char *word)
{
	size_t i;

	for (i = 0; i < sizeof(boot_ends) / sizeof(boot_ends[0]); i++)
		if (strcmp(word, boot_ends[i].word) == 0)
			return &boot_ends[i];
	return NULL;
}

static int end_event(const char *line, void *arg)
{
	char *how = arg, word[32];
	size_t i;

	/* TIME DOMAIN EVENT WHO DETAIL (evlog.h), oldest first */
	if (sscanf(line, "%*s %*s %31s", word) != 1)
		return 0;
	for (i = 0; i < sizeof(boot_words) / sizeof(boot_words[0]); i++)
		if (strcmp(word, boot_words[i]) == 0)
			how[0] = '\0';     /* a (re)start: only what follows is this boot's */
	if (word[0] && boot_end_of(word))
		snprintf(how, 32, "%s", word);
	return 0;
}

/* How the domain's last boot here ended: by the line its supervisor wrote
 * after the boot's own start, never one of an older boot; none = it died
 * with its supervisor.  An event log that cannot be read is no evidence
 * of a stop: taken as a death. */
const struct pool_boot_end *pool_boot_ended(const struct lodge *lg, const char *name)
{
	struct lodge_err err;
	char word[32] = "";
	const struct pool_boot_end *e;

	if (lodge_log_read(lg, name, BOOT_LINES, false, end_event, word, &err))
		log_warn("%s: cannot read the event log: %s", name, err.msg);
	e = boot_end_of(word);
	return e ? e : boot_end_of("");
}
