/* The protocol's vocabulary (proto.h), defined once. */
#include "proto.h"

#include <string.h>

static const char *const state_names[DOMAIN_STATE_COUNT] = {
	[DOMAIN_STATE_RUNNING] = "running",
	[DOMAIN_STATE_PAUSED] = "paused",
	[DOMAIN_STATE_SHUTDOWN] = "shutdown",
	[DOMAIN_STATE_CRASHED] = "crashed",
	[DOMAIN_STATE_UNKNOWN] = "?",
};

const char *domain_state_name(enum domain_state s)
{
	return (unsigned)s < DOMAIN_STATE_COUNT ? state_names[s] : state_names[DOMAIN_STATE_UNKNOWN];
}

enum domain_state domain_state_of(const char *word)
{
	unsigned i;

	for (i = 0; i < DOMAIN_STATE_UNKNOWN; i++)
		if (strcmp(word, state_names[i]) == 0)
			return (enum domain_state)i;
	return DOMAIN_STATE_UNKNOWN;
}
