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
	T__COUNT
};

struct schema_column {
	const char *name;
	const char *decl;     /* type and constraints for CREATE TABLE */
	bool string_id;       /* holds an id into StringIds */
};

struct schema_table {
	const char *name;
	const struct schema_column *cols;
	int n_cols;
};

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
