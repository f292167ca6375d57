/* cursor.c - streaming rows of one SQL statement out of a store. Rows are
 * stepped one at a time (sqlite3_step), never collected into memory. */
#include "store_impl.h"

#include <stdlib.h>

int prof_cursor__open(struct prof_store *s, const char *sql, struct prof_cursor **out,
		      struct prof_error *err)
{
	struct prof_cursor *c;
	int rc;

	*out = NULL;
	c = calloc(1, sizeof *c);
	if (!c)
		return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", s->path);
	c->store = s;
	rc = sqlite3_prepare_v2(s->db, sql, -1, &c->stmt, NULL);
	if (rc != SQLITE_OK) {
		rc = store__read_error(s, rc, "query", err);
		sqlite3_finalize(c->stmt);
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

static int bound(int rc)
{
	return rc == SQLITE_OK ? 0 : (rc == SQLITE_NOMEM ? PROF_E_NOMEM : PROF_E_USAGE);
}

int prof_cursor__bind_int64(struct prof_cursor *c, int index_1based, int64_t v)
{
	return bound(sqlite3_bind_int64(c->stmt, index_1based, v));
}

int prof_cursor__bind_double(struct prof_cursor *c, int index_1based, double v)
{
	return bound(sqlite3_bind_double(c->stmt, index_1based, v));
}

int prof_cursor__bind_text(struct prof_cursor *c, int index_1based, const char *v)
{
	if (!v)
		return bound(sqlite3_bind_null(c->stmt, index_1based));
	return bound(sqlite3_bind_text(c->stmt, index_1based, v, -1, SQLITE_TRANSIENT));
}

int prof_cursor__next(struct prof_cursor *c, struct prof_error *err)
{
	int rc;

	if (c->done)
		return 0;
	c->kinds_kept = c->ints_kept = 0;
	rc = sqlite3_step(c->stmt);
	if (rc == SQLITE_ROW)
		return 1;
	c->done = true;
	if (rc == SQLITE_DONE)
		return 0;
	return store__read_error(c->store, rc, "reading rows", err);
}

void prof_cursor__reset(struct prof_cursor *c)
{
	if (c->copy)
		return;
	/* a failed step's error was reported by next(); the reset repeats it */
	(void)sqlite3_reset(c->stmt);
	c->done = false;
}

int prof_cursor__columns(const struct prof_cursor *c)
{
	if (c->copy)
		return cursor_copy__columns(c->copy);
	return sqlite3_column_count(c->stmt);
}

const char *prof_cursor__column_name(const struct prof_cursor *c, int col)
{
	return c->copy ? NULL : sqlite3_column_name(c->stmt, col);
}

void prof_cursor__keep_values(struct prof_cursor *c)
{
	c->keep = true;
}

/* SQLite's type of the row's column col, kept for the row once asked
 * where the cursor keeps them. */
static int column_type(struct prof_cursor *c, int col)
{
	uint32_t bit;
	int type;

	if (!c->keep || col < 0 || col >= CURSOR_KEPT_COLUMNS)
		return sqlite3_column_type(c->stmt, col);
	bit = (uint32_t)1 << col;
	if (c->kinds_kept & bit)
		return c->kinds[col];
	type = sqlite3_column_type(c->stmt, col);
	c->kinds[col] = (unsigned char)type;
	c->kinds_kept |= bit;
	return type;
}

bool prof_cursor__is_null(struct prof_cursor *c, int col)
{
	if (c->copy)
		return cursor_copy__is_null(c->copy, col);
	return column_type(c, col) == SQLITE_NULL;
}

int64_t prof_cursor__int64(struct prof_cursor *c, int col)
{
	uint32_t bit;

	if (c->copy)
		return cursor_copy__int64(c->copy, col);
	if (!c->keep || col < 0 || col >= CURSOR_KEPT_COLUMNS)
		return sqlite3_column_int64(c->stmt, col);
	bit = (uint32_t)1 << col;
	if (!(c->ints_kept & bit)) {
		c->ints[col] = sqlite3_column_int64(c->stmt, col);
		c->ints_kept |= bit;
	}
	return c->ints[col];
}

double prof_cursor__double(struct prof_cursor *c, int col)
{
	if (c->copy)
		return cursor_copy__double(c->copy, col);
	return sqlite3_column_double(c->stmt, col);
}

const char *prof_cursor__text(struct prof_cursor *c, int col)
{
	size_t len;

	if (c->copy)
		return cursor_copy__text(c->copy, col, &len);
	return (const char *)sqlite3_column_text(c->stmt, col);
}

const char *prof_cursor__text_bytes(struct prof_cursor *c, int col, size_t *len)
{
	const char *p;

	if (c->copy)
		return cursor_copy__text(c->copy, col, len);
	p = (const char *)sqlite3_column_text(c->stmt, col);

	*len = p ? (size_t)sqlite3_column_bytes(c->stmt, col) : 0;
	return p;
}

enum prof_value_kind prof_cursor__kind(struct prof_cursor *c, int col)
{
	if (c->copy)
		return cursor_copy__kind(c->copy, col);
	switch (column_type(c, col)) {
	case SQLITE_INTEGER:
		return PROF_VALUE_INT;
	case SQLITE_FLOAT:
		return PROF_VALUE_REAL;
	case SQLITE_TEXT:
		return PROF_VALUE_TEXT;
	case SQLITE_BLOB:
		return PROF_VALUE_BLOB;
	default:
		return PROF_VALUE_NULL;
	}
}

const void *prof_cursor__blob(struct prof_cursor *c, int col, size_t *len)
{
	const void *p;
	int n;

	if (c->copy) {
		p = cursor_copy__text(c->copy, col, len);
		return *len ? p : NULL;
	}
	p = sqlite3_column_blob(c->stmt, col);
	n = sqlite3_column_bytes(c->stmt, col);

	*len = p && n > 0 ? (size_t)n : 0;
	return *len ? p : NULL;
}

void prof_cursor__close(struct prof_cursor *c)
{
	if (!c)
		return;
	sqlite3_finalize(c->stmt);
	cursor_copy__free(c->copy);
	free(c);
}
