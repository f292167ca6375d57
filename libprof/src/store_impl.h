/* store_impl.h - the bodies of the store's opaque structs and the helpers
 * shared by writer.c, merge.c, reader.c, cursor.c and the analysis tables. */
#ifndef PROF_STORE_IMPL_H
#define PROF_STORE_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <sqlite3.h>

#include "prof/store.h"
#include "schema.h"
#include "prof/strmap.h"

/* Which file a path named when it was looked at. */
struct file_id {
	bool known;
	dev_t dev;
	ino_t ino;
};

struct prof_writer {
	sqlite3 *db;
	char *path;
	/* What messages call the file (prof_writer__set_name); NULL: path. */
	char *name;
	sqlite3_stmt *insert[T__COUNT];
	/* NVTX_EVENTS' columns that only a start/end range fills (1-based) */
	int nvtx_range_id_at, nvtx_end_tid_at;
	sqlite3_stmt *meta_put;
	sqlite3_stmt *count_add;
	struct prof_strmap strings;
	int64_t last_string_id;
	bool in_transaction;
	struct prof_progress progress; /* how far prof_writer__finish got */
	/* A taken-over file (take_over.c): where the finish puts it; else NULL;
	 * and the file there when it was taken over (the output's own), the
	 * only one the finish replaces. */
	char *place_at;
	struct file_id place_id;
	/* The last failure of a call that has no error parameter. */
	struct prof_error err;
	/* Out of room (disk full, file size limit): rows are no longer
	 * appended, only counted in rows_not_written, which the close or the
	 * finish records (PROF_COUNTER_ROWS_NOT_WRITTEN). */
	bool full;
	int64_t rows_pending;     /* rows appended in the open transaction */
	int64_t pages_at_begin;   /* the file's pages when it began */
	bool wal;                 /* in WAL mode (created here; a taken-over file is not) */
	int64_t rows_not_written; /* rows of transactions lost, and rows refused once full */
	/* The largest correlationId written, while only merges wrote rows: a
	 * job of many captures merges each above it without scanning every
	 * row merged before (merge.c). */
	bool corr_known;
	int64_t corr_max;
};

struct prof_store {
	sqlite3 *db;
	char *path;
	enum prof_store_kind kind;
	/* The file SQLite opened, as it was then (not set for a capture held
	 * in memory), read again later through SQLite's own descriptor of
	 * it: another process may truncate or rewrite it while it is read. A
	 * change counts (check_unchanged) for a finished capture's readers,
	 * not for perfkit top following one as it grows. */
	bool from_file;
	bool check_unchanged;
	int64_t bytes_at_open;
	uint32_t changes_at_open;     /* SQLite's file change counter */
	int64_t data_version_at_open; /* PRAGMA data_version: commits other connections made */
	/* How long a read waits for another process's lock (ms). */
	int busy_timeout_ms;
	/* The first read that found the file damaged (corrupt, cut short,
	 * unreadable) or could not get its lock, kept even when the call that
	 * met it answers only "no" or 0 (has_table, meta, counter):
	 * prof_store__check_read gives it. */
	struct prof_error fault;
	/* prof_store__check_whole_apart's check, while its thread is not
	 * joined yet (reader_check.c) */
	struct store_whole_check *whole_check;
	/* prof_store__check_whole_later's check, not run yet; once run, what
	 * it returned (its finding is the fault) */
	bool whole_check_later;
	int whole_check_later_rc;
	/* The canonical view of each table (store_views.c): its name and the
	 * SELECT over main that defines it, kept so that a view restricted to
	 * some rows can be put back. */
	struct store_view *views;
	int n_views;
	/* what readers above keep for the connection (prof_store__keep) */
	struct store_kept *kept;
	/* what it shares with the connections reopened from it, or it from
	 * (prof_store__shared_take); NULL until one is asked for */
	struct store_shelf *shelf;
};

struct store_shelf;
/* to shares from's shelf from now on (prof_store__reopen). */
void store__share_shelf(struct prof_store *from, struct prof_store *to);
/* s leaves its shelf, freed with its values by the last to leave. */
void store__drop_shelf(struct prof_store *s);

struct store_kept;
/* Hand everything kept to its done (prof_store__close). */
void store__drop_kept(struct prof_store *s);

struct store_whole_check;
/* Wait for prof_store__check_whole_apart's check, or run
 * prof_store__check_whole_later's (none: 0): its result, a failure kept as
 * s's fault. */
int store__join_whole_check(struct prof_store *s);
/* Stop the check and forget it, its answer unread (prof_store__close). */
void store__drop_whole_check(struct prof_store *s);

struct store_view {
	const char *name;
	char *select;
	/* the conditions of prof_store__restrict (the processes) and
	 * prof_store__restrict_time (a stretch of time), ANDed; NULL: none */
	char *where, *time_where;
};

struct cursor_copy;

/* The first columns of a row whose kind and integer value the cursor keeps
 * once asked (cursor.c). */
#define CURSOR_KEPT_COLUMNS 32

struct prof_cursor {
	struct prof_store *store;
	sqlite3_stmt *stmt;
	bool done;    /* stepped past the last row: stay at the end */
	/* a copy's row (prof_cursor__new_copy): no store, no statement */
	struct cursor_copy *copy;
	/* keep (prof_cursor__keep_values): the row's kinds and integers asked
	 * so far are kept (bit col of each mask), for a cursor whose rows
	 * several walks read, each asking a column's kind and value again,
	 * each a call into SQLite (the calls' census asked 40 a row for its 7
	 * columns); a cursor read once a column pays nothing for it */
	bool keep;
	uint32_t kinds_kept, ints_kept;
	unsigned char kinds[CURSOR_KEPT_COLUMNS];
	int64_t ints[CURSOR_KEPT_COLUMNS];
};

/* A copy's values, read by the accessors of cursor.c (cursor_copy.c). */
bool cursor_copy__is_null(const struct cursor_copy *k, int col);
int64_t cursor_copy__int64(const struct cursor_copy *k, int col);
double cursor_copy__double(const struct cursor_copy *k, int col);
const char *cursor_copy__text(struct cursor_copy *k, int col, size_t *len);
enum prof_value_kind cursor_copy__kind(const struct cursor_copy *k, int col);
int cursor_copy__columns(const struct cursor_copy *k);
void cursor_copy__free(struct cursor_copy *k);

/* Whether rc (with db's errno) is a write that found no room: the disk
 * full (ENOSPC), the file size limit (EFBIG), a quota. */
bool store__out_of_room(sqlite3 *db, int rc);
/* Turn an SQLite failure on the file at path into a PROF_E_* code and a
 * one-line message naming the file; what says what was being done. No room
 * to write is PROF_E_FULL. */
int store__sqlite_error(struct prof_error *err, const char *path, sqlite3 *db, int rc,
			const char *what);

/* A read of s failed with rc while doing what: the error (as
 * store__sqlite_error makes it; "truncated while being read" when the file
 * has shrunk since it was opened; PROF_E_LOCKED when another process held
 * the lock past s->busy_timeout_ms) in err, which may be NULL; one that
 * says the file is damaged or locked is also kept in s->fault. Returns the
 * code. */
int store__read_error(struct prof_store *s, int rc, const char *what, struct prof_error *err);
/* How long readers wait for a lock: PROF_BUSY_TIMEOUT_ENV's milliseconds,
 * else PROF_BUSY_TIMEOUT_MS_DEFAULT. */
int store__busy_timeout_ms(void);
/* Note what the file s has just opened is, before anything is read of it,
 * for prof_store__check_read to compare. */
int store__note_opened(struct prof_store *s, struct prof_error *err);

/* The analysis tables' form of an SQL failure: PROF_E_SQL, the path and
 * SQLite's message as it is. */
int store__plain_sql_error(struct prof_error *err, const char *path, sqlite3 *db);
/* The one integer a PRAGMA (or query) gives; -1 when it fails. */
int64_t store__pragma_int(sqlite3 *db, const char *sql);
/* Run sql (one statement or several) for its effect. On failure err is
 * filled by store__sqlite_error with what, or, when what is NULL, by
 * store__plain_sql_error. */
int store__exec(sqlite3 *db, const char *path, const char *sql, const char *what,
		struct prof_error *err);

/* Define every table's canonical view in s's temporary schema
 * (store_views.c); 0 or a PROF_E_* code. */
int store__make_views(struct prof_store *s, struct prof_error *err);
void store__free_views(struct prof_store *s);

/* Open the capture at path read-write, create the analysis tables where they
 * are missing and begin a transaction (analysis_tables.c). *db is for the
 * caller to close, whatever the result. */
int analysis__begin(const char *path, sqlite3 **db, struct prof_error *err);

/* Commit the open transaction (if any) and, when begin is set, open the next.
 * A transaction an earlier failure rolled back is not committed: that
 * failure's error is returned (w->err), not SQLite's "no transaction is
 * active". */
int writer__commit(struct prof_writer *w, bool begin, struct prof_error *err);
/* Roll the open transaction back, if SQLite has not already: its rows
 * count as not written, and the string index is read again from the file
 * (strings interned in the transaction are gone with it). */
void writer__rollback(struct prof_writer *w);
/* A writer appending to the existing capture at path through db, which it
 * takes (closed on failure too). */
int writer__adopt(const char *path, sqlite3 *db, struct prof_writer **out, struct prof_error *err);
/* Commit and close. Frees w. */
void writer__close(struct prof_writer *w);
/* The file's name in messages. */
static inline const char *writer__name(const struct prof_writer *w)
{
	return w->name ? w->name : w->path;
}
/* Remove SQLite's companions of the file at path (-wal, -shm, -journal). */
void writer__remove_side_files(const char *path);
/* Rename the finished file src to dst (copied, on another file system),
 * replacing the file dst_id names. PROF_E_NOT_PLACED when it cannot be, or
 * when dst is no longer the file that was there at the take-over (another
 * run given -f took the name): that file is not replaced. */
int take_over__put_in_place(const char *src, const char *dst, const struct file_id *dst_id,
			    struct prof_error *err);

#endif
