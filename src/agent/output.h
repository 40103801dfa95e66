/* One output layer for every command that lists things: the command
 * defines its columns once, as a table (title for the text table, key
 * for tsv's header and JSON, a getter reading the library's struct),
 * and the same table prints the text table, -o tsv (-H: a header of the
 * keys) and -o json (one document: an array of objects, or one object
 * for a record such as lodge info), numbers as numbers, units in keys. */
#ifndef LODGE_OUTPUT_H
#define LODGE_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"

enum out_format { OUT_TEXT, OUT_TSV, OUT_JSON };
enum out_kind { OV_NULL, OV_STR, OV_UINT, OV_INT, OV_REAL, OV_LIST };

/* One cell as a getter fills it: null is "-" in text and tsv, null in
 * JSON; a list is comma-separated text ("-": empty), an array in JSON. */
struct out_val {
	enum out_kind kind;
	const char *s;                 /* OV_STR, OV_LIST (must outlive out_row) */
	unsigned long long u;
	long long i;
	double d;
};

#define OUT_TEXT_ONLY 1u           /* the text table's alone (a figure in MiB, xl's state letters) */
#define OUT_DATA_ONLY 2u           /* tsv's and JSON's alone (the same figure in KiB, the state's word) */
#define OUT_LONG      4u           /* text: only with -l (tsv and JSON have every column) */
#define OUT_GAP2      8u           /* text: two spaces before it */

struct out_col {
	const char *title;             /* text: the header, or a record's label */
	const char *key;               /* tsv header and JSON key: lower case, unit last (memory_mib) */
	int width;                     /* text: negative left-aligns, 0 none */
	int prec;                      /* OV_REAL: decimals in text (tsv and JSON: 3) */
	unsigned flags;
	void (*get)(const void *row, struct out_val *v);
	const char *unit;              /* a record's text: after the value ("MiB") */
};

struct out {
	enum out_format fmt;
	bool header, longer;
	const struct out_col *cols;
	size_t ncols;
	void *json;                    /* the document being built (json_t) */
};

/* -o, -H and -l of c for these columns: 0, or an exit status (-H
 * without -o tsv).  A table's text and tsv header are printed now. */
int out_begin(struct out *o, const struct cli *c, const struct out_col *cols, size_t ncols);
/* The same for a record (one object, lodge info): no text header. */
int out_begin_record(struct out *o, const struct cli *c, const struct out_col *cols, size_t ncols);
/* One row; as text and tsv at once, JSON at out_end. */
void out_row(struct out *o, const void *row);
/* The one row of a record (lodge info): text as "label : value unit" lines. */
void out_record(struct out *o, const void *row);
/* The JSON document, if any; stdout flushed. */
void out_end(struct out *o);

/* Getters' helpers. */
static inline void out_null(struct out_val *v) { v->kind = OV_NULL; }
static inline void out_str(struct out_val *v, const char *s) { v->kind = OV_STR; v->s = s; }
static inline void out_uint(struct out_val *v, unsigned long long u) { v->kind = OV_UINT; v->u = u; }
static inline void out_int(struct out_val *v, long long i) { v->kind = OV_INT; v->i = i; }
static inline void out_real(struct out_val *v, double d) { v->kind = OV_REAL; v->d = d; }
static inline void out_list(struct out_val *v, const char *s) { v->kind = OV_LIST; v->s = s; }

/* A getter in one line: OUT_GETTER(name, struct lodge_disk, out_uint(v, r->io.in_ops)). */
#define OUT_GETTER(fn, type, call) \
	static void fn(const void *row_, struct out_val *v) { const type *r = row_; (void)r; call; }

#define OUT_NCOLS(cols) (sizeof(cols) / sizeof((cols)[0]))

/* The options every such command takes (main.c's table). */
#define OUT_OPTIONS \
	{ 'o', "output", CLI_WORD, "FORMAT", "text (the default), tsv (tab-separated, every column), json", \
	  0, 0, NULL, "text tsv json" }, \
	{ 'H', "header", CLI_FLAG, NULL, "with -o tsv: a first line of the column keys", 0, 0, NULL, NULL }

#endif
