/* Who is logged in, and who may try: the sessions (a random cookie and a
 * random CSRF token each, in memory only: a restart logs everyone out)
 * and the failed logins of each address. */
#include "web.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

static struct web_session sessions[WEB_SESSIONS_MAX];

static time_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

bool web_token_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i;
	unsigned char diff = la != lb;

	for (i = 0; i < la && i < lb; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}

static int random_hex(char out[WEB_TOKEN_HEX + 1])
{
	unsigned char bytes[WEB_TOKEN_HEX / 2];
	size_t i;

	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes))
		return -EIO;
	for (i = 0; i < sizeof(bytes); i++)
		sprintf(out + 2 * i, "%02x", bytes[i]);
	return 0;
}

struct web_session *web_session_new(const char *user, enum web_role role)
{
	struct web_session *s = &sessions[0];
	size_t i;

	for (i = 0; i < WEB_SESSIONS_MAX; i++) {
		if (!sessions[i].id[0]) {
			s = &sessions[i];
			break;
		}
		if (sessions[i].last < s->last)
			s = &sessions[i];
	}
	memset(s, 0, sizeof(*s));
	if (random_hex(s->id) || random_hex(s->csrf)) {
		memset(s, 0, sizeof(*s));
		return NULL;
	}
	snprintf(s->user, sizeof(s->user), "%s", user);
	s->role = role;
	s->last = now_s();
	return s;
}

/* The value of name=... in a Cookie header into out. */
static bool cookie_value(const char *header, const char *name, char *out, size_t len)
{
	size_t nl = strlen(name);
	const char *p = header;

	while (*p) {
		size_t n;

		p += strspn(p, " ;");
		n = strcspn(p, ";");
		if (n > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
			if (n - nl - 1 >= len)
				return false;
			memcpy(out, p + nl + 1, n - nl - 1);
			out[n - nl - 1] = '\0';
			return true;
		}
		p += n;
	}
	return false;
}

struct web_session *web_session_find(const char *cookie_header)
{
	char id[WEB_TOKEN_HEX + 1];
	time_t now = now_s();
	size_t i;

	if (!cookie_header || !cookie_value(cookie_header, WEB_COOKIE, id, sizeof(id)) ||
	    strlen(id) != WEB_TOKEN_HEX)
		return NULL;
	for (i = 0; i < WEB_SESSIONS_MAX; i++) {
		struct web_session *s = &sessions[i];

		if (!s->id[0] || !web_token_equal(s->id, id))
			continue;
		if (now - s->last > WEB_SESSION_IDLE_S) {
			web_session_end(s);
			return NULL;
		}
		s->last = now;
		return s;
	}
	return NULL;
}

void web_session_end(struct web_session *s)
{
	memset(s, 0, sizeof(*s));
}

/* ---- the login rate limit ------------------------------------------------------------ */

/* The rules, one a scope: after `free` failures in a row the next try
 * of that address, or for that user name, may come only after a wait
 * that doubles with each failure, from 1 s to max_wait_s.  Per address
 * alone, a guesser with many addresses (a /64, 127.0.0.0/8) was never
 * slowed; per user name, guesses at one account are, from anywhere.  All
 * logins together are limited in login.c (one hash at a time, paced, a
 * bounded queue). */
static const struct login_rule {
	const char *what;                 /* for the refusal: "from ADDR", "for user NAME" */
	unsigned free;
	long max_wait_s;
} login_rules[WEB_LOGIN_SCOPES] = {
	[WEB_LOGIN_BY_ADDR] = { "from", WEB_LOGIN_FREE, WEB_LOGIN_BLOCK_MAX_S },
	[WEB_LOGIN_BY_USER] = { "for user", WEB_LOGIN_USER_FREE, WEB_LOGIN_BLOCK_MAX_S },
};

#define KEYS_MAX 256                      /* per scope: the least recently used goes */

static struct login_key {
	char key[64];
	unsigned fails;
	time_t until, last;
} keys[WEB_LOGIN_SCOPES][KEYS_MAX];

static struct login_key *key_find(enum web_login_scope scope, const char *key, bool make)
{
	struct login_key *k = keys[scope], *oldest = &k[0];
	size_t i;

	for (i = 0; i < KEYS_MAX; i++) {
		if (k[i].key[0] && strcmp(k[i].key, key) == 0)
			return &k[i];
		if (k[i].last < oldest->last)
			oldest = &k[i];
	}
	if (!make)
		return NULL;
	memset(oldest, 0, sizeof(*oldest));
	snprintf(oldest->key, sizeof(oldest->key), "%s", key);
	return oldest;
}

/* One more failure: past the free ones, the wait doubles from 1 s. */
static void failed(const struct login_rule *rule, struct login_key *k, time_t now)
{
	k->last = now;
	if (++k->fails > rule->free) {
		unsigned shift = k->fails - rule->free - 1;
		long wait = shift >= 20 ? rule->max_wait_s : 1L << shift;

		k->until = now + (wait > rule->max_wait_s ? rule->max_wait_s : wait);
	}
}

const char *web_login_scope_what(enum web_login_scope scope)
{
	return login_rules[scope].what;
}

/* A try is counted as failed when it is let in, before its password is
 * checked (login.c hashes it later): tries sent at once cannot all pass
 * as "the first" before any result is known.  A try while one of its
 * keys waits is refused unchecked and counts as one more failure of
 * each: guessing faster only waits longer. */
long web_login_admit(const char *addr, const char *user, enum web_login_scope *by)
{
	const char *key[WEB_LOGIN_SCOPES] = { [WEB_LOGIN_BY_ADDR] = addr, [WEB_LOGIN_BY_USER] = user };
	time_t now = now_s();
	long wait = 0;
	unsigned sc;

	for (sc = 0; sc < WEB_LOGIN_SCOPES; sc++) {
		struct login_key *k = key_find(sc, key[sc], false);

		if (k && k->until > now && k->until - now > wait) {
			wait = (long)(k->until - now);
			*by = sc;
		}
	}
	for (sc = 0; sc < WEB_LOGIN_SCOPES; sc++)
		failed(&login_rules[sc], key_find(sc, key[sc], true), now);
	if (wait) {
		const struct login_key *k = key_find(*by, key[*by], false);

		wait = k ? (long)(k->until - now) : wait;   /* counted: it grew */
	}
	return wait;
}

/* A success clears its address and takes back the failure its try was
 * counted; a failure was counted when it was let in. */
void web_login_result(const char *addr, const char *user, bool ok)
{
	struct login_key *a = key_find(WEB_LOGIN_BY_ADDR, addr, false), *u = key_find(WEB_LOGIN_BY_USER, user, false);

	if (!ok)
		return;
	if (a)
		memset(a, 0, sizeof(*a));
	if (u && u->fails) {
		u->fails--;
		if (u->fails <= login_rules[WEB_LOGIN_BY_USER].free)
			u->until = 0;
	}
}
