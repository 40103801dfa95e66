/* Domain lifecycle commands: create, pause, unpause, shutdown, reboot,
 * destroy, trigger, sysrq, uptime, config, config-update, rename (list:
 * cmd-list.c). */
#include "agent.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_create(struct cli *c)
{
	static struct domain_config dc;
	struct lodge_err err;

	/* A host in a pool places its domains in the pool (src/pool/README.md),
	 * unless asked for a plain local one. */
	if (c->set['L'] && c->set['O'])
		return cli_usage_error(c->cmd, "--local and --on: a local domain is placed nowhere");
	if (c->lg.hc.pool_etcd[0] && !c->set['L'])
		return cmd_pool_create(c);
	if (c->set['O'])
		return cli_usage_error(c->cmd, "--on HOST: this host is in no pool (lodge pool-join)");
	if (c->argc > 1 && c->lg.hc.pool_etcd[0] && !c->set['L'])
		return cli_usage_error(c->cmd, "KEY=VALUE overrides: only for a local domain (--local)");
	if (lodge_config_find_with(&c->lg, c->argv[0], c->argv + 1, (unsigned)c->argc - 1, &dc, &err))
		return cli_fail(&err);
	if (c->lg.hc.pool_etcd[0] && cmd_pool_local_check(c, dc.name))
		return EXIT_FAILED;
	/* The config's checks are lodge check's, the host's memory included. */
	if (lodge_create(&c->lg, &dc, c->set['p'] ? LODGE_CREATE_PAUSED : 0, &err))
		return cli_fail(&err);
	if (c->set['c'])
		return console_tty(&c->lg, dc.name, false);
	return 0;
}

int cmd_pause(struct cli *c)
{
	struct lodge_err err;

	return lodge_pause(&c->lg, c->argv[0], &err) ? cli_fail(&err) : 0;
}

int cmd_unpause(struct cli *c)
{
	struct lodge_err err;

	return lodge_unpause(&c->lg, c->argv[0], &err) ? cli_fail(&err) : 0;
}

/* --wait's seconds: --timeout's, else a minute. */
static int wait_seconds(const struct cli *c)
{
	return c->set['w'] ? (c->set['t'] ? (int)c->num['t'] : CLI_WAIT_DEFAULT_S) : 0;
}

int cmd_reboot(struct cli *c)
{
	struct lodge_err err;

	if (c->set['t'] && !c->set['w'])
		return cli_usage_error(c->cmd, "--timeout is how long --wait waits: give --wait too");
	return lodge_reboot_wait(&c->lg, c->argv[0], wait_seconds(c), &err) ? cli_fail(&err) : 0;
}

/* trigger DOMAIN ACTION: xl's, those a KVM domain has.  One row each. */
struct trigger {
	const char *name;
	int (*run)(const struct lodge *lg, const char *domain, struct lodge_err *err);
	const char *refusal;           /* not NULL: why it does not apply */
};

static int trigger_power(const struct lodge *lg, const char *domain, struct lodge_err *err)
{
	return lodge_shutdown(lg, domain, 0, err);
}

static const struct trigger triggers[] = {
	{ "nmi", lodge_nmi, NULL },
	{ "reset", lodge_reboot, NULL },
	{ "power", trigger_power, NULL },
	{ "s3resume", NULL, "a Lodge domain never sleeps in S3 (its ACPI tables offer only S5), so there is "
	  "nothing to resume" },
	{ "init", NULL, "an INIT is for Xen's HVM guests only; lodge trigger offers nmi, reset and power" },
	{ "sleep", NULL, "a Lodge domain has no sleep button; lodge trigger offers nmi, reset and power" },
};

int cmd_trigger(struct cli *c)
{
	struct lodge_err err;
	size_t i;

	for (i = 0; i < sizeof(triggers) / sizeof(triggers[0]); i++) {
		if (strcmp(triggers[i].name, c->argv[1]) != 0)
			continue;
		if (triggers[i].refusal) {
			log_err("trigger %s: %s", triggers[i].name, triggers[i].refusal);
			return EXIT_FAILED;
		}
		return triggers[i].run(&c->lg, c->argv[0], &err) ? cli_fail(&err) : 0;
	}
	return cli_usage_error(c->cmd, "unknown trigger '%s' (nmi, reset, power)", c->argv[1]);
}

int cmd_sysrq(struct cli *c)
{
	struct lodge_err err;
	const char *key = c->argv[1];

	if (strlen(key) != 1 || key[0] <= ' ' || key[0] > '~')
		return cli_usage_error(c->cmd, "the key is one printable character, not '%s' (h: the guest's help)",
				       key);
	return lodge_sysrq(&c->lg, c->argv[0], key[0], &err) ? cli_fail(&err) : 0;
}

int cmd_destroy(struct cli *c)
{
	struct lodge_err err;
	int rc;

	/* A domain of this host's pool is stopped wherever it runs. */
	if (c->lg.hc.pool_etcd[0] && (rc = cmd_pool_destroy(c)) != -ENOENT)
		return rc;

	return lodge_destroy(&c->lg, c->argv[0], &err) ? cli_fail(&err) : 0;
}

static void shutdown_told(const char *name, const struct lodge_err *err, void *arg)
{
	if (err)
		cli_fail(err);
	else if (*(bool *)arg)
		printf("%s: shut down\n", name);
}

int cmd_shutdown(struct cli *c)
{
	struct lodge_err err;
	int wait = wait_seconds(c), rc;
	bool waited = wait > 0;

	if (c->set['t'] && !c->set['w'])
		return cli_usage_error(c->cmd, "--timeout is how long --wait waits: give --wait too");
	if (c->set['a'] && c->argc)
		return cli_usage_error(c->cmd, "--all and a domain ('%s'): one or the other", c->argv[0]);
	if (c->set['a'])
		return lodge_shutdown_all(&c->lg, wait, shutdown_told, &waited) ? EXIT_FAILED : 0;
	if (!c->argc)
		return cli_usage_error(c->cmd, "which domain? (or --all)");
	/* A domain of this host's pool: stopped there first, wherever it runs. */
	if (c->lg.hc.pool_etcd[0] && (rc = cmd_pool_shutdown(c)) != -ENOENT)
		return rc;
	return lodge_shutdown(&c->lg, c->argv[0], wait, &err) ? cli_fail(&err) : 0;
}

static void print_uptime(const struct lodge_status *st)
{
	unsigned long s = st->uptime_s;

	printf("%-24s %5u %lu days, %02lu:%02lu:%02lu\n", st->name, st->id, s / 86400,
	       s / 3600 % 24, s / 60 % 60, s % 60);
}

int cmd_uptime(struct cli *c)
{
	struct lodge_status dom0;
	struct lodge_list l;
	struct lodge_err err;
	unsigned i;

	if (c->argc) {
		struct lodge_status st;

		if (lodge_status(&c->lg, c->argv[0], &st, &err))
			return cli_fail(&err);
		printf("%-24s %5s %s\n", "Name", "ID", "Uptime");
		print_uptime(&st);
		return 0;
	}
	printf("%-24s %5s %s\n", "Name", "ID", "Uptime");
	lodge_host_status(&dom0);
	print_uptime(&dom0);
	if (lodge_list(&c->lg, &l, &err))
		return cli_fail(&err);
	for (i = 0; i < l.n; i++)
		print_uptime(&l.dom[i]);
	lodge_list_free(&l);
	return 0;
}

/* config-update NAME [FILE] [KEY=VALUE...]: a FILE is the word without
 * '=' (as xl's). */
int cmd_config_update(struct cli *c)
{
	const char *from = c->argc > 1 && !strchr(c->argv[1], '=') ? c->argv[1] : NULL;
	int first = from ? 2 : 1;
	struct lodge_err err;

	if (c->argc < 2)
		return cli_usage_error(c->cmd, "give a FILE or KEY=VALUE (memory=512)");
	if (lodge_config_update(&c->lg, c->argv[0], from, c->argv + first, (unsigned)(c->argc - first), &err))
		return cli_fail(&err);
	printf("%s: config updated; its next create reads it\n", c->argv[0]);
	return 0;
}

int cmd_rename(struct cli *c)
{
	char old[DOMAIN_NAME_MAX];
	struct lodge_err err;

	if (c->lg.hc.pool_etcd[0] && lodge_resolve(&c->lg, c->argv[0], old, &err) == 0 &&
	    cmd_pool_rename_check(c, old, c->argv[1]))
		return EXIT_FAILED;
	return lodge_rename(&c->lg, c->argv[0], c->argv[1], &err) ? cli_fail(&err) : 0;
}

/* The resolved config a running domain was started with, or the file's. */
int cmd_config(struct cli *c)
{
	static struct domain_config dc;
	struct lodge_err err;
	char *text, msg[1024];
	int rc = lodge_running_config_text(&c->lg, c->argv[0], &text, &err);

	if (rc == 0) {
		fputs(text, stdout);
		free(text);
		return 0;
	}
	if (rc != -ENOENT && rc != -EINVAL)
		return cli_fail(&err);
	if (lodge_config_find(&c->lg, c->argv[0], &dc, &err))
		return cli_fail(&err);
	if (domain_config_save("/dev/stdout", &dc, msg, sizeof(msg))) {
		log_err("%s", msg);
		return 1;
	}
	return 0;
}
