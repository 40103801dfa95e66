/* A row of columns as JSON (columns.h), through jansson, so every string
 * is escaped as JSON wants. */
#include "columns.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Text that is not UTF-8 (a path's bytes) as JSON will take it: each byte
 * from 0x80 up as \xNN. */
static json_t *json_text(const char *s)
{
	json_t *j = json_string(s);
	char buf[4 * 4096 + 1], *b = buf;

	if (j)
		return j;
	for (; *s && b + 5 < buf + sizeof(buf); s++)
		b += (unsigned char)*s < 0x80 ? sprintf(b, "%c", *s) : sprintf(b, "\\x%02x", (unsigned char)*s);
	*b = '\0';
	return json_string(buf);
}

json_t *cols_json_value(const struct out_val *v)
{
	json_t *a;
	const char *s;

	switch (v->kind) {
	case OV_STR:
		return json_text(v->s);
	case OV_UINT:
		return json_integer((json_int_t)v->u);
	case OV_INT:
		return json_integer(v->i);
	case OV_REAL:
		return json_real(round(v->d * 1000) / 1000);
	case OV_BOOL:
		return json_boolean(v->u);
	case OV_LIST:
		a = json_array();
		for (s = v->s; strcmp(v->s, "-") && *s;) {
			size_t n = strcspn(s, ",");
			char item[256];

			snprintf(item, sizeof(item), "%.*s", (int)n, s);
			json_array_append_new(a, json_text(item));
			s += n + (s[n] == ',');
		}
		return a;
	case OV_NULL:
		break;
	}
	return json_null();
}

json_t *cols_json_row(const struct out_col *cols, size_t ncols, const void *row)
{
	json_t *obj = json_object();
	size_t i;

	for (i = 0; i < ncols; i++) {
		struct out_val v = { OV_NULL };

		if (cols[i].flags & OUT_TEXT_ONLY)
			continue;
		cols[i].get(row, &v);
		json_object_set_new(obj, cols[i].key, cols_json_value(&v));
	}
	return obj;
}

/* Set j to v where it holds a value of v's type: false if it does not
 * (or the value is a list: made anew). */
static bool json_value_set(json_t *j, const struct out_val *v)
{
	switch (v->kind) {
	case OV_UINT:
		return json_is_integer(j) && json_integer_set(j, (json_int_t)v->u) == 0;
	case OV_INT:
		return json_is_integer(j) && json_integer_set(j, v->i) == 0;
	case OV_REAL:
		return json_is_real(j) && json_real_set(j, round(v->d * 1000) / 1000) == 0;
	case OV_STR:
		return json_is_string(j) && strcmp(json_string_value(j), v->s) == 0;
	case OV_NULL:
		return json_is_null(j);
	case OV_BOOL:
		return json_is_boolean(j) && json_is_true(j) == !!v->u;
	case OV_LIST:
		break;
	}
	return false;
}

void cols_json_update(json_t *obj, const struct out_col *cols, size_t ncols, const void *row)
{
	size_t i;

	for (i = 0; i < ncols; i++) {
		struct out_val v = { OV_NULL };
		json_t *old;

		if (cols[i].flags & OUT_TEXT_ONLY)
			continue;
		cols[i].get(row, &v);
		old = json_object_get(obj, cols[i].key);
		if (!old || !json_value_set(old, &v))
			json_object_set_new(obj, cols[i].key, cols_json_value(&v));
	}
}
