/* The password checks, on a thread of their own: crypt(3)'s yescrypt
 * costs tens of milliseconds of CPU by design, and on the event loop each
 * check stopped every page, WebSocket and console for that long.  Here
 * the loop queues a check (api.c's login route) and answers when the
 * thread says it is done (lws_cancel_service wakes the loop,
 * LWS_CALLBACK_EVENT_WAIT_CANCELLED in server.c collects it).
 *
 * This is also the limit on all logins together: one check at a time;
 * after a burst of WEB_LOGIN_CHECK_BURST, one each WEB_LOGIN_CHECK_EVERY_MS
 * (a token bucket: a check waits its turn); at most WEB_LOGIN_PENDING_MAX
 * waiting, a login beyond refused at once (503). */
#include "web.h"

#include <errno.h>
#include <libwebsockets.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static struct web_login_job *todo, **todo_tail = &todo, *done;
static unsigned pending;                  /* queued or being checked */
static struct lws_context *loop_ctx;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* The bucket: a token each WEB_LOGIN_CHECK_EVERY_MS, WEB_LOGIN_CHECK_BURST
 * at most; a check takes one, waiting for it if there is none. */
static void take_token(void)
{
	static long long tokens_at = -1;  /* the time the bucket would have been empty */
	long long now = now_ms(), full = (long long)WEB_LOGIN_CHECK_BURST * WEB_LOGIN_CHECK_EVERY_MS;
	struct timespec ts;

	if (tokens_at < 0 || now - tokens_at > full)
		tokens_at = now - full;
	if (now - tokens_at < WEB_LOGIN_CHECK_EVERY_MS) {
		long long ms = WEB_LOGIN_CHECK_EVERY_MS - (now - tokens_at);

		ts.tv_sec = ms / 1000;
		ts.tv_nsec = (ms % 1000) * 1000000;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	tokens_at += WEB_LOGIN_CHECK_EVERY_MS;
}

static void *checker(void *arg)
{
	(void)arg;
	for (;;) {
		struct web_login_job *job;

		pthread_mutex_lock(&lock);
		while (!todo)
			pthread_cond_wait(&wake, &lock);
		job = todo;
		if (!(todo = job->next))
			todo_tail = &todo;
		pthread_mutex_unlock(&lock);

		take_token();
		job->rc = web_users_verify(job->user, job->password, &job->role);
		explicit_bzero(job->password, sizeof(job->password));

		pthread_mutex_lock(&lock);
		job->next = done;
		done = job;
		pthread_mutex_unlock(&lock);
		lws_cancel_service(loop_ctx);
	}
	return NULL;
}

int web_login_start(struct lws_context *ctx)
{
	pthread_t t;
	sigset_t all, old;
	int rc;

	loop_ctx = ctx;
	/* SIGINT and SIGTERM are the loop's (server.c): not this thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&t, NULL, checker, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	pthread_detach(t);
	return 0;
}

struct web_login_job *web_login_queue(const char *user, const char *password, const char *peer, bool tls)
{
	struct web_login_job *job;

	if (strlen(password) > WEB_PASSWORD_MAX || !(job = calloc(1, sizeof(*job))))
		return NULL;
	snprintf(job->user, sizeof(job->user), "%s", user);
	snprintf(job->password, sizeof(job->password), "%s", password);
	snprintf(job->peer, sizeof(job->peer), "%s", peer);
	job->tls = tls;
	pthread_mutex_lock(&lock);
	if (pending >= WEB_LOGIN_PENDING_MAX) {
		pthread_mutex_unlock(&lock);
		explicit_bzero(job->password, sizeof(job->password));
		free(job);
		return NULL;
	}
	pending++;
	*todo_tail = job;
	todo_tail = &job->next;
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
	return job;
}

void web_login_abandon(struct web_login_job *job)
{
	pthread_mutex_lock(&lock);
	job->abandoned = true;
	pthread_mutex_unlock(&lock);
}

void web_login_each_done(void (*fn)(struct web_login_job *job, void *arg), void *arg)
{
	struct web_login_job *list, *next;

	pthread_mutex_lock(&lock);
	list = done;
	done = NULL;
	pthread_mutex_unlock(&lock);
	for (; list; list = next) {
		next = list->next;
		if (!list->abandoned)   /* set only by this thread, the loop's */
			fn(list, arg);
		pthread_mutex_lock(&lock);
		pending--;
		pthread_mutex_unlock(&lock);
		free(list);
	}
}
