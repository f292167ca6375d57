/* reader.c - opening a capture read-only (a file, or its bytes held in
 * memory) and deciding what it is.
 *
 * Three kinds of file are accepted: perfkit captures (finished or still being
 * written), nsys SQLite exports, and nothing else. Everything else is refused
 * with a one-line message naming the file and what it is not: the header is
 * checked here before SQLite sees the file, because SQLite treats many broken
 * files as empty databases or fails only later, in the middle of a report. */
#include "store_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SQLITE_HEADER_BYTES 100
/* The header's "file format read version": 1 rollback journal, 2 WAL. */
#define SQLITE_READ_VERSION_AT 19
#define SQLITE_READ_VERSION_ROLLBACK 1
#define SQLITE_READ_VERSION_WAL 2

static const char sqlite_magic[16] = "SQLite format 3";

static uint32_t be16(const unsigned char *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A live writer's WAL holds pages the main file does not have yet, so the
 * main file's length says nothing about truncation while it is non-empty. */
static bool has_live_wal(const char *path)
{
	char wal[4096];
	struct stat st;

	snprintf(wal, sizeof wal, "%s-wal", path);
	return stat(wal, &st) == 0 && st.st_size > 0;
}

/* Check what the bytes are before handing them to SQLite: h holds the first
 * n of the size bytes named name (a file, or a capture held in memory). A
 * live writer's WAL may hold pages the main file lacks (wal_may_hold_pages). */
static int check_header(const char *name, const unsigned char *h, size_t n, uint64_t size,
			bool wal_may_hold_pages, struct prof_error *err)
{
	uint32_t page_bytes, pages;

	if (n == 0)
		return prof_error__set(err, PROF_E_NOT_SQLITE,
				       "%s: empty file, not an SQLite database", name);
	if (n < sizeof sqlite_magic || memcmp(h, sqlite_magic, sizeof sqlite_magic))
		return prof_error__set(err, PROF_E_NOT_SQLITE, "%s: not an SQLite database", name);
	if (n < SQLITE_HEADER_BYTES)
		return prof_error__set(err, PROF_E_TRUNCATED,
				       "%s: truncated (%zu bytes, shorter than an SQLite header)",
				       name, n);
	page_bytes = be16(h + 16);
	if (page_bytes == 1)
		page_bytes = 65536;
	if (page_bytes < 512 || (page_bytes & (page_bytes - 1)))
		return prof_error__set(err, PROF_E_CORRUPT,
				       "%s: corrupt database (bad page size %u in the header)",
				       name, page_bytes);
	/* The page count in the header is valid only when the change counter
	 * matches "version valid for" (older writers did not maintain it). */
	pages = be32(h + 28);
	if (pages && be32(h + 24) == be32(h + 92) && !wal_may_hold_pages &&
	    size < (uint64_t)pages * page_bytes)
		return prof_error__set(err, PROF_E_TRUNCATED,
				       "%s: truncated (%llu bytes; the database needs %llu)", name,
				       (unsigned long long)size,
				       (unsigned long long)pages * page_bytes);
	return 0;
}

/* Check what the file is before handing it to SQLite. */
static int check_file(const char *path, struct prof_error *err)
{
	unsigned char h[SQLITE_HEADER_BYTES];
	struct stat st;
	ssize_t n;
	int fd;

	if (stat(path, &st)) {
		if (errno == ENOENT)
			return prof_error__set(err, PROF_E_IO, "%s: no such file", path);
		return prof_error__set(err, PROF_E_IO, "%s: %s", path, strerror(errno));
	}
	if (S_ISDIR(st.st_mode))
		return prof_error__set(err, PROF_E_IO, "%s: is a directory, not a capture", path);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return prof_error__set(err, PROF_E_IO, "%s: cannot read: %s", path, strerror(errno));
	n = read(fd, h, sizeof h);
	close(fd);
	if (n < 0)
		return prof_error__set(err, PROF_E_IO, "%s: cannot read: %s", path, strerror(errno));
	return check_header(path, h, (size_t)n, (uint64_t)st.st_size, has_live_wal(path), err);
}

/* sqlite3_prepare_v2 and sqlite3_step for the helpers that answer without
 * an error (has_column, count, meta, counter): damage they meet is kept. */
static int prepare(struct prof_store *s, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);

	if (rc != SQLITE_OK)
		store__read_error(s, rc, "read", NULL);
	return rc;
}

static int step(struct prof_store *s, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		store__read_error(s, rc, "read", NULL);
	return rc;
}

/* ---- what the file is ------------------------------------------------------ */

static int query_int(struct prof_store *s, const char *sql, const char *arg, int64_t *v,
		     struct prof_error *err)
{
	sqlite3_stmt *st;
	int rc;

	*v = 0;
	rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return store__read_error(s, rc, "read schema", err);
	if (arg)
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store__read_error(s, rc, "read schema", err);
	return 0;
}

static const char *const sql_has_table =
	"SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view')"
	" AND name = ?1 COLLATE NOCASE";

static int table_exists(struct prof_store *s, const char *name, bool *yes,
			struct prof_error *err)
{
	int64_t n;
	int rc = query_int(s, sql_has_table, name, &n, err);

	*yes = n > 0;
	return rc;
}

/* Decide between perfkit capture, nsys export and neither. */
static int classify(struct prof_store *s, struct prof_error *err)
{
	int64_t user_version, schema_version = 0, n;
	bool meta, export_meta;
	int rc;

	/* The first read of sqlite_master is where SQLite notices a damaged file. */
	rc = query_int(s, "SELECT count(*) FROM sqlite_master", NULL, &n, err);
	if (!rc)
		rc = query_int(s, "PRAGMA user_version", NULL, &user_version, err);
	if (!rc)
		rc = table_exists(s, "PERFKIT_META", &meta, err);
	if (!rc && meta)
		rc = query_int(s, "SELECT CAST(value AS INTEGER) FROM PERFKIT_META"
			       " WHERE key = 'schema_version'", NULL, &schema_version, err);
	if (rc)
		return rc;
	if (user_version > PROF_SCHEMA_VERSION || schema_version > PROF_SCHEMA_VERSION)
		return prof_error__set(err, PROF_E_NEWER_SCHEMA,
				       "%s: written by a newer perfkit (schema %lld); this perfkit reads up to %d",
				       s->path,
				       (long long)(user_version > schema_version ? user_version
										: schema_version),
				       PROF_SCHEMA_VERSION);
	if (schema_version > 0) {
		s->kind = PROF_STORE_PERFKIT;
		return 0;
	}
	rc = table_exists(s, "META_DATA_EXPORT", &export_meta, err);
	if (rc)
		return rc;
	if (!export_meta) {
		rc = query_int(s, "SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'table'"
			       " AND name = 'StringIds' COLLATE NOCASE) * (SELECT count(*) FROM"
			       " sqlite_master WHERE type = 'table' AND name LIKE 'CUPTI\\_ACTIVITY\\_KIND\\_%'"
			       " ESCAPE '\\')", NULL, &n, err);
		if (rc)
			return rc;
	}
	if (export_meta || n > 0) {
		s->kind = PROF_STORE_NSYS;
		return 0;
	}
	return prof_error__set(err, PROF_E_NOT_CAPTURE,
			       "%s: an SQLite database, but not a perfkit capture or an nsys export",
			       s->path);
}

/* A store named name, for messages and prof_store__path. */
static int store_new(const char *name, struct prof_store **out, struct prof_error *err)
{
	struct prof_store *s = calloc(1, sizeof *s);

	if (!s || !(s->path = strdup(name))) {
		free(s);
		return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", name);
	}
	*out = s;
	return 0;
}

/* The end of both opens: classify what s->db holds; s is freed on failure. */
static int store_finish_open(struct prof_store *s, struct prof_store **out,
			     struct prof_error *err)
{
	int rc = classify(s, err);

	if (!rc)
		rc = store__make_views(s, err);
	if (rc) {
		prof_store__close(s);
		return rc;
	}
	*out = s;
	return 0;
}

int prof_store__open(const char *path, struct prof_store **out, struct prof_error *err)
{
	struct prof_store *s;
	int rc;

	*out = NULL;
	if (!path || !*path)
		return prof_error__set(err, PROF_E_USAGE, "no capture file given");
	rc = check_file(path, err);
	if (!rc)
		rc = store_new(path, &s, err);
	if (rc)
		return rc;
	/* each connection is one thread's (a reader on several threads opens
	 * one a thread: prof_store__reopen), so SQLite need not take its lock
	 * at every call (a column read is one) */
	rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		rc = store__sqlite_error(err, path, s->db, rc, "open");
		prof_store__close(s);
		return rc;
	}
	/* A writer holds the lock while it commits: a live one the WAL index
	 * briefly, one under the rollback journal the whole file. */
	s->busy_timeout_ms = store__busy_timeout_ms();
	sqlite3_busy_timeout(s->db, s->busy_timeout_ms);
	rc = store__note_opened(s, err);
	if (rc) {
		prof_store__close(s);
		return rc;
	}
	return store_finish_open(s, out, err);
}

int prof_store__open_memory(const void *data, size_t size, const char *name,
			    struct prof_store **out, struct prof_error *err)
{
	struct prof_store *s;
	unsigned char *copy;
	int rc;

	*out = NULL;
	if (!name || !*name)
		return prof_error__set(err, PROF_E_USAGE, "no name given for a capture in memory");
	rc = check_header(name, data, size < SQLITE_HEADER_BYTES ? size : SQLITE_HEADER_BYTES,
			  size, false, err);
	if (!rc)
		rc = store_new(name, &s, err);
	if (rc)
		return rc;
	/* SQLite's in-memory database takes a buffer it may free; a copy keeps
	 * the caller's bytes const and their lifetime the caller's own. */
	copy = sqlite3_malloc64(size);
	if (!copy) {
		prof_store__close(s);
		return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", name);
	}
	memcpy(copy, data, size);
	/* A file marked as in WAL mode (read version 2) with no WAL beside it
	 * reads as its main file alone. SQLite's in-memory database cannot
	 * open a WAL and would refuse it, so the copy says "rollback journal"
	 * (1) instead: queries cannot see the difference, the reader sees
	 * the same pages. */
	if (copy[SQLITE_READ_VERSION_AT] == SQLITE_READ_VERSION_WAL)
		copy[SQLITE_READ_VERSION_AT] = SQLITE_READ_VERSION_ROLLBACK;
	rc = sqlite3_open_v2(":memory:", &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_OK)
		/* Read-only as a file opened read-only: any write is refused.
		 * The copy is SQLite's from here on, even when this fails. */
		rc = sqlite3_deserialize(s->db, "main", copy, (sqlite3_int64)size,
					 (sqlite3_int64)size,
					 SQLITE_DESERIALIZE_READONLY | SQLITE_DESERIALIZE_FREEONCLOSE);
	else
		sqlite3_free(copy);
	if (rc != SQLITE_OK) {
		rc = store__sqlite_error(err, name, s->db, rc, "open");
		prof_store__close(s);
		return rc;
	}
	return store_finish_open(s, out, err);
}

void prof_store__close(struct prof_store *s)
{
	if (!s)
		return;
	store__drop_whole_check(s); /* nobody is left to tell */
	store__drop_kept(s);
	store__drop_shelf(s);
	store__free_views(s);
	sqlite3_close(s->db);
	free(s->path);
	free(s);
}

int prof_store__reopen(struct prof_store *s, struct prof_store **out, struct prof_error *err)
{
	const char *file = s->from_file ? sqlite3_db_filename(s->db, "main") : NULL;
	int rc;

	*out = NULL;
	/* a capture in memory has no file, and --rank's or --window's rows
	 * are the first connection's views alone; one still being written
	 * could read as two captures on two connections */
	if (!file || !*file || prof_store__restricted(s) || !prof_store__is_finished(s))
		return prof_error__set(err, PROF_E_USAGE, "%s: cannot be opened again", s->path);
	rc = prof_store__open(file, out, err);
	/* the same file as it was: else the two would read two captures */
	if (!rc && ((*out)->bytes_at_open != s->bytes_at_open ||
		    (*out)->changes_at_open != s->changes_at_open))
		rc = prof_error__set(err, PROF_E_USAGE, "%s: changed since it was opened", s->path);
	if (!rc && strcmp(s->path, file) != 0)
		rc = prof_store__set_name(*out, s->path, err);
	if (!rc) {
		(*out)->check_unchanged = s->check_unchanged;
		store__share_shelf(s, *out);
	}
	if (rc) {
		prof_store__close(*out);
		*out = NULL;
	}
	return rc;
}

int prof_store__set_name(struct prof_store *s, const char *name, struct prof_error *err)
{
	char *copy = strdup(name);

	if (!copy)
		return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", s->path);
	free(s->path);
	s->path = copy;
	return 0;
}

const char *prof_store__path(const struct prof_store *s)
{
	return s->path;
}

enum prof_store_kind prof_store__kind(const struct prof_store *s)
{
	return s->kind;
}

/* Whether main holds a table (not a view) of that name, and, with column,
 * a column of that name: answered from the schema SQLite has loaded,
 * without preparing a statement. The reports ask hundreds of these a run
 * (every rank scope probes each table's columns), and preparing a query on
 * sqlite_master or pragma_table_info for each cost a report on a small
 * capture a third of its time. Any other answer than SQLITE_OK (a view, no
 * such name, a damaged schema) is left to the queries below. */
static bool schema_has(struct prof_store *s, const char *table, const char *column)
{
	return sqlite3_table_column_metadata(s->db, "main", table, column, NULL, NULL, NULL,
					     NULL, NULL) == SQLITE_OK;
}

/* sqlite3_table_column_metadata also finds a table's rowid by its three
 * names, which pragma_table_info lists only when a column is declared so. */
static bool names_rowid(const char *column)
{
	return !sqlite3_stricmp(column, "rowid") || !sqlite3_stricmp(column, "oid") ||
	       !sqlite3_stricmp(column, "_rowid_");
}

bool prof_store__has_table(struct prof_store *s, const char *table)
{
	bool yes = false;

	if (!table)
		return false;
	return schema_has(s, table, NULL) || (!table_exists(s, table, &yes, NULL) && yes);
}

bool prof_store__has_column(struct prof_store *s, const char *table, const char *column)
{
	int64_t n = 0;
	sqlite3_stmt *st;

	if (!table || !column)
		return false;
	if (!names_rowid(column)) {
		if (schema_has(s, table, column))
			return true;
		if (schema_has(s, table, NULL))
			return false;
	}
	if (!prof_store__has_table(s, table))
		return false;
	/* main's: the temporary schema's canonical view of the table has every
	 * column, whether the file has it or not */
	if (prepare(s, "SELECT count(*) FROM pragma_table_info(?1, 'main')"
		       " WHERE name = ?2 COLLATE NOCASE",
		    &st) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
	if (step(s, st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n > 0;
}

const char *prof_store__owner_column(struct prof_store *s, const char *table,
				     const char *prefer)
{
	const char *other;

	if (!prefer)
		return NULL;
	if (prof_store__has_column(s, table, prefer))
		return prefer;
	other = strcmp(prefer, "globalTid") == 0 ? "globalPid" : "globalTid";
	return prof_store__has_column(s, table, other) ? other : NULL;
}

int64_t prof_store__count(struct prof_store *s, const char *table)
{
	sqlite3_stmt *st;
	int64_t n = 0;
	char *sql;

	if (!prof_store__has_table(s, table))
		return 0;
	/* A table name cannot be a bound parameter; it is known to exist and
	 * is quoted as an identifier (%w doubles any quote in it). */
	sql = sqlite3_mprintf("SELECT count(*) FROM \"%w\"", table);
	if (!sql)
		return 0;
	if (prepare(s, sql, &st) == SQLITE_OK) {
		if (step(s, st) == SQLITE_ROW)
			n = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_free(sql);
	return n;
}

char *prof_store__meta(struct prof_store *s, const char *key)
{
	sqlite3_stmt *st;
	char *value = NULL;

	if (s->kind != PROF_STORE_PERFKIT || !key)
		return NULL;
	if (prepare(s, "SELECT value FROM PERFKIT_META WHERE key = ?1", &st) != SQLITE_OK)
		return NULL;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (step(s, st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		value = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return value;
}

int64_t prof_store__counter(struct prof_store *s, const char *name)
{
	sqlite3_stmt *st;
	int64_t v = 0;

	if (!name || !prof_store__has_table(s, "PERFKIT_COUNTERS"))
		return 0;
	if (prepare(s, "SELECT value FROM PERFKIT_COUNTERS WHERE name = ?1", &st) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (step(s, st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

bool prof_store__is_finished(struct prof_store *s)
{
	char *v;
	bool done;

	if (s->kind != PROF_STORE_PERFKIT)
		return true;
	v = prof_store__meta(s, "finished");
	done = v && !strcmp(v, "1");
	free(v);
	return done;
}

int prof_store__exec(struct prof_store *s, const char *sql, struct prof_error *err)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : store__read_error(s, rc, "query", err);
}
