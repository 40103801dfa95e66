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

#define ADDRS_MAX 256

static struct login_addr {
	char addr[64];
	unsigned fails;
	time_t until, last;
} addrs[ADDRS_MAX];

static struct login_addr *addr_find(const char *addr, bool make)
{
	struct login_addr *oldest = &addrs[0];
	size_t i;

	for (i = 0; i < ADDRS_MAX; i++) {
		if (addrs[i].addr[0] && strcmp(addrs[i].addr, addr) == 0)
			return &addrs[i];
		if (addrs[i].last < oldest->last)
			oldest = &addrs[i];
	}
	if (!make)
		return NULL;
	memset(oldest, 0, sizeof(*oldest));
	snprintf(oldest->addr, sizeof(oldest->addr), "%s", addr);
	return oldest;
}

/* One more failure: past the free ones, the wait doubles from 1 s. */
static void failed(struct login_addr *a, time_t now)
{
	a->last = now;
	if (++a->fails > WEB_LOGIN_FREE) {
		unsigned shift = a->fails - WEB_LOGIN_FREE - 1;
		long wait = shift >= 9 ? WEB_LOGIN_BLOCK_MAX_S : 1L << shift;

		a->until = now + (wait > WEB_LOGIN_BLOCK_MAX_S ? WEB_LOGIN_BLOCK_MAX_S : wait);
	}
}

/* A try while the address waits is refused unchecked and counts as one
 * more failure: guessing faster only waits longer. */
long web_login_wait(const char *addr)
{
	struct login_addr *a = addr_find(addr, false);
	time_t now = now_s();

	if (!a || a->until <= now)
		return 0;
	failed(a, now);
	return (long)(a->until - now);
}

void web_login_result(const char *addr, bool ok)
{
	struct login_addr *a = addr_find(addr, !ok);

	if (!a)
		return;
	if (ok)
		memset(a, 0, sizeof(*a));
	else
		failed(a, now_s());
}
