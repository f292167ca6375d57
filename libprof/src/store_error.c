/* store_error.c - one place that turns SQLite failures into perfkit errors,
 * so every caller names the file and says what is wrong the same way, and
 * the one helper that runs a statement for its effect. */
#include "store_impl.h"

int store__sqlite_error(struct prof_error *err, const char *path, sqlite3 *db, int rc,
			const char *what)
{
	int ext = db ? sqlite3_extended_errcode(db) : rc;
	const char *detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);

	if (ext == SQLITE_IOERR_SHORT_READ)
		return prof_error__set(err, PROF_E_TRUNCATED,
				       "%s: truncated (the file ends before the database does)", path);
	switch (rc & 0xFF) {
	case SQLITE_NOTADB:
		return prof_error__set(err, PROF_E_NOT_SQLITE, "%s: not an SQLite database", path);
	case SQLITE_CORRUPT:
		return prof_error__set(err, PROF_E_CORRUPT, "%s: corrupt database (%s)", path, detail);
	case SQLITE_NOMEM:
		return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", path);
	case SQLITE_IOERR:
	case SQLITE_CANTOPEN:
	case SQLITE_FULL:
	case SQLITE_PERM:
	case SQLITE_READONLY:
		return prof_error__set(err, PROF_E_IO, "%s: %s: %s", path, what, detail);
	default:
		return prof_error__set(err, PROF_E_SQL, "%s: %s: %s", path, what, detail);
	}
}

int store__plain_sql_error(struct prof_error *err, const char *path, sqlite3 *db)
{
	return prof_error__set(err, PROF_E_SQL, "%s: %s", path, sqlite3_errmsg(db));
}

int store__exec(sqlite3 *db, const char *path, const char *sql, const char *what,
		struct prof_error *err)
{
	int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);

	if (rc == SQLITE_OK)
		return 0;
	return what ? store__sqlite_error(err, path, db, rc, what)
		    : store__plain_sql_error(err, path, db);
}
