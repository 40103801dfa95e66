/* The rules of a domain (schema.h). */
#include "schema.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const action_names[ACTION_COUNT] = {
	[ACTION_DESTROY] = "destroy",
	[ACTION_RESTART] = "restart",
	[ACTION_PRESERVE] = "preserve",
	[ACTION_COREDUMP_DESTROY] = "coredump-destroy",
	[ACTION_COREDUMP_RESTART] = "coredump-restart",
};

const char *domain_action_name(enum domain_action a)
{
	return a < ACTION_COUNT ? action_names[a] : "?";
}

int domain_action_parse(const char *word, enum domain_action *out)
{
	unsigned i;

	for (i = 0; i < ACTION_COUNT; i++)
		if (strcmp(word, action_names[i]) == 0) {
			*out = (enum domain_action)i;
			return 0;
		}
	return -EINVAL;
}

const char *domain_action_list(void)
{
	return "destroy, restart, preserve, coredump-destroy, coredump-restart";
}

bool domain_action_restarts(enum domain_action a)
{
	return a == ACTION_RESTART || a == ACTION_COREDUMP_RESTART;
}

bool domain_action_dumps_core(enum domain_action a)
{
	return a == ACTION_COREDUMP_DESTROY || a == ACTION_COREDUMP_RESTART;
}

bool domain_name_valid(const char *name)
{
	static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-";
	size_t len = strlen(name);

	return len > 0 && len < DOMAIN_NAME_MAX && name[0] != '-' && name[0] != '.' &&
	       strspn(name, ok) == len && strcasecmp(name, "Domain-0") != 0;
}

const char *domain_name_rule(void)
{
	static char rule[128];

	if (!rule[0])
		snprintf(rule, sizeof(rule), "1 to %d characters of A-Z a-z 0-9 _ . -, not starting with - or ., "
			 "not Domain-0", DOMAIN_NAME_MAX - 1);
	return rule;
}
