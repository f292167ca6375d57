/* folded.c - collecting folded stacks (see folded.h).
 *
 * Per API table (runtime, then driver) one cursor walks the calls in
 * (thread, start) order, each joined to what it launched, beside the walk of
 * the same threads' push/pop ranges (folded_ranges.h), which keeps the list
 * of ranges open at the call's start (the rule of SUM_NVTX_OPEN_AT_CALL,
 * which nvtx_kern_sum uses: its range is the last of this list). Names are
 * read by StringIds id and cached per id. A call whose Python stack was
 * recorded (--python-backtrace=cuda) hangs under its Python frames instead
 * of its ranges (folded_python.h).
 *
 * Weighed by GPU time, a CUDA graph recorded whole (--cuda-graph-trace=graph:
 * one row a launch, none of its kernels) is GPU work as a kernel is: each
 * launch's time hangs under its launching call as a frame named as
 * cuda_gpu_kern_sum names the graph's launches, in walks of their own over
 * the graph table, which a capture without one never makes. */
#include "folded_impl.h"
#include "folded_python.h"
#include "folded_ranges.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "prof/tables.h"
#include "model/id_map.h"
#include "model/call_census.h"
#include "model/launch_ids.h"
#include "model/names.h"
#include "model/ranks.h"
#include "model/sql.h"
#include "model/thread_label.h"
#include "prof/saturate.h"
#include "prof/error.h"

#define SQL_MAX 4096

struct walk {
	struct prof_store *s;
	struct export_window w;
	enum folded_weight weight;
	struct stack_table table;
	struct id_map kernels, apis, graphs; /* frame names: StringIds id, graph id */
	char *graph_no_id;        /* the frame of a launch without a graph id */
	bool graph_walk;          /* the GPU rows walked are graph launches */
	struct range_walk ranges; /* the push/pop ranges open at the current call */
	bool ranges_held;         /* every thread's ranges in memory: the calls unsorted */
	struct id_map thread_prefixes; /* globalTid -> "process;thread" */
	struct folded_py py;      /* the Python stacks of the calls, when recorded */
	int64_t thread;           /* the process the prefix belongs to (orphans) */
	char *prefix;             /* "process" */
	char *key;
	size_t key_cap;
	struct sum_ranks ranks;   /* a job's processes are shown as their ranks */
	struct sum_thread_labels *threads;
	bool per_rank;
	struct launch_ids *launched; /* the calls' ids, read once (NULL: SQL joins them) */
	bool launched_read;
	struct prof_error *err;
};

static int nomem(struct walk *wk)
{
	return prof_error__set(wk->err, PROF_E_NOMEM, "out of memory");
}

/* ---- names ------------------------------------------------------------ */

/* The frame name of a StringIds id; API names lose nsys's "_v<N>" suffix. */
static const char *name_of(struct walk *wk, struct id_map *c, int64_t id, bool api)
{
	struct prof_cursor *cur = NULL;
	char *raw = NULL, *name = (char *)id_map__get(c, id);
	int rc;

	if (name)
		return name;
	rc = prof_cursor__open(wk->s, "SELECT value FROM " PROF_T_STRINGS " WHERE id = ?1", &cur, wk->err);
	if (rc < 0)
		return NULL;
	prof_cursor__bind_int64(cur, 1, id);
	rc = prof_cursor__next(cur, wk->err);
	if (rc > 0 && prof_cursor__text(cur, 0)) {
		raw = strdup(prof_cursor__text(cur, 0));
		if (raw && api)
			raw[sum_api_name_len(raw)] = '\0';
	} else if (rc >= 0) {
		raw = malloc(32);
		if (raw)
			snprintf(raw, 32, "[string %" PRId64 "]", id);
	}
	prof_cursor__close(cur);
	if (rc < 0)
		return NULL;
	name = raw ? folded_frame__sanitize(raw) : NULL;
	free(raw);
	if (!name || id_map__put(c, id, name) < 0) {
		free(name);
		nomem(wk);
		return NULL;
	}
	return name;
}

/* The frame of a graph launch (sum_graph_launch_name), made once a graph. */
static const char *graph_name_of(struct walk *wk, bool id_known, int64_t id)
{
	char raw[96], *name = (char *)(id_known ? id_map__get(&wk->graphs, id) : wk->graph_no_id);

	if (name)
		return name;
	sum_graph_launch_name(raw, sizeof raw, id_known, id);
	name = folded_frame__sanitize(raw);
	if (name && !id_known)
		wk->graph_no_id = name;
	else if (name && id_map__put(&wk->graphs, id, name) < 0) {
		free(name);
		name = NULL;
	}
	if (!name)
		nomem(wk);
	return name;
}

/* The frame of the GPU row in column col of c (a kernel's name id, or a
 * graph launch's graph id) into *out; NULL where a kernel has no name. */
static int work_frame(struct walk *wk, struct prof_cursor *c, int col, const char **out)
{
	bool known = !prof_cursor__is_null(c, col);

	*out = NULL;
	if (wk->graph_walk)
		*out = graph_name_of(wk, known, prof_cursor__int64(c, col));
	else if (known)
		*out = name_of(wk, &wk->kernels, prof_cursor__int64(c, col), false);
	else
		return 0;
	return *out ? 0 : wk->err->code ? wk->err->code : nomem(wk);
}

/* One text value of a query with one bound integer, or NULL. malloc'd. */
static int lookup_text(struct walk *wk, const char *sql, int64_t v, char **out)
{
	struct prof_cursor *cur = NULL;
	int rc = prof_cursor__open(wk->s, sql, &cur, wk->err);

	*out = NULL;
	if (rc < 0)
		return rc;
	prof_cursor__bind_int64(cur, 1, v);
	rc = prof_cursor__next(cur, wk->err);
	if (rc > 0 && prof_cursor__text(cur, 0) && *prof_cursor__text(cur, 0)) {
		*out = strdup(prof_cursor__text(cur, 0));
		if (!*out)
			rc = nomem(wk);
	}
	prof_cursor__close(cur);
	return rc < 0 ? rc : 0;
}

/* "process;thread", or "process" alone when global_tid < 0; names and
 * fallbacks as the Chrome trace shows them (threads: model/thread_label.h). */
static int frame_prefix(struct walk *wk, uint32_t pid, int64_t global_tid, char **out)
{
	char *pname = NULL, *p = NULL, *t = NULL, fallback[48];
	int rc = 0;

	rc = lookup_text(wk, "SELECT name FROM " PROF_T_PROCESSES " WHERE pid = ?1 LIMIT 1", pid,
			 &pname);
	if (rc < 0)
		goto out;
	snprintf(fallback, sizeof fallback, "process %" PRIu32, pid);
	/* a job's ranks run the same program: their stacks stay apart as "rank N" */
	for (int i = 0; wk->per_rank && i < wk->ranks.n; i++)
		if (wk->ranks.p[i].pid == pid && wk->ranks.p[i].rank >= 0) {
			free(pname);
			pname = NULL;
			sum_process__rank_name(&wk->ranks.p[i], fallback, sizeof fallback);
			break;
		}
	p = folded_frame__sanitize(pname ? pname : fallback);
	if (global_tid >= 0)
		t = folded_frame__sanitize(sum_thread_labels__get(wk->threads, global_tid));
	if (!p || (global_tid >= 0 && !t)) {
		rc = nomem(wk);
		goto out;
	}
	*out = malloc(strlen(p) + (t ? strlen(t) : 0) + 2);
	if (!*out) {
		rc = nomem(wk);
		goto out;
	}
	strcpy(*out, p);
	if (t) {
		strcat(*out, ";");
		strcat(*out, t);
	}
out:
	free(pname);
	free(p);
	free(t);
	return rc;
}

/* No prefix yet: the next row makes its own. A walk starts with none, and
 * a thread or process id of -1 in a damaged file is an id like any other,
 * not "none". */
static void forget_prefix(struct walk *wk)
{
	free(wk->prefix);
	wk->prefix = NULL;
	wk->thread = -1;
}

/* ---- stacks ------------------------------------------------------------ */

static int key_append(struct walk *wk, size_t *len, const char *frame)
{
	size_t n = strlen(frame), need = *len + n + 2;

	if (need > wk->key_cap) {
		size_t cap = wk->key_cap ? wk->key_cap : 256;
		char *k;

		while (cap < need)
			cap *= 2;
		k = realloc(wk->key, cap);
		if (!k)
			return nomem(wk);
		wk->key = k;
		wk->key_cap = cap;
	}
	if (*len)
		wk->key[(*len)++] = ';';
	memcpy(wk->key + *len, frame, n);
	*len += n;
	wk->key[*len] = '\0';
	return 0;
}

/* The part of [start, end) inside the window. The queries leave out rows
 * with a bad span, so this fits; saturating all the same, as every span. */
static int64_t clipped(const struct walk *wk, int64_t start, int64_t end)
{
	if (start < wk->w.from_abs_ns)
		start = wk->w.from_abs_ns;
	if (end > wk->w.to_abs_ns)
		end = wk->w.to_abs_ns;
	return end > start ? prof_span_saturated(start, end) : 0;
}

/* prefix;open ranges...;API call[;kernel], or prefix;Python frames...;API
 * call[;kernel] for a call of a Python stack (py, else NULL); kernel: the
 * GPU row's frame (work_frame), NULL for none */
static int fold_call(struct walk *wk, const char *prefix, int64_t api_id, const char *kernel, int64_t weight,
		     const char *py)
{
	const char *api = name_of(wk, &wk->apis, api_id, true);
	size_t len = 0;
	int rc;

	if (!api)
		return wk->err->code ? wk->err->code : nomem(wk);
	rc = key_append(wk, &len, prefix);
	if (rc == 0 && py)
		rc = key_append(wk, &len, py);
	for (size_t i = 0; rc == 0 && !py && i < wk->ranges.nopen; i++)
		rc = key_append(wk, &len, wk->ranges.open[i].name);
	if (rc == 0)
		rc = key_append(wk, &len, api);
	if (rc == 0 && kernel)
		rc = key_append(wk, &len, kernel);
	if (rc == 0 && stack_table__add(&wk->table, wk->key, len, weight) < 0)
		rc = nomem(wk);
	return rc;
}

/* ---- the walk ------------------------------------------------------------ */

/* The GPU table a walk weighs by, and the column its frame is named by. */
static const char *work_table(const struct walk *wk)
{
	return wk->graph_walk ? PROF_T_GRAPH_TRACE : PROF_T_KERNEL;
}

static const char *work_name(const struct walk *wk)
{
	return wk->graph_walk ? "k.graphId" : PROF_SQL_KERNEL_NAME_ID("k.");
}

/* The calls' ids as sets (wk->launched; NULL where they do not fit and SQL
 * joins them), read once for the walks that ask. */
static int read_launched(struct walk *wk)
{
	int rc = wk->launched_read ? 0 : launch_ids__load(wk->s, &wk->launched, wk->err);

	if (rc < 0)
		return rc;
	wk->launched_read = true;
	return 0;
}

/* Columns: 0 globalTid, 1 call start, 2 API nameId, 3 kernel name id (NULL:
 * none; a graph walk's: the graph id), 4..5 the weighed interval, 6..7 the
 * call's Python stack (NULL: none, or no stacks recorded), 8 the call's
 * correlation id. A row whose weighed interval has a bad
 * span (SUM_BAD_SPAN) is left out, as every export leaves it out; the call
 * a sound kernel hangs under is only a name, whatever its own span. */
static int calls_sql(struct walk *wk, const char *table, bool runtime_too, char *sql, size_t cap)
{
	char in_range[512], runtime_join[320] = "", not_runtime[256] = "", once[400];
	const char *py_cols = wk->py.n ? FOLDED_PY_COLUMNS : ", NULL, NULL";
	const char *py_join = wk->py.n ? FOLDED_PY_JOIN : "";
	/* held ranges take the calls in the table's order */
	const char *order = wk->ranges_held ? "" : " ORDER BY a.globalTid, a.start";
	int rc;

	if (export_window__in_range(in_range, sizeof in_range, "a.start",
				    PROF_SQL_PID_OF_TID("a.globalTid")) < 0)
		return prof_error__set(wk->err, PROF_E_USAGE, "export query too long");
	/* A call recorded twice (nsys's CUDA backtrace rows) counts once. */
	rc = sum_call_once_sql(wk->s, once, sizeof once, "a", table, wk->err);
	if (rc < 0)
		return rc;
	/* A kernel launched through the runtime also has a driver call when both
	 * are traced; it belongs to the runtime call, as in the Chrome trace.
	 * One set of the runtime's (process, correlation id) pairs, built once,
	 * not a lookup per call: a capture has no index on the API tables'
	 * correlationId (schema.c says why). The set is joined, not asked with
	 * NOT IN: a pair NOT IN does not find has SQLite scan the whole set for
	 * a NULL that would make the answer unknown, once a driver call. The
	 * calls NOT IN left out stay out: a call of no thread, where the set
	 * has pairs (a call of no correlation id launches no kernel). Where
	 * the pairs fit in memory (launch_ids.h) the walk asks them instead:
	 * building the set is most of this statement's time. */
	if (runtime_too && !wk->launched) {
		snprintf(runtime_join, sizeof runtime_join,
			 " LEFT JOIN (SELECT DISTINCT " PROF_SQL_PID_OF_TID("r.globalTid") " AS p,"
			 " r.correlationId AS c FROM " PROF_T_RUNTIME " r WHERE r.globalTid IS NOT NULL"
			 " AND r.correlationId IS NOT NULL) x ON x.p = " PROF_SQL_PID_OF_TID("a.globalTid")
			 " AND x.c = a.correlationId");
		snprintf(not_runtime, sizeof not_runtime,
			 " AND x.c IS NULL AND (a.globalTid IS NOT NULL OR NOT EXISTS (SELECT 1 FROM "
			 PROF_T_RUNTIME " r WHERE r.globalTid IS NOT NULL AND r.correlationId IS NOT NULL))");
	}
	if (wk->weight == FOLDED_WEIGHT_GPU) {
		/* CROSS JOIN keeps the call table outermost: its rows come in
		 * the table's order, or are sorted once by (thread, start). */
		snprintf(sql, cap,
			 "SELECT a.globalTid, a.start, a.nameId, %s, k.start, k.end%s, a.correlationId "
			 "FROM %s a CROSS JOIN %s k ON " SUM_LAUNCHED_BY("k", "a") "%s%s"
			 " WHERE k.end > ?1 AND k.start < ?2 AND NOT " SUM_BAD_SPAN("k.") " AND %s%s AND %s%s",
			 work_name(wk), py_cols, table, work_table(wk), runtime_join, py_join, in_range,
			 not_runtime, once, order);
	} else {
		snprintf(sql, cap,
			 "SELECT a.globalTid, a.start, a.nameId, (SELECT CASE WHEN count(*) = 1 THEN "
			 "min(" PROF_SQL_KERNEL_NAME_ID("k.") ") END FROM " PROF_T_KERNEL " k WHERE "
			 SUM_LAUNCHED_BY("k", "a") "), a.start, a.end%s, a.correlationId "
			 "FROM %s a%s WHERE a.end > ?1 AND a.start < ?2 AND NOT " SUM_BAD_SPAN("a.")
			 " AND %s AND %s%s",
			 py_cols, table, py_join, in_range, once, order);
	}
	return 0;
}

static int open_windowed(struct walk *wk, const char *sql, struct prof_cursor **cur)
{
	int rc = prof_cursor__open(wk->s, sql, cur, wk->err);

	if (rc == 0 && export_window__bind(&wk->w, *cur, wk->err) < 0) {
		prof_cursor__close(*cur);
		*cur = NULL;
		rc = PROF_E_SQL;
	}
	return rc;
}

/* The prefix of thread tid's stacks, made once a thread. */
static int thread_prefix(struct walk *wk, int64_t tid, const char **out)
{
	char *prefix = id_map__get(&wk->thread_prefixes, tid);
	int rc = 0;

	if (!prefix) {
		rc = frame_prefix(wk, prof_pid_of(tid), tid, &prefix);
		if (rc == 0 && id_map__put(&wk->thread_prefixes, tid, prefix) < 0) {
			free(prefix);
			rc = nomem(wk);
		}
	}
	*out = prefix;
	return rc;
}

/* One API table's calls: sorted by (thread, start) beside the walk of the
 * ranges, or, where the ranges are held, in the table's own order
 * (THREAD_RANGES_BACK where a call starts before its thread's last: the
 * caller walks sorted). */
static int walk_calls(struct walk *wk, const char *table, bool runtime_too)
{
	struct prof_cursor *calls = NULL;
	char *sql = malloc(SQL_MAX);
	const char *prefix = NULL;
	int64_t prefix_tid = 0;
	int rc;

	if (!wk->ranges_held)
		wk->ranges = (struct range_walk){ .make_name = folded_frame__sanitize };
	if (!sql)
		return nomem(wk);
	/* only the GPU weight's walk joins what the runtime launched */
	runtime_too = runtime_too && wk->weight == FOLDED_WEIGHT_GPU;
	rc = runtime_too ? read_launched(wk) : 0;
	if (rc == 0)
		rc = calls_sql(wk, table, runtime_too, sql, SQL_MAX);
	if (rc != 0)
		goto out;
	rc = open_windowed(wk, sql, &calls);
	if (rc == 0 && wk->ranges_held)
		range_walk__rewind(&wk->ranges);
	else if (rc == 0)
		rc = range_walk__open(&wk->ranges, wk->s, &wk->w, false, false, wk->err);
	if (rc < 0)
		goto out;
	while ((rc = prof_cursor__next(calls, wk->err)) > 0) {
		int64_t tid = prof_cursor__int64(calls, 0), t = prof_cursor__int64(calls, 1);
		int64_t weight = clipped(wk, prof_cursor__int64(calls, 4), prof_cursor__int64(calls, 5));
		const char *kernel;

		/* the runtime's launch, where the sets stand in for the join */
		if (runtime_too && wk->launched &&
		    launch_ids__runtime_has(wk->launched, prof_cursor__kind(calls, 0) != PROF_VALUE_NULL, tid,
					    prof_cursor__int64(calls, 8)))
			continue;
		/* a thread or start SQL would order by type first is left to it */
		if (wk->ranges_held &&
		    (prof_cursor__kind(calls, 0) != PROF_VALUE_INT || prof_cursor__kind(calls, 1) != PROF_VALUE_INT)) {
			rc = THREAD_RANGES_BACK;
			break;
		}
		if (!prefix || tid != prefix_tid) {
			prefix_tid = tid;
			rc = thread_prefix(wk, tid, &prefix);
			if (rc < 0)
				break;
		}
		rc = range_walk__at(&wk->ranges, tid, t);
		if (rc < 0 || rc == THREAD_RANGES_BACK)
			break;
		if (weight == 0)
			continue;
		rc = work_frame(wk, calls, 3, &kernel);
		if (rc < 0)
			break;
		rc = fold_call(wk, prefix, prof_cursor__int64(calls, 2), kernel, weight,
			       prof_cursor__is_null(calls, 7) ? NULL
				       : folded_py__frames(&wk->py, prof_cursor__int64(calls, 6),
							   prof_cursor__int64(calls, 7)));
		if (rc < 0)
			break;
	}
out:
	prof_cursor__close(calls);
	if (!wk->ranges_held)
		range_walk__exit(&wk->ranges);
	free(sql);
	return rc < 0 || rc == THREAD_RANGES_BACK ? rc : 0;
}

/* Kernels (or a graph walk's launches) no captured call launched:
 * process;[no launching call];kernel. The calls' ids are sets in memory
 * where they fit (launch_ids.h), each row asked in the store's order. */
static int walk_orphans(struct walk *wk)
{
	char *sql = malloc(SQL_MAX), in_range[512];
	struct prof_cursor *cur = NULL;
	int64_t pid = -1;
	int rc;

	if (!sql)
		return nomem(wk);
	rc = read_launched(wk);
	if (rc < 0) {
		free(sql);
		return rc;
	}
	export_window__in_range(in_range, sizeof in_range, "k.start",
				PROF_SQL_PID_OF_TID("k.globalPid"));
	/* SUM_LAUNCHED_BY_SOME's test, its (process, correlation id) pairs
	 * joined rather than asked with a row-value IN, which scans the whole
	 * set for a NULL at every kernel it does not find: a kernel stays when
	 * neither an API call of its process nor, for a kernel of no process,
	 * any call has its correlation id. */
#define ORPHAN_PAIRS(T, X)                                                                  \
	" LEFT JOIN (SELECT DISTINCT " PROF_SQL_GLOBAL_PID_OF_TID("globalTid") " AS p, "         \
	"correlationId AS c FROM " T " WHERE globalTid IS NOT NULL AND correlationId IS NOT NULL) " \
	X " ON " X ".p = k.globalPid AND " X ".c = k.correlationId"
#define ORPHAN_OF(T, X)                                                                     \
	" AND " X ".c IS NULL AND NOT coalesce((k.globalPid IS NULL OR k.globalPid = 0) AND "     \
	"k.correlationId IN (SELECT correlationId FROM " T " WHERE correlationId IS NOT NULL), 0)"
	if (wk->launched)
		snprintf(sql, SQL_MAX,
			 "SELECT " PROF_SQL_PID_OF_TID("k.globalPid") ", %s, k.start, k.end, k.globalPid,"
			 " k.correlationId FROM %s k WHERE k.end > ?1 AND k.start < ?2 AND NOT "
			 SUM_BAD_SPAN("k.") " AND %s", work_name(wk), work_table(wk), in_range);
	else
		snprintf(sql, SQL_MAX,
			 "SELECT " PROF_SQL_PID_OF_TID("k.globalPid") ", %s, "
			 "k.start, k.end FROM %s k" ORPHAN_PAIRS(PROF_T_RUNTIME, "xr")
			 ORPHAN_PAIRS(PROF_T_DRIVER, "xd") " WHERE k.end > ?1 AND k.start < ?2 "
			 "AND NOT " SUM_BAD_SPAN("k.") " AND %s" ORPHAN_OF(PROF_T_RUNTIME, "xr")
			 ORPHAN_OF(PROF_T_DRIVER, "xd") " ORDER BY 1", work_name(wk), work_table(wk),
			 in_range);
#undef ORPHAN_PAIRS
#undef ORPHAN_OF
	rc = open_windowed(wk, sql, &cur);
	forget_prefix(wk);
	while (rc >= 0 && (rc = prof_cursor__next(cur, wk->err)) > 0) {
		int64_t weight;
		const char *kernel;
		size_t len = 0;

		if (wk->launched &&
		    launch_ids__launched(wk->launched, !prof_cursor__is_null(cur, 4),
					 prof_cursor__int64(cur, 4), !prof_cursor__is_null(cur, 5),
					 prof_cursor__int64(cur, 5)))
			continue;
		weight = clipped(wk, prof_cursor__int64(cur, 2), prof_cursor__int64(cur, 3));
		if (!wk->prefix || prof_cursor__int64(cur, 0) != pid) {
			pid = prof_cursor__int64(cur, 0);
			forget_prefix(wk);
			rc = frame_prefix(wk, (uint32_t)pid, -1, &wk->prefix);
			if (rc < 0)
				break;
		}
		if (weight == 0)
			continue;
		rc = work_frame(wk, cur, 1, &kernel);
		if (rc < 0)
			break;
		if (!kernel)
			continue;
		rc = key_append(wk, &len, wk->prefix);
		if (rc == 0)
			rc = key_append(wk, &len, FOLDED_NO_CALL);
		if (rc == 0)
			rc = key_append(wk, &len, kernel);
		if (rc == 0 && stack_table__add(&wk->table, wk->key, len, weight) < 0)
			rc = nomem(wk);
		if (rc < 0)
			break;
	}
	prof_cursor__close(cur);
	free(sql);
	return rc < 0 ? rc : 0;
}

/* Every walk of the stacks: 0, THREAD_RANGES_BACK (held ranges, a call
 * out of its thread's order), < 0 an error. */
static int walk_all(struct walk *wk)
{
	int rc = walk_calls(wk, PROF_T_RUNTIME, false);

	if (rc == 0)
		rc = walk_calls(wk, PROF_T_DRIVER, true);
	if (rc == 0 && wk->weight == FOLDED_WEIGHT_GPU)
		rc = walk_orphans(wk);
	if (wk->weight == FOLDED_WEIGHT_GPU && prof_store__has_table(wk->s, PROF_T_GRAPH_TRACE)) {
		wk->graph_walk = true;
		if (rc == 0)
			rc = walk_calls(wk, PROF_T_RUNTIME, false);
		if (rc == 0)
			rc = walk_calls(wk, PROF_T_DRIVER, true);
		if (rc == 0)
			rc = walk_orphans(wk);
	}
	return rc;
}

int folded__collect(struct prof_store *s, const struct folded_options *o,
		    struct folded_stacks *out, struct prof_error *err)
{
	struct walk wk = { .s = s, .err = err, .thread = -1 };
	int rc;

	wk.weight = o ? o->weight : FOLDED_WEIGHT_GPU;
	prof_error__clear(err);
	/* the calls' ids, in the census walk the window's extent starts */
	sum_call_census__want(s, CALL_CENSUS_LAUNCH_IDS);
	rc = export_window__init(&wk.w, s, o ? &o->filter : NULL, err);
	if (rc < 0)
		return rc;
	rc = sum_ranks__may_be_job(s) ? sum_ranks__load(s, &wk.ranks, err) : 0;
	if (rc < 0)
		return rc;
	wk.per_rank = sum_ranks__is_job(&wk.ranks);
	rc = sum_thread_labels__load(s, &wk.threads, err);
	if (rc < 0) {
		sum_ranks__exit(&wk.ranks);
		return rc;
	}
	if (stack_table__init(&wk.table, out) < 0) {
		sum_ranks__exit(&wk.ranks);
		sum_thread_labels__delete(wk.threads);
		return nomem(&wk);
	}
	rc = folded_py__load(s, folded_frame__sanitize, &wk.py, err);
	if (rc >= 0) {
		wk.ranges = (struct range_walk){ .make_name = folded_frame__sanitize };
		rc = range_walk__hold(&wk.ranges, s, &wk.w, false, false, err);
		wk.ranges_held = rc == 1;
	}
	if (rc >= 0)
		rc = walk_all(&wk);
	if (rc == THREAD_RANGES_BACK) {
		/* a thread's calls out of start order: everything again, sorted */
		range_walk__exit(&wk.ranges);
		wk.ranges_held = false;
		wk.graph_walk = false;
		stack_table__finish(&wk.table);
		folded_stacks__exit(out);
		rc = stack_table__init(&wk.table, out) < 0 ? nomem(&wk) : walk_all(&wk);
	}
	stack_table__finish(&wk.table);
	if (rc < 0)
		folded_stacks__exit(out);
	if (wk.ranges_held)
		range_walk__exit(&wk.ranges);
	id_map__exit(&wk.thread_prefixes, NULL);
	free(wk.prefix);
	free(wk.key);
	id_map__exit(&wk.kernels, NULL);
	id_map__exit(&wk.apis, NULL);
	id_map__exit(&wk.graphs, NULL);
	free(wk.graph_no_id);
	folded_py__exit(&wk.py);
	launch_ids__free(wk.launched);
	sum_ranks__exit(&wk.ranks);
	sum_thread_labels__delete(wk.threads);
	return rc < 0 ? rc : 0;
}

int folded__export(struct prof_store *s, const struct folded_options *o, FILE *out,
		   struct prof_error *err)
{
	struct folded_stacks st;
	int rc = folded__collect(s, o, &st, err);

	if (rc < 0)
		return rc;
	rc = folded__write(&st, out);
	if (rc < 0)
		prof_error__set(err, rc, "cannot write the folded stacks");
	else
		rc = export__note_left_out(s, "the folded stacks", NULL, err);
	folded_stacks__exit(&st);
	return rc;
}
