/* The rules of a domain (schema.h). */
#include "schema.h"

#include <ctype.h>
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
	static char list[96];
	size_t at = 0;
	unsigned i;

	if (list[0])
		return list;
	for (i = 0; i < ACTION_COUNT; i++)
		at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%s", i ? ", " : "", action_names[i]);
	return list;
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
	       strspn(name, ok) == len && !domain_name_is_host(name);
}

bool domain_name_is_host(const char *name)
{
	return strcasecmp(name, DOMAIN_HOST_NAME) == 0;
}

const char *domain_name_rule(void)
{
	static char rule[128];

	if (!rule[0])
		snprintf(rule, sizeof(rule), "1 to %d characters of A-Z a-z 0-9 _ . -, not starting with - or ., "
			 "not %s", DOMAIN_NAME_MAX - 1, DOMAIN_HOST_NAME);
	return rule;
}

bool pool_prefix_valid(const char *prefix)
{
	size_t len = strlen(prefix);

	return prefix[0] == '/' && len < POOL_PREFIX_MAX && prefix[len - 1] != '/' && !strpbrk(prefix, " \t\n\"\\");
}

const char *pool_prefix_rule(void)
{
	static char rule[96];

	if (!rule[0])
		snprintf(rule, sizeof(rule), "from /, no trailing /, under %d bytes, no space, quote or backslash",
			 POOL_PREFIX_MAX);
	return rule;
}

static bool of_alphabet(const char *name, size_t max, const char *ok)
{
	size_t len = strlen(name);

	return len > 0 && len < max && strspn(name, ok) == len;
}

bool network_name_valid(const char *name)
{
	static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

	return of_alphabet(name, NETWORK_NAME_MAX, ok) && isalpha((unsigned char)name[0]);
}

const char *network_name_rule(void)
{
	static char rule[96];

	if (!rule[0])
		snprintf(rule, sizeof(rule), "1 to %d characters of A-Z a-z 0-9 _ -, starting with a letter",
			 NETWORK_NAME_MAX - 1);
	return rule;
}

/* The one interface-name rule: a bridge, a tap, a vif's vifname and a
 * host NIC alike, wherever the name comes from.  IFNAMSIZ is the kernel's
 * bound; the alphabet keeps a name a bare word in nft rules (iifname
 * "BR"), in configs written back (vif = [ "bridge=BR,..." ], whose ',' and
 * '=' split fields), in sysfs paths ('/') and in messages and logs. */
bool ifname_valid(const char *name)
{
	static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-";

	return of_alphabet(name, IFNAME_MAX, ok) && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

const char *ifname_rule(void)
{
	static char rule[96];

	if (!rule[0])
		snprintf(rule, sizeof(rule), "1 to %d characters of A-Z a-z 0-9 _ . -, not . or ..", IFNAME_MAX - 1);
	return rule;
}

/* 0 if valid(name), or -EINVAL with why: "'NAME' is not a WHAT
 * (RULE)", the name as given, cut, with what a terminal or log would take
 * as its own shown as '?'. */
static int name_check(const char *name, bool (*valid)(const char *), const char *what, const char *rule,
		      char *why, size_t whylen)
{
	char shown[44];
	size_t i;

	if (valid(name))
		return 0;
	for (i = 0; i < sizeof(shown) - 4 && name[i]; i++)
		shown[i] = isprint((unsigned char)name[i]) ? name[i] : '?';
	snprintf(shown + i, sizeof(shown) - i, "%s", name[i] ? "..." : "");
	snprintf(why, whylen, "'%s' is not %s (%s)", shown, what, rule);
	return -EINVAL;
}

int ifname_check(const char *name, char *why, size_t whylen)
{
	return name_check(name, ifname_valid, "an interface name", ifname_rule(), why, whylen);
}

int network_name_check(const char *name, char *why, size_t whylen)
{
	return name_check(name, network_name_valid, "a network name", network_name_rule(), why, whylen);
}
