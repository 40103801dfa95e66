/* Private to the config folder: the key tables that drive both
 * libconfuse's options and the checks, and the state of one read (a
 * file's through libconfuse, or a form's key by key: config-domain.c). */
#ifndef LODGE_CONFIG_KEYS_H
#define LODGE_CONFIG_KEYS_H

#include "config.h"

#include <confuse.h>
#include <stddef.h>
#include <stdio.h>

#define MAX_KEYS     32      /* per table */
#define MAX_KEY_LEN  32
#define MAX_SITES    256     /* key statements noted per file */
#define MAX_VALUES   512     /* values noted per file */
#define CFG_FILE_MAX (1 << 20)   /* bytes: a bigger file is not a Lodge config */

enum key_type { KT_STR, KT_INT, KT_BOOL, KT_LIST };

struct load_ctx;

/* One value of a key, typed: what libconfuse read from a file, or what
 * cfg_value_parse read from a person's text. */
struct cfg_value {
	const char *s;          /* KT_STR, KT_LIST: the text */
	long n;                 /* KT_INT: the number; KT_BOOL: 0 or 1 */
	unsigned index;         /* KT_LIST: which value of the list */
};

/* A domain being read: its config as each key stores it, and what only
 * cfg_domain_finish joins (root and extra into the command line). */
struct domain_draft {
	struct domain_config dc;
	char root[DOMAIN_CMDLINE_MAX], extra[DOMAIN_CMDLINE_MAX];
	enum vif_part vif_part;     /* a vif value refused: the part of its spec at fault */
};

/* One key of a file: a row of the schema.  libconfuse's option, the
 * checks every value gets (no control characters; an integer's range, a
 * string's length, a list's count: one generic check from these fields)
 * and then the row's own check, the messages, the create form's hints and
 * lodge.conf(5) (tests/unit/test-lib-config.c holds the page to the
 * table) all come from here. */
struct cfg_key {
	const char *name;
	enum key_type type;
	const char *def;        /* KT_STR, KT_BOOL: the default as written in a file; NULL: none */
	long idef;              /* KT_INT: the default */
	long min, max;          /* KT_INT: the range; KT_STR: max bytes (0: any);
				 * KT_LIST: max values */
	const char *unit;       /* KT_INT: written after a number (" MiB", "%");
				 * KT_LIST: what a value is, plural ("disks") */
	const char *zero;       /* KT_INT: what 0 means when it is special ("no cap") */
	const char *required;   /* a file must set it, and why: "nothing to boot" */
	const char *unless;     /* ... unless it sets this key instead ("bootloader") */
	/* Check the value beyond the generic checks: 0, or -errno with why
	 * set.  A domain key's check that parses a value of its own language
	 * (a disk spec, an action) stores what it parsed in ctx->draft. */
	int (*check)(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
		     size_t whylen);
	/* A domain key whose value is stored as it is: where in the draft
	 * (size 0: none, or its check stores it).  KT_INT: an unsigned, or a
	 * bool if the field is one; KT_BOOL: a bool; KT_STR: the text, or
	 * with resolve the path from the file's directory. */
	size_t off, size;
	bool resolve;
	const char *help;
};

extern const struct cfg_key domain_keys[];    /* config-keys.c */
extern const struct cfg_key host_keys[];      /* config-host-keys.c */

/* Rows, by type: NAME, default, (range,) check, help, then a domain
 * row's field (AT) and other designators. */
#define KEY_STR(n, d, chk, h, ...)       { .name = n, .type = KT_STR, .def = d, .check = chk, .help = h, __VA_ARGS__ }
#define KEY_REQUIRED(n, why, chk, h, ...) \
	{ .name = n, .type = KT_STR, .required = why, .check = chk, .help = h, __VA_ARGS__ }
#define KEY_TEXT(n, maxlen, h, ...)      { .name = n, .type = KT_STR, .max = maxlen, .help = h, __VA_ARGS__ }
#define KEY_INT(n, d, lo, hi, u, z, chk, h, ...) \
	{ .name = n, .type = KT_INT, .idef = d, .min = lo, .max = hi, .unit = u, .zero = z, .check = chk, .help = h, \
	  __VA_ARGS__ }
#define KEY_BOOL(n, d, h, ...)           { .name = n, .type = KT_BOOL, .def = d, .help = h, __VA_ARGS__ }
#define KEY_LIST(n, most, what, chk, h)  { .name = n, .type = KT_LIST, .max = most, .unit = what, .check = chk, .help = h }
/* A network's file (network.c). */
extern const struct cfg_key network_keys[];
/* xl.cfg(5)'s keys that Lodge does not implement: the spelling in this
 * table of name, or NULL. */
const char *cfg_xl_key(const char *name);
/* A group's id from its name or number, -1 if there is none. */
long cfg_group_id(const char *name);

/* Where a key statement ("key =" or "key +=") or a value starts. */
struct key_site {
	char key[MAX_KEY_LEN];
	int line;
	bool append;
};
struct value_site {
	int site;               /* index into sites: the statement it belongs to */
	int line;
};

struct load_ctx {
	const char *file;                  /* as given: messages name it so */
	char dir[CFG_PATH_MAX];            /* its absolute directory */
	const struct cfg_key *keys;
	const struct host_config *hc;      /* domains: the default bridge */
	bool check_host;                   /* bridges exist, memory is available */
	struct domain_draft *draft;        /* domain_keys: where the values go */
	bool set[MAX_KEYS];                /* per key of keys: a value was given */
	unsigned nvalues_of[MAX_KEYS];     /* per key: values checked (a list's count) */
	struct key_site sites[MAX_SITES];
	unsigned nsites;
	struct value_site values[MAX_VALUES];
	unsigned nvalues;
	int cur_site, nlines;
	char *err;
	size_t errlen;
	int err_line;                      /* 0: no error yet */
	const char *err_what;              /* in err: the message after "FILE:LINE: KEY: " */
	char err_key[MAX_KEY_LEN];         /* and that KEY */
	/* The error's message quotes nothing of the file but names from
	 * Lodge's own tables (so it may be shown for a file that is not
	 * known to be a config). */
	bool err_quotes_nothing;
};

/* config-keys.c: the schema */
const struct cfg_key *cfg_find_key(const struct cfg_key *keys, const char *name);
/* libconfuse options for the table, ended by CFG_END; returns their count. */
unsigned cfg_build_opts(const struct cfg_key *keys, cfg_opt_t *opts);
/* THE check of one value of key k, wherever it comes from: no control
 * characters in text, the generic checks by its row (range, length,
 * count), the row's own; then a domain key's value stored in ctx->draft.
 * 0, or -errno with why set. */
int cfg_check_value(const struct load_ctx *ctx, const struct cfg_key *k, const struct cfg_value *v, char *why,
		    size_t whylen);
/* A person's text as key k's typed value, read as libconfuse reads a
 * file's (integers in C's bases, xl's booleans): 0, or -EINVAL with why
 * in libconfuse's words as a file's message gives them. */
int cfg_value_parse(const struct cfg_key *k, const char *text, struct cfg_value *v, char *why, size_t whylen);
/* The keys not given (only: that one): a required one is missing (line
 * 1), a default goes through cfg_check_value as a written value would
 * (as some depend on the host, and a domain's is stored). */
int cfg_check_unset(struct load_ctx *ctx, const char *only);

/* config-domain.c: the rules of two keys or more, once the keys are all
 * read (a file's or a form's): maxmem against memory, the command line
 * from root and extra, and so on; errors by cfg_fail naming the key. */
int cfg_domain_finish(struct load_ctx *ctx);
/* A row in words for a form's hint: "guest RAM, 4 to 4194304 MiB, default 128 MiB". */
void cfg_key_describe(const struct cfg_key *k, char *out, size_t len);

/* config-specs.c: disk and vif specs, MACs, actions */
int cfg_parse_disk(const struct load_ctx *ctx, const char *spec, struct cfg_disk *d, char *why, size_t whylen);
/* A vif spec: 0, or -EINVAL with why and *part (may be NULL) the part at fault. */
int cfg_parse_vif(const char *spec, struct cfg_vif *v, enum vif_part *part, char *why, size_t whylen);
int cfg_parse_mac(const char *text, uint8_t mac[6], char *why, size_t whylen);
int cfg_parse_action(const char *text, enum domain_action *act, char *why, size_t whylen);

/* config-text.c */
/* The statement of key that libconfuse is reading when its lexer is at
 * line upto (or the last one, upto 0): an index into ctx->sites, or -1. */
int cfg_key_site(const struct load_ctx *ctx, const char *key, int upto);
int cfg_key_line(const struct load_ctx *ctx, const char *key, int upto);
int cfg_value_line(const struct load_ctx *ctx, const char *key, unsigned index, int upto);
/* Xen syntax as libconfuse's, noting sites in ctx; a malloc'd string or NULL. */
char *cfg_xen_to_confuse(struct load_ctx *ctx, const char *in, size_t len);

/* config-save.c: s as a double-quoted string of the syntax. */
void cfg_put_string(FILE *f, const char *s);

/* config.c */
void cfg_fail(struct load_ctx *ctx, int line, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Read file with another kind's key table (a network's, network.c): the
 * cfg_t to free, or NULL with "FILE:LINE: KEY: why" in err.  ctx stays the
 * caller's, for the checks of two keys after (cfg_fail, cfg_key_line). */
cfg_t *cfg_load_file(struct load_ctx *ctx, const char *file, const struct cfg_key *keys, char *err, size_t errlen);
/* path relative to the config file's directory, absolute paths as written;
 * -ENAMETOOLONG if it does not fit. */
int cfg_resolve(const struct load_ctx *ctx, const char *path, char *out, size_t len);

/* The file reader (config.c), for the loaders of other files beside it
 * (config-host.c): a context for FILE, then its text parsed with a key
 * table (NULL with the message in the context's err). */
int cfg_ctx_init(struct load_ctx *ctx, const char *file, char *err, size_t errlen);
cfg_t *cfg_parse_text(struct load_ctx *ctx, const struct cfg_key *keys, const char *text, size_t len);
cfg_t *cfg_parse_file(struct load_ctx *ctx, const struct cfg_key *keys);

#endif
