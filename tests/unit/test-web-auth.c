/* The web interface's users and sessions (src/web/users.c, session.c):
 * yescrypt hashes and roles kept in ROOT/etc/lodge/web-users and checked,
 * a file others may write refused; session cookies found only whole,
 * the least recently used session replaced when all are taken; the login
 * rate limit's schedule (5 free failures per address, 10 per user name,
 * then waits doubling to 300 s, a try counted when let in, a success
 * clearing its address). */
#include "web.h"
#include "config.h"
#include "unit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/lodge-web-auth.XXXXXX";

static void test_users(void)
{
	char why[512], path[CFG_PATH_MAX], dir[CFG_PATH_MAX + 16];
	enum web_role role = WEB_VIEWER;
	struct stat sb;

	snprintf(dir, sizeof(dir), "%s/etc/lodge", root);
	CHECK("users: the test root", mkdir(root, 0700) == 0 || errno == EEXIST);
	snprintf(path, sizeof(path), "%s/etc", root);
	mkdir(path, 0755);
	mkdir(dir, 0755);
	web_users_path(path, sizeof(path));
	CHECK("users: no file yet: -ENOENT", web_users_verify("alice", "alice-secret", &role) == -ENOENT);
	CHECK("users: alice set", web_users_set("alice", "alice-secret", WEB_ADMIN, why, sizeof(why)) == 0);
	CHECK("users: bob set", web_users_set("bob", "bob-secret-2", WEB_VIEWER, why, sizeof(why)) == 0);
	CHECK("users: the file is 0600", stat(path, &sb) == 0 && (sb.st_mode & 07777) == 0600);
	CHECK("users: alice's password opens, as admin",
	      web_users_verify("alice", "alice-secret", &role) == 1 && role == WEB_ADMIN);
	CHECK("users: bob's, as viewer", web_users_verify("bob", "bob-secret-2", &role) == 1 && role == WEB_VIEWER);
	CHECK("users: a wrong password does not", web_users_verify("alice", "alice-secreT", &role) == 0);
	CHECK("users: nor bob's password for alice", web_users_verify("alice", "bob-secret-2", &role) == 0);
	CHECK("users: nor a user who is not there", web_users_verify("carol", "alice-secret", &role) == 0);
	CHECK("users: a new password replaces the old",
	      web_users_set("alice", "new-secret-3", WEB_VIEWER, why, sizeof(why)) == 0 &&
	      web_users_verify("alice", "alice-secret", &role) == 0 &&
	      web_users_verify("alice", "new-secret-3", &role) == 1 && role == WEB_VIEWER &&
	      web_users_verify("bob", "bob-secret-2", &role) == 1);
	CHECK("users: an upper-case name is refused", web_users_set("Alice", "x-secret-1", WEB_ADMIN, why, sizeof(why)) == -EINVAL);
	CHECK("users: a name with ':' is refused", web_users_set("a:b", "x-secret-1", WEB_ADMIN, why, sizeof(why)) == -EINVAL);
	CHECK("users: a name of 13 is refused",
	      web_users_set("abcdefghijklm", "x-secret-1", WEB_ADMIN, why, sizeof(why)) == -EINVAL);
	CHECK("users: a name of 12 is taken", web_users_set("abcdefghijkl", "x-secret-1", WEB_ADMIN, why, sizeof(why)) == 0);
	chmod(path, 0666);
	CHECK("users: a file others may write is refused", web_users_verify("bob", "bob-secret-2", &role) == -EPERM);
	chmod(path, 0600);
}

static void test_sessions(void)
{
	struct web_session *a = web_session_new("alice", WEB_ADMIN), *s;
	char cookie[256], id[WEB_TOKEN_HEX + 1];
	int i;

	CHECK("session: made, id and token 64 hex each", a && strlen(a->id) == 64 && strlen(a->csrf) == 64 &&
	      strspn(a->id, "0123456789abcdef") == 64 && strcmp(a->id, a->csrf) != 0);
	memcpy(id, a->id, sizeof(id));
	snprintf(cookie, sizeof(cookie), "x=1; " WEB_COOKIE "=%s; y=2", id);
	CHECK("session: found among other cookies", web_session_find(cookie) == a);
	snprintf(cookie, sizeof(cookie), WEB_COOKIE "=%.63s", id);
	CHECK("session: not by a part of its id", web_session_find(cookie) == NULL);
	snprintf(cookie, sizeof(cookie), "x" WEB_COOKIE "=%s", id);
	CHECK("session: not under another cookie's name", web_session_find(cookie) == NULL);
	CHECK("session: not without a cookie", web_session_find(NULL) == NULL && web_session_find("") == NULL);
	for (i = 0; i < WEB_SESSIONS_MAX; i++)
		s = web_session_new("bob", WEB_VIEWER);
	snprintf(cookie, sizeof(cookie), WEB_COOKIE "=%s", id);
	CHECK("session: all taken, the least recently used goes", s && web_session_find(cookie) == NULL);
	snprintf(cookie, sizeof(cookie), WEB_COOKIE "=%s", s->id);
	web_session_end(s);
	CHECK("session: ended, not found", web_session_find(cookie) == NULL);
	CHECK("tokens: equal and not", web_token_equal("abc", "abc") && !web_token_equal("abc", "abd") &&
	      !web_token_equal("abc", "abcd") && !web_token_equal("", "a"));
}

/* A try as login.c sees it: admitted (and then its result), or the wait. */
static long try_login(const char *addr, const char *user, bool ok, enum web_login_scope *by)
{
	long w = web_login_admit(addr, user, by);

	if (!w)
		web_login_result(addr, user, ok);
	return w;
}

static void test_rate_limit(void)
{
	const char *me = "192.0.2.7", *other = "192.0.2.8";
	enum web_login_scope by = WEB_LOGIN_SCOPES;
	char addr[32];
	long w;
	int i;

	for (i = 0; i < WEB_LOGIN_FREE; i++)
		try_login(me, "u1", false, &by);
	w = try_login(me, "u1", false, &by);
	CHECK("logins: 5 failures are free, the 6th is checked", w == 0);
	w = web_login_admit(me, "u1", &by);
	CHECK("logins: the 6th makes the next wait, by its address", w >= 1 && w <= 2 && by == WEB_LOGIN_BY_ADDR);
	for (i = 0; i < 20; i++)
		w = web_login_admit(me, "u1", &by);
	CHECK("logins: tries while waiting count: the wait grows to its most", w == WEB_LOGIN_BLOCK_MAX_S);
	CHECK("logins: another address, another user is not held", try_login(other, "u2", true, &by) == 0);
	web_login_result(me, "u1", true);
	CHECK("logins: a success clears its address", web_login_admit(me, "u3", &by) == 0);
	web_login_result(me, "u3", true);

	/* one user name from ever other addresses: held by the name */
	for (i = 0; i < WEB_LOGIN_USER_FREE + 1; i++) {
		snprintf(addr, sizeof(addr), "198.51.100.%d", i);
		w = try_login(addr, "alice", false, &by);
	}
	CHECK("logins: 11 failures for one user from 11 addresses: the 11th still checked", w == 0);
	w = web_login_admit("198.51.100.200", "alice", &by);
	CHECK("logins: the next for that user waits, from a new address too, by the user rule",
	      w >= 1 && by == WEB_LOGIN_BY_USER && strcmp(web_login_scope_what(by), "for user") == 0);
	CHECK("logins: another user from the same new address is let in",
	      try_login("198.51.100.201", "bob", true, &by) == 0);

	/* tries let in at once all count before any result */
	for (i = 0; i < WEB_LOGIN_FREE + 1; i++)
		w = web_login_admit("203.0.113.9", "carol", &by);
	w = web_login_admit("203.0.113.9", "carol", &by);
	CHECK("logins: 7 tries at once, no result yet: the 7th waits", w >= 1 && by == WEB_LOGIN_BY_ADDR);
}

int main(void)
{
	char cmd[64];

	if (!mkdtemp(root))
		return 1;
	cfg_set_root(root);
	test_users();
	test_sessions();
	test_rate_limit();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd))
		printf("could not remove %s\n", root);
	UNIT_EXIT();
}
