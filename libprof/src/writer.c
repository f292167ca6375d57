/* writer.c - appending a capture's rows to its SQLite file.
 *
 * Built for one background thread: every table has one prepared INSERT that
 * is reused for every row (bound by index, no allocation per row), and a
 * transaction is always open; prof_writer__flush commits it and opens the
 * next, which is when a reader in another process (WAL mode) sees the rows.
 * A writer is not safe for concurrent use from several threads. */
#include "store_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static int sql_fail(struct prof_writer *w, struct prof_error *err, int rc, const char *what)
{
	return store__sqlite_error(err ? err : &w->err, writer__name(w), w->db, rc, what);
}

/* A failure names the step, what, in words (a statement is no message: a
 * full TMPDIR made a reader of a job's captures print its PRAGMAs); without
 * err it is kept for last_error. */
static int exec(struct prof_writer *w, const char *sql, const char *what, struct prof_error *err)
{
	return store__exec(w->db, writer__name(w), sql, what, err ? err : &w->err);
}

static int load_strings(struct prof_writer *w, struct prof_error *err);
static void fold_wal(struct prof_writer *w);

void writer__rollback(struct prof_writer *w)
{
	w->corr_known = false;
	if (!sqlite3_get_autocommit(w->db))
		sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
	w->in_transaction = false;
	w->rows_not_written += w->rows_pending;
	w->rows_pending = 0;
	prof_strmap__exit(&w->strings);
	w->last_string_id = 0;
	if (load_strings(w, NULL))
		w->full = true; /* without a string index no row can be appended */
}

/* The transaction being written found no room: it is lost (SQLite may have
 * rolled it back already), and so is every row after it. Everything before
 * it is in the file (each commit is folded in, fold_wal), so a
 * truncating checkpoint gives back the room its frames took in the WAL. */
static void out_of_room(struct prof_writer *w)
{
	writer__rollback(w);
	w->full = true;
	sqlite3_exec(w->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
}

int64_t store__pragma_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Pages a transaction may change besides those it adds: a b-tree path per
 * table it touches, the header, the freelist. */
#define COMMIT_SLACK_PAGES 32

/* In WAL mode a commit needs room for the transaction twice: its frames in
 * the WAL (which reuses the room of the frames folded in before), then as
 * much again when fold_wal folds them into the file. A transaction only
 * the WAL could hold would leave a file that is not complete without it,
 * and no room to complete it: such a transaction is refused before it is
 * written, as if the disk were full. 0 or PROF_E_FULL. */
/* statvfs of the folder holding path. */
static int fstatvfs_path(const char *path, struct statvfs *vfs)
{
	char dir[4096];
	char *slash;

	snprintf(dir, sizeof dir, "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return statvfs(".", vfs);
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	return statvfs(dir, vfs);
}

static int room_to_commit(struct prof_writer *w, struct prof_error *err)
{
	char wal[4096];
	struct stat wal_st, db_st;
	struct statvfs vfs;
	struct rlimit limit;
	int64_t page = store__pragma_int(w->db, "PRAGMA page_size");
	int64_t added = store__pragma_int(w->db, "PRAGMA page_count") - w->pages_at_begin;
	int64_t grow, frames, wal_bytes = 0, need, free_bytes;

	if (!w->wal || page <= 0 || added < 0 || w->pages_at_begin < 0)
		return 0;
	grow = added * page;                          /* the file, when folded in */
	frames = (added + COMMIT_SLACK_PAGES) * page; /* the WAL */
	snprintf(wal, sizeof wal, "%s-wal", w->path);
	if (stat(wal, &wal_st) == 0)
		wal_bytes = (int64_t)wal_st.st_blocks * 512;
	need = (frames > wal_bytes ? frames - wal_bytes : 0) + grow;
	if (fstatvfs_path(w->path, &vfs) == 0) {
		free_bytes = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
		if (free_bytes < need)
			return prof_error__set(err ? err : &w->err, PROF_E_FULL,
					       "%s: commit: no room left to write (%lld KiB needed, "
					       "%lld KiB free)", writer__name(w), (long long)need >> 10,
					       (long long)free_bytes >> 10);
	}
	/* the file size limit counts each file on its own */
	if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
	    stat(w->path, &db_st) == 0 &&
	    ((int64_t)db_st.st_size + grow > (int64_t)limit.rlim_cur ||
	     frames > (int64_t)limit.rlim_cur))
		return prof_error__set(err ? err : &w->err, PROF_E_FULL,
				       "%s: commit: no room left to write (the file size limit, "
				       "%lld KiB)", writer__name(w), (long long)limit.rlim_cur >> 10);
	return 0;
}

int writer__commit(struct prof_writer *w, bool begin, struct prof_error *err)
{
	int rc;

	if (w->in_transaction && sqlite3_get_autocommit(w->db)) {
		/* an earlier failure rolled the transaction back: say that one */
		rc = w->err.code ? w->err.code : PROF_E_SQL;
		if (err)
			*err = w->err.code ? w->err
					   : (struct prof_error){ PROF_E_SQL, "transaction rolled back" };
		writer__rollback(w);
		return rc;
	}
	if (w->in_transaction) {
		rc = room_to_commit(w, err);
		if (!rc)
			rc = exec(w, "COMMIT", "commit", err);
		if (rc == PROF_E_FULL)
			out_of_room(w);
		if (rc)
			return rc;
		w->in_transaction = false;
		w->rows_pending = 0;
		fold_wal(w);
	}
	if (begin) {
		rc = exec(w, "BEGIN", "begin a transaction", err);
		if (rc)
			return rc;
		w->in_transaction = true;
		w->pages_at_begin = store__pragma_int(w->db, "PRAGMA page_count");
	}
	return 0;
}

/* Run a bound INSERT once and make it reusable. */
static int step(struct prof_writer *w, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc == SQLITE_DONE)
		return 0;
	rc = sql_fail(w, NULL, rc, "insert");
	if (rc == PROF_E_FULL)
		out_of_room(w);
	return rc;
}

/* One row of the program's activity: refused and counted once the writer
 * is out of room. */
static int add_row(struct prof_writer *w, sqlite3_stmt *st)
{
	int rc;

	w->corr_known = false; /* a row of its own: the merges' maximum no longer holds */
	if (w->full) {
		w->rows_not_written++;
		return PROF_E_FULL;
	}
	rc = step(w, st);
	if (!rc)
		w->rows_pending++;
	else if (w->full)
		w->rows_not_written++;
	return rc;
}

static inline void bind_i64(sqlite3_stmt *st, int i, int64_t v)
{
	sqlite3_bind_int64(st, i, v);
}

static inline void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void writer_free(struct prof_writer *w)
{
	for (int i = 0; i < T__COUNT; i++)
		sqlite3_finalize(w->insert[i]);
	sqlite3_finalize(w->meta_put);
	sqlite3_finalize(w->count_add);
	sqlite3_close(w->db);
	prof_strmap__exit(&w->strings);
	free(w->path);
	free(w->name);
	free(w->place_at);
	free(w);
}

/* Claim the path: O_EXCL makes "refuse an existing file" atomic. A file
 * the caller made for the writer (PROF_WRITER_CLAIMED) is claimed already. */
static int claim_path(const char *path, unsigned flags, struct prof_error *err)
{
	int fd;

	if (flags & PROF_WRITER_CLAIMED)
		return 0;
	if (flags & PROF_WRITER_OVERWRITE) {
		if (unlink(path) && errno != ENOENT)
			return prof_error__set(err, PROF_E_IO, "%s: cannot replace: %s", path,
					       strerror(errno));
		writer__remove_side_files(path);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0) {
		if (errno == EEXIST)
			return prof_error__set(err, PROF_E_EXISTS,
					       "%s: already exists (refusing to overwrite it)", path);
		return prof_error__set(err, PROF_E_IO, "%s: cannot create: %s", path,
				       strerror(errno));
	}
	close(fd);
	return 0;
}

static int prepare(struct prof_writer *w, const char *sql, sqlite3_stmt **st,
		   struct prof_error *err)
{
	int rc = sqlite3_prepare_v3(w->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);

	return rc == SQLITE_OK ? 0 : sql_fail(w, err, rc, "prepare");
}

static int prepare_all(struct prof_writer *w, struct prof_error *err)
{
	const char *bad = schema__check_rows();
	char sql[2048];
	int rc;

	/* a column whose descriptor disagrees with its row struct would bind
	 * the wrong bytes into every row */
	if (bad)
		return prof_error__set(err, PROF_E_SQL, "%s: column %s does not fit its row",
				       writer__name(w), bad);
	w->nvtx_range_id_at = schema__column_index(&schema_tables[T_NVTX], "rangeId");
	w->nvtx_end_tid_at = schema__column_index(&schema_tables[T_NVTX], "endGlobalTid");
	for (int i = 0; i < T__COUNT; i++) {
		/* made with its first row (add), its statement then too */
		if (schema_tables[i].with_first_row)
			continue;
		if (schema__insert_sql(&schema_tables[i], sql, sizeof sql))
			return prof_error__set(err, PROF_E_SQL, "%s: statement too long", writer__name(w));
		rc = prepare(w, sql, &w->insert[i], err);
		if (rc)
			return rc;
	}
	rc = prepare(w, "INSERT INTO PERFKIT_META (key, value) VALUES (?1, ?2)"
		     " ON CONFLICT(key) DO UPDATE SET value = excluded.value", &w->meta_put, err);
	if (!rc)
		rc = prepare(w, "INSERT INTO PERFKIT_COUNTERS (name, value) VALUES (?1, ?2)"
			     " ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
			     &w->count_add, err);
	return rc;
}

/* WAL lets a reader in another process (perfkit top) read committed rows
 * while this writer appends; synchronous=NORMAL syncs only at checkpoints,
 * which keeps the file consistent after a crash of the application. The
 * index build at the end sorts every row: with temp_store=FILE it spills to
 * a temporary file, so the profiled process's memory stays flat however
 * long it ran (in memory it grew by about 50 MB per million kernels). */
/* After every commit the WAL is folded into the file (PASSIVE: a reader
 * following the capture is never waited for), instead of SQLite's
 * checkpoint every 1000 pages. Between commits the file is then complete
 * on its own, and when the disk fills, the WAL holds only the transaction
 * that could not be written, whose room out_of_room gives back. A
 * checkpoint that finds no room leaves the WAL as it was (the file needs it
 * until the finish folds it in) and stops the rows. Nothing to do out of
 * WAL mode. */
static void fold_wal(struct prof_writer *w)
{
	int rc = sqlite3_wal_checkpoint_v2(w->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);

	if (rc != SQLITE_OK && store__out_of_room(w->db, rc)) {
		store__sqlite_error(&w->err, writer__name(w), w->db, rc, "checkpoint");
		w->full = true;
	}
}

static const char *const open_pragmas =
	"PRAGMA page_size = 8192;"
	"PRAGMA journal_mode = WAL;"
	"PRAGMA synchronous = NORMAL;"
	"PRAGMA cache_size = -32768;"
	"PRAGMA temp_store = FILE;";

int prof_writer__create(const char *path, unsigned flags, struct prof_writer **out,
			struct prof_error *err)
{
	struct prof_writer *w;
	int rc;

	*out = NULL;
	if (!path || !*path)
		return prof_error__set(err, PROF_E_USAGE, "no output file given");
	rc = claim_path(path, flags, err);
	if (rc)
		return rc;
	w = calloc(1, sizeof *w);
	if (!w || !(w->path = strdup(path))) {
		if (w) {
			free(w->path);
			free(w);
		}
		return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", path);
	}
	rc = sqlite3_open_v2(path, &w->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, NULL);
	if (rc != SQLITE_OK) {
		rc = sql_fail(w, err, rc, "open");
		goto out;
	}
	sqlite3_busy_timeout(w->db, 5000);
	sqlite3_wal_autocheckpoint(w->db, 0); /* fold_wal does it */
	rc = exec(w, open_pragmas, "set the file up", err);
	if (rc)
		goto out;
	w->wal = true;
	rc = writer__commit(w, true, err);
	if (rc)
		goto out;
	rc = schema__create(w->db);
	if (rc != SQLITE_OK) {
		rc = sql_fail(w, err, rc, "create tables");
		goto out;
	}
	rc = prepare_all(w, err);
	/* Commit the empty tables at once: a reader may open the file now. */
	if (!rc)
		rc = writer__commit(w, true, err);
out:
	if (rc) {
		writer_free(w);
		unlink(path);
		writer__remove_side_files(path);
		return rc;
	}
	*out = w;
	return 0;
}

/* The string table of an existing capture, so prof_writer__string keeps
 * its ids. err NULL: w->err. */
static int load_strings(struct prof_writer *w, struct prof_error *err)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(w->db, "SELECT id, value FROM StringIds", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sql_fail(w, err, rc, "read StringIds");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(st, 1);
		size_t len = text ? strlen(text) : 0;
		int64_t id = sqlite3_column_int64(st, 0);

		if (prof_strmap__add(&w->strings, text ? text : "", len,
				     prof_strmap__hash(text ? text : "", len), id)) {
			sqlite3_finalize(st);
			return prof_error__set(err ? err : &w->err, PROF_E_NOMEM, "%s: out of memory",
					       writer__name(w));
		}
		if (id > w->last_string_id)
			w->last_string_id = id;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sql_fail(w, err, rc, "read StringIds");
}

int writer__adopt(const char *path, sqlite3 *db, struct prof_writer **out, struct prof_error *err)
{
	struct prof_writer *w = calloc(1, sizeof *w);
	int rc;

	*out = NULL;
	if (!w || !(w->path = strdup(path))) {
		if (w) {
			free(w->path);
			free(w);
		}
		sqlite3_close(db);
		return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", path);
	}
	w->db = db;
	sqlite3_wal_autocheckpoint(w->db, 0);
	rc = load_strings(w, err);
	if (!rc)
		rc = prepare_all(w, err);
	if (!rc)
		rc = writer__commit(w, true, err);
	if (rc) {
		writer_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

int prof_writer__flush(struct prof_writer *w, struct prof_error *err)
{
	return writer__commit(w, true, err);
}

static int put_meta(struct prof_writer *w, const char *key, const char *value)
{
	sqlite3_stmt *st = w->meta_put;

	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	bind_text(st, 2, value);
	return step(w, st);
}

/* A finished capture is one self-contained file: fold the WAL back in and
 * leave WAL mode, so it can be copied, or read from a read-only folder,
 * without its -wal and -shm companions. Leaving WAL mode needs the file to
 * itself, and a reader following the capture (perfkit top) may have it open:
 * it gets a moment to let go. If it does not, the capture stays in WAL mode,
 * complete in the main file after the checkpoint. */
#define LEAVE_WAL_TRIES 200
#define LEAVE_WAL_PAUSE_US 10000

static int leave_wal(struct prof_writer *w, struct prof_error *err)
{
	int rc;

	for (int i = 0; i < LEAVE_WAL_TRIES; i++) {
		rc = sqlite3_exec(w->db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;",
				  NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			return 0;
		if ((rc & 0xFF) != SQLITE_BUSY && (rc & 0xFF) != SQLITE_LOCKED)
			return sql_fail(w, err, rc, "leave WAL mode");
		usleep(LEAVE_WAL_PAUSE_US);
	}
	return exec(w, "PRAGMA wal_checkpoint(TRUNCATE)", "leave WAL mode", err);
}

void prof_writer__set_progress(struct prof_writer *w, const struct prof_progress *progress)
{
	if (progress)
		w->progress = *progress;
	else
		memset(&w->progress, 0, sizeof w->progress);
}

void prof_progress__report(const struct prof_progress *progress, enum prof_finish_step step,
			   int done, int total)
{
	if (progress && progress->report)
		progress->report(progress->ctx, step, done, total);
}

/* The index build sorts each table in runs the size of the page cache: runs
 * that fit the CPU's caches sort faster than the writer's large cache
 * (measured: a third less time at SQLite's default size), and take less
 * memory from the process finishing the capture. */
#define INDEX_BUILD_CACHE "PRAGMA cache_size = -2000"

/* Each index is committed on its own, so one that finds no room (the
 * file's disk, or the sort's temporary files) costs only itself and those
 * after it: they are left out, said in PROF_META_INDEXES_LEFT_OUT, and the
 * capture is complete without them (readers only get slower). Any other
 * failure fails the finish. */
static int build_indexes(struct prof_writer *w, struct prof_error *err)
{
	int rc = exec(w, INDEX_BUILD_CACHE, "build indexes", err), built = 0, sql_rc = SQLITE_OK;
	char left_out[32];

	for (int i = 0; i < schema_index_count && !rc; i++) {
		prof_progress__report(&w->progress, PROF_FINISH_INDEX, i, schema_index_count + 1);
		sql_rc = schema__create_index(w->db, &schema_indexes[i]);
		rc = sql_rc == SQLITE_OK ? writer__commit(w, true, err)
					 : sql_fail(w, err, sql_rc, "build indexes");
		if (!rc)
			built++;
	}
	prof_progress__report(&w->progress, PROF_FINISH_INDEX, schema_index_count,
			      schema_index_count + 1);
	if (!rc) {
		sql_rc = schema__analyze(w->db);
		rc = sql_rc == SQLITE_OK ? 0 : sql_fail(w, err, sql_rc, "build indexes");
	}
	if (rc != PROF_E_FULL)
		return rc;
	writer__rollback(w);
	if (built < schema_index_count) {
		snprintf(left_out, sizeof left_out, "%d of %d", schema_index_count - built,
			 schema_index_count);
		if (writer__commit(w, true, err) || put_meta(w, PROF_META_INDEXES_LEFT_OUT, left_out)) {
			if (err)
				*err = w->err;
			return w->err.code;
		}
	}
	return writer__commit(w, true, err);
}

/* The rows lost for want of room, into the counters (in the open
 * transaction). */
static int record_rows_not_written(struct prof_writer *w)
{
	int64_t n = w->rows_not_written;

	if (!n)
		return 0;
	w->rows_not_written = 0;
	return prof_writer__count(w, PROF_COUNTER_ROWS_NOT_WRITTEN, n);
}

/* Everything of prof_writer__finish but putting a taken-over file in place
 * and the last report. Frees w. */
static int finish_and_close(struct prof_writer *w, struct prof_error *err)
{
	int rc;

	rc = record_rows_not_written(w);
	if (!rc)
		rc = put_meta(w, "finished", "1");
	if (rc) {
		if (err)
			*err = w->err;
		goto out;
	}
	/* nsys keeps the session start in its own table; mirror the meta row. */
	rc = exec(w, "INSERT INTO TARGET_INFO_SESSION_START_TIME (utcEpochNs)"
		  " SELECT CAST(value AS INTEGER) FROM PERFKIT_META WHERE key = 'start_ns'"
		  " AND NOT EXISTS (SELECT 1 FROM TARGET_INFO_SESSION_START_TIME)",
		  "record the session's start", err);
	if (!rc)
		rc = writer__commit(w, true, err);
	if (!rc)
		rc = build_indexes(w, err);
	if (!rc)
		rc = writer__commit(w, false, err);
	if (rc)
		goto out;
	for (int i = 0; i < T__COUNT; i++) {
		sqlite3_finalize(w->insert[i]);
		w->insert[i] = NULL;
	}
	prof_progress__report(&w->progress, PROF_FINISH_CHECKPOINT, 0, 1);
	rc = leave_wal(w, err);
out:
	writer_free(w);
	return rc;
}

int prof_writer__finish(struct prof_writer *w, struct prof_error *err)
{
	struct prof_progress progress = w->progress;
	char *taken = NULL, *place_at = w->place_at;
	struct file_id place_id = w->place_id;
	int rc = 0;

	w->place_at = NULL;
	if (place_at && !(taken = strdup(w->path)))
		rc = prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", w->path);
	if (rc)
		writer__close(w);
	else
		rc = finish_and_close(w, err);
	if (!rc && place_at)
		rc = take_over__put_in_place(taken, place_at, &place_id, err);
	free(taken);
	free(place_at);
	prof_progress__report(&progress, PROF_FINISH_DONE, rc ? 0 : 1, 1);
	return rc;
}

void writer__close(struct prof_writer *w)
{
	writer__commit(w, false, NULL);
	/* the lost rows' count in a transaction of its own: a few pages, which
	 * the lost transaction's room usually holds */
	if (w->rows_not_written &&
	    (writer__commit(w, true, NULL) || record_rows_not_written(w) ||
	     writer__commit(w, false, NULL)))
		writer__rollback(w);
	writer_free(w);
}

void prof_writer__delete(struct prof_writer *w)
{
	if (w)
		writer__close(w);
}

const char *prof_writer__path(const struct prof_writer *w)
{
	return w->path;
}

int prof_writer__set_name(struct prof_writer *w, const char *name)
{
	char *copy = name ? strdup(name) : NULL;

	if (name && !copy)
		return prof_error__set(&w->err, PROF_E_NOMEM, "%s: out of memory", writer__name(w));
	free(w->name);
	w->name = copy;
	return 0;
}

const struct prof_error *prof_writer__last_error(const struct prof_writer *w)
{
	return &w->err;
}

int64_t prof_writer__string(struct prof_writer *w, const char *text)
{
	sqlite3_stmt *st = w->insert[T_STRINGIDS];
	size_t len;
	uint64_t hash;
	int64_t id;

	if (!text || w->full)
		return 0;
	len = strlen(text);
	hash = prof_strmap__hash(text, len);
	if (prof_strmap__find(&w->strings, text, len, hash, &id) && id)
		return id;
	id = w->last_string_id + 1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, text, (int)len, SQLITE_STATIC);
	if (step(w, st))
		return 0;
	if (prof_strmap__add(&w->strings, text, len, hash, id)) {
		prof_error__set(&w->err, PROF_E_NOMEM, "%s: out of memory", writer__name(w));
		return 0;
	}
	w->last_string_id = id;
	return id;
}

/* Bind every column of t from row, its row struct, as the column's
 * descriptor says (schema.h); a column the row does not hold is NULL. */
static sqlite3_stmt *bind_row(sqlite3_stmt *st, const struct schema_table *t, const void *row)
{
	const unsigned char *base = row;

	for (int i = 0; i < t->n_cols; i++) {
		const struct schema_column *c = &t->cols[i];
		const unsigned char *field = base + c->offset;
		int at = i + 1;

		switch (c->bind) {
		case SCHEMA_INT:
		case SCHEMA_UINT: {
			int64_t v;

			if (c->size == sizeof(int32_t)) {
				int32_t v32;

				memcpy(&v32, field, sizeof v32);
				v = c->bind == SCHEMA_UINT ? (int64_t)(uint32_t)v32 : v32;
			} else {
				memcpy(&v, field, sizeof v);
			}
			if ((c->null_when == SCHEMA_NULL_IF_ZERO && v == 0) ||
			    (c->null_when == SCHEMA_NULL_IF_NEGATIVE && v < 0))
				sqlite3_bind_null(st, at);
			else
				sqlite3_bind_int64(st, at, v);
			break;
		}
		case SCHEMA_DOUBLE: {
			double d;

			memcpy(&d, field, sizeof d);
			sqlite3_bind_double(st, at, d);
			break;
		}
		case SCHEMA_TEXT: {
			const char *text;

			memcpy(&text, field, sizeof text);
			bind_text(st, at, text);
			break;
		}
		case SCHEMA_BLOB: {
			const void *bytes;
			size_t len;

			memcpy(&bytes, field, sizeof bytes);
			memcpy(&len, base + c->len_offset, sizeof len);
			if (bytes && len && len <= INT32_MAX)
				sqlite3_bind_blob(st, at, bytes, (int)len, SQLITE_TRANSIENT);
			else
				sqlite3_bind_null(st, at);
			break;
		}
		default:
			sqlite3_bind_null(st, at);
		}
	}
	return st;
}

/* The table of a with_first_row table and its statement, at its first row:
 * 0, or the row is not written (counted as a full disk's would be when
 * that is why). */
static int create_with_first_row(struct prof_writer *w, enum schema_table_id id)
{
	char sql[2048];
	int rc;

	if (w->full)
		return PROF_E_FULL;
	rc = schema__create_table(w->db, id);
	if (rc != SQLITE_OK)
		return sql_fail(w, NULL, rc, "create a table");
	if (schema__insert_sql(&schema_tables[id], sql, sizeof sql))
		return PROF_E_SQL;
	return prepare(w, sql, &w->insert[id], NULL);
}

/* Append row to table id. */
static int add(struct prof_writer *w, enum schema_table_id id, const void *row)
{
	if (!w->insert[id]) {
		int rc = create_with_first_row(w, id);

		if (rc) {
			w->rows_not_written++;
			return rc;
		}
	}
	return add_row(w, bind_row(w->insert[id], &schema_tables[id], row));
}

int prof_writer__kernel(struct prof_writer *w, const struct prof_kernel *k)
{
	return add(w, T_KERNEL, k);
}

int prof_writer__memcpy(struct prof_writer *w, const struct prof_memcpy *m)
{
	return add(w, T_MEMCPY, m);
}

int prof_writer__memset(struct prof_writer *w, const struct prof_memset *m)
{
	return add(w, T_MEMSET, m);
}

int prof_writer__api(struct prof_writer *w, enum prof_api_domain domain,
		     const struct prof_api_call *a)
{
	return add(w, domain == PROF_API_DRIVER ? T_DRIVER : T_RUNTIME, a);
}

int prof_writer__sync(struct prof_writer *w, const struct prof_sync *s)
{
	return add(w, T_SYNC, s);
}

int prof_writer__memory(struct prof_writer *w, const struct prof_memory_event *e)
{
	return add(w, T_MEMORY, e);
}

int prof_writer__um_cpu_fault(struct prof_writer *w, const struct prof_um_cpu_fault *f)
{
	return add(w, T_UM_CPU_FAULTS, f);
}

int prof_writer__um_gpu_fault(struct prof_writer *w, const struct prof_um_gpu_fault *f)
{
	return add(w, T_UM_GPU_FAULTS, f);
}

int prof_writer__py_frame(struct prof_writer *w, const struct prof_py_frame *f)
{
	return add(w, T_PY_FRAMES, f);
}

int prof_writer__py_sample(struct prof_writer *w, const struct prof_py_sample *s)
{
	return add(w, T_PY_SAMPLES, s);
}

int prof_writer__py_cuda_call(struct prof_writer *w, const struct prof_py_cuda_call *c)
{
	return add(w, T_PY_CUDA_CALLS, c);
}

int prof_writer__graph_trace(struct prof_writer *w, const struct prof_graph_trace *g)
{
	return add(w, T_GRAPH_TRACE, g);
}

int prof_writer__capture_window(struct prof_writer *w, const struct prof_capture_window *c)
{
	return add(w, T_CAPTURE_WINDOWS, c);
}

int prof_writer__capture_window_end(struct prof_writer *w, int64_t global_pid, int64_t id,
				    int64_t end_ns, const char *closed_by)
{
	sqlite3_stmt *st = NULL;
	int rc;

	/* a window that was never written (a full disk) has no row to end */
	if (w->full || !w->insert[T_CAPTURE_WINDOWS])
		return PROF_E_FULL;
	rc = prepare(w, "UPDATE PERFKIT_CAPTURE_WINDOWS SET end = ?1, closedBy = ?2"
		     " WHERE globalPid = ?3 AND id = ?4", &st, NULL);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, end_ns);
	sqlite3_bind_text(st, 2, closed_by, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, global_pid);
	sqlite3_bind_int64(st, 4, id);
	rc = step(w, st);
	sqlite3_finalize(st);
	return rc;
}

int prof_writer__nvtx(struct prof_writer *w, const struct prof_nvtx_event *e)
{
	sqlite3_stmt *st = bind_row(w->insert[T_NVTX], &schema_tables[T_NVTX], e);

	/* A push/pop range ends on the thread it began on, and nothing pairs
	 * it by id: nsys leaves its rangeId and endGlobalTid NULL (8 bytes a
	 * range), and so do we; a start/end range keeps both, as it may end
	 * on another thread. */
	if (e->event_type != PROF_NVTX_STARTEND) {
		sqlite3_bind_null(st, w->nvtx_range_id_at);
		sqlite3_bind_null(st, w->nvtx_end_tid_at);
	}
	return add_row(w, st);
}

int prof_writer__overhead(struct prof_writer *w, const struct prof_overhead *o)
{
	return add(w, T_OVERHEAD, o);
}

int prof_writer__gpu(struct prof_writer *w, const struct prof_gpu_info *g)
{
	return add(w, T_GPU, g);
}

int prof_writer__process(struct prof_writer *w, uint32_t pid, const char *name)
{
	struct schema_process_row row = { prof_global_pid(pid), pid, name };

	return add(w, T_PROCESSES, &row);
}

int prof_writer__thread_name(struct prof_writer *w, int64_t global_tid, const char *name)
{
	struct schema_thread_name_row row = { prof_writer__string(w, name), global_tid };

	if (name && !row.name_id)
		return w->err.code;
	return add(w, T_THREADNAMES, &row);
}

int prof_writer__process_info(struct prof_writer *w, const struct prof_process_info *p)
{
	return add(w, T_PROC_INFO, p);
}

int prof_writer__clock_pair(struct prof_writer *w, const struct prof_clock_pair *c)
{
	return add(w, T_CLOCKS, c);
}

int prof_writer__process_gpu(struct prof_writer *w, int64_t global_pid, int32_t device_id,
			     const char *uuid)
{
	struct schema_process_gpu_row row = { global_pid, device_id, uuid };

	return add(w, T_PROC_GPUS, &row);
}

int prof_writer__gpu_metric_type(struct prof_writer *w, const struct prof_gpu_metric_type *t)
{
	return add(w, T_GPU_METRIC_TYPES, t);
}

int prof_writer__gpu_metric(struct prof_writer *w, const struct prof_gpu_metric *m)
{
	return add(w, T_GPU_METRICS, m);
}

int prof_writer__payload_schema(struct prof_writer *w, const struct prof_payload_schema *s)
{
	return add(w, T_PAYLOAD_SCHEMAS, s);
}

int prof_writer__payload_entry(struct prof_writer *w, const struct prof_payload_entry *e)
{
	return add(w, T_PAYLOAD_SCHEMA_ENTRIES, e);
}

int prof_writer__payload_enum_entry(struct prof_writer *w,
				    const struct prof_payload_enum_entry *e)
{
	return add(w, T_PAYLOAD_ENUM_ENTRIES, e);
}

int prof_writer__meta(struct prof_writer *w, const char *key, const char *value)
{
	if (!key)
		return prof_error__set(&w->err, PROF_E_USAGE, "%s: metadata key missing", writer__name(w));
	return put_meta(w, key, value);
}

int prof_writer__count(struct prof_writer *w, const char *name, int64_t delta)
{
	sqlite3_stmt *st = w->count_add;

	if (!name)
		return prof_error__set(&w->err, PROF_E_USAGE, "%s: counter name missing", writer__name(w));
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	bind_i64(st, 2, delta);
	return step(w, st);
}
