/* The output layer (output.h): text, tsv and JSON from one column table.
 * JSON goes through jansson, so every string is escaped as JSON wants. */
#include "output.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#define DATA_DECIMALS 3

static bool shown(const struct out *o, const struct out_col *col)
{
	if (o->fmt == OUT_TEXT)
		return !(col->flags & OUT_DATA_ONLY) && (o->longer || !(col->flags & OUT_LONG));
	return !(col->flags & OUT_TEXT_ONLY);
}

/* The last column shown: a left-aligned one is not padded. */
static size_t last_shown(const struct out *o)
{
	size_t i, last = 0;

	for (i = 0; i < o->ncols; i++)
		if (shown(o, &o->cols[i]))
			last = i;
	return last;
}

static int text_width(const struct out *o, size_t i)
{
	return i == last_shown(o) && o->cols[i].width < 0 ? 0 : o->cols[i].width;
}

static int begin(struct out *o, const struct cli *c, const struct out_col *cols, size_t ncols, bool record)
{
	const char *fmt = c->set['o'] ? c->text['o'] : "text";
	size_t i;

	memset(o, 0, sizeof(*o));
	o->fmt = strcmp(fmt, "json") == 0 ? OUT_JSON : strcmp(fmt, "tsv") == 0 ? OUT_TSV : OUT_TEXT;
	o->header = c->set['H'];
	o->longer = c->set['l'];
	o->cols = cols;
	o->ncols = ncols;
	if (o->header && o->fmt != OUT_TSV)
		return cli_usage_error(c->cmd, "--header goes with -o tsv");
	if (o->fmt == OUT_JSON)
		o->json = json_array();
	if ((o->fmt == OUT_TEXT && !record) || (o->fmt == OUT_TSV && o->header)) {
		bool first = true;

		for (i = 0; i < ncols; i++) {
			const struct out_col *col = &cols[i];

			if (!shown(o, col) || (o->fmt == OUT_TEXT && i == last_shown(o) && !col->title[0]))
				continue;
			if (o->fmt == OUT_TSV)
				printf("%s%s", first ? "" : "\t", col->key);
			else
				printf("%s%*s", first ? "" : col->flags & OUT_GAP2 ? "  " : " ",
				       text_width(o, i), col->title);
			first = false;
		}
		printf("\n");
	}
	return 0;
}

int out_begin(struct out *o, const struct cli *c, const struct out_col *cols, size_t ncols)
{
	return begin(o, c, cols, ncols, false);
}

int out_begin_record(struct out *o, const struct cli *c, const struct out_col *cols, size_t ncols)
{
	return begin(o, c, cols, ncols, true);
}

/* One cell as text: width w (negative: left-aligned), or as tsv (w 0). */
static void print_value(const struct out_val *v, int w, int prec)
{
	switch (v->kind) {
	case OV_STR:
	case OV_LIST:
		printf("%*s", w, v->s);
		break;
	case OV_UINT:
		printf("%*llu", w, v->u);
		break;
	case OV_INT:
		printf("%*lld", w, v->i);
		break;
	case OV_REAL:
		printf("%*.*f", w, prec, v->d);
		break;
	case OV_BOOL:
		printf("%*s", w, v->u ? "yes" : "no");
		break;
	case OV_NULL:
		printf("%*s", w, "-");
		break;
	}
}

/* JSON shows every column but the text table's alone, as shown() says. */
static json_t *row_object(const struct out *o, const void *row)
{
	return cols_json_row(o->cols, o->ncols, row);
}

void out_row(struct out *o, const void *row)
{
	bool first = true;
	size_t i, last = last_shown(o);

	if (o->fmt == OUT_JSON) {
		json_array_append_new(o->json, row_object(o, row));
		return;
	}
	for (i = 0; i < o->ncols; i++) {
		const struct out_col *col = &o->cols[i];
		struct out_val v = { OV_NULL };

		if (!shown(o, col))
			continue;
		col->get(row, &v);
		if (o->fmt == OUT_TSV) {
			printf("%s", first ? "" : "\t");
			print_value(&v, 0, DATA_DECIMALS);
		} else if (!(i == last && (v.kind == OV_STR || v.kind == OV_LIST) && !v.s[0])) {
			printf("%s", first ? "" : col->flags & OUT_GAP2 ? "  " : " ");
			print_value(&v, text_width(o, i), col->prec);
		}
		first = false;
	}
	printf("\n");
}

void out_record(struct out *o, const void *row)
{
	size_t i;

	if (o->fmt != OUT_TEXT) {
		if (o->fmt == OUT_JSON) {
			json_decref(o->json);
			o->json = row_object(o, row);
		} else {
			out_row(o, row);
		}
		return;
	}
	for (i = 0; i < o->ncols; i++) {
		struct out_val v = { OV_NULL };

		if (!shown(o, &o->cols[i]))
			continue;
		o->cols[i].get(row, &v);
		printf("%-23s: ", o->cols[i].title);
		print_value(&v, 0, o->cols[i].prec);
		printf("%s%s\n", o->cols[i].unit ? " " : "", o->cols[i].unit ? o->cols[i].unit : "");
	}
}

void out_end(struct out *o)
{
	if (o->json) {
		json_dumpf(o->json, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
		printf("\n");
		json_decref(o->json);
		o->json = NULL;
	}
	fflush(stdout);
}
