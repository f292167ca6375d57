/* store_views.c - the schema answered once, when a store is opened.
 *
 * perfkit captures of earlier versions and nsys exports of several differ in
 * which tables and columns they have: nsys creates a table only when it has
 * rows for it, adds columns between versions, and an older perfkit wrote
 * fewer. Instead of each reader asking (has_table, has_column) and writing
 * its SQL three ways, the open defines, in the connection's temporary
 * schema, a view named exactly like each table perfkit knows (schema.c):
 * every column of the table's description, NULL where the file lacks it,
 * then the file's other columns as they are, and its rowid as a column of
 * that name (the traces' flows read it). A table the file lacks reads as
 * an empty one (the analysis tables too: their rows, not their presence,
 * say what was measured).
 *
 * SQLite resolves an unqualified name in the temporary schema before the
 * main one, so every statement reads the views without naming them, and
 * the views are simple enough for SQLite to flatten into the statements
 * that use them: those keep the file's indexes. Nothing is written to the
 * file: the temporary schema is the connection's own.
 *
 * A table whose columns are already those of its view, in its order (a
 * capture of this version: 25 of its 39 tables), gets no view until a
 * condition narrows it: the name finds the table itself, which answers
 * the same queries (its rowid by that name too; only SELECT * leaves the
 * rowid out, and every reader names its columns). Each view defined is
 * parsed twice by SQLite (its statement, then its schema row), which made
 * most of an open's time: 2.5 ms a capture on a 2-core VM, four opens a
 * capture of a job's diagnosis, a sixth of its time with the check. */
#include "store_impl.h"

#include <stdlib.h>
#include <string.h>

/* The columns of main's table (or view) name, in order; *n = 0 when the
 * file has no such table. *cols is for the caller to sqlite3_free, each
 * name and the array. */
static int file_columns(struct prof_store *s, const char *name, char ***cols, int *n,
			struct prof_error *err)
{
	sqlite3_stmt *st = NULL;
	char *sql = sqlite3_mprintf("PRAGMA main.table_info(\"%w\")", name);
	char **list = NULL;
	int rc, used = 0;

	*cols = NULL;
	*n = 0;
	if (!sql)
		return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", s->path);
	rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return store__read_error(s, rc, "read schema", err);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *col = (const char *)sqlite3_column_text(st, 1);
		char **grown = sqlite3_realloc64(list, (sqlite3_uint64)(used + 1) * sizeof *list);

		if (!grown || !(grown[used] = sqlite3_mprintf("%s", col ? col : ""))) {
			list = grown ? grown : list;
			rc = SQLITE_NOMEM;
			break;
		}
		list = grown;
		used++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		for (int i = 0; i < used; i++)
			sqlite3_free(list[i]);
		sqlite3_free(list);
		return store__read_error(s, rc, "read schema", err);
	}
	*cols = list;
	*n = used;
	return 0;
}

static bool names_rowid(const char *column)
{
	return !sqlite3_stricmp(column, "rowid") || !sqlite3_stricmp(column, "oid") ||
	       !sqlite3_stricmp(column, "_rowid_");
}

static bool listed(char *const *cols, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (cols[i] && !sqlite3_stricmp(cols[i], name))
			return true;
	return false;
}

/* The columns the description of t names: its own, and for one of the
 * tables perfkit writes (written >= 0), those some exports add. */
static bool described(const struct schema_table *t, int written, const char *name)
{
	for (int i = 0; i < t->n_cols; i++)
		if (!sqlite3_stricmp(t->cols[i].name, name))
			return true;
	for (int i = 0; written >= 0 && i < schema_read_column_count; i++)
		if ((int)schema_read_columns[i].table == written &&
		    !sqlite3_stricmp(schema_read_columns[i].name, name))
			return true;
	return false;
}

static void add_column(sqlite3_str *q, bool *first, bool present, const char *name)
{
	sqlite3_str_appendf(q, present ? "%s\"%w\"" : "%sNULL AS \"%w\"", *first ? "" : ", ",
			    name);
	*first = false;
}

/* One column of the view: *same stays true while the k-th column named
 * is the file's k-th, present. */
static void view_column(sqlite3_str *q, bool *first, char *const *cols, int n, const char *name,
			int *k, bool *same)
{
	bool present = listed(cols, n, name);

	*same = *same && present && *k < n && !sqlite3_stricmp(cols[*k], name);
	(*k)++;
	add_column(q, first, present, name);
}

/* The SELECT over main that defines t's canonical view (sqlite3_free it);
 * *same: the file's table already has the view's columns, in its order,
 * and is a rowid table (its rowid is the view's column rowid). */
static int canonical_select(struct prof_store *s, const struct schema_table *t, int written,
			    char **select, bool *same, struct prof_error *err)
{
	char **cols;
	int n, rc, k = 0;
	bool first = true, present, rowid;
	sqlite3_str *q;

	*select = NULL;
	*same = false;
	rc = file_columns(s, t->name, &cols, &n, err);
	if (rc)
		return rc;
	present = n > 0;
	/* a rowid table (a WITHOUT ROWID table or a view in main has none) */
	rowid = !present || sqlite3_table_column_metadata(s->db, "main", t->name, "rowid", NULL, NULL,
							  NULL, NULL, NULL) == SQLITE_OK;
	*same = present && rowid;
	q = sqlite3_str_new(s->db);
	sqlite3_str_appendall(q, "SELECT ");
	if (rowid) {
		sqlite3_str_appendall(q, present ? "rowid AS rowid" : "NULL AS rowid");
		first = false;
	}
	for (int i = 0; i < t->n_cols; i++)
		view_column(q, &first, cols, n, t->cols[i].name, &k, same);
	for (int i = 0; written >= 0 && i < schema_read_column_count; i++)
		if ((int)schema_read_columns[i].table == written)
			view_column(q, &first, cols, n, schema_read_columns[i].name, &k, same);
	for (int i = 0; i < n; i++)
		if (!described(t, written, cols[i]) && !(rowid && names_rowid(cols[i])) &&
		    !listed(cols, i, cols[i]))
			view_column(q, &first, cols, n, cols[i], &k, same);
	/* a column the view leaves out (a second of one name, one named
	 * rowid) */
	*same = *same && k == n;
	if (present)
		sqlite3_str_appendf(q, " FROM main.\"%w\"", t->name);
	else
		sqlite3_str_appendall(q, " WHERE 0");
	for (int i = 0; i < n; i++)
		sqlite3_free(cols[i]);
	sqlite3_free(cols);
	rc = sqlite3_str_errcode(q);
	*select = sqlite3_str_finish(q);
	if (rc != SQLITE_OK || !*select) {
		sqlite3_free(*select);
		*select = NULL;
		return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", s->path);
	}
	return 0;
}

/* CREATE TEMP VIEW name AS v's select [WHERE its conditions], the one
 * there replaced (replace: there may be one; an open's views, which come
 * first, have no conditions yet). */
static int define_view(struct prof_store *s, const struct store_view *v, bool replace,
		       struct prof_error *err)
{
	char *sql;
	int rc;

	if (!replace)
		sql = sqlite3_mprintf("CREATE TEMP VIEW \"%w\" AS %s", v->name, v->select);
	else if (v->where && v->time_where)
		sql = sqlite3_mprintf("DROP VIEW IF EXISTS temp.\"%w\"; CREATE TEMP VIEW \"%w\" AS"
				      " SELECT * FROM (%s) WHERE (%s) AND (%s)", v->name, v->name,
				      v->select, v->where, v->time_where);
	else if (v->where || v->time_where)
		sql = sqlite3_mprintf("DROP VIEW IF EXISTS temp.\"%w\";"
				      " CREATE TEMP VIEW \"%w\" AS SELECT * FROM (%s) WHERE %s", v->name,
				      v->name, v->select, v->where ? v->where : v->time_where);
	else
		sql = sqlite3_mprintf("DROP VIEW IF EXISTS temp.\"%w\"; CREATE TEMP VIEW \"%w\" AS %s",
				      v->name, v->name, v->select);
	if (!sql)
		return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", s->path);
	rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	return rc == SQLITE_OK ? 0 : store__read_error(s, rc, "define the canonical views", err);
}

static int add_view(struct prof_store *s, const struct schema_table *t, int written,
		    struct prof_error *err)
{
	struct store_view *v = &s->views[s->n_views];
	bool same;
	int rc = canonical_select(s, t, written, &v->select, &same, err);

	if (rc)
		return rc;
	v->name = t->name;
	s->n_views++;
	/* the table reads as its view would */
	return same ? 0 : define_view(s, v, false, err);
}

int store__make_views(struct prof_store *s, struct prof_error *err)
{
	int rc = 0;

	s->views = calloc(T__COUNT + ANALYSIS__COUNT + READ__COUNT, sizeof *s->views);
	if (!s->views)
		return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", s->path);
	for (int i = 0; !rc && i < T__COUNT; i++)
		rc = add_view(s, &schema_tables[i], i, err);
	for (int i = 0; !rc && i < ANALYSIS__COUNT; i++)
		rc = add_view(s, &schema_analysis_tables[i], -1, err);
	for (int i = 0; !rc && i < READ__COUNT; i++)
		rc = add_view(s, &schema_read_tables[i], -1, err);
	return rc;
}

void store__free_views(struct prof_store *s)
{
	for (int i = 0; i < s->n_views; i++) {
		sqlite3_free(s->views[i].select);
		sqlite3_free(s->views[i].where);
		sqlite3_free(s->views[i].time_where);
	}
	free(s->views);
	s->views = NULL;
	s->n_views = 0;
}

/* One of v's conditions (*slot) set to where, and the view made anew. */
static int set_condition(struct prof_store *s, struct store_view *v, char **slot, const char *where,
			 struct prof_error *err)
{
	char *copy = where ? sqlite3_mprintf("%s", where) : NULL;

	if (where && !copy)
		return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", s->path);
	sqlite3_free(*slot);
	*slot = copy;
	return define_view(s, v, true, err);
}

static struct store_view *find_view(struct prof_store *s, const char *table)
{
	for (int i = 0; table && i < s->n_views; i++)
		if (!sqlite3_stricmp(s->views[i].name, table))
			return &s->views[i];
	return NULL;
}

int prof_store__restrict(struct prof_store *s, const char *table, const char *where,
			 struct prof_error *err)
{
	struct store_view *v = find_view(s, table);

	return v ? set_condition(s, v, &v->where, where, err) : 1;
}

int prof_store__restrict_time(struct prof_store *s, const char *table, const char *where,
			      struct prof_error *err)
{
	struct store_view *v = find_view(s, table);

	return v ? set_condition(s, v, &v->time_where, where, err) : 1;
}

bool prof_store__restricted(const struct prof_store *s)
{
	for (int i = 0; i < s->n_views; i++)
		if (s->views[i].where || s->views[i].time_where)
			return true;
	return false;
}

bool prof_store__time_restricted(const struct prof_store *s)
{
	for (int i = 0; i < s->n_views; i++)
		if (s->views[i].time_where)
			return true;
	return false;
}

const char *prof_store__all_rows(struct prof_store *s, const char *table)
{
	struct store_view *v = find_view(s, table);

	return v ? v->select : NULL;
}
