/* analysis_tables.c - opening a finished capture again to add the analysis
 * tables, and the two that are replaced whole: peaks and findings. The
 * metrics import is in analysis_metrics.c. See prof/analysis_tables.h. */
#include "prof/analysis_tables.h"

#include <stdio.h>

#include "store_impl.h"

int analysis__begin(const char *path, sqlite3 **db, struct prof_error *err)
{
	int rc;

	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		rc = prof_error__set(err, PROF_E_IO, "%s: cannot open for writing: %s", path,
				     *db ? sqlite3_errmsg(*db) : "out of memory");
		sqlite3_close(*db);
		*db = NULL;
		return rc;
	}
	/* a reader of the capture (perfkit top) may hold it for a moment */
	sqlite3_busy_timeout(*db, 5000);
	if (schema__create_analysis(*db) != SQLITE_OK)
		return store__plain_sql_error(err, path, *db);
	return store__exec(*db, path, "BEGIN", NULL, err);
}

/* Begin replacing every row of table id: its old rows are deleted and ins is
 * its INSERT, bound by column in schema order. */
static int replace_begin(const char *path, enum schema_analysis_table_id id, sqlite3 **db,
			 sqlite3_stmt **ins, struct prof_error *err)
{
	const struct schema_table *t = &schema_analysis_tables[id];
	char sql[512];
	int rc = analysis__begin(path, db, err);

	if (rc)
		return rc;
	snprintf(sql, sizeof sql, "DELETE FROM %s", t->name);
	rc = store__exec(*db, path, sql, NULL, err);
	if (rc)
		return rc;
	if (schema__insert_sql(t, sql, sizeof sql))
		return prof_error__set(err, PROF_E_SQL, "%s: statement too long", path);
	if (sqlite3_prepare_v2(*db, sql, -1, ins, NULL) != SQLITE_OK)
		return store__plain_sql_error(err, path, *db);
	return 0;
}

/* Run a bound INSERT once and make it reusable. */
static int insert_row(sqlite3 *db, sqlite3_stmt *ins, const char *path, struct prof_error *err)
{
	int rc = sqlite3_step(ins) == SQLITE_DONE ? 0 : store__plain_sql_error(err, path, db);

	sqlite3_reset(ins);
	return rc;
}

/* Commit when every row went in (rc 0), else leave the table as it was. */
static int replace_end(const char *path, sqlite3 *db, sqlite3_stmt *ins, int rc,
		       struct prof_error *err)
{
	if (!rc)
		rc = store__exec(db, path, "COMMIT", NULL, err);
	sqlite3_finalize(ins);
	sqlite3_close(db);
	return rc;
}

int prof_analysis__store_peaks(const char *capture, const struct prof_peak *peaks, int n,
			       struct prof_error *err)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *ins = NULL;
	int rc = replace_begin(capture, ANALYSIS_PEAKS, &db, &ins, err);

	for (int i = 0; !rc && i < n; i++) {
		const struct prof_peak *p = &peaks[i];

		sqlite3_bind_text(ins, 1, p->key, -1, SQLITE_TRANSIENT);
		if (p->text) {
			sqlite3_bind_null(ins, 2);
			sqlite3_bind_text(ins, 3, p->text, -1, SQLITE_TRANSIENT);
		} else {
			sqlite3_bind_double(ins, 2, p->value);
			sqlite3_bind_null(ins, 3);
		}
		rc = insert_row(db, ins, capture, err);
	}
	return replace_end(capture, db, ins, rc, err);
}

int prof_analysis__store_findings(const char *capture, const struct prof_finding *findings,
				  int n, struct prof_error *err)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *ins = NULL;
	int rc = replace_begin(capture, ANALYSIS_FINDINGS, &db, &ins, err);

	for (int i = 0; !rc && i < n; i++) {
		const struct prof_finding *f = &findings[i];

		sqlite3_bind_int(ins, 1, f->rank);
		sqlite3_bind_text(ins, 2, f->rule, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(ins, 3, f->title, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(ins, 4, f->severity, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(ins, 5, f->share);
		sqlite3_bind_int64(ins, 6, f->time_ns);
		sqlite3_bind_text(ins, 7, f->evidence, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(ins, 8, f->change, -1, SQLITE_TRANSIENT);
		rc = insert_row(db, ins, capture, err);
	}
	return replace_end(capture, db, ins, rc, err);
}
