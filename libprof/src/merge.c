/* merge.c - folding one capture file into the capture being written (one
 * file per process of a multi-process application becomes one output).
 *
 * The source is ATTACHed read-only and copied table by table with INSERT ...
 * SELECT, so rows never pass through C. Strings are re-interned into the
 * destination and every column that points into StringIds is re-mapped (no
 * string, NULL, stays NULL).
 * correlationId values are shifted past the destination's largest one,
 * because CUPTI numbers them per process and two processes' API calls must
 * not join to each other's kernels. The source's PERFKIT_META stays behind:
 * metadata describes the destination's run.
 *
 * A capture of another host joins a job (prof_writer__merge_mapped): its
 * process ids get that host's index in bits 48 and up, and its times move
 * onto the job's time base, each row by the offset at its start, so that a
 * duration is never changed. */
#include "store_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SRC "perfkit_src"

/* Tables copied row for row. ENUM_* are already filled in the destination,
 * StringIds is re-interned, META is not copied and COUNTERS are added. */
static const enum schema_table_id copied[] = {
	T_KERNEL, T_MEMCPY, T_MEMSET, T_RUNTIME, T_DRIVER, T_SYNC, T_MEMORY, T_NVTX,
	T_OVERHEAD, T_GPU, T_PROCESSES, T_THREADNAMES, T_SESSION_START,
	T_PROC_INFO, T_CLOCKS, T_PROC_GPUS, T_GPU_METRICS, T_GPU_METRIC_TYPES,
	T_PAYLOAD_SCHEMAS, T_PAYLOAD_SCHEMA_ENTRIES, T_PAYLOAD_ENUM_ENTRIES,
	T_UM_CPU_FAULTS, T_UM_GPU_FAULTS, T_PY_FRAMES, T_PY_SAMPLES, T_PY_CUDA_CALLS,
	T_CAPTURE_WINDOWS, T_GRAPH_TRACE,
};

/* Analysis tables a job's capture may hold: hardware metrics per launch
 * (joined to kernels by process and correlation id) and measured peaks.
 * Created in the destination only when a source has them, so that their
 * absence still means "none". Findings describe one capture, not a job. */
static const enum schema_analysis_table_id copied_analysis[] = {
	ANALYSIS_KERNEL_METRICS, ANALYSIS_PEAKS,
};

/* Rows describing the machine or a process appear once per capture of the
 * same run; keep the destination's copy. */
static const char *dedup_clause(enum schema_table_id t)
{
	switch (t) {
	case T_GPU:
		return " WHERE NOT EXISTS (SELECT 1 FROM main.TARGET_INFO_GPU d WHERE d.id = s.id)";
	case T_PROCESSES:
		return " WHERE NOT EXISTS (SELECT 1 FROM main.PROCESSES d"
		       " WHERE d.globalPid = s.globalPid)";
	case T_THREADNAMES:
		return " WHERE NOT EXISTS (SELECT 1 FROM main.ThreadNames d"
		       " WHERE d.globalTid = s.globalTid)";
	case T_SESSION_START:
		return " WHERE NOT EXISTS (SELECT 1 FROM main.TARGET_INFO_SESSION_START_TIME)";
	case T_PROC_INFO:
		return " WHERE NOT EXISTS (SELECT 1 FROM main.PERFKIT_PROCESS_INFO d"
		       " WHERE d.globalPid = s.globalPid)";
	case T_CLOCKS:
		return " WHERE NOT EXISTS (SELECT 1 FROM main.PERFKIT_CLOCKS d"
		       " WHERE d.globalPid = s.globalPid AND d.at = s.at)";
	case T_PROC_GPUS:
		return " WHERE NOT EXISTS (SELECT 1 FROM main.PERFKIT_PROCESS_GPUS d"
		       " WHERE d.globalPid = s.globalPid AND d.deviceId = s.deviceId)";
	case T_PAYLOAD_SCHEMAS:
		return " WHERE NOT EXISTS (SELECT 1 FROM main.NVTX_PAYLOAD_SCHEMAS d"
		       " WHERE d.globalPid IS s.globalPid AND d.domainId = s.domainId"
		       " AND d.schemaId = s.schemaId)";
	case T_PAYLOAD_SCHEMA_ENTRIES:
		return " WHERE NOT EXISTS (SELECT 1 FROM main.NVTX_PAYLOAD_SCHEMA_ENTRIES d"
		       " WHERE d.globalPid IS s.globalPid AND d.domainId = s.domainId"
		       " AND d.schemaId = s.schemaId AND d.idx = s.idx)";
	case T_PAYLOAD_ENUM_ENTRIES:
		return " WHERE NOT EXISTS (SELECT 1 FROM main.NVTX_PAYLOAD_ENUM_ENTRIES d"
		       " WHERE d.globalPid IS s.globalPid AND d.domainId = s.domainId"
		       " AND d.schemaId = s.schemaId AND d.idx = s.idx)";
	default:
		return "";
	}
}

/* "file:" URI of path with read-only mode; every byte that is not plainly
 * safe is percent-encoded so '?', '#' and '%' in a path stay literal. */
static char *ro_uri(const char *path)
{
	size_t n = strlen(path);
	char *uri = malloc(n * 3 + 32), *p;

	if (!uri)
		return NULL;
	p = uri + sprintf(uri, "file:");
	for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9') || strchr("/-_.~", *c))
			*p++ = (char)*c;
		else
			p += sprintf(p, "%%%02X", *c);
	}
	strcpy(p, "?mode=ro");
	return uri;
}

static bool src_has_column(struct prof_writer *w, const char *table, const char *column)
{
	sqlite3_stmt *st;
	bool yes = false;

	/* the schema goes in as the pragma's argument: a schema prefix on the
	 * function would be ignored and main's columns read instead */
	if (sqlite3_prepare_v2(w->db, "SELECT 1 FROM pragma_table_info(?1, '" SRC "')"
			       " WHERE name = ?2 COLLATE NOCASE", -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

static bool src_has_table(struct prof_writer *w, const char *table)
{
	sqlite3_stmt *st;
	bool yes;

	if (sqlite3_prepare_v2(w->db, "SELECT 1 FROM " SRC ".sqlite_master WHERE type = 'table'"
			       " AND name = ?1 COLLATE NOCASE", -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

/* Re-intern the source's strings; temp.perfkit_idmap maps old id -> new id. */
static int remap_strings(struct prof_writer *w, struct prof_error *err)
{
	sqlite3_stmt *sel = NULL, *map = NULL;
	int rc;

	rc = store__exec(w->db, writer__name(w),
			 "CREATE TEMP TABLE IF NOT EXISTS perfkit_idmap"
			 " (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);"
			 "DELETE FROM temp.perfkit_idmap;", "merge", err);
	if (rc || !src_has_table(w, "StringIds"))
		return rc;
	if (sqlite3_prepare_v2(w->db, "SELECT id, value FROM " SRC ".StringIds", -1, &sel, NULL) ||
	    sqlite3_prepare_v2(w->db, "INSERT INTO temp.perfkit_idmap (old, new) VALUES (?1, ?2)",
			       -1, &map, NULL)) {
		rc = store__sqlite_error(err, writer__name(w), w->db, sqlite3_errcode(w->db), "merge");
		goto out;
	}
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(sel, 1);
		int64_t id = prof_writer__string(w, text ? text : "");

		if (!id) {
			*err = w->err;
			rc = err->code;
			goto out;
		}
		sqlite3_bind_int64(map, 1, sqlite3_column_int64(sel, 0));
		sqlite3_bind_int64(map, 2, id);
		if (sqlite3_step(map) != SQLITE_DONE) {
			rc = store__sqlite_error(err, writer__name(w), w->db, sqlite3_errcode(w->db), "merge");
			goto out;
		}
		sqlite3_reset(map);
	}
	rc = rc == SQLITE_DONE ? 0 : store__sqlite_error(err, writer__name(w), w->db, rc, "merge");
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(map);
	return rc;
}

/* The largest correlationId the destination holds so far. */
static int correlation_base(struct prof_writer *w, int64_t *base, struct prof_error *err)
{
	static const char *const sql =
		"SELECT max(coalesce((SELECT max(correlationId) FROM main.CUPTI_ACTIVITY_KIND_KERNEL), 0),"
		" coalesce((SELECT max(correlationId) FROM main.CUPTI_ACTIVITY_KIND_MEMCPY), 0),"
		" coalesce((SELECT max(correlationId) FROM main.CUPTI_ACTIVITY_KIND_MEMSET), 0),"
		" coalesce((SELECT max(correlationId) FROM main.CUPTI_ACTIVITY_KIND_RUNTIME), 0),"
		" coalesce((SELECT max(correlationId) FROM main.CUPTI_ACTIVITY_KIND_DRIVER), 0),"
		" coalesce((SELECT max(correlationId) FROM main.CUPTI_ACTIVITY_KIND_SYNCHRONIZATION), 0),"
		" coalesce((SELECT max(correlationId) FROM main.CUDA_GPU_MEMORY_USAGE_EVENTS), 0))";
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(w->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return store__sqlite_error(err, writer__name(w), w->db, rc, "merge");
	rc = sqlite3_step(st);
	*base = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : store__sqlite_error(err, writer__name(w), w->db, rc, "merge");
}

/* The largest correlationId of the source's tables that have one (an nsys
 * export may lack some), read once through their indexes. */
static int source_correlation_max(struct prof_writer *w, int64_t *max, struct prof_error *err)
{
	static const enum schema_table_id with_corr[] = {
		T_KERNEL, T_MEMCPY, T_MEMSET, T_RUNTIME, T_DRIVER, T_SYNC, T_MEMORY,
	};
	char sql[2048];
	size_t used = (size_t)snprintf(sql, sizeof sql, "SELECT max(0");
	sqlite3_stmt *st;
	int rc;

	for (size_t i = 0; i < sizeof with_corr / sizeof with_corr[0]; i++) {
		const char *t = schema_tables[with_corr[i]].name;

		if (!src_has_column(w, t, "correlationId"))
			continue;
		used += (size_t)snprintf(sql + used, sizeof sql - used,
					 ", coalesce((SELECT max(correlationId) FROM " SRC ".%s), 0)", t);
	}
	snprintf(sql + used, sizeof sql - used, ")");
	rc = sqlite3_prepare_v2(w->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return store__sqlite_error(err, writer__name(w), w->db, rc, "merge");
	rc = sqlite3_step(st);
	*max = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : store__sqlite_error(err, writer__name(w), w->db, rc, "merge");
}

/* GPU metric samplers are told apart by typeId's bits above the device
 * number: a source's samplers move past every sampler the destination
 * holds, so two processes' device 0 stay two series. */
static int metric_type_base(struct prof_writer *w, int64_t *base, struct prof_error *err)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(w->db, "SELECT coalesce(((max(typeId) >> 8) + 1) << 8, 0)"
				" FROM main.TARGET_INFO_GPU_METRICS", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return store__sqlite_error(err, writer__name(w), w->db, rc, "merge");
	rc = sqlite3_step(st);
	*base = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : store__sqlite_error(err, writer__name(w), w->db, rc, "merge");
}

/* What a merge does to the rows of one source besides the string and
 * correlation ids (prof/store.h, struct prof_merge_map), as bound values. */
struct merge_params {
	int64_t corr_base, type_base;
	const struct prof_merge_map *map;
};

/* The statement's parameters: ?1 the correlation base, ?2 the metric
 * sampler base, ?3 the host bits, ?4 the shift at the pivot, ?5 the rate,
 * ?6 the pivot (a statement may use any of them). */
#define HOST_BITS_MASK "281474976710655" /* (1 << PROF_GLOBAL_HOST_SHIFT) - 1 */
_Static_assert(PROF_GLOBAL_HOST_SHIFT == 48, "HOST_BITS_MASK is 2^48 - 1");

static bool is_process_id(const char *c)
{
	return !strcmp(c, "globalPid") || !strcmp(c, "globalTid") || !strcmp(c, "endGlobalTid");
}

/* A time column of the capture's clock: "end" moves by the offset at its
 * row's start (when the row has one), so that durations stay exact. */
static bool is_time(const char *c)
{
	return !strcmp(c, "start") || !strcmp(c, "end") || !strcmp(c, "timestamp") ||
	       !strcmp(c, "timestampNs");
}

/* The expression that copies column c of the source row s into the
 * destination. at: the row's own time column the shift is taken at. */
static int column_expr(char *buf, size_t cap, const struct schema_column *col, bool corr_id,
		       bool metric_type, const char *at, const struct prof_merge_map *map)
{
	const char *c = col->name;
	int n;

	if (col->string_id)
		n = snprintf(buf, cap, "CASE WHEN s.\"%s\" IS NULL THEN NULL ELSE coalesce((SELECT new"
			     " FROM temp.perfkit_idmap WHERE old = s.\"%s\"), 0) END", c, c);
	else if (corr_id)
		n = snprintf(buf, cap, "CASE WHEN s.\"%s\" > 0 THEN s.\"%s\" + ?1 ELSE s.\"%s\" END",
			     c, c, c);
	else if (metric_type)
		n = snprintf(buf, cap, "s.\"%s\" + ?2", c);
	else if (map && map->host_index >= 0 && is_process_id(c))
		/* 0 or NULL: a row of no known process stays one */
		n = snprintf(buf, cap, "CASE WHEN s.\"%s\" IS NULL OR s.\"%s\" = 0 THEN s.\"%s\""
			     " ELSE (s.\"%s\" & " HOST_BITS_MASK ") | ?3 END", c, c, c, c);
	else if (map && map->rate != 0 && is_time(c))
		n = snprintf(buf, cap, "s.\"%s\" + ?4 + CAST(round((s.\"%s\" - ?6) * ?5) AS INTEGER)",
			     c, at ? at : c);
	else if (map && map->shift_ns != 0 && is_time(c))
		n = snprintf(buf, cap, "s.\"%s\" + ?4", c);
	else
		n = snprintf(buf, cap, "s.\"%s\"", c);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* Append text to buf. */
static int append(char *buf, size_t cap, size_t *used, const char *text)
{
	size_t n = strlen(text);

	if (n >= cap - *used)
		return -1;
	memcpy(buf + *used, text, n + 1);
	*used += n;
	return 0;
}

/* dedup with each process id of the source row (s.globalPid, s.globalTid)
 * as the destination will hold it. */
static int mapped_clause(char *buf, size_t cap, const char *dedup, const struct prof_merge_map *map)
{
	static const char *const ids[] = { "s.globalPid", "s.globalTid" };
	size_t used = 0;

	buf[0] = '\0';
	while (*dedup) {
		const char *hit = NULL;
		size_t idn = 0;
		char one[2] = { *dedup, 0 }, expr[256];

		for (size_t i = 0; map && map->host_index >= 0 && i < 2 && !hit; i++)
			if (!strncmp(dedup, ids[i], strlen(ids[i]))) {
				hit = ids[i] + 2;
				idn = strlen(ids[i]);
			}
		if (hit) {
			snprintf(expr, sizeof expr, "(CASE WHEN s.%s IS NULL OR s.%s = 0 THEN s.%s"
				 " ELSE (s.%s & " HOST_BITS_MASK ") | ?3 END)", hit, hit, hit, hit);
			if (append(buf, cap, &used, expr))
				return -1;
			dedup += idn;
		} else {
			if (append(buf, cap, &used, one))
				return -1;
			dedup++;
		}
	}
	return 0;
}

/* Copy the rows of table t (dedup: the clause that keeps the destination's
 * copy of a row both have). */
static int copy_table(struct prof_writer *w, const struct schema_table *t, const char *dedup,
		      bool metric_types, const struct merge_params *p, struct prof_error *err)
{
	char cols[2048], exprs[8192], expr[512], where[1024], sql[12288];
	const char *at = NULL;
	size_t cu = 0, eu = 0;
	sqlite3_stmt *st;
	int rc, n = 0;

	if (!src_has_table(w, t->name))
		return 0;
	/* a table made with its first row: the destination may not have it yet */
	if (t->with_first_row && t >= schema_tables && t < schema_tables + T__COUNT) {
		rc = schema__create_table(w->db, (enum schema_table_id)(t - schema_tables));
		if (rc != SQLITE_OK)
			return store__sqlite_error(err, writer__name(w), w->db, rc, "merge");
	}
	for (int i = 0; i < t->n_cols; i++)
		if (!strcmp(t->cols[i].name, "start") && src_has_column(w, t->name, "start"))
			at = "start";
	/* Only the columns both sides know: nsys exports differ by version. */
	for (int i = 0; i < t->n_cols; i++) {
		const char *c = t->cols[i].name;

		if (!src_has_column(w, t->name, c))
			continue;
		if (column_expr(expr, sizeof expr, &t->cols[i], !strcmp(c, "correlationId"),
				metric_types && !strcmp(c, "typeId"), at, p->map) ||
		    (n && (append(cols, sizeof cols, &cu, ", ") || append(exprs, sizeof exprs, &eu, ", "))) ||
		    append(cols, sizeof cols, &cu, "\"") || append(cols, sizeof cols, &cu, c) ||
		    append(cols, sizeof cols, &cu, "\"") || append(exprs, sizeof exprs, &eu, expr))
			return prof_error__set(err, PROF_E_SQL, "%s: merge statement too long", writer__name(w));
		n++;
	}
	if (!n)
		return 0;
	if (mapped_clause(where, sizeof where, dedup, p->map))
		return prof_error__set(err, PROF_E_SQL, "%s: merge statement too long", writer__name(w));
	snprintf(sql, sizeof sql, "INSERT INTO main.%s (%s) SELECT %s FROM " SRC ".%s s%s",
		 t->name, cols, exprs, t->name, where);
	rc = sqlite3_prepare_v2(w->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return store__sqlite_error(err, writer__name(w), w->db, rc, "merge");
	/* unused parameters stay unbound: binding past the statement's last is an error */
	for (int i = 1; i <= sqlite3_bind_parameter_count(st); i++) {
		switch (i) {
		case 1: sqlite3_bind_int64(st, i, p->corr_base); break;
		case 2: sqlite3_bind_int64(st, i, p->type_base); break;
		case 3: sqlite3_bind_int64(st, i, p->map ? (int64_t)p->map->host_index
							      << PROF_GLOBAL_HOST_SHIFT : 0); break;
		case 4: sqlite3_bind_int64(st, i, p->map ? p->map->shift_ns : 0); break;
		case 5: sqlite3_bind_double(st, i, p->map ? p->map->rate : 0); break;
		case 6: sqlite3_bind_int64(st, i, p->map ? p->map->pivot_ns : 0); break;
		}
	}
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : store__sqlite_error(err, writer__name(w), w->db, rc, "merge");
}

static int merge_attached(struct prof_writer *w, const struct prof_merge_map *map,
			  struct prof_error *err)
{
	struct merge_params p = { .map = map };
	int rc;

	int64_t src_max = 0;

	rc = remap_strings(w, err);
	if (!rc && w->corr_known)
		p.corr_base = w->corr_max;
	else if (!rc)
		rc = correlation_base(w, &p.corr_base, err);
	if (!rc)
		rc = source_correlation_max(w, &src_max, err);
	if (!rc)
		rc = metric_type_base(w, &p.type_base, err);
	for (size_t i = 0; !rc && i < sizeof copied / sizeof copied[0]; i++)
		rc = copy_table(w, &schema_tables[copied[i]], dedup_clause(copied[i]),
				copied[i] == T_GPU_METRICS || copied[i] == T_GPU_METRIC_TYPES, &p, err);
	for (size_t i = 0; !rc && i < sizeof copied_analysis / sizeof copied_analysis[0]; i++) {
		const struct schema_table *t = &schema_analysis_tables[copied_analysis[i]];

		if (!src_has_table(w, t->name))
			continue;
		rc = schema__create_analysis(w->db);
		rc = rc == SQLITE_OK ? 0 : store__sqlite_error(err, writer__name(w), w->db, rc, "merge");
		if (!rc)
			rc = copy_table(w, t, copied_analysis[i] == ANALYSIS_PEAKS
				? " WHERE NOT EXISTS (SELECT 1 FROM main.PERFKIT_PEAKS d WHERE d.key = s.key)"
				: "", false, &p, err);
	}
	if (!rc && src_has_table(w, "PERFKIT_COUNTERS"))
		rc = store__exec(w->db, writer__name(w),
				 "INSERT INTO main.PERFKIT_COUNTERS (name, value)"
				 " SELECT name, value FROM " SRC ".PERFKIT_COUNTERS WHERE true"
				 " ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
				 "merge", err);
	if (!rc)
		rc = store__exec(w->db, writer__name(w), "DROP TABLE temp.perfkit_idmap", "merge", err);
	if (!rc) {
		/* set after the rows: copying them cleared it */
		w->corr_max = p.corr_base + src_max;
		w->corr_known = true;
	}
	return rc;
}

int prof_writer__merge(struct prof_writer *w, const char *src_path, struct prof_error *err)
{
	return prof_writer__merge_mapped(w, src_path, NULL, err);
}

int prof_writer__merge_mapped(struct prof_writer *w, const char *src_path,
			      const struct prof_merge_map *map, struct prof_error *err)
{
	struct prof_store *probe;
	sqlite3_stmt *st;
	char *uri;
	int rc;

	/* Validate first: a foreign or broken file gets the reader's message. */
	rc = prof_store__open(src_path, &probe, err);
	if (rc)
		return rc;
	prof_store__close(probe);
	uri = ro_uri(src_path);
	if (!uri)
		return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", writer__name(w));
	/* A merge that found no room gave it back when it was rolled back: the
	 * next file may fit. */
	w->full = false;
	/* ATTACH is refused inside a transaction. */
	rc = writer__commit(w, false, err);
	if (rc)
		goto out;
	rc = sqlite3_prepare_v2(w->db, "ATTACH DATABASE ?1 AS " SRC, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, uri, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		rc = rc == SQLITE_DONE ? 0 : store__sqlite_error(err, src_path, w->db, rc, "attach");
	} else {
		rc = store__sqlite_error(err, writer__name(w), w->db, rc, "attach");
	}
	if (rc)
		goto begin;
	rc = writer__commit(w, true, err);
	if (!rc)
		rc = merge_attached(w, map, err);
	if (!rc) {
		rc = writer__commit(w, false, err);
	} else {
		/* All or nothing: a half-merged file would double-count on retry. */
		writer__rollback(w);
	}
	sqlite3_exec(w->db, "DETACH DATABASE " SRC, NULL, NULL, NULL);
begin:
	if (writer__commit(w, true, rc ? NULL : err) && !rc)
		rc = err->code;
out:
	free(uri);
	return rc;
}
