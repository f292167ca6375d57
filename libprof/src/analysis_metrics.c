/* analysis_metrics.c - importing the collector's metrics-<pid>.tsv files
 * into PERFKIT_KERNEL_METRICS, and rebuilding the kernel rows that kernel
 * replay left out. See prof/analysis_tables.h. */
#include "prof/analysis_tables.h"
#include "prof/protocol.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_impl.h"

/* Lines of the collector: the counters alone (old collectors), the counters
 * and the launch, those and the access counters, or those and the
 * tensor-core FLOPs by precision last. */
#define TSV_METRIC_FIELDS 11
#define TSV_LAUNCH_FIELDS 26
#define TSV_ACCESS_FIELDS 8
#define TSV_TENSOR_FIELDS 5
#define TSV_ACCESS_END (TSV_LAUNCH_FIELDS + TSV_ACCESS_FIELDS)
#define TSV_ALL_FIELDS (TSV_ACCESS_END + TSV_TENSOR_FIELDS)

/* The statements of one import, prepared once. */
enum import_stmt {
	ST_METRICS,      /* INSERT INTO PERFKIT_KERNEL_METRICS */
	ST_KERNEL,       /* INSERT INTO the kernel table */
	ST_KERNEL_SEEN,  /* the launch already has its kernel row */
	ST_STRING_FIND,
	ST_STRING_ADD,
	ST__COUNT
};

struct metrics_import {
	sqlite3 *db;
	sqlite3_stmt *st[ST__COUNT];
	bool have_kernels;
};

/* nsys's shortName: the function name without return type, namespace-free
 * template arguments or parameters ("void ns::k<float>(int)" -> "k"). */
static void short_name(char *dst, size_t cap, const char *demangled)
{
	const char *end = demangled + strcspn(demangled, "(<");
	const char *begin = demangled;

	for (const char *p = demangled; p < end; p++)
		if (*p == ' ' || *p == ':')
			begin = p + 1;
	snprintf(dst, cap, "%.*s", (int)(end - begin), begin);
}

/* The StringIds id of text, added when the capture has none yet; 0 on
 * failure. The writer's in-memory index is gone with the writer: ask the
 * table itself. */
static sqlite3_int64 intern(struct metrics_import *m, const char *text)
{
	sqlite3_stmt *find = m->st[ST_STRING_FIND], *add = m->st[ST_STRING_ADD];
	sqlite3_int64 id = 0;

	sqlite3_bind_text(find, 1, text, -1, SQLITE_STATIC);
	if (sqlite3_step(find) == SQLITE_ROW)
		id = sqlite3_column_int64(find, 0);
	sqlite3_reset(find);
	if (id)
		return id;
	sqlite3_bind_null(add, 1); /* a new id */
	sqlite3_bind_text(add, 2, text, -1, SQLITE_STATIC);
	if (sqlite3_step(add) == SQLITE_DONE)
		id = sqlite3_last_insert_rowid(m->db);
	sqlite3_reset(add);
	return id;
}

static bool kernel_seen(struct metrics_import *m, sqlite3_int64 correlation_id, sqlite3_int64 gpid)
{
	sqlite3_stmt *st = m->st[ST_KERNEL_SEEN];
	bool seen;

	sqlite3_bind_int64(st, 1, correlation_id);
	sqlite3_bind_int64(st, 2, gpid);
	seen = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_reset(st);
	return seen;
}

/* Profiled launches have no kernel row (CUPTI gives replayed kernels no
 * timestamps): rebuild it from the launch described on the metrics line. The
 * kernel ran inside the launch call, so it ends by the call's EXIT. Columns
 * the line does not describe stay NULL. */
static int rebuild_kernel(struct metrics_import *m, char **f, sqlite3_int64 gpid)
{
	sqlite3_stmt *st = m->st[ST_KERNEL];
	long long dur = atoll(f[3]), enter = atoll(f[11]), leave = atoll(f[12]);
	long long start = leave - dur > enter ? leave - dur : enter;
	sqlite3_int64 demangled, shortn_id, mangled;
	char shortn[512];
	int rc;

	short_name(shortn, sizeof shortn, f[25]);
	demangled = intern(m, f[25]);
	shortn_id = intern(m, shortn);
	mangled = intern(m, f[24]);
	if (kernel_seen(m, atoll(f[1]), gpid))
		return 0;
	/* positions of schema.c's kernel columns, as the writer binds them */
	sqlite3_clear_bindings(st);
	sqlite3_bind_int64(st, 1, start);
	sqlite3_bind_int64(st, 2, start + dur);
	sqlite3_bind_int64(st, 3, atoll(f[2]));   /* deviceId */
	sqlite3_bind_int64(st, 4, atoll(f[23]));  /* contextId */
	sqlite3_bind_int64(st, 6, atoll(f[22]));  /* streamId */
	sqlite3_bind_int64(st, 7, atoll(f[1]));   /* correlationId */
	sqlite3_bind_int64(st, 8, gpid);
	sqlite3_bind_int64(st, 9, demangled);
	sqlite3_bind_int64(st, 10, shortn_id);
	sqlite3_bind_int64(st, 11, mangled);
	sqlite3_bind_int64(st, 14, atoll(f[20])); /* registersPerThread */
	for (int i = 0; i < 6; i++)               /* gridX .. blockZ */
		sqlite3_bind_int64(st, 15 + i, atoll(f[13 + i]));
	sqlite3_bind_int64(st, 21, atoll(f[21])); /* staticSharedMemory */
	sqlite3_bind_int64(st, 22, atoll(f[19])); /* dynamicSharedMemory */
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
	sqlite3_reset(st);
	return rc;
}

/* A counter from a line: "-" (not measured by the line's set) is NULL. */
static void bind_measured(sqlite3_stmt *st, int index, const char *text, bool integer)
{
	if (!strcmp(text, "-") || !strcmp(text, "nan") || !strcmp(text, "-nan"))
		sqlite3_bind_null(st, index);
	else if (integer)
		sqlite3_bind_int64(st, index, atoll(text));
	else
		sqlite3_bind_double(st, index, atof(text));
}

static int import_tsv(struct metrics_import *m, const char *path, struct prof_error *err)
{
	sqlite3_stmt *ins = m->st[ST_METRICS];
	FILE *f = fopen(path, "r");
	char line[8192];
	int rows = 0;

	if (!f)
		return prof_error__set(err, PROF_E_IO, "%s: cannot open", path);
	while (fgets(line, sizeof line, f)) {
		char *field[TSV_ALL_FIELDS], *save = NULL, *end;
		int n = 0;
		sqlite3_int64 gpid;

		if (!strchr(line, '\n'))
			continue; /* cut short by a dying process */
		line[strcspn(line, "\n")] = 0;
		for (char *t = strtok_r(line, "\t", &save); t && n < TSV_ALL_FIELDS; t = strtok_r(NULL, "\t", &save))
			field[n++] = t;
		if (n != TSV_METRIC_FIELDS && n != TSV_LAUNCH_FIELDS && n != TSV_ACCESS_END &&
		    n != TSV_ALL_FIELDS)
			continue;
		strtoll(field[0], &end, 10);
		if (*end)
			continue;
		gpid = (sqlite3_int64)((atoll(field[0]) & 0xFFFFFF) << 24);
		sqlite3_bind_int64(ins, 1, gpid);
		sqlite3_bind_int64(ins, 2, atoll(field[1]));
		sqlite3_bind_int64(ins, 3, atoll(field[2]));
		/* a launch measured for its access counters alone (the memory
		 * mode's other set) ran several replay passes: its duration is not
		 * the kernel's, so it is not a metric either */
		if (strcmp(field[8], "-"))
			sqlite3_bind_int64(ins, 4, atoll(field[3]));
		else
			sqlite3_bind_null(ins, 4);
		for (int i = 4; i < 8; i++) /* "-": not measured (--metrics=memory) */
			bind_measured(ins, i + 1, field[i], false);
		for (int i = 8; i < 11; i++)
			bind_measured(ins, i + 1, field[i], true);
		for (int i = 0; i < TSV_ACCESS_FIELDS; i++)
			bind_measured(ins, TSV_METRIC_FIELDS + i + 1, n >= TSV_ACCESS_END ? field[TSV_LAUNCH_FIELDS + i] : "-",
				      i < 6);
		for (int i = 0; i < TSV_TENSOR_FIELDS; i++)
			bind_measured(ins, TSV_METRIC_FIELDS + TSV_ACCESS_FIELDS + i + 1,
				      n == TSV_ALL_FIELDS ? field[TSV_ACCESS_END + i] : "-", false);
		if (sqlite3_step(ins) != SQLITE_DONE ||
		    (n >= TSV_LAUNCH_FIELDS && m->have_kernels && rebuild_kernel(m, field, gpid))) {
			fclose(f);
			return prof_error__set(err, PROF_E_SQL, "%s: %s", path, sqlite3_errmsg(m->db));
		}
		sqlite3_reset(ins);
		rows++;
	}
	fclose(f);
	return rows;
}

static bool has_table(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st = NULL;
	bool yes = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &st,
			       NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		yes = sqlite3_step(st) == SQLITE_ROW;
	}
	sqlite3_finalize(st);
	return yes;
}

static int prepare_insert(sqlite3 *db, const struct schema_table *t, sqlite3_stmt **st)
{
	char sql[2048];

	if (schema__insert_sql(t, sql, sizeof sql))
		return SQLITE_TOOBIG;
	return sqlite3_prepare_v2(db, sql, -1, st, NULL);
}

static int metrics_import__begin(struct metrics_import *m, const char *capture,
				 struct prof_error *err)
{
	const struct schema_table *kernel = &schema_tables[T_KERNEL];
	const struct schema_table *strings = &schema_tables[T_STRINGIDS];
	char sql[512];
	int rc = analysis__begin(capture, &m->db, err);

	if (rc)
		return rc;
	if (prepare_insert(m->db, &schema_analysis_tables[ANALYSIS_KERNEL_METRICS],
			   &m->st[ST_METRICS]) != SQLITE_OK)
		return store__plain_sql_error(err, capture, m->db);
	m->have_kernels = has_table(m->db, kernel->name);
	if (!m->have_kernels)
		return 0;
	snprintf(sql, sizeof sql, "SELECT 1 FROM %s WHERE correlationId = ?1 AND globalPid = ?2",
		 kernel->name);
	if (prepare_insert(m->db, kernel, &m->st[ST_KERNEL]) != SQLITE_OK ||
	    sqlite3_prepare_v2(m->db, sql, -1, &m->st[ST_KERNEL_SEEN], NULL) != SQLITE_OK ||
	    prepare_insert(m->db, strings, &m->st[ST_STRING_ADD]) != SQLITE_OK)
		return store__plain_sql_error(err, capture, m->db);
	snprintf(sql, sizeof sql, "SELECT id FROM %s WHERE value = ?1 LIMIT 1", strings->name);
	if (sqlite3_prepare_v2(m->db, sql, -1, &m->st[ST_STRING_FIND], NULL) != SQLITE_OK)
		return store__plain_sql_error(err, capture, m->db);
	return 0;
}

static void metrics_import__exit(struct metrics_import *m)
{
	for (int i = 0; i < ST__COUNT; i++)
		sqlite3_finalize(m->st[i]);
	sqlite3_close(m->db);
}

int prof_analysis__import_metrics_dir(const char *capture, const char *dir,
				      struct prof_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct metrics_import m = { 0 };
	int total = 0, rc = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[4096];

		if (!prof_metrics_file__match(e->d_name))
			continue;
		/* the capture is opened only when there is something to import */
		if (!m.db) {
			rc = metrics_import__begin(&m, capture, err);
			if (rc)
				goto out;
		}
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		rc = import_tsv(&m, path, err);
		if (rc < 0)
			goto out;
		total += rc;
		rc = 0;
	}
	if (m.db)
		rc = store__exec(m.db, capture, "COMMIT", NULL, err);
out:
	metrics_import__exit(&m);
	closedir(d);
	return rc < 0 ? rc : total;
}
