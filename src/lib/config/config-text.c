/* The text of a config file before libconfuse reads it: Xen's syntax
 * rewritten into libconfuse's, with the same line count, and notes of
 * the line each key and each list value sits on, because libconfuse
 * 3.3's cfg_opt_t carries no line and cfg->line in a callback is where
 * the lexer is (one token ahead), not where the key was. */
#include "config-keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- where things are: the pre-pass's notes ------------------------------ */

static void note_key(struct load_ctx *ctx, const char *name, size_t len, int line, bool append)
{
	struct key_site *s;
	unsigned i;

	if (ctx->nsites == MAX_SITES) {
		ctx->cur_site = -1;
		return;
	}
	s = &ctx->sites[ctx->nsites];
	snprintf(s->key, sizeof(s->key), "%.*s", (int)len, name);
	s->line = line;
	s->append = append;
	ctx->cur_site = (int)ctx->nsites++;
	for (i = 0; !append && i + 1 < ctx->nsites; i++)
		if (!ctx->sites[i].append && strcmp(ctx->sites[i].key, s->key) == 0) {
			cfg_fail(ctx, line, s->key, "set twice (first on line %d)", ctx->sites[i].line);
			break;
		}
}

static void note_value(struct load_ctx *ctx, int line)
{
	if (ctx->cur_site < 0 || ctx->nvalues == MAX_VALUES)
		return;
	ctx->values[ctx->nvalues].site = ctx->cur_site;
	ctx->values[ctx->nvalues].line = line;
	ctx->nvalues++;
}

/* The statement of key that libconfuse is reading when its lexer is at
 * line upto (or the last one, upto 0): the last site at or before it. */
int cfg_key_site(const struct load_ctx *ctx, const char *key, int upto)
{
	int i, found = -1;

	for (i = 0; i < (int)ctx->nsites; i++)
		if (strcmp(ctx->sites[i].key, key) == 0 &&
		    (found < 0 || upto <= 0 || ctx->sites[i].line <= upto))
			found = i;
	return found;
}

int cfg_key_line(const struct load_ctx *ctx, const char *key, int upto)
{
	int s = cfg_key_site(ctx, key, upto);

	return s < 0 ? 1 : ctx->sites[s].line;
}

/* Line of value index of a list: values count from its last plain "="
 * and go on through later "+=" statements, as libconfuse stores them. */
int cfg_value_line(const struct load_ctx *ctx, const char *key, unsigned index, int upto)
{
	int s = cfg_key_site(ctx, key, upto), start = s;
	unsigned v, n = 0;

	if (s < 0)
		return 1;
	while (start > 0 && ctx->sites[start].append) {   /* back to its "=" */
		int prev = cfg_key_site(ctx, key, ctx->sites[start].line - 1);

		if (prev < 0 || prev >= start)
			break;
		start = prev;
	}
	for (v = 0; v < ctx->nvalues; v++) {
		int vs = ctx->values[v].site;

		if (vs < start || vs > s || strcmp(ctx->sites[vs].key, key) != 0)
			continue;
		if (n++ == index)
			return ctx->values[v].line;
	}
	return ctx->sites[s].line;
}

/* ---- Xen syntax to libconfuse syntax -------------------------------------- */

static bool word_char(char c)
{
	return c && !strchr(" \t\r\n=+{}[](),;\"'#", c);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* [ ] become { }; 'single' becomes "double" (escaping " and \ inside, as
 * single quotes take text literally), and so does every unquoted word:
 * to libconfuse a quoted and an unquoted string are the same token, but
 * quoted it cannot start a // or / * comment nor take ${VAR} from the
 * environment ($ is escaped in every string: xl has no such thing).
 * Comments are dropped: #, and libconfuse's // and / * * / where a word
 * would start (inside a word, as in /boot//vmlinuz, they are part of it;
 * libconfuse 3.3 also counts the newline after a # comment twice), and
 * runs of blanks become one.  That also keeps every token
 * libconfuse's flex lexer sees short, but for strings, which it reads a
 * character at a time: its time grows with the square of a token's
 * length (a 1 MiB run of blanks: half a second).  Newlines are copied,
 * so every line keeps its number.  Returns a malloc'd string or NULL. */
char *cfg_xen_to_confuse(struct load_ctx *ctx, const char *in, size_t len)
{
	char *out = malloc(4 * len + 4), *o = out;    /* the word  $  becomes  "\$" */
	int line = 1, depth = 0;
	size_t i = 0, j, k;

	if (!out)
		return NULL;
	ctx->cur_site = -1;
	while (i < len) {
		char c = in[i], quote;

		if (c == '#' || (c == '/' && i + 1 < len && in[i + 1] == '/')) {
			while (i < len && in[i] != '\n')
				i++;
		} else if (c == '/' && i + 1 < len && in[i + 1] == '*') {
			for (k = (size_t)line, i += 2; i < len && !(in[i] == '*' && i + 1 < len && in[i + 1] == '/'); i++)
				if (in[i] == '\n')
					*o++ = '\n', line++;
			if (i >= len)
				cfg_fail(ctx, (int)k, "syntax", "a /* comment without its */");
			i += 2;
		} else if (c == ' ' || c == '\t') {
			while (i < len && (in[i] == ' ' || in[i] == '\t'))
				i++;
			*o++ = ' ';
		} else if (c == ';' && depth <= 0) {
			/* xl ends a statement with a newline or a ';' (key = value;) */
			*o++ = ' ';
			i++;
		} else if (c == '"' || c == '\'') {
			int opened = line;

			note_value(ctx, line);
			quote = c;
			*o++ = '"';
			for (i++; i < len && in[i] != quote;) {
				if (quote == '"' && in[i] == '\\' && i + 1 < len) {
					/* An escape as libconfuse reads it, but it takes
					 * a run of digits after a \ as one token: a fourth
					 * digit is written as \x3N, so the escape is octal
					 * \ooo and the digits after it are text, as in C. */
					*o++ = in[i++];
					k = 0;
					do {
						line += in[i] == '\n';
						*o++ = in[i++];
					} while (++k < 3 && i < len && is_digit(in[i - 1]) && is_digit(in[i]));
					if (i < len && is_digit(in[i - 1]) && is_digit(in[i]))
						o += sprintf(o, "\\x%02x", (unsigned)in[i++]);
					continue;
				}
				/* A \ that ends the file inside "..." is escaped too:
				 * alone, libconfuse's lexer echoes it to stdout. */
				if (in[i] == '$' || in[i] == '\\' || (quote == '\'' && in[i] == '"'))
					*o++ = '\\';
				line += in[i] == '\n';
				*o++ = in[i++];
			}
			if (i < len) {
				*o++ = '"';
				i++;
			} else {
				/* Where it opened: libconfuse would name the end of
				 * the file, and the key of whatever it swallowed. */
				cfg_fail(ctx, opened, ctx->cur_site >= 0 ? ctx->sites[ctx->cur_site].key : "syntax",
					 "the string opened with %c here is never closed", quote);
			}
		} else if (word_char(c)) {
			for (j = i; j < len && word_char(in[j]); j++)
				;
			for (k = j; k < len && (in[k] == ' ' || in[k] == '\t'); k++)
				;
			if (depth <= 0 && k < len && (in[k] == '=' || (in[k] == '+' && k + 1 < len && in[k + 1] == '=')))
				note_key(ctx, in + i, j - i, line, in[k] == '+');
			else
				note_value(ctx, line);
			*o++ = '"';
			for (; i < j; i++) {
				if (in[i] == '\\' || in[i] == '$')
					*o++ = '\\';
				*o++ = in[i];
			}
			*o++ = '"';
		} else {
			if (c == '[' || c == '{' || c == '(')
				depth++;
			else if (c == ']' || c == '}' || c == ')')
				depth--;
			*o++ = c == '[' ? '{' : c == ']' ? '}' : c;
			line += c == '\n';
			i++;
		}
	}
	*o = '\0';
	ctx->nlines = len && in[len - 1] == '\n' ? line - 1 : line;   /* the last line with text */
	return out;
}
