/* Reading a command line from the command table (cli.h). */
#include "cli.h"
#include "log.h"
#include "version.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPTS 16

/* Every command's own, besides the table's. */
#define OPT_VERSION 1

void cli_synopsis(const struct command *cmd, char *buf, size_t len)
{
	const struct cli_option *o;
	size_t n = 0;
	int r;

	buf[0] = '\0';
	for (o = cmd->opts; o && o->letter && n + 1 < len; o++) {
		r = o->kind == CLI_FLAG ? snprintf(buf + n, len - n, "%s[-%c]", n ? " " : "", o->letter)
					: snprintf(buf + n, len - n, "%s[-%c %s]", n ? " " : "", o->letter, o->arg);
		n = r > 0 && n + (size_t)r < len ? n + (size_t)r : len - 1;
	}
	if (cmd->operands[0] && n + 1 < len)
		snprintf(buf + n, len - n, "%s%s", n ? " " : "", cmd->operands);
}

void cli_wrap(FILE *f, const char *text, int col, int indent)
{
	const char *w = text + strspn(text, " ");
	bool first = true;

	while (*w) {
		int len = (int)strcspn(w, " ");

		if (!first && col + 1 + len > CLI_HELP_WIDTH) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", len, w);
		col += len;
		w += len;
		w += strspn(w, " ");
		first = false;
	}
	fputc('\n', f);
}

#define HELP_OPT_INDENT 29         /* where each option's help begins */

void cli_help(FILE *f, const struct command *cmd)
{
	const struct cli_option *o;
	char line[512], opt[64];
	int col;

	cli_synopsis(cmd, line, sizeof(line));
	col = fprintf(f, "usage: lodge %s", cmd->name);
	if (line[0]) {
		fputc(' ', f);
		cli_wrap(f, line, col + 1, 8);
	} else {
		fputc('\n', f);
	}
	cli_wrap(f, cmd->help, 0, 0);
	fprintf(f, "\noptions:\n");
	for (o = cmd->opts; o && o->letter; o++) {
		snprintf(opt, sizeof(opt), "-%c, --%s%s%s", o->letter, o->name, o->kind == CLI_FLAG ? "" : " ",
			 o->kind == CLI_FLAG ? "" : o->arg);
		col = fprintf(f, "  %-26s ", opt);
		if (col > HELP_OPT_INDENT) {
			fprintf(f, "\n%*s", HELP_OPT_INDENT, "");
			col = HELP_OPT_INDENT;
		}
		cli_wrap(f, o->help, col, HELP_OPT_INDENT);
	}
	fprintf(f, "  %-26s %s\n", "-h, --help", "print this help and exit");
	fprintf(f, "  %-26s %s\n", "    --version", "print Lodge's version and exit");
}

int cli_usage_error(const struct command *cmd, const char *fmt, ...)
{
	char msg[512], usage[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cli_synopsis(cmd, usage, sizeof(usage));
	log_err("%s; usage: lodge %s%s%s", msg, cmd->name, usage[0] ? " " : "", usage);
	return EXIT_USAGE;
}

/* A value is wrong: one line naming it as it was typed, no usage. */
static int value_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int value_error(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_err("%s", msg);
	return EXIT_USAGE;
}

/* Lines another program wrote (lodge-hyp's: prefixed and escaped by it),
 * each ended as log.c ends ours (\r\n only on a terminal in raw mode). */
static void print_lines(const char *text)
{
	while (*text) {
		size_t n = strcspn(text, "\n");

		fprintf(stderr, "%.*s%s", (int)n, text, log_eol());
		text += n + (text[n] == '\n');
	}
}

int cli_fail(const struct lodge_err *err)
{
	if (err->from_hyp)
		print_lines(err->msg);
	else if (err->msg[0])
		log_err("%s", err->msg);
	return EXIT_FAILED;
}

void cli_notice(enum lodge_notice kind, const char *text, void *arg)
{
	(void)arg;
	if (kind == LODGE_NOTICE_HYP)
		print_lines(text);
	else
		log_warn("%s", text);
}

/* Digits with an optional sign, nothing else, in range: 0 or an exit status. */
static int parse_number(const char *opt, const struct cli_option *o, const char *text, long *out)
{
	const char *digits = text + (text[0] == '-' || text[0] == '+');
	char *end;

	errno = 0;
	*out = strtol(text, &end, 10);
	if (!*digits || strspn(digits, "0123456789") != strlen(digits) || errno || *end)
		return value_error("%s '%s' is not a whole number", opt, text);
	if (*out < o->min || *out > o->max)
		return value_error("%s %ld is out of range (%ld to %ld%s)", opt, *out, (long)o->min, (long)o->max,
				   o->range_note ? o->range_note : "");
	return 0;
}

/* Digits with at most one '.', in range. */
static int parse_seconds(const char *opt, const struct cli_option *o, const char *text, double *out)
{
	const char *dot = strchr(text, '.');
	size_t len = strlen(text);
	char *end;

	if (!len || strspn(text, "0123456789.") != len || (dot && strchr(dot + 1, '.')) || (dot && len == 1))
		return value_error("%s '%s' is not a number of seconds", opt, text);
	*out = strtod(text, &end);
	if (*end || *out < o->min || *out > o->max)
		return value_error("%s %s is out of range (%g to %g seconds)", opt, text, o->min, o->max);
	return 0;
}

static int parse_word(const char *opt, const struct cli_option *o, const char *text)
{
	const char *w = o->words;
	size_t len = strlen(text);

	while (*w) {
		size_t n = strcspn(w, " ");

		if (n == len && strncmp(w, text, n) == 0)
			return 0;
		w += n + (w[n] == ' ');
	}
	return value_error("%s '%s' is not one of: %s", opt, text, o->words);
}

static const struct cli_option *find_letter(const struct command *cmd, int letter)
{
	const struct cli_option *o;

	for (o = cmd->opts; o && o->letter; o++)
		if (o->letter == letter)
			return o;
	return NULL;
}

/* getopt_long's tables from the command's. */
static void build(const struct command *cmd, char *shorts, size_t slen, struct option *longs)
{
	const struct cli_option *o;
	size_t n = 0, k = 0;

	if (cmd->flags & CMD_OPTIONS_FIRST)
		shorts[n++] = '+';      /* else GNU order: options anywhere */
	shorts[n++] = ':';              /* a missing value is ':', not '?' */
	for (o = cmd->opts; o && o->letter && n + 3 < slen && k < MAX_OPTS; o++) {
		shorts[n++] = o->letter;
		if (o->kind != CLI_FLAG)
			shorts[n++] = ':';
		longs[k++] = (struct option){ o->name, o->kind == CLI_FLAG ? no_argument : required_argument, NULL,
					      o->letter };
	}
	shorts[n++] = 'h';
	shorts[n] = '\0';
	longs[k++] = (struct option){ "help", no_argument, NULL, 'h' };
	longs[k++] = (struct option){ "version", no_argument, NULL, OPT_VERSION };
	longs[k] = (struct option){ 0 };
}

/* Options into c; 0, or an exit status (-1: --help or --version done). */
static int parse(const struct command *cmd, int argc, char **argv, struct cli *c)
{
	struct option longs[MAX_OPTS + 3];
	char shorts[3 * MAX_OPTS + 8], opt[64];
	int ch, rc, longindex;

	build(cmd, shorts, sizeof(shorts), longs);
	optind = 0;                    /* a fresh start for glibc's getopt */
	opterr = 0;
	for (;;) {
		const struct cli_option *o;

		longindex = -1;
		if ((ch = getopt_long(argc, argv, shorts, longs, &longindex)) == -1)
			break;
		if (ch == 'h') {
			cli_help(stdout, cmd);
			return -1;
		}
		if (ch == OPT_VERSION) {
			printf("lodge %s\n", LODGE_VERSION);
			return -1;
		}
		if (ch == '?' || ch == ':') {
			const char *given = argv[optind - 1];
			bool as_long = strncmp(given, "--", 2) == 0;

			o = find_letter(cmd, optopt);
			if (ch == ':' && o && as_long)
				return cli_usage_error(cmd, "--%s needs a value (%s)", o->name, o->arg);
			if (ch == ':' && o)
				return cli_usage_error(cmd, "-%c needs a value (%s)", o->letter, o->arg);
			if (o && as_long)
				return cli_usage_error(cmd, "--%s takes no value", o->name);
			if (optopt && !as_long)
				return cli_usage_error(cmd, "unknown option '-%c'", optopt);
			return cli_usage_error(cmd, "unknown option '%s'", given);
		}
		if (!(o = find_letter(cmd, ch)))
			return cli_usage_error(cmd, "unknown option");
		if (longindex >= 0)
			snprintf(opt, sizeof(opt), "--%s", o->name);
		else
			snprintf(opt, sizeof(opt), "-%c", o->letter);
		c->set[(unsigned char)ch] = true;
		c->text[(unsigned char)ch] = optarg;
		if ((o->kind == CLI_NUMBER && (rc = parse_number(opt, o, optarg, &c->num[(unsigned char)ch]))) ||
		    (o->kind == CLI_SECONDS && (rc = parse_seconds(opt, o, optarg, &c->secs[(unsigned char)ch]))) ||
		    (o->kind == CLI_WORD && (rc = parse_word(opt, o, optarg))))
			return rc;
	}
	c->argc = argc - optind;
	c->argv = argv + optind;
	if (c->argc < cmd->min_operands || (cmd->max_operands >= 0 && c->argc > cmd->max_operands)) {
		if (c->argc > cmd->max_operands && cmd->max_operands >= 0)
			return cli_usage_error(cmd, "too many arguments ('%s')", c->argv[cmd->max_operands]);
		return cli_usage_error(cmd, "%s needs %s", cmd->name, cmd->operands);
	}
	return 0;
}

int cli_run(const struct command *cmd, int argc, char **argv, const char *root)
{
	static struct cli c;
	struct lodge_err err;
	int rc;

	memset(&c, 0, sizeof(c));
	c.cmd = cmd;
	if ((rc = parse(cmd, argc, argv, &c)))
		return rc < 0 ? EXIT_OK : rc;
	if (!(cmd->flags & CMD_NO_HOST)) {
		if (lodge_open(&c.lg, root, &err))
			return cli_fail(&err);
		lodge_on_notice(&c.lg, cli_notice, NULL);
	}
	return cmd->run(&c);
}

int cli_parse_mib(const char *arg, unsigned long *mib)
{
	return lodge_parse_mib(arg, mib);
}
