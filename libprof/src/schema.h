/* schema.h - the tables of a perfkit capture, described once.
 *
 * The table and column names are those of the Nsight Systems SQLite export
 * (plus PERFKIT_* tables for what nsys has no table for). The DDL, the
 * writer's INSERT statements and the merge all come from this description,
 * so a column is named in exactly one place. */
#ifndef PROF_SCHEMA_H
#define PROF_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

enum schema_table_id {
	T_STRINGIDS,
	T_KERNEL,
	T_MEMCPY,
	T_MEMSET,
	T_RUNTIME,
	T_DRIVER,
	T_SYNC,
	T_MEMORY,
	T_NVTX,
	T_GPU,
	T_PROCESSES,
	T_THREADNAMES,
	T_SESSION_START,
	T_OVERHEAD,
	T_ENUM_MEMCPY_OPER,
	T_ENUM_MEM_KIND,
	T_META,
	T_COUNTERS,
	/* jobs of many processes, GPU metrics and NVTX payloads (schema.c) */
	T_PROC_INFO,
	T_CLOCKS,
	T_PROC_GPUS,
	T_GPU_METRICS,
	T_GPU_METRIC_TYPES,
	T_PAYLOAD_SCHEMAS,
	T_PAYLOAD_SCHEMA_ENTRIES,
	T_PAYLOAD_ENUM_ENTRIES,
	/* unified-memory page faults (schema.c) */
	T_UM_CPU_FAULTS,
	T_UM_GPU_FAULTS,
	/* Python's stacks: samples and CUDA calls (schema.c) */
	T_PY_FRAMES,
	T_PY_SAMPLES,
	T_PY_CUDA_CALLS,
	/* the windows of a run that asked for them (schema.c) */
	T_CAPTURE_WINDOWS,
	T_GRAPH_TRACE,
	T__COUNT
};

/* How the writer binds a column from its row struct (prof_writer__kernel
 * and the others): which field, by offset and size, and read as what. */
enum schema_bind {
	SCHEMA_UNBOUND, /* not in the row: stored NULL (or written another way) */
	SCHEMA_INT,     /* a signed integer of size bytes */
	SCHEMA_UINT,    /* an unsigned one, its bit pattern in SQLite's signed integer */
	SCHEMA_DOUBLE,
	SCHEMA_TEXT,    /* const char *, NULL stored as NULL */
	SCHEMA_BLOB,    /* const void *, its size_t length at len_offset */
};

/* Values of an integer field that stand for "none" and are stored NULL. */
enum schema_null {
	SCHEMA_NULL_NEVER,
	SCHEMA_NULL_IF_ZERO,     /* StringIds references, colours */
	SCHEMA_NULL_IF_NEGATIVE, /* -1: not known */
};

/* The binding kind of a field, from its C type: a field of any other type
 * fails to compile, so a column and its field cannot disagree on it. */
#define SCHEMA_BIND_OF(field)                                                        \
	_Generic((field), int: SCHEMA_INT, long: SCHEMA_INT, long long: SCHEMA_INT,       \
		 unsigned int: SCHEMA_UINT, unsigned long: SCHEMA_UINT,                   \
		 unsigned long long: SCHEMA_UINT, double: SCHEMA_DOUBLE,                 \
		 const char *: SCHEMA_TEXT, const void *: SCHEMA_BLOB)
/* The designators of a column bound from field f of row struct S. */
#define SCHEMA_FIELD(S, f)                                                       \
	.bind = SCHEMA_BIND_OF(((S *)0)->f), .offset = offsetof(S, f),            \
	.size = sizeof(((S *)0)->f)

struct schema_column {
	const char *name;
	const char *decl;     /* type and constraints for CREATE TABLE */
	bool string_id;       /* holds an id into StringIds (0 stored as NULL) */
	enum schema_bind bind;
	size_t offset, size;  /* the field in the table's row struct */
	enum schema_null null_when;
	size_t len_offset;    /* SCHEMA_BLOB: the field holding its length */
};

struct schema_table {
	const char *name;
	const struct schema_column *cols;
	int n_cols;
	/* The row struct the writer binds the columns from (sizeof), 0 for a
	 * table written otherwise (StringIds, the enums, meta, counters). */
	size_t row_size;
	/* Made with its first row (by the writer or a merge), as nsys makes
	 * its tables: a capture without such rows has no such table, and its
	 * file is what it was before the table existed. */
	bool with_first_row;
};

/* Rows of the tables that have no event struct of their own. */
struct schema_process_row {
	int64_t global_pid;
	int64_t pid;
	const char *name;
};

struct schema_thread_name_row {
	int64_t name_id; /* StringIds */
	int64_t global_tid;
};

struct schema_process_gpu_row {
	int64_t global_pid;
	int32_t device_id;
	const char *uuid;
};

/* Whether every bound column of every table fits its row struct as its
 * kind says (sizes, offsets, StringIds as integers): NULL, or the first
 * column that does not, as "TABLE.column". The writer refuses to start
 * otherwise. */
const char *schema__check_rows(void);
/* CREATE TABLE IF NOT EXISTS of one table (a with_first_row table when its
 * first row comes). */
int schema__create_table(sqlite3 *db, enum schema_table_id id);
/* Whether db's main schema holds the table. */
bool schema__has_table(sqlite3 *db, const char *name);
/* The 1-based position of column name in t, 0 when t has none. */
int schema__column_index(const struct schema_table *t, const char *name);

extern const struct schema_table schema_tables[T__COUNT];

/* The analysis tables: added to a finished capture when there is something
 * to put in them (hardware metrics, measured peaks, saved findings), so a
 * capture without them stays valid and their absence means "none". */
enum schema_analysis_table_id {
	ANALYSIS_KERNEL_METRICS,
	ANALYSIS_PEAKS,
	ANALYSIS_FINDINGS,
	ANALYSIS__COUNT
};

extern const struct schema_table schema_analysis_tables[ANALYSIS__COUNT];

/* What perfkit reads of nsys exports but never writes: whole tables, and
 * columns of its own tables that some exports add. The canonical views
 * (store_views.c) name them too, NULL where a file lacks them. */
enum schema_read_table_id {
	READ_SYSTEM_ENV,
	READ_ANALYSIS_DETAILS,
	READ_EXPORT_META,
	READ__COUNT
};

extern const struct schema_table schema_read_tables[READ__COUNT];

struct schema_read_column {
	enum schema_table_id table;
	const char *name;
};

extern const struct schema_read_column schema_read_columns[];
extern const int schema_read_column_count;

/* Create every table, fill the ENUM_* tables and record the schema version
 * (PRAGMA user_version and PERFKIT_META). Runs inside the caller's
 * transaction. Returns an SQLite result code. */
int schema__create(sqlite3 *db);
/* Bring a capture an earlier perfkit wrote (its tables a prefix of these:
 * tables or trailing columns added since) up to this schema in place: the
 * missing tables created empty, the missing columns added, NULL in every
 * row. SQLITE_MISMATCH when a table's columns are not such a prefix. Runs
 * inside the caller's transaction. */
int schema__upgrade(sqlite3 *db);
/* Create the analysis tables and their index where missing (IF NOT EXISTS).
 * Returns an SQLite result code. */
int schema__create_analysis(sqlite3 *db);
/* The indexes the reports' joins and groupings use. They are built once at
 * the end of a capture because maintaining them row by row slows ingest. */
struct schema_index {
	const char *name;
	enum schema_table_id table;
	const char *columns; /* the indexed columns and expressions, in order */
};

extern const struct schema_index schema_indexes[];
extern const int schema_index_count;

/* CREATE INDEX IF NOT EXISTS for ix. Returns an SQLite result code. */
int schema__create_index(sqlite3 *db, const struct schema_index *ix);
/* The planner's statistics, from a sample of each index (ANALYZE). */
int schema__analyze(sqlite3 *db);
/* "INSERT INTO t (c1, ...) VALUES (?1, ...)" into buf; 0, or -1 if too long. */
int schema__insert_sql(const struct schema_table *t, char *buf, size_t cap);

#endif
