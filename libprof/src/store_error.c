/* store_error.c - one place that turns SQLite failures into perfkit errors,
 * so every caller names the file and says what is wrong the same way, and
 * the one helper that runs a statement for its effect. */
#include "store_impl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>

/* Less free room than this, and a failed write is taken for want of room. */
#define ROOM_LOW_BYTES (1 << 20)

/* A write SQLite calls an I/O error, where errno is no longer the write's
 * (SQLite keeps the errno of its last system call): whether the file's
 * folder has next to no room, or a file size limit is in force. */
static bool short_of_room(sqlite3 *db)
{
	const char *file = sqlite3_db_filename(db, "main");
	char dir[4096], *slash;
	struct statvfs vfs;
	struct rlimit limit;

	if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
		return true;
	if (!file || !*file)
		return false;
	snprintf(dir, sizeof dir, "%s", file);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	return statvfs(slash ? dir : ".", &vfs) == 0 &&
	       (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize < ROOM_LOW_BYTES;
}

bool store__out_of_room(sqlite3 *db, int rc)
{
	int sys = db ? sqlite3_system_errno(db) : 0;

	/* ENOSPC is SQLITE_FULL; a file size limit (EFBIG) or a quota is an
	 * I/O error to SQLite, but the same to whoever reads the message */
	if ((rc & 0xFF) == SQLITE_FULL)
		return true;
	if ((rc & 0xFF) != SQLITE_IOERR || !db)
		return false;
	if (sys == ENOSPC || sys == EFBIG || sys == EDQUOT)
		return true;
	return sqlite3_extended_errcode(db) == SQLITE_IOERR_WRITE && short_of_room(db);
}

int store__sqlite_error(struct prof_error *err, const char *path, sqlite3 *db, int rc,
			const char *what)
{
	int ext = db ? sqlite3_extended_errcode(db) : rc;
	const char *detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);

	if (store__out_of_room(db, rc)) {
		int sys = db ? sqlite3_system_errno(db) : 0;

		return prof_error__set(err, PROF_E_FULL, "%s: %s: no room left to write (%s)", path,
				       what, sys == ENOSPC || sys == EFBIG || sys == EDQUOT
						     ? strerror(sys) : detail);
	}
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
