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
#include "columns.h"      /* the columns, shared with the web interface */

enum out_format { OUT_TEXT, OUT_TSV, OUT_JSON };

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

/* The options every such command takes (main.c's table). */
#define OUT_OPTIONS \
	{ 'o', "output", CLI_WORD, "FORMAT", "text (the default), tsv (tab-separated, every column), json", \
	  0, 0, NULL, "text tsv json" }, \
	{ 'H', "header", CLI_FLAG, NULL, "with -o tsv: a first line of the column keys", 0, 0, NULL, NULL }

#endif
