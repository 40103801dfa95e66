/* The lodge command's one way to read a command line: each command is
 * an entry of one table (main.c) with its options, operands and help;
 * cli.c parses with getopt_long from it, long and short options alike,
 * checks numbers strictly, answers --help and --version for every
 * command, and says what is wrong with a command line in one line. */
#ifndef LODGE_CLI_H
#define LODGE_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "exit-status.h"
#include "lodge.h"

enum cli_kind {
	CLI_FLAG,                      /* no value */
	CLI_TEXT,                      /* any word: a file, an address */
	CLI_NUMBER,                    /* a whole number in [min, max] */
	CLI_SECONDS,                   /* a decimal number of seconds in [min, max] */
	CLI_WORD,                      /* one of words */
};

struct cli_option {
	char letter;                   /* -c; also the key of its value in struct cli */
	const char *name;              /* --compress */
	enum cli_kind kind;
	const char *arg;               /* the value's name in the usage: "N", "FILE" */
	const char *help;
	double min, max;               /* CLI_NUMBER, CLI_SECONDS */
	const char *range_note;        /* after the range in a refusal: " percent of one CPU" */
	const char *words;             /* CLI_WORD: the words, space-separated */
};

struct cli;

#define CMD_NO_HOST        1u      /* runs without lodge.conf */
#define CMD_OPTIONS_FIRST  2u      /* options end at the first operand (which may start with '-') */

struct command {
	const char *name;
	const struct cli_option *opts; /* ends with { 0 } */
	const char *operands;          /* in the usage: "NAME FILE", "[NAME...]" */
	int min_operands, max_operands;  /* max -1: any number */
	const char *help;              /* one line */
	unsigned flags;
	int (*run)(struct cli *c);
};

struct cli {
	const struct command *cmd;
	struct lodge lg;               /* lodge.conf read, notices to stderr (unless CMD_NO_HOST) */
	int argc;                      /* the operands */
	char **argv;
	/* Each option given, by its letter. */
	bool set[128];
	const char *text[128];
	long num[128];
	double secs[128];
};

/* Parse argv (argv[0] the command's name) for cmd and run it, lodge.conf
 * read under root (NULL: /): its exit status. */
int cli_run(const struct command *cmd, int argc, char **argv, const char *root);
/* The command line is wrong: one line on stderr, what and the usage;
 * returns EXIT_USAGE. */
int cli_usage_error(const struct command *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The library said no: its message on stderr (lodge-hyp's as it wrote
 * it); returns EXIT_FAILED. */
int cli_fail(const struct lodge_err *err);
/* Its options and operands, "[-c] [-k] NAME FILE", into buf. */
void cli_synopsis(const struct command *cmd, char *buf, size_t len);
/* Help text fits a terminal of CLI_HELP_WIDTH columns (ssh's default). */
#define CLI_HELP_WIDTH 80
/* text word-wrapped from column col (where the cursor is) to
 * CLI_HELP_WIDTH, each later line indented to column indent; then a
 * newline. */
void cli_wrap(FILE *f, const char *text, int col, int indent);
/* The command's usage and options, as --help prints them. */
void cli_help(FILE *f, const struct command *cmd);
/* SIZE as xl writes it: digits and an optional unit, b k m g t (either
 * case; xl's too), as a whole number of MiB.  A bare number is MiB, as
 * lodge mem-set has always taken it (xl's bare number is KiB: a script
 * written for xl says its unit, 2048m).  0 or -EINVAL. */
int cli_parse_mib(const char *arg, unsigned long *mib);
/* The notice hook every command uses: warnings on stderr. */
void cli_notice(enum lodge_notice kind, const char *text, void *arg);

#endif
