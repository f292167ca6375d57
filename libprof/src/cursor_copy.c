/* cursor_copy.c - a cursor holding a copy of another cursor's current row
 * (prof_cursor__new_copy): what one thread stepped, another reads. Each
 * value keeps what SQLite's own accessors would give for it, taken at
 * the copy: its kind, its integer and real forms, and its bytes when it
 * is text, a blob or a real (whose text is SQLite's to format); an
 * integer's text is its decimal digits, made when asked. The buffers grow
 * to the widest row and are reused. */
#include "store_impl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/array.h"

/* 32 bytes: the writer reads what the other thread wrote, a cache line
 * at a time */
struct copied_value {
	int64_t i;
	double d;        /* a real's, a text's or a blob's; an integer's is i */
	uint32_t off, len; /* text or blob bytes, in the copy's buffer */
	unsigned char kind; /* enum prof_value_kind */
};

struct cursor_copy {
	struct copied_value *v;
	int ncols;
	size_t cap_cols;
	char *bytes;     /* each value's bytes, each followed by a NUL */
	size_t nbytes, cap_bytes;
	char (*num)[24]; /* an integer's text by column, made when asked */
	size_t cap_num;
};

int prof_cursor__new_copy(struct prof_cursor **out, struct prof_error *err)
{
	struct prof_cursor *c = calloc(1, sizeof *c);

	*out = NULL;
	if (c)
		c->copy = calloc(1, sizeof *c->copy);
	if (!c || !c->copy) {
		free(c);
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	c->done = true;
	*out = c;
	return 0;
}

/* Through the column's sqlite3_value: one call into the statement a
 * column, where each sqlite3_column_* call is one. */
static int copy_value(struct cursor_copy *k, struct copied_value *v, sqlite3_stmt *st, int col)
{
	sqlite3_value *sv = sqlite3_column_value(st, col);
	const void *p;
	int n;

	switch (sqlite3_value_type(sv)) {
	case SQLITE_NULL:
		v->kind = PROF_VALUE_NULL;
		v->i = 0;
		v->d = 0;
		return 0;
	case SQLITE_INTEGER:
		v->kind = PROF_VALUE_INT;
		v->i = sqlite3_value_int64(sv);
		return 0;
	case SQLITE_FLOAT:
		v->kind = PROF_VALUE_REAL;
		break;
	case SQLITE_TEXT:
		v->kind = PROF_VALUE_TEXT;
		break;
	default:
		v->kind = PROF_VALUE_BLOB;
		break;
	}
	/* its numbers first, which leave its bytes alone */
	v->i = sqlite3_value_int64(sv);
	v->d = sqlite3_value_double(sv);
	p = v->kind == PROF_VALUE_BLOB ? sqlite3_value_blob(sv) : (const void *)sqlite3_value_text(sv);
	n = sqlite3_value_bytes(sv);
	v->len = p && n > 0 ? (uint32_t)n : 0;
	/* the room asked of prof_array__grow only where there is none: a
	 * call a value was 5% of a feed's thread at 10M kernels */
	if (k->nbytes > UINT32_MAX - v->len - 1 ||
	    (k->nbytes + v->len + 1 > k->cap_bytes &&
	     prof_array__grow(&k->bytes, &k->cap_bytes, k->nbytes + v->len + 1, 1) < 0))
		return PROF_E_NOMEM;
	v->off = (uint32_t)k->nbytes;
	if (v->len)
		memcpy(k->bytes + k->nbytes, p, v->len);
	k->bytes[k->nbytes + v->len] = '\0';
	k->nbytes += v->len + 1;
	return 0;
}

/* A copy's row into another's: its values and their bytes as they are. */
static int copy_copied(struct cursor_copy *k, const struct cursor_copy *from)
{
	if (prof_array__grow(&k->v, &k->cap_cols, (size_t)from->ncols, sizeof *k->v) < 0 ||
	    prof_array__grow(&k->bytes, &k->cap_bytes, from->nbytes ? from->nbytes : 1, 1) < 0)
		return PROF_E_NOMEM;
	if (from->ncols)
		memcpy(k->v, from->v, (size_t)from->ncols * sizeof *k->v);
	if (from->nbytes)
		memcpy(k->bytes, from->bytes, from->nbytes);
	k->nbytes = from->nbytes;
	k->ncols = from->ncols;
	return 0;
}

int prof_cursor__copy_row(struct prof_cursor *copy, struct prof_cursor *src,
			  struct prof_error *err)
{
	struct cursor_copy *k = copy->copy;
	int n;

	k->ncols = 0;
	k->nbytes = 0;
	/* a row read ahead of a row read ahead (a merge's, of its feed's) */
	if (src->copy)
		return copy_copied(k, src->copy) ? prof_error__set(err, PROF_E_NOMEM, "out of memory")
						  : 0;
	n = sqlite3_column_count(src->stmt);
	if ((size_t)n > k->cap_cols && prof_array__grow(&k->v, &k->cap_cols, (size_t)n, sizeof *k->v) < 0)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	for (int col = 0; col < n; col++)
		if (copy_value(k, &k->v[col], src->stmt, col)) {
			k->nbytes = 0;
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		}
	k->ncols = n;
	return 0;
}

/* A column past the row's reads as NULL, as SQLite's accessors do. */
static const struct copied_value *value(const struct cursor_copy *k, int col)
{
	static const struct copied_value null_value = { .kind = PROF_VALUE_NULL };

	return col >= 0 && col < k->ncols ? &k->v[col] : &null_value;
}

bool cursor_copy__is_null(const struct cursor_copy *k, int col)
{
	return value(k, col)->kind == PROF_VALUE_NULL;
}

int64_t cursor_copy__int64(const struct cursor_copy *k, int col)
{
	return value(k, col)->i;
}

double cursor_copy__double(const struct cursor_copy *k, int col)
{
	const struct copied_value *v = value(k, col);

	/* what sqlite3_column_double gives an integer */
	return v->kind == PROF_VALUE_INT ? (double)v->i : v->d;
}

const char *cursor_copy__text(struct cursor_copy *k, int col, size_t *len)
{
	struct copied_value *v = col >= 0 && col < k->ncols ? &k->v[col] : NULL;

	*len = 0;
	if (!v || v->kind == PROF_VALUE_NULL)
		return NULL;
	if (v->kind == PROF_VALUE_INT) {
		if (prof_array__grow(&k->num, &k->cap_num, (size_t)k->ncols, sizeof *k->num) < 0)
			return NULL;
		*len = (size_t)snprintf(k->num[col], sizeof k->num[col], "%lld", (long long)v->i);
		return k->num[col];
	}
	*len = v->len;
	return k->bytes + v->off;
}

enum prof_value_kind cursor_copy__kind(const struct cursor_copy *k, int col)
{
	return (enum prof_value_kind)value(k, col)->kind;
}

int cursor_copy__columns(const struct cursor_copy *k)
{
	return k->ncols;
}

void cursor_copy__free(struct cursor_copy *k)
{
	if (!k)
		return;
	free(k->v);
	free(k->bytes);
	free(k->num);
	free(k);
}
