/* lodge migrate and lodge migrate-receive: live migration over TCP or a
 * Unix socket, as xl migrate and xl migrate-receive (the library does
 * the work and holds the trust rules: src/lib/trust/migrate.h). */
#include "agent.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>

/* Round 0 (everything touched) reports only that it began. */
static void print_round(const struct lodge_progress *p, void *arg)
{
	if (p->round > 0)
		printf("round %u: %llu pages sent, %llu dirty, %.1f MiB/s\n", p->round, (unsigned long long)p->pages,
		       (unsigned long long)p->dirty, p->rate_kib / 1024.0);
	fflush(stdout);
}

int cmd_migrate(struct cli *c)
{
	struct lodge_migrate_opts o = { .secret_file = c->text['s'], .progress = c->set['q'] ? NULL : print_round };
	struct lodge_migrate_result res;
	struct lodge_err err;
	int rc;

	/* A domain of this host's pool moves to a host of the pool, by name. */
	if (c->lg.hc.pool_etcd[0] && (rc = cmd_pool_migrate(c)) != -ENOENT)
		return rc;
	if (lodge_migrate(&c->lg, c->argv[0], c->argv[1], &o, &res, &err))
		return cli_fail(&err);
	printf("migrated %s to %s in %ld ms, downtime %.2f ms, %u rounds, %llu pages\n", res.name, res.peer, res.ms,
	       res.downtime_us / 1000.0, res.rounds, (unsigned long long)res.pages);
	return 0;
}

static void received(enum lodge_recv_event e, const char *name, const char *peer, const char *text, void *arg)
{
	switch (e) {
	case LODGE_RECV_RECEIVED:
		printf("received %s from %s\n", name, peer);
		fflush(stdout);
		break;
	case LODGE_RECV_WARNING:
		log_warn("%s", text);
		break;
	case LODGE_RECV_ERROR:
		log_err("%s", text);
		break;
	case LODGE_RECV_HYP:
		cli_notice(LODGE_NOTICE_HYP, text, NULL);
		break;
	}
}

int cmd_migrate_receive(struct cli *c)
{
	struct lodge_receiver_opts o = {
		.listen = c->text['l'], .secret_file = c->text['s'], .once = c->set['1'], .event = received,
	};
	struct lodge_receiver *r;
	struct lodge_err err;
	char where[CFG_PATH_MAX + 300];
	int rc;

	if ((rc = lodge_receiver_open(&c->lg, &o, &r, where, sizeof(where), &err)))
		return cli_fail(&err);
	printf("listening on %s\n", where);
	fflush(stdout);
	rc = lodge_receiver_run(r, &err);
	lodge_receiver_close(r);
	return rc ? cli_fail(&err) : 0;
}
