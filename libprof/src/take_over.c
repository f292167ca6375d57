/* take_over.c - finishing a capture by taking over its one process file.
 *
 * A run whose program had one process leaves one proc-<pid>.sqlite; merging
 * it copies every row into the output (and through the output's WAL twice),
 * which for a long run takes longer than everything else in the finish.
 * Instead the process file gets the output's metadata, is finished where it
 * lies and is renamed to the output's name: the same capture as the merge
 * makes, in the time of the index build.
 *
 * The file must be ours alone first: it leaves WAL mode, which SQLite
 * allows only when no other connection has it open (a `perfkit top`
 * following the run, or a process of the program still writing, means a
 * merge instead). Out of WAL mode, a reader that opens it later takes the
 * rollback journal's locks on the file itself, which stay with the file
 * through the rename; a WAL index would stay behind under the old name. */
#include "store_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof/output.h"

/* What take_over returns when the file cannot be taken over. */
#define NOT_TAKEN 1

/* As the writer's (writer.c): a commit syncs the file, and the index
 * build's sorts spill to temporary files rather than memory. */
static const char *const finish_pragmas =
	"PRAGMA synchronous = NORMAL;"
	"PRAGMA temp_store = FILE;";

static bool has_rows(sqlite3 *db, const char *table)
{
	char sql[128];
	sqlite3_stmt *st;
	bool yes;

	snprintf(sql, sizeof sql, "SELECT 1 FROM %s LIMIT 1", table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return true;
	yes = sqlite3_step(st) != SQLITE_DONE;
	sqlite3_finalize(st);
	return yes;
}

/* Whether w holds anything the take-over would lose: rows beyond its
 * metadata, counters and the fixed ENUM_* tables. */
static bool holds_rows(struct prof_writer *w)
{
	for (int i = 0; i < T__COUNT; i++) {
		if (i == T_META || i == T_COUNTERS || i == T_ENUM_MEMCPY_OPER || i == T_ENUM_MEM_KIND)
			continue;
		if (schema_tables[i].with_first_row && !schema__has_table(w->db, schema_tables[i].name))
			continue;
		if (has_rows(w->db, schema_tables[i].name))
			return true;
	}
	return false;
}

static bool same_columns(sqlite3 *db, const struct schema_table *t)
{
	sqlite3_stmt *st;
	int n = 0;
	bool same = true;

	if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1) ORDER BY cid", -1, &st,
			       NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC);
	while (same && sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		same = n < t->n_cols && name && !strcmp(name, t->cols[n].name);
		n++;
	}
	sqlite3_finalize(st);
	/* a table made with its first row is absent where it had none */
	if (n == 0 && t->with_first_row)
		return true;
	return same && n == t->n_cols;
}

/* A capture this perfkit writes: its schema version and every table with
 * the columns of schema.c, so the rows need no translation. */
static bool our_schema(sqlite3 *db)
{
	if (store__pragma_int(db, "PRAGMA user_version") != PROF_SCHEMA_VERSION)
		return false;
	for (int i = 0; i < T__COUNT; i++)
		if (!same_columns(db, &schema_tables[i]))
			return false;
	return true;
}

/* A file an earlier perfkit of this schema version wrote gains the tables
 * and columns added since, so it can be taken over as this one's would. */
static bool upgraded(sqlite3 *db)
{
	if (store__pragma_int(db, "PRAGMA user_version") != PROF_SCHEMA_VERSION)
		return false;
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return false;
	if (schema__upgrade(db) != SQLITE_OK) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return false;
	}
	return sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
}

/* Leave WAL mode, which only the file's one connection may do. */
static bool leave_wal_alone(sqlite3 *db)
{
	sqlite3_stmt *st;
	bool left = false;

	if (sqlite3_prepare_v2(db, "PRAGMA journal_mode = DELETE", -1, &st, NULL) != SQLITE_OK)
		return false;
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *mode = (const char *)sqlite3_column_text(st, 0);

		left = mode && !strcmp(mode, "delete");
	}
	sqlite3_finalize(st);
	return left;
}

/* A connection to src with the file to itself, or NOT_TAKEN. */
static int open_alone(const char *path, sqlite3 **db)
{
	int rc = sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);

	if (rc == SQLITE_OK && upgraded(*db) && our_schema(*db) && leave_wal_alone(*db) &&
	    sqlite3_exec(*db, finish_pragmas, NULL, NULL, NULL) == SQLITE_OK) {
		/* readers that come now wait for the journal's locks, briefly */
		sqlite3_busy_timeout(*db, 5000);
		return 0;
	}
	sqlite3_close(*db);
	*db = NULL;
	return NOT_TAKEN;
}

/* Each row of sql on from into to: metadata put, or counters added. */
static int copy_rows(struct prof_writer *from, struct prof_writer *to, const char *sql,
		     bool counters, struct prof_error *err)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(from->db, sql, -1, &st, NULL);

	if (rc != SQLITE_OK)
		return store__sqlite_error(err, from->path, from->db, rc, "read the metadata");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(st, 0);

		if (counters ? prof_writer__count(to, key, sqlite3_column_int64(st, 1))
			     : prof_writer__meta(to, key, (const char *)sqlite3_column_text(st, 1))) {
			sqlite3_finalize(st);
			*err = to->err;
			return err->code;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0
				 : store__sqlite_error(err, from->path, from->db, rc, "read the metadata");
}

/* from's metadata replaces to's, and from's counters are added to to's:
 * what merging to into from leaves (a merge's source keeps its metadata). */
static int take_meta(struct prof_writer *from, struct prof_writer *to, struct prof_error *err)
{
	int rc = store__exec(to->db, to->path, "DELETE FROM PERFKIT_META", "take over", err);

	if (!rc)
		rc = copy_rows(from, to, "SELECT key, value FROM PERFKIT_META ORDER BY rowid", false,
			       err);
	if (!rc)
		rc = copy_rows(from, to, "SELECT name, value FROM PERFKIT_COUNTERS ORDER BY rowid",
			       true, err);
	return rc;
}

static bool schema_builds(const char *index)
{
	for (int i = 0; i < schema_index_count; i++)
		if (!strcmp(schema_indexes[i].name, index))
			return true;
	return false;
}

/* The first index of src that this perfkit does not build, into name;
 * false when there is none. */
static bool other_index(struct prof_writer *src, char *name, size_t cap)
{
	sqlite3_stmt *st;
	bool found = false;

	if (sqlite3_prepare_v2(src->db, "SELECT name FROM sqlite_master WHERE type = 'index'"
			       " AND name GLOB 'perfkit_*'", -1, &st, NULL) != SQLITE_OK)
		return false;
	while (!found && sqlite3_step(st) == SQLITE_ROW) {
		const char *ix = (const char *)sqlite3_column_text(st, 0);

		found = ix && !schema_builds(ix) && (size_t)snprintf(name, cap, "%s", ix) < cap;
	}
	sqlite3_finalize(st);
	return found;
}

/* A file a perfkit finished before (a standalone capture, a fixture) may
 * hold indexes this one no longer builds, which a merge would not copy. */
static int drop_other_indexes(struct prof_writer *src, struct prof_error *err)
{
	char name[128], sql[160];
	int rc = 0;

	while (!rc && other_index(src, name, sizeof name)) {
		snprintf(sql, sizeof sql, "DROP INDEX \"%s\"", name);
		rc = store__exec(src->db, src->path, sql, "drop an index", err);
	}
	return rc;
}

/* Take src's writer over as *w: w's metadata and counters moved into src in
 * src's first transaction; w closed. 0, or NOT_TAKEN with src rolled back. */
static int take(struct prof_writer **w, const char *src_path, sqlite3 *db,
		struct prof_error *err)
{
	struct prof_writer *out = *w, *src;
	struct stat st;

	if (writer__adopt(src_path, db, &src, err))
		return NOT_TAKEN;
	if (take_meta(out, src, err) || drop_other_indexes(src, err) ||
	    !(src->place_at = strdup(out->path)) || prof_writer__set_name(src, out->name)) {
		writer__rollback(src);
		writer__close(src);
		return NOT_TAKEN;
	}
	src->progress = out->progress;
	/* the output's own file: what the finish may replace */
	if (stat(out->path, &st) == 0)
		src->place_id = (struct file_id){ true, st.st_dev, st.st_ino };
	writer__close(out);
	*w = src;
	return 0;
}

int prof_writer__take_over(struct prof_writer **w, const char *src_path, struct prof_error *err)
{
	sqlite3 *db;
	int rc;

	rc = writer__commit(*w, false, err);
	if (!rc && !holds_rows(*w) && !open_alone(src_path, &db))
		rc = take(w, src_path, db, err);
	else if (!rc)
		rc = NOT_TAKEN;
	/* *w, the one taken over or still the output, goes on writing */
	if (writer__commit(*w, true, err) && rc == 0)
		rc = err->code;
	return rc;
}
