/* Columns: how a face of Lodge shows a row of the library's structs, as
 * data.  A table of columns (title for a text table, key for tsv's header
 * and JSON, a getter reading the row) is defined once and shown by every
 * face: the lodge command's text, tsv and -o json (src/agent/output.c),
 * and the web interface's JSON (src/web/api.c), which so give the same
 * keys and values for the same row. */
#ifndef LODGE_COLUMNS_H
#define LODGE_COLUMNS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum out_kind { OV_NULL, OV_STR, OV_UINT, OV_INT, OV_REAL, OV_LIST, OV_BOOL };

/* One cell as a getter fills it: null is "-" in text and tsv, null in
 * JSON; a bool is yes or no in text and tsv; a list is comma-separated text ("-": empty), an array in JSON. */
struct out_val {
	enum out_kind kind;
	const char *s;                 /* OV_STR, OV_LIST (must outlive the row's output) */
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

/* Getters' helpers. */
static inline void out_null(struct out_val *v) { v->kind = OV_NULL; }
static inline void out_str(struct out_val *v, const char *s) { v->kind = OV_STR; v->s = s; }
static inline void out_uint(struct out_val *v, unsigned long long u) { v->kind = OV_UINT; v->u = u; }
static inline void out_int(struct out_val *v, long long i) { v->kind = OV_INT; v->i = i; }
static inline void out_real(struct out_val *v, double d) { v->kind = OV_REAL; v->d = d; }
static inline void out_bool(struct out_val *v, bool b) { v->kind = OV_BOOL; v->u = b; }
static inline void out_list(struct out_val *v, const char *s) { v->kind = OV_LIST; v->s = s; }

/* A getter in one line: OUT_GETTER(name, struct lodge_disk, out_uint(v, r->io.in_ops)). */
#define OUT_GETTER(fn, type, call) \
	static void fn(const void *row_, struct out_val *v) { const type *r = row_; (void)r; call; }

#define OUT_NCOLS(cols) (sizeof(cols) / sizeof((cols)[0]))

/* A cell as JSON: strings that are not UTF-8 (a path's bytes) with each
 * byte from 0x80 up as \xNN; reals to 3 decimals. */
json_t *cols_json_value(const struct out_val *v);
/* A row as a JSON object of its data columns (all but OUT_TEXT_ONLY). */
json_t *cols_json_row(const struct out_col *cols, size_t ncols, const void *row);
/* The same into obj, kept from an earlier row: its values changed in
 * place where their type is the same (the web's live updates keep each
 * domain's object between updates rather than make it anew). */
void cols_json_update(json_t *obj, const struct out_col *cols, size_t ncols, const void *row);

#endif
