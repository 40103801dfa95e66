/* Domain and host configuration files, read with libconfuse.
 *
 * A Xen user writes  disk = [ 'file:/img,vda,w' ]  while libconfuse wants
 * disk = { "file:/img,vda,w" }, so the text is rewritten first, noting
 * where each key and value sits (config-text.c).  Each value gets its
 * key's one check (cfg_check_value, config-keys.c: the table of keys) in
 * libconfuse's validate callback, so the first error in the file is the
 * one reported, and a domain's value is stored there, in its draft; the
 * rules of two keys run after the parse (cfg_domain_finish, config-domain.c,
 * which a create form's values reach without any text). */
#include "config-keys.h"
#include "log.h"
#include "paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root_prefix[CFG_PATH_MAX];

void cfg_set_root(const char *root)
{
	size_t len;

	snprintf(root_prefix, sizeof(root_prefix), "%s", root ? root : "");
	len = strlen(root_prefix);
	while (len > 0 && root_prefix[len - 1] == '/')   /* "/" and "" mean no prefix */
		root_prefix[--len] = '\0';
}

const char *cfg_root(void)
{
	return root_prefix;
}

/* libconfuse's callbacks get only the cfg_t, so the file being read is
 * reached through this pointer (one parse at a time per thread). */
static __thread struct load_ctx *current_ctx;

/* The message about the file as a whole ("FILE: what"), escaped as every
 * message of this file is: names and values come from the file. */
static void file_fail(struct load_ctx *ctx, const char *fmt, ...)
{
	char what[1024], msg[CFG_PATH_MAX + sizeof(what) + 8];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "%s: %s", ctx->file, what);
	text_escape(ctx->err, ctx->errlen, msg);
	ctx->err_line = -1;
}

/* Keep the first error by position in the file: callbacks run in file
 * order, but the pre-pass finds repeated keys before libconfuse starts. */
void cfg_fail(struct load_ctx *ctx, int line, const char *key, const char *fmt, ...)
{
	char what[1024], msg[CFG_PATH_MAX + MAX_KEY_LEN + 32];
	size_t n;
	va_list ap;

	if (ctx->err_line && line >= ctx->err_line)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "%s:%d: %s: ", ctx->file, line, key);
	text_escape(ctx->err, ctx->errlen, msg);
	n = strlen(ctx->err);
	text_escape(ctx->err + n, ctx->errlen - n, what);
	ctx->err_what = ctx->err + n;
	snprintf(ctx->err_key, sizeof(ctx->err_key), "%s", key);
	ctx->err_line = line;
	ctx->err_quotes_nothing = false;
}

/* ---- libconfuse's own messages, in our shape ---------------------------- */

static void confuse_error(cfg_t *cfg, const char *fmt, va_list ap)
{
	struct load_ctx *ctx = current_ctx;
	char msg[512], key[MAX_KEY_LEN] = "", *q;
	const char *what = msg, *xl = NULL;
	int line = cfg->line > ctx->nlines ? ctx->nlines : cfg->line, s;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* Messages about an option name it as "... option 'X'". */
	if ((q = strstr(msg, "option '"))) {
		snprintf(key, sizeof(key), "%s", q + 8);
		if (strchr(key, '\''))
			*strchr(key, '\'') = '\0';
		line = cfg_key_line(ctx, key, line);
		if (strncmp(msg, "no such option", 14) == 0 && cfg_xl_key(key))
			xl = cfg_xl_key(key);
		else if (strncmp(msg, "no such option", 14) == 0)
			what = "unknown key (see lodge.conf(5))";
		else if (strncmp(msg, "invalid integer", 15) == 0)
			what = "not a number";
		else if (strncmp(msg, "attempt to append", 17) == 0)
			what = "'+=' works on lists only";
		else if (q > msg + 5 && strncmp(q - 5, " for ", 5) == 0)
			q[-5] = '\0';     /* "invalid X value for option 'k'" */
	} else {
		/* A syntax error: name the statement it is in, if any. */
		for (s = (int)ctx->nsites - 1; s >= 0 && ctx->sites[s].line > line; s--)
			;
		snprintf(key, sizeof(key), "%s", s >= 0 ? ctx->sites[s].key : "syntax");
	}
	if (xl) {
		/* Named from the table: the message may stand even before any
		 * key of Lodge's (see cfg_parse_text). */
		cfg_fail(ctx, line, xl, "a Xen key Lodge does not implement (see lodge.conf(5))");
		if (ctx->err_line == line)
			ctx->err_quotes_nothing = true;
		return;
	}
	cfg_fail(ctx, line, key, "%s", what);
}

/* ---- reading a file -------------------------------------------------------- */

/* Absolute directory of path, so relative paths in it resolve the same
 * wherever the agent runs and a saved config reads back identically. */
static int config_dir(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');
	char cwd[CFG_PATH_MAX];

	if (path[0] == '/')
		return path_printf(dir, len, "%.*s", slash == path ? 1 : (int)(slash - path), path);
	if (!getcwd(cwd, sizeof(cwd)))
		return -errno;
	if (slash)
		return path_printf(dir, len, "%s/%.*s", cwd, (int)(slash - path), path);
	return path_printf(dir, len, "%s", cwd);
}

int cfg_resolve(const struct load_ctx *ctx, const char *path, char *out, size_t len)
{
	if (path[0] == '/' || path[0] == '\0')
		return path_printf(out, len, "%s", path);
	return path_printf(out, len, "%s/%s", strcmp(ctx->dir, "/") ? ctx->dir : "", path);
}

int cfg_ctx_init(struct load_ctx *ctx, const char *file, char *err, size_t errlen)
{
	int rc;

	memset(ctx, 0, sizeof(*ctx));
	ctx->file = file;
	ctx->err = err;
	ctx->errlen = errlen;
	err[0] = '\0';
	rc = config_dir(file, ctx->dir, sizeof(ctx->dir));
	if (rc)
		file_fail(ctx, "%s", strerror(-rc));
	return rc;
}

/* One per key: check every value not checked yet (libconfuse calls this
 * after each element of a list too), each by cfg_check_value, the one
 * check a value of its key gets, which stores a domain's. */
static int validate_key(cfg_t *cfg, cfg_opt_t *opt)
{
	struct load_ctx *ctx = current_ctx;
	const struct cfg_key *k = cfg_find_key(ctx->keys, opt->name);
	struct cfg_value v = { 0 };
	unsigned n = cfg_opt_size(opt), *done;
	char why[1024];
	int line;

	if (!k)
		return 0;
	done = &ctx->nvalues_of[k - ctx->keys];
	ctx->set[k - ctx->keys] = true;
	for (; *done < n; ++*done) {
		v.index = *done;
		v.s = k->type == KT_STR || k->type == KT_LIST ? cfg_opt_getnstr(opt, v.index) : NULL;
		v.n = k->type == KT_INT ? cfg_opt_getnint(opt, v.index)
					: k->type == KT_BOOL ? cfg_opt_getnbool(opt, v.index) == cfg_true : 0;
		why[0] = '\0';
		if (cfg_check_value(ctx, k, &v, why, sizeof(why)) == 0)
			continue;
		line = k->type == KT_LIST ? cfg_value_line(ctx, opt->name, v.index, cfg->line)
					  : cfg_key_line(ctx, opt->name, cfg->line);
		cfg_fail(ctx, line, opt->name, "%s", why);
		return -1;
	}
	return 0;
}

/* The whole file, if it is at most CFG_FILE_MAX bytes: a regular file
 * is measured before it is read, anything else (a pipe, /dev/stdin,
 * /dev/zero) is read up to one byte more.  Returns a malloc'd buffer
 * (not terminated) or NULL with ctx's error set. */
static char *read_file(struct load_ctx *ctx, size_t *len)
{
	/* O_NONBLOCK: opening a FIFO does not wait for a writer. */
	int fd = open(ctx->file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	char *text = NULL;
	struct stat st;
	ssize_t n = 1;

	*len = 0;
	if (fd < 0) {
		file_fail(ctx, "%s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > CFG_FILE_MAX) {
		close(fd);
		file_fail(ctx, "larger than %d MiB; not a Lodge config", CFG_FILE_MAX >> 20);
		return NULL;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);   /* a pipe's writer may be slow */
	text = malloc(CFG_FILE_MAX + 1);
	while (text && *len <= CFG_FILE_MAX && n > 0) {
		n = read(fd, text + *len, CFG_FILE_MAX + 1 - *len);
		if (n > 0)
			*len += (size_t)n;
		else if (n < 0 && errno == EINTR)
			n = 1;
	}
	close(fd);
	if (!text)
		file_fail(ctx, "out of memory");
	else if (n < 0)
		file_fail(ctx, "%s", strerror(errno));
	else if (*len > CFG_FILE_MAX)
		file_fail(ctx, "larger than %d MiB; not a Lodge config", CFG_FILE_MAX >> 20);
	else
		return text;
	free(text);
	return NULL;
}

/* Whether a key of the table was set before or on line: until then the
 * file is not known to be a config, and a message quoting it could show
 * a secret (lodge check on a key file) or a line of a binary. */
static bool known_key_before(const struct load_ctx *ctx, int line)
{
	unsigned i;

	for (i = 0; i < ctx->nsites; i++)
		if (ctx->sites[i].line <= line && cfg_find_key(ctx->keys, ctx->sites[i].key))
			return true;
	return false;
}

/* Parse the text of a file (len bytes) with the keys table; returns the
 * cfg_t (to free) or NULL with ctx's error set. */
cfg_t *cfg_parse_text(struct load_ctx *ctx, const struct cfg_key *keys, const char *text, size_t len)
{
	cfg_opt_t opts[MAX_KEYS + 1];
	char *confuse_text, *nul, file[CFG_PATH_MAX];
	size_t i;
	unsigned n;
	cfg_t *cfg;
	int rc, line = 1;

	ctx->keys = keys;
	if (len > CFG_FILE_MAX) {
		file_fail(ctx, "larger than %d MiB; not a Lodge config", CFG_FILE_MAX >> 20);
		return NULL;
	}
	confuse_text = cfg_xen_to_confuse(ctx, text, len);
	if ((nul = memchr(text, '\0', len))) {   /* libconfuse would stop there */
		for (i = 0; text + i < nul; i++)
			line += text[i] == '\n';
		cfg_fail(ctx, line, "syntax", "a NUL byte: this is not a text file");
	}
	if (!confuse_text) {
		file_fail(ctx, "out of memory");
		return NULL;
	}
	n = cfg_build_opts(keys, opts);
	cfg = cfg_init(opts, CFGF_NONE);
	if (!cfg) {
		free(confuse_text);
		file_fail(ctx, "out of memory");
		return NULL;
	}
	cfg_set_error_function(cfg, confuse_error);
	for (n = 0; keys[n].name; n++)
		cfg_set_validate_func(cfg, keys[n].name, validate_key);
	current_ctx = ctx;
	rc = cfg_parse_buf(cfg, confuse_text);
	current_ctx = NULL;
	free(confuse_text);
	if (rc != CFG_SUCCESS && !ctx->err_line)
		cfg_fail(ctx, 1, "syntax", "cannot parse");
	if (ctx->err_line > 0 && !known_key_before(ctx, ctx->err_line) && !ctx->err_quotes_nothing) {
		text_escape(file, sizeof(file), ctx->file);
		snprintf(ctx->err, ctx->errlen, "%s:%d: not a Lodge config (no known key = value statement "
			 "before this line; see lodge.conf(5))", file, ctx->err_line);
	}
	if (ctx->err_line) {       /* includes a key set twice, found by the pre-pass */
		cfg_free(cfg);
		return NULL;
	}
	return cfg;
}

cfg_t *cfg_parse_file(struct load_ctx *ctx, const struct cfg_key *keys)
{
	size_t len;
	char *text = read_file(ctx, &len);
	cfg_t *cfg;

	if (!text)
		return NULL;
	cfg = cfg_parse_text(ctx, keys, text, len);
	free(text);
	return cfg;
}

/* ---- keys left out, and a domain ------------------------------------------ */

int cfg_check_unset(struct load_ctx *ctx, const char *only)
{
	const struct cfg_key *k;
	struct cfg_value v;
	char why[1024];
	int rc;

	for (k = ctx->keys; k->name; k++) {
		if ((only && strcmp(k->name, only)) || ctx->set[k - ctx->keys] || cfg_key_site(ctx, k->name, 0) >= 0)
			continue;
		if (k->required && !(k->unless && (ctx->set[cfg_find_key(ctx->keys, k->unless) - ctx->keys] ||
						   cfg_key_site(ctx, k->unless, 0) >= 0))) {
			cfg_fail(ctx, 1, k->name, "missing: %s", k->required);
			return -EINVAL;
		}
		if (k->required)
			continue;
		if (k->type == KT_LIST || (k->type != KT_INT && !k->def))
			continue;
		v = (struct cfg_value){ .s = k->def, .n = k->type == KT_INT ? k->idef : k->def && !strcmp(k->def, "true") };
		if ((rc = cfg_check_value(ctx, k, &v, why, sizeof(why)))) {
			cfg_fail(ctx, 1, k->name, "%s", why);
			return rc;
		}
	}
	return 0;
}

cfg_t *cfg_load_file(struct load_ctx *ctx, const char *file, const struct cfg_key *keys, char *err, size_t errlen)
{
	cfg_t *cfg;

	if (cfg_ctx_init(ctx, file, err, errlen) || !(cfg = cfg_parse_file(ctx, keys)))
		return NULL;
	if (cfg_check_unset(ctx, NULL)) {
		cfg_free(cfg);
		return NULL;
	}
	return cfg;
}

/* Read a domain from text (a file's, or NULL: read ctx->file): each value
 * checked and stored as libconfuse reads it, then the rules of two keys. */
static int load_domain(struct load_ctx *ctx, const char *text, size_t len, const struct host_config *hc,
		       bool check_host, struct domain_config *dc)
{
	struct domain_draft *draft = calloc(1, sizeof(*draft));
	cfg_t *cfg;
	int rc = -EINVAL;

	memset(dc, 0, sizeof(*dc));
	if (!draft) {
		snprintf(ctx->err, ctx->errlen, "out of memory");
		return -ENOMEM;
	}
	ctx->hc = hc;
	ctx->check_host = check_host;
	ctx->draft = draft;
	snprintf(draft->dc.file, sizeof(draft->dc.file), "%s", ctx->file);
	cfg = text ? cfg_parse_text(ctx, domain_keys, text, len) : cfg_parse_file(ctx, domain_keys);
	if (cfg) {
		cfg_free(cfg);                  /* every value is in the draft */
		if ((rc = cfg_domain_finish(ctx)) == 0)
			*dc = draft->dc;
	}
	ctx->draft = NULL;
	free(draft);
	return rc;
}

int domain_config_load(const char *path, const struct host_config *hc, bool check_host,
		       struct domain_config *dc, char *err, size_t errlen)
{
	struct load_ctx ctx;
	int rc;

	if ((rc = cfg_ctx_init(&ctx, path, err, errlen)))
		return rc;
	return load_domain(&ctx, NULL, 0, hc, check_host, dc);
}

int domain_config_load_text(const char *label, const char *text, size_t len, const struct host_config *hc,
			    bool check_host, struct domain_config *dc, char *err, size_t errlen)
{
	struct load_ctx ctx;
	int rc;

	if ((rc = cfg_ctx_init(&ctx, label, err, errlen)))
		return rc;
	return load_domain(&ctx, text, len, hc, check_host, dc);
}

/* The text of the file with the overrides: each statement of an
 * overridden key blanked (a key set twice is refused in a file; a
 * statement runs from its key's line to the next key's, as a list may
 * take several lines), and the overrides after it, so the file's
 * messages keep their line numbers; or (in_place) each override where
 * the key's first statement was and its other lines gone, to be written
 * back.  sites: the file's key sites from the pre-pass.  malloc'd, *len. */
static char *splice_overrides(const char *text, size_t len, const struct load_ctx *sites, char *const *overrides,
		    unsigned n, bool in_place, size_t *out_len)
{
	size_t cap = len + 2, i, j = 0;
	int line = 1, file_lines = 1;
	unsigned o, k;
	char *out, *drop, *put;

	for (o = 0; o < n; o++)
		cap += strlen(overrides[o]) + 1;
	for (i = 0; i < len; i++)
		file_lines += text[i] == '\n';
	out = malloc(cap);
	drop = calloc((size_t)file_lines + 2, 1);          /* per line: its statement is replaced */
	put = calloc(n ? n : 1, 1);                       /* per override: written in place */
	if (!out || !drop || !put) {
		free(out);
		free(drop);
		free(put);
		return NULL;
	}
	for (o = 0; o < n; o++) {
		size_t klen = strcspn(overrides[o], " =");

		for (k = 0; k < sites->nsites; k++) {
			int start = sites->sites[k].line, end = file_lines + 1, l;

			if (strlen(sites->sites[k].key) != klen || strncmp(sites->sites[k].key, overrides[o], klen))
				continue;
			for (i = 0; i < sites->nsites; i++)
				if (sites->sites[i].line > start && sites->sites[i].line < end)
					end = sites->sites[i].line;
			for (l = start; l < end && l <= file_lines; l++)
				drop[l] = drop[l] ? drop[l] : 1;
			/* in place: the override on the first statement's first line */
			if (in_place && !put[o] && start <= file_lines) {
				drop[start] = (char)(2 + o);
				put[o] = 1;
			}
		}
	}
	for (i = 0; i < len; i++) {
		bool line_end = text[i] == '\n';

		if (drop[line] >= 2 && (i == 0 || text[i - 1] == '\n')) {
			o = (unsigned)drop[line] - 2;
			memcpy(out + j, overrides[o], strlen(overrides[o]));
			j += strlen(overrides[o]);
		}
		if (!drop[line])
			out[j++] = text[i];
		else if (line_end && (!in_place || drop[line] >= 2))
			out[j++] = '\n';              /* blanked: the line stays */
		else if (!line_end && !in_place)
			out[j++] = ' ';
		line += line_end;
	}
	if (j && out[j - 1] != '\n')
		out[j++] = '\n';
	for (o = 0; o < n; o++) {
		if (put[o])
			continue;
		memcpy(out + j, overrides[o], strlen(overrides[o]));
		j += strlen(overrides[o]);
		out[j++] = '\n';
	}
	free(drop);
	free(put);
	*out_len = j;
	return out;
}

/* xl create FILE KEY=VALUE...: each override a statement of the config's
 * own syntax replacing the file's (splice), read as the file is; a
 * message about an override's line names the override. */
int domain_config_load_overrides(const char *path, char *const *overrides, unsigned n,
				 const struct host_config *hc, bool check_host, struct domain_config *dc,
				 char **text_out, size_t *len_out, char *err, size_t errlen)
{
	static struct load_ctx ctx;
	size_t len, all_len, i;
	char *text, *conf, *all;
	int rc, file_lines = 1, first;
	unsigned o;

	if ((rc = cfg_ctx_init(&ctx, path, err, errlen)))
		return rc;
	for (o = 0; o < n; o++) {
		const char *eq = strchr(overrides[o], '=');
		size_t klen = eq ? (size_t)(eq - overrides[o]) : 0;

		while (klen && overrides[o][klen - 1] == ' ')
			klen--;
		if (!eq || !klen || strchr(overrides[o], '\n') ||
		    strspn(overrides[o], "abcdefghijklmnopqrstuvwxyz0123456789_") != klen) {
			snprintf(err, errlen, "'%s': an override is KEY=VALUE on one line (memory=512, name=\"web2\")",
				 overrides[o]);
			return -EINVAL;
		}
	}
	if (!(text = read_file(&ctx, &len)))
		return -EINVAL;
	/* The file's key sites, from the pre-pass alone. */
	if (!(conf = cfg_xen_to_confuse(&ctx, text, len))) {
		free(text);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	free(conf);
	/* A statement is replaced by its lines: one sharing a line with
	 * another key's cannot be, without losing that one. */
	for (o = 0; o < n; o++) {
		size_t klen = strcspn(overrides[o], " =");
		unsigned k, j;

		for (k = 0; k < ctx.nsites; k++) {
			if (strlen(ctx.sites[k].key) != klen || strncmp(ctx.sites[k].key, overrides[o], klen))
				continue;
			for (j = 0; j < ctx.nsites; j++)
				if (j != k && ctx.sites[j].line == ctx.sites[k].line) {
					snprintf(err, errlen, "override '%s': %s:%d has %s and %s on one line; "
						 "put them on lines of their own first", overrides[o], path,
						 ctx.sites[k].line, ctx.sites[k].key, ctx.sites[j].key);
					free(text);
					return -EINVAL;
				}
		}
	}
	for (i = 0; i < len; i++)
		file_lines += text[i] == '\n';
	if (!(all = splice_overrides(text, len, &ctx, overrides, n, false, &all_len))) {
		free(text);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if ((rc = cfg_ctx_init(&ctx, path, err, errlen)) == 0)
		rc = load_domain(&ctx, all, all_len, hc, check_host, dc);
	free(all);
	/* A message about an override's line names the override. */
	first = len && text[len - 1] == '\n' ? file_lines : file_lines + 1;   /* the first override's line */
	if (rc && ctx.err_line >= first && ctx.err_line - first < (int)n && ctx.err_what) {
		char what[2048];

		snprintf(what, sizeof(what), "%s", ctx.err_what);
		snprintf(err, errlen, "override '%s': %s", overrides[ctx.err_line - first], what);
	}
	/* To be written back: in place, and read again as it will be. */
	if (rc == 0 && text_out) {
		static struct domain_config again;

		cfg_ctx_init(&ctx, path, err, errlen);
		conf = cfg_xen_to_confuse(&ctx, text, len);
		free(conf);
		if (!(all = splice_overrides(text, len, &ctx, overrides, n, true, &all_len))) {
			rc = -ENOMEM;
			snprintf(err, errlen, "out of memory");
		} else if ((rc = cfg_ctx_init(&ctx, path, err, errlen)) == 0 &&
			   (rc = load_domain(&ctx, all, all_len, hc, check_host, &again)) == 0) {
			*text_out = all;
			*len_out = all_len;
			all = NULL;
		}
		free(all);
	}
	free(text);
	return rc;
}

void domain_key_hint(const char *key, char *out, size_t len)
{
	const struct cfg_key *k = cfg_find_key(domain_keys, key);

	if (k)
		cfg_key_describe(k, out, len);
	else
		snprintf(out, len, "%s", "");
}
