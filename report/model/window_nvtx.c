/* window_nvtx.c - the loop from NVTX ranges: the program's own ranges in
 * which GPU work is launched, else the runs of an XLA program. Ranges that
 * launch nothing (a compiler pass, a data loader's wait) and the ranges
 * libraries put around their own calls (CUB's scans, NCCL's collectives)
 * never mark the step. docs/diagnose.md describes the search. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "window_impl.h"
#include "launch_slots.h"
#include "model/call_census.h"
#include "model/python_stacks.h"
#include "model/sql.h"
#include "model/window.h"
#include "prof/tables.h"
#include "prof/error.h"
#include "prof/strfmt.h"

/* NVTX domains that libraries create for their own ranges, lower-case:
 * CUB/Thrust (domain "CCCL", seen around torch's scans), NCCL, the CUDA
 * math and deep-learning libraries, and the MPI ranges Nsight Systems
 * records. A range there is one library call, never the program's step.
 * perfkit's own nn.Module ranges (--pytorch=modules) are pieces of a step
 * too: the root module's forward repeats as often as the step does. */
#define LIBRARY_DOMAINS                                                         \
	"'cccl', 'cub', 'thrust', 'nccl', 'rccl', 'cudnn', 'cublas', 'cublaslt', " \
	"'cufft', 'cusparse', 'cusolver', 'curand', 'cutensor', 'nvjpeg', 'npp', " \
	"'nvshmem', 'mpi', 'ucx', '" PY_MODULES_DOMAIN "'"

/* XLA marks each run of a compiled program with a range
 * "XlaModule:#[prefix=...,]hlo_module=NAME,program_id=ID#"; the id and the
 * prefix vary between compilations of one program, so the runs are one
 * name here: "XlaModule:#hlo_module=NAME,program_id=*#", which also marks
 * the loop for sum_window__find_marked (a `*` no real range name holds).
 * Modules XLA compiles only to time them while autotuning are named
 * without a program id ("XlaModule:#hlo_module=gemm_fusion_dot#"). */
#define XLA_PROGRAM_GLOB "XlaModule:#*hlo_module=*,program_id=*"
#define XLA_KEY_PREFIX "XlaModule:#hlo_module="
#define XLA_KEY_SUFFIX ",program_id=*#"
#define XLA_AFTER_MODULE "substr(raw, instr(raw, 'hlo_module=') + 11)"
#define XLA_KEY_SQL                                                                      \
	"CASE WHEN raw GLOB '" XLA_PROGRAM_GLOB "' THEN '" XLA_KEY_PREFIX "' || substr("    \
	XLA_AFTER_MODULE ", 1, instr(" XLA_AFTER_MODULE ", ',') - 1) || '" XLA_KEY_SUFFIX \
	"' ELSE raw END"
/* What a range name is to the search: 1 an XLA program's runs; 2 XLA's
 * other ranges (compiler passes "XlaPass:#...", autotuning modules, and
 * the "Thunk:#..." operations inside a program's run), never the step;
 * 0 any other range. */
#define RANGE_KIND_SQL                                                   \
	"CASE WHEN name GLOB '" XLA_PROGRAM_GLOB "' THEN 1"              \
	" WHEN name GLOB 'Xla*:#*' OR name GLOB 'Thunk:#*' THEN 2 ELSE 0 END"

/* Write fmt's expansion at buf + *len; PROF_E_SQL when it does not fit. */
static int append(char *buf, size_t cap, size_t *len, struct prof_error *err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int append(char *buf, size_t cap, size_t *len, struct prof_error *err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap - *len)
		return prof_error__set(err, PROF_E_SQL, "the loop search's SQL does not fit in %zu bytes", cap);
	*len += (size_t)n;
	return 0;
}

const char *window__nvtx_recorded_sql(struct prof_store *store)
{
	/* In a capture of windows only the instances a window of their
	 * process overlaps were recorded with their GPU work; an NVTX window
	 * records its ranges over the whole run (capture_window.c), and those
	 * outside would read as steps that launch nothing. The windows' own
	 * times, not the stretches': a stretch runs on to the end of the GPU
	 * work its window launched, while the host has gone on to steps it
	 * did not record. */
	return prof_store__has_table(store, PROF_T_CAPTURE_WINDOWS)
		       ? " AND EXISTS (SELECT 1 FROM " PROF_T_CAPTURE_WINDOWS " cw WHERE "
			 PROF_SQL_PID_OF_TID("cw.globalPid") " = " PROF_SQL_PID_OF_TID("r.tid")
			 " AND cw.start < r.end AND coalesce(cw.end, 9223372036854775807) > r.start)"
		       : "";
}

int window__nvtx_instances_sql(char *buf, size_t cap, struct prof_error *err)
{
	/* Domains are numbered per process: the library's rows are those of
	 * its domain's number in the process that created it. */
	size_t len = 0;
	int rc;

	rc = append(buf, cap, &len, err, "WITH ");
	if (!rc)
		rc = append(buf, cap, &len, err,
			    "lib AS (SELECT d.domainId AS domain, coalesce(" PROF_SQL_PID_OF_TID("d.globalTid")
			    ", -1) AS p"
			    " FROM " PROF_T_NVTX " d LEFT JOIN " PROF_T_STRINGS " ds ON ds.id = d.textId"
			    " WHERE d.eventType = " PROF_SQL_NVTX_DOMAIN_CREATE " AND d.domainId IS NOT NULL"
			    " AND lower(coalesce(ds.value, d.text)) IN (" LIBRARY_DOMAINS ")), ");
	if (!rc)
		rc = append(buf, cap, &len, err,
			    "r0 AS (SELECT n.rowid AS id, coalesce(s.value, n.text) AS raw, n.globalTid AS tid,"
			    " n.start, n.end FROM " PROF_T_NVTX " n LEFT JOIN " PROF_T_STRINGS " s ON s.id = n.textId"
			    " WHERE n.eventType IN (" PROF_SQL_NVTX_RANGES ") AND n.end IS NOT NULL AND n.end > n.start"
			    " AND NOT " SUM_BAD_SPAN("n.") "%s),"
			    " r1 AS (SELECT id, " XLA_KEY_SQL " AS name, tid, start, end FROM r0),"
			    " r AS (SELECT id, name, tid, start, end,"
			    "  row_number() OVER (PARTITION BY name, tid ORDER BY start) AS k FROM r1)",
			    " AND (n.domainId IS NULL OR (n.domainId, coalesce("
			    PROF_SQL_PID_OF_TID("n.globalTid") ", -1)) NOT IN (SELECT domain, p FROM lib))");
	return rc;
}

/* ---- which calls launched GPU work ------------------------------------ */

/* The GPU work (kernels, copies, memsets) with the process and start of
 * the runtime or driver call that launched it, as SQL rows (p, t, e, gpu):
 * p the process (of the call's thread), t the call's start, e the work's end,
 * gpu its duration, for the calls starting in [lo, hi) of a table `span`
 * the statement defines. Joined by correlation id within one process, as
 * nvtx_kern_sum joins them (SUM_LAUNCHED_BY), each call once
 * (sum_call_once_sql), table by table: SQLite then walks the API calls and
 * looks their work up by the GPU tables' correlationId index, where a
 * union of the API tables would be copied whole first. With calls (struct
 * sum_loop_options), the work looks its call up there instead: one pass
 * over each GPU table where there were two over the API tables for each
 * (1.35 s to 0.85 s at 1M kernels and 2.2M calls), and the calls that
 * table leaves out, those with a bad span, are looked up as before. *known
 * false (and buf "") when the capture cannot tell: an export without the
 * API or the GPU tables. */
#define LAUNCH_ROW "SELECT " PROF_SQL_PID_OF_TID("a.globalTid") " AS p, a.start AS t, g.end AS e," \
	" max(coalesce(g.end - g.start, 0), 0) AS gpu"
#define LAUNCH_WHERE " WHERE a.globalTid IS NOT NULL AND a.start >= (SELECT lo FROM span)" \
	" AND a.start < (SELECT hi FROM span)"

/* Whether table may hold a call of a bad span: its census (every row,
 * whatever the views show) counts one, or cannot say. */
static bool holds_bad_calls(struct prof_store *s, const char *table)
{
	struct prof_error ignored = { 0 };
	struct call_census census;

	return sum_call_census(s, table, &census, &ignored) != 1 || census.bad > 0;
}

static int launches_sql(struct prof_store *s, const char *calls, char *buf, size_t cap, bool *known,
			struct prof_error *err)
{
	static const char *const gpu_tables[] = { PROF_T_GPU_WORK_TABLES };
	static const char *const api_tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	size_t len = 0, n = 0, napi = 0, nbad = 0;
	int rc = 0;

	*known = false;
	buf[0] = '\0';
	for (size_t a = 0; !rc && a < sizeof api_tables / sizeof api_tables[0]; a++) {
		char once[384];

		if (!prof_store__has_table(s, api_tables[a]))
			continue;
		napi++;
		rc = sum_call_once_sql(s, once, sizeof once, "a", api_tables[a], err);
		/* the calls with a bad span, each once: few or none, and where
		 * the table's census counts none (a real capture's calls), none
		 * to look for in a pass over every call (a tenth of the
		 * statement at 1M kernels) */
		if (!rc && calls && holds_bad_calls(s, api_tables[a]))
			rc = append(buf, cap, &len, err, "%sSELECT globalTid, start, correlationId FROM %s a"
				    " WHERE %s AND " SUM_BAD_SPAN("a."), nbad++ ? " UNION ALL " : "WITH bad AS (",
				    api_tables[a], once);
		for (size_t g = 0; !rc && !calls && g < sizeof gpu_tables / sizeof gpu_tables[0]; g++) {
			if (!prof_store__has_table(s, gpu_tables[g]))
				continue;
			rc = append(buf, cap, &len, err,
				    "%s" LAUNCH_ROW " FROM %s a JOIN %s g ON " SUM_LAUNCHED_BY("g", "a")
				    LAUNCH_WHERE " AND %s", n++ ? " UNION ALL " : "", api_tables[a], gpu_tables[g], once);
		}
	}
	if (!rc && nbad)
		rc = append(buf, cap, &len, err, ") ");
	/* CROSS JOIN: the work walked, its call looked up (SQLite would walk
	 * the calls, twice as many) */
	for (size_t g = 0; !rc && calls && napi && g < sizeof gpu_tables / sizeof gpu_tables[0]; g++) {
		if (!prof_store__has_table(s, gpu_tables[g]))
			continue;
		rc = append(buf, cap, &len, err,
			    "%s" LAUNCH_ROW " FROM %s g CROSS JOIN %s a ON " SUM_LAUNCHED_BY("g", "a") LAUNCH_WHERE,
			    n++ ? " UNION ALL " : "", gpu_tables[g], calls);
		if (!rc && nbad)
			rc = append(buf, cap, &len, err,
				    " UNION ALL " LAUNCH_ROW " FROM bad a CROSS JOIN %s g ON " SUM_LAUNCHED_BY("g", "a")
				    LAUNCH_WHERE, gpu_tables[g]);
	}
	*known = !rc && n > 0;
	if (!*known)
		buf[0] = '\0';
	return rc;
}

enum { SQL_CAP = 32768 };

/* A buffer for one statement of SQL_CAP bytes, which append() fills. */
static int sql_buffer__new(char **sql, struct prof_error *err)
{
	*sql = malloc(SQL_CAP);
	return *sql ? 0 : prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* NVTX ranges are host time: an asynchronous loop enqueues its steps and
 * races ahead while the GPU works through them later. The window therefore
 * ends where the GPU finishes the last work that a call inside it launched,
 * or at the ranges' end when that comes later. */
static int extend_to_launched_work(struct prof_store *store, const char *launches,
				   const struct launch_slots *slots, struct sum_window *w, struct prof_error *err)
{
	char *sql;
	struct prof_cursor *c = NULL;
	size_t len = 0;
	int64_t end = 0;
	bool any;
	int rc;

	if (slots && launch_slots__max_end(slots, w->start_ns, w->end_ns, &end, &any)) {
		if (any && end > w->end_ns)
			w->end_ns = end;
		return 0;
	}
	rc = sql_buffer__new(&sql, err);
	if (rc)
		return rc;
	rc = append(sql, SQL_CAP, &len, err, "WITH span AS (SELECT ?1 AS lo, ?2 AS hi) SELECT max(e) FROM (%s)",
		    launches);
	if (!rc)
		rc = prof_cursor__open(store, sql, &c, err);
	if (rc)
		goto out;
	prof_cursor__bind_int64(c, 1, w->start_ns);
	prof_cursor__bind_int64(c, 2, w->end_ns);
	rc = prof_cursor__next(c, err);
	if (rc == 1 && !prof_cursor__is_null(c, 0) && prof_cursor__int64(c, 0) > w->end_ns)
		w->end_ns = prof_cursor__int64(c, 0);
out:
	prof_cursor__close(c);
	free(sql);
	return rc < 0 ? rc : 0;
}

/* Whether a kernel, copy, memset or graph runs in [start, end). */
static int holds_gpu_work(struct prof_store *store, int64_t start_ns, int64_t end_ns, bool *holds,
			  struct prof_error *err)
{
	static const char *const tables[] = { PROF_T_GPU_WORK_TABLES };
	int rc = 0;

	*holds = false;
	for (size_t i = 0; !rc && !*holds && i < sizeof tables / sizeof tables[0]; i++) {
		struct prof_cursor *c;
		char sql[160];

		/* the graph table is only in captures that recorded graphs whole */
		if (i == sizeof tables / sizeof tables[0] - 1 && !prof_store__has_table(store, tables[i]))
			break;
		snprintf(sql, sizeof sql, "SELECT EXISTS (SELECT 1 FROM %s WHERE start < ?2 AND end > ?1)",
			 tables[i]);
		rc = prof_cursor__open(store, sql, &c, err);
		if (rc)
			break;
		prof_cursor__bind_int64(c, 1, start_ns);
		prof_cursor__bind_int64(c, 2, end_ns);
		rc = prof_cursor__next(c, err);
		*holds = rc == 1 && prof_cursor__int64(c, 0) != 0;
		prof_cursor__close(c);
		rc = rc < 0 ? rc : 0;
	}
	return rc;
}

/* ---- candidates ------------------------------------------------------- */

struct loop_candidate {
	char *name;                 /* whole: nested_fraction looks it up */
	int64_t count, start_ns, end_ns;
	double cover, gpu_ns;       /* host time of the instances; GPU time they launched */
	int kind;                   /* RANGE_KIND_SQL's */
	bool rejected;              /* its window holds no GPU work */
};

/* Of the instances of `inner` (warm-up left out), the fraction that lie
 * inside an instance of `outer` on the same thread. Ranges of one name on
 * one thread follow each other, so the latest `outer` to start before an
 * `inner` is the only one that can hold it: a running maximum of their ends
 * answers it in one ordered pass. */
static int nested_fraction(struct prof_store *store, const char *inner, const char *outer,
			   double *fraction, struct prof_error *err)
{
	char sql[8192];
	size_t len = 0;
	struct prof_cursor *c;
	int rc = window__nvtx_instances_sql(sql, sizeof sql, err);

	if (!rc) {
		len = strlen(sql);
		rc = append(sql, sizeof sql, &len, err,
			    ", x AS (SELECT name, k, end, max(CASE WHEN name = ?2 THEN end END)"
			    "  OVER (PARTITION BY tid ORDER BY start, name = ?1 ROWS UNBOUNDED PRECEDING) AS outer_end"
			    "  FROM r WHERE name IN (?1, ?2))"
			    " SELECT count(*), sum(outer_end >= end) FROM x WHERE name = ?1 AND k > 1");
	}
	if (!rc)
		rc = prof_cursor__open(store, sql, &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_text(c, 1, inner);
	prof_cursor__bind_text(c, 2, outer);
	*fraction = 0;
	rc = prof_cursor__next(c, err);
	if (rc == 1 && prof_cursor__int64(c, 0) > 0)
		*fraction = prof_cursor__double(c, 1) / prof_cursor__double(c, 0);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* A phase of a step: a candidate whose instances mostly sit inside those of a
 * less frequent candidate of its kind without tiling it (covering less than
 * o->tiling of it). Steps tile an epoch and stay; "load/transfer"
 * done 32 times inside each step covers 70% of it and is a phase. */
static int is_phase(struct prof_store *store, const struct sum_loop_options *o,
		    const struct loop_candidate *cand, int n, int i, bool *phase, struct prof_error *err)
{
	*phase = false;
	for (int j = 0; j < n && !*phase; j++) {
		double nested;
		int rc;

		if (j == i || cand[j].kind != cand[i].kind || cand[j].count >= cand[i].count ||
		    cand[i].cover >= cand[j].cover * o->tiling)
			continue;
		rc = nested_fraction(store, cand[i].name, cand[j].name, &nested, err);
		if (rc)
			return rc;
		*phase = nested > 0.5;
	}
	return 0;
}

enum { MAX_CANDIDATES = 64 };

/* The instances of w, held for the search's two statements over them:
 * the slots' boundaries and the candidates, each of which made them
 * again (the ranges' names, their order on each thread: 19 of the
 * candidates' 42 ms on jax_jit_mlp's 9,045 ranges). Dropped once the
 * candidates are read. */
#define INSTANCES_TABLE "perfkit_loop_instances"

/* w's instances (the statement so far, len bytes of sql, ?2 the name
 * asked for) into temp.INSTANCES_TABLE. */
static int hold_instances(struct prof_store *store, const char *sql, size_t len, const char *marked,
			  struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	char *make = prof_strfmt("CREATE TEMP TABLE " INSTANCES_TABLE " AS %.*s SELECT id, name, p, start, end FROM w",
				 (int)len, sql);
	int rc = make ? prof_store__exec(store, "DROP TABLE IF EXISTS temp." INSTANCES_TABLE, err)
		      : prof_error__set(err, PROF_E_NOMEM, "out of memory");

	if (rc == 0)
		rc = prof_cursor__open(store, make, &c, err);
	free(make);
	if (rc)
		return rc;
	if (marked)
		prof_cursor__bind_text(c, 2, marked);
	rc = prof_cursor__next(c, err);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* launch_slots__count for the instances of w (the statement so far, len
 * bytes of sql), unless the capture holds more NVTX ranges than the slots
 * take (a bounded count: at nsys-ai's 16M ranges the instances' own sort
 * would be paid twice before the slots gave up); *held: the instances
 * are in temp.INSTANCES_TABLE. */
static int count_slots(struct prof_store *store, const char *sql, size_t len, const char *marked,
		       const char *launches, struct launch_slots **slots, bool *held, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int64_t ranges = 0;
	int rc;

	rc = prof_cursor__open(store, "SELECT count(*) FROM (SELECT 1 FROM " PROF_T_NVTX " WHERE eventType IN ("
			       PROF_SQL_NVTX_RANGES ") LIMIT ?1)", &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, launch_slots__max_instances() + 1);
	rc = prof_cursor__next(c, err);
	if (rc == 1)
		ranges = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	if (rc < 0 || ranges > launch_slots__max_instances())
		return rc < 0 ? rc : 0;
	rc = hold_instances(store, sql, len, marked, err);
	if (rc)
		return rc;
	*held = true;
	return launch_slots__count(store, "SELECT p, start, end FROM temp." INSTANCES_TABLE, NULL, launches, slots,
				   err);
}

/* The repeated range names, their warm-up instances left out: count,
 * cover, span, how many instances launch GPU work and the GPU time they
 * launch, in one ordered pass over the launches and the instances' ends
 * (steps can number 100k: no query per instance). A call launches inside
 * an instance when it starts in it, on any thread of the instance's
 * process (PyTorch's autograd thread launches the backward pass of a step
 * its main thread marks). Without `marked`, only names that may be the
 * step: not XLA's own ranges, and, where the capture tells, launching GPU
 * work in most instances. Best covering first, the program's ranges
 * before XLA's runs. */
static int load_candidates(struct prof_store *store, const struct sum_loop_options *o, const char *marked,
			   const char *launches, bool known, struct launch_slots **slots,
			   struct loop_candidate *cand, int *n, struct prof_error *err)
{
	char *sql;
	struct prof_cursor *c = NULL;
	size_t len = 0;
	bool held = false;
	int rc;

	*n = 0;
	*slots = NULL;
	rc = sql_buffer__new(&sql, err);
	if (rc)
		return rc;
	rc = window__nvtx_instances_sql(sql, SQL_CAP, err);
	if (!rc)
		len = strlen(sql);
	/* The instances to weigh (the warm-up left out), each one row of
	 * `inst`: nl the calls that launch GPU work starting in it, gl the GPU
	 * time they launch. Both come from running sums over the launches
	 * and the instances' starts and ends, process by process, in time
	 * order; at equal times a boundary sorts before a launch, so a call
	 * that starts where an instance starts is inside it, one that starts
	 * where it ends is not. The instance's own columns ride along, so
	 * that nothing is joined back to r (a join SQLite would do by
	 * scanning one side for each row of the other). */
	if (!rc)
		rc = append(sql, SQL_CAP, &len, err,
			    ", w AS (SELECT id, name, " PROF_SQL_PID_OF_TID("tid") " AS p, start, end FROM r"
			    "  WHERE k > 1 AND name IS NOT NULL AND (?2 IS NULL OR name = ?2)");
	if (!rc)
		rc = append(sql, SQL_CAP, &len, err, "%s)", window__nvtx_recorded_sql(store));
	/* the launches counted between the instances' boundaries, when they
	 * are few enough (launch_slots.h): one row a slot in place of one a
	 * launch */
	if (!rc && known)
		rc = count_slots(store, sql, len, marked, launches, slots, &held, err);
	/* the statement reads the instances the slots' count held */
	if (!rc && held) {
		len = 0;
		rc = append(sql, SQL_CAP, &len, err,
			    "WITH w AS (SELECT id, name, p, start, end FROM temp." INSTANCES_TABLE ")");
	}
	if (!rc && known && *slots)
		rc = append(sql, SQL_CAP, &len, err, ", launch AS (SELECT p, t, n, g FROM temp." LAUNCH_SLOTS_TABLE ")");
	else if (!rc && known)
		rc = append(sql, SQL_CAP, &len, err,
			    ", span AS (SELECT min(start) AS lo, max(end) AS hi FROM w),"
			    " launch AS (SELECT p, t, 1 AS n, gpu AS g FROM (%s))", launches);
	if (!rc && known)
		rc = append(sql, SQL_CAP, &len, err,
			    ", ev AS (SELECT p, t, 1 AS kind, n, g, NULL AS id, 0 AS side, NULL AS name,"
			    "   NULL AS s0, NULL AS e0 FROM launch"
			    "  UNION ALL SELECT p, start, 0, 0, 0, id, 0, name, start, end FROM w"
			    "  UNION ALL SELECT p, end, 0, 0, 0, id, 1, name, start, end FROM w),"
			    " cum AS (SELECT id, side, name, s0, e0, sum(n) OVER win AS cn, total(g) OVER win AS cg FROM ev"
			    "  WINDOW win AS (PARTITION BY p ORDER BY t, kind ROWS UNBOUNDED PRECEDING)),"
			    " inst AS (SELECT max(name) AS name, max(s0) AS start, max(e0) AS end,"
			    "  max(CASE side WHEN 1 THEN cn END) - max(CASE side WHEN 0 THEN cn END) AS nl,"
			    "  max(CASE side WHEN 1 THEN cg END) - max(CASE side WHEN 0 THEN cg END) AS gl"
			    "  FROM cum WHERE id IS NOT NULL GROUP BY id)");
	else if (!rc)
		rc = append(sql, SQL_CAP, &len, err,
			    ", inst AS (SELECT name, start, end, NULL AS nl, NULL AS gl FROM w)");
	if (!rc)
		rc = append(sql, SQL_CAP, &len, err,
			    " SELECT name, count(*), sum(end - start), min(start), max(end), sum(nl > 0),"
			    " total(gl), max(" RANGE_KIND_SQL ") AS kind FROM inst GROUP BY name"
			    " HAVING count(*) + 1 >= ?1 AND (?2 IS NOT NULL OR (kind <> 2"
			    "  AND (?3 = 0 OR 2 * sum(nl > 0) > count(*))))"
			    " ORDER BY kind = 1, sum(end - start) DESC");
	if (!rc)
		rc = prof_cursor__open(store, sql, &c, err);
	if (rc)
		goto out;
	prof_cursor__bind_int64(c, 1, (int64_t)o->min_iterations);
	if (marked)
		prof_cursor__bind_text(c, 2, marked);
	prof_cursor__bind_int64(c, 3, known);
	while (*n < MAX_CANDIDATES && (rc = prof_cursor__next(c, err)) == 1) {
		struct loop_candidate *k = &cand[*n];

		k->name = strdup(prof_cursor__text(c, 0));
		if (!k->name) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		k->count = prof_cursor__int64(c, 1);
		k->cover = prof_cursor__double(c, 2);
		k->start_ns = prof_cursor__int64(c, 3);
		k->end_ns = prof_cursor__int64(c, 4);
		k->gpu_ns = prof_cursor__double(c, 6);
		k->kind = (int)prof_cursor__int64(c, 7);
		k->rejected = false;
		(*n)++;
	}
out:
	prof_cursor__close(c);
	free(sql);
	if (held) {
		struct prof_error ignored = { 0 };

		/* a table left behind is dropped by the next search's */
		(void)prof_store__exec(store, "DROP TABLE IF EXISTS temp." INSTANCES_TABLE, &ignored);
	}
	return rc < 0 ? rc : 0;
}

/* The program's own ranges: among names covering at least o->coverage of
 * the best-covering one and not a phase of another (is_phase), the most
 * frequent; -1 when none is left. An outer "train" range (once), inner
 * "copy" ranges (short) and phases of the step repeated within it all
 * lose to "step". */
static int pick_program_range(struct prof_store *store, const struct sum_loop_options *o,
			      const struct loop_candidate *cand, int n, int *best, struct prof_error *err)
{
	double best_cover = 0;
	int64_t best_count = 0;

	*best = -1;
	for (int i = 0; i < n; i++)
		if (cand[i].kind == 0 && !cand[i].rejected && cand[i].cover > best_cover)
			best_cover = cand[i].cover;
	for (int i = 0; i < n; i++) {
		bool phase;
		int rc;

		if (cand[i].kind != 0 || cand[i].rejected || cand[i].cover < best_cover * o->coverage ||
		    cand[i].count <= best_count)
			continue;
		rc = is_phase(store, o, cand, n, i, &phase, err);
		if (rc)
			return rc;
		if (phase)
			continue;
		best_count = cand[i].count;
		*best = i;
	}
	return 0;
}

/* XLA's: the program whose runs launch the most GPU time (a training step
 * against the small programs that initialise its parameters); -1 when none
 * is left. */
static int pick_xla_program(const struct loop_candidate *cand, int n)
{
	int best = -1;

	for (int i = 0; i < n; i++)
		if (cand[i].kind == 1 && !cand[i].rejected &&
		    (best < 0 || cand[i].gpu_ns > cand[best].gpu_ns ||
		     (cand[i].gpu_ns == cand[best].gpu_ns && cand[i].count > cand[best].count)))
			best = i;
	return best;
}

/* "XLA module "NAME" x N", or "NVTX range "NAME" x N". */
static void say_source(const struct loop_candidate *k, char *buf, size_t cap)
{
	size_t prefix = strlen(XLA_KEY_PREFIX), suffix = strlen(XLA_KEY_SUFFIX), len = strlen(k->name);

	if (len > prefix + suffix && strncmp(k->name, XLA_KEY_PREFIX, prefix) == 0 &&
	    strcmp(k->name + len - suffix, XLA_KEY_SUFFIX) == 0)
		snprintf(buf, cap, "XLA module \"%.*s\" x %lld", (int)(len - prefix - suffix), k->name + prefix,
			 (long long)k->count);
	else
		snprintf(buf, cap, "NVTX range \"%s\" x %lld", k->name, (long long)k->count);
}

/* The window of candidate k, extended to the work its calls launched
 * (launches: launches_sql's, NULL when the capture cannot tell); *holds
 * whether GPU work runs in it. */
static int try_candidate(struct prof_store *store, const struct loop_candidate *k, const char *launches,
			 const struct launch_slots *slots, struct sum_window *w, bool *holds,
			 struct prof_error *err)
{
	int rc = 0;

	w->iterations = (int)k->count;
	w->start_ns = k->start_ns;
	w->end_ns = w->host_end_ns = k->end_ns;
	if (launches)
		rc = extend_to_launched_work(store, launches, slots, w, err);
	if (!rc)
		rc = holds_gpu_work(store, w->start_ns, w->end_ns, holds, err);
	if (rc || !*holds)
		return rc;
	say_source(k, w->source, sizeof w->source);
	w->mark = SUM_LOOP_NVTX;
	snprintf(w->mark_name, sizeof w->mark_name, "%s", k->name);
	return 0;
}

/* Whether the capture has NVTX ranges at all: a capture without them is
 * spared the pass over its launches. */
static int has_ranges(struct prof_store *store, bool *any, struct prof_error *err)
{
	struct prof_cursor *c;
	int rc;

	*any = false;
	rc = prof_cursor__open(store, "SELECT EXISTS (SELECT 1 FROM " PROF_T_NVTX
			       " WHERE eventType IN (" PROF_SQL_NVTX_RANGES "))", &c, err);
	if (rc)
		return rc;
	rc = prof_cursor__next(c, err);
	*any = rc == 1 && prof_cursor__int64(c, 0) != 0;
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* The first instance of each name on each thread is left out, of the
 * ranking and of the window: it is the warm-up (module loading, library
 * handles, first-touch allocations, XLA's compilation) rather than the
 * steady state, and a name used once for setup ("load/transfer" around the
 * initial upload) would otherwise outweigh the loop it also appears in.
 * A candidate whose window holds no GPU work (a capture that cannot tell
 * which calls launched what) gives way to the next. */
int window__from_nvtx(struct prof_store *store, const struct sum_loop_options *o, const char *marked,
		      struct sum_window *w, struct prof_error *err)
{
	struct loop_candidate cand[MAX_CANDIDATES];
	struct launch_slots *slots = NULL;
	struct sum_window found = *w;
	char *launches;
	bool known = false, any;
	int n = 0, rc;

	rc = has_ranges(store, &any, err);
	if (rc || !any)
		return rc;
	rc = sql_buffer__new(&launches, err);
	if (rc)
		return rc;
	rc = launches_sql(store, o->calls, launches, SQL_CAP, &known, err);
	if (!rc)
		rc = load_candidates(store, o, marked, launches, known, &slots, cand, &n, err);
	while (rc == 0) {
		bool holds = false;
		int i = -1;

		if (marked) {
			for (int j = 0; j < n && i < 0; j++)
				i = cand[j].rejected ? -1 : j;
		} else {
			rc = pick_program_range(store, o, cand, n, &i, err);
			if (rc == 0 && i < 0)
				i = pick_xla_program(cand, n);
		}
		if (rc || i < 0)
			break;
		rc = try_candidate(store, &cand[i], known ? launches : NULL, slots, &found, &holds, err);
		if (rc == 0 && holds) {
			*w = found;
			break;
		}
		cand[i].rejected = true;
	}
	for (int i = 0; i < n; i++)
		free(cand[i].name);
	launch_slots__delete(slots, store);
	free(launches);
	return rc < 0 ? rc : 0;
}
