/* lodge --complete INDEX WORD...: the candidates for word INDEX of a
 * command line being typed (WORD... is bash's COMP_WORDS, "lodge"
 * first), one a line, for share/bash-completion/lodge.  Everything comes
 * from the command table (main.c), so the completion never lists a
 * command or an option of its own: commands, each command's options, an
 * option's words, and for an operand what its name in the usage says:
 * DOMAIN the running domains, NAME the configs of the domains directory,
 * BRIDGE the bridges, NETWORK Lodge's networks (but for network-create's
 * new one), VDEV the disks of the domain named before it, COMMAND the
 * commands, words in lower case themselves (nmi|reset|power); "@file"
 * asks bash to add the file names (FILE).  An option's value is read the
 * same way from its name (install --network NETWORK). */
#include "agent.h"
#include "complete.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *cur;                /* the word being completed */

static void offer(const char *word)
{
	if (strncmp(word, cur, strlen(cur)) == 0)
		printf("%s\n", word);
}

static void offer_words(const char *words)
{
	char w[64];

	while (*words) {
		size_t n = strcspn(words, " ");

		snprintf(w, sizeof(w), "%.*s", (int)n, words);
		offer(w);
		words += n + (words[n] == ' ');
	}
}

static void offer_bridge(const char *name, int ports, bool up, void *arg)
{
	offer(name);
}

/* Every name with a NAME.cfg in the domains directory. */
static void offer_configs(const struct lodge *lg)
{
	DIR *d = opendir(lg->hc.domains_dir);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		char name[256];

		if (n > 4 && de->d_name[0] != '.' && strcmp(de->d_name + n - 4, ".cfg") == 0) {
			snprintf(name, sizeof(name), "%.*s", (int)(n - 4), de->d_name);
			offer(name);
		}
	}
	if (d)
		closedir(d);
}

/* What a word of the usage or an option's value name stands for:
 * FILE, BRIDGE, NETWORK; and for an operand (is_operand) COMMAND, DOMAIN,
 * NAME and VDEV (a disk of domain, the operand before it).  An option's
 * DOMAIN or NAME is something else (network-create --domain, a DNS one). */
static void offer_kind(const char *word, const struct command *cmds, size_t ncmds, const struct command *cmd,
		       const char *root, const char *domain, bool is_operand)
{
	struct lodge lg;
	struct lodge_err err;
	size_t k;
	int t;

	/* Words the usage spells out in lower case (trigger's nmi|reset|power). */
	if (is_operand && strspn(word, "abcdefghijklmnopqrstuvwxyz0123456789-|") == strlen(word)) {
		char w[64];
		const char *p = word;

		while (*p) {
			size_t n = strcspn(p, "|");

			snprintf(w, sizeof(w), "%.*s", (int)n, p);
			offer(w);
			p += n + (p[n] == '|');
		}
	}
	if (strstr(word, "COMMAND") && is_operand)
		for (k = 0; k < ncmds; k++)
			offer(cmds[k].name);
	if (strstr(word, "FILE"))
		printf("@file\n");
	if (strstr(word, "BRIDGE"))
		lodge_bridge_list(offer_bridge, NULL, &err);
	if (strstr(word, "NETWORK") && strcmp(cmd->name, "network-create") && lodge_open(&lg, root, &err) == 0) {
		static struct lodge_network nets[64];
		int n = lodge_network_list(&lg, nets, 64, &err);

		for (t = 0; t < n && t < 64; t++)
			offer(nets[t].name);
	}
	if (strstr(word, "VDEV") && is_operand && domain && lodge_open(&lg, root, &err) == 0) {
		static struct lodge_devices devs;
		unsigned d;

		if (lodge_devices(&lg, domain, &devs, &err) == 0)
			for (d = 0; d < devs.ndisks && d < DOMAIN_DISKS_MAX; d++)
				offer(devs.disk[d].vdev);
	}
	if ((strstr(word, "DOMAIN") || strstr(word, "NAME")) && is_operand && lodge_open(&lg, root, &err) == 0) {
		if (strstr(word, "NAME"))
			offer_configs(&lg);
		if (strstr(word, "DOMAIN")) {
			struct lodge_list l;
			unsigned d;

			if (lodge_list(&lg, &l, &err) == 0) {
				for (d = 0; d < l.n; d++)
					offer(l.dom[d].name);
				lodge_list_free(&l);
			}
		}
	}
}

/* The operand at index i of the usage's operands ("DOMAIN FILE",
 * "[DOMAIN...]", "DOMAIN|FILE"): what it may be; domain: the first
 * operand typed, if any. */
static void offer_operand(const struct command *cmds, size_t ncmds, const struct command *cmd, int i,
			  const char *root, const char *domain)
{
	const char *ops = cmd->operands;
	char word[64] = "";
	bool found = false;
	int t;

	/* Its word in the usage; one ending in "..." stands for the rest. */
	for (t = 0; *ops && !found; t++) {
		size_t n = strcspn(ops, " ");

		snprintf(word, sizeof(word), "%.*s", (int)n, ops);
		found = t == i || strstr(word, "...");
		ops += n + (ops[n] == ' ');
	}
	if (found)
		offer_kind(word, cmds, ncmds, cmd, root, domain, true);
}

static const struct cli_option *find_option(const struct command *cmd, const char *word)
{
	const struct cli_option *o;

	for (o = cmd->opts; o && o->letter; o++)
		if ((word[0] == '-' && word[1] == o->letter && !word[2]) ||
		    (strncmp(word, "--", 2) == 0 && strcmp(word + 2, o->name) == 0))
			return o;
	return NULL;
}

int complete_main(const struct command *cmds, size_t ncmds, int argc, char **argv)
{
	const char *root = getenv("LODGE_ROOT");
	const struct command *cmd = NULL;
	const struct cli_option *o, *wants = NULL;
	const char *first = NULL;          /* the first operand: a domain, for VDEV */
	int index, i, operand = 0;
	size_t k;

	if (argc < 1 || (index = atoi(argv[0])) < 1)
		return EXIT_USAGE;
	argv++;
	argc--;
	cur = index < argc ? argv[index] : "";
	for (i = 1; i < index && i < argc; i++) {
		const char *w = argv[i];

		if (!cmd && strcmp(w, "--root") == 0 && i + 1 < index) {
			root = argv[++i];
		} else if (!cmd && strncmp(w, "--root=", 7) == 0) {
			root = w + 7;
		} else if (!cmd && w[0] != '-') {
			for (k = 0; k < ncmds && !cmd; k++)
				if (strcmp(cmds[k].name, w) == 0)
					cmd = &cmds[k];
			for (k = 0; k < ncmds && !cmd; k++)   /* a prefix, as lodge takes it */
				if (strncmp(cmds[k].name, w, strlen(w)) == 0)
					cmd = &cmds[k];
			if (!cmd)
				return 0;
		} else if (cmd && wants) {
			wants = NULL;                     /* that option's value */
		} else if (cmd && w[0] == '-' && w[1]) {
			wants = (o = find_option(cmd, w)) && o->kind != CLI_FLAG ? o : NULL;
		} else if (cmd) {
			if (!operand++)
				first = w;
		}
	}
	if (!cmd && i > 1 && strcmp(argv[i - 1], "--root") == 0) {
		printf("@file\n");                        /* --root DIR */
		return 0;
	}
	if (!cmd) {
		if (cur[0] == '-') {             /* lodge's own, and the dashboard's (cmds[0]) */
			char w[64];

			offer("--root");
			offer("--help");
			offer("--version");
			for (o = cmds[0].opts; o && o->letter; o++) {
				snprintf(w, sizeof(w), "--%s", o->name);
				offer(w);
			}
			return 0;
		}
		for (k = 0; k < ncmds; k++)
			offer(cmds[k].name);
		return 0;
	}
	if (wants) {
		if (wants->kind == CLI_WORD)
			offer_words(wants->words);
		else if (wants->kind == CLI_TEXT)
			offer_kind(wants->arg, cmds, ncmds, cmd, root, NULL, false);
		return 0;
	}
	if (cur[0] == '-') {
		char w[64];

		for (o = cmd->opts; o && o->letter; o++) {
			snprintf(w, sizeof(w), "--%s", o->name);
			offer(w);
		}
		offer("--help");
		return 0;
	}
	offer_operand(cmds, ncmds, cmd, operand, root, first);
	return 0;
}
