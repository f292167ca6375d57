/* trace_merge.c - the events of a capture merged by start for the timeline
 * exports (see trace_merge.h): the per-table queries, the NVTX ranges
 * projected onto the GPU streams, the merge itself and the track lists. */
#include "trace_merge.h"

#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "folded_ranges.h"
#include "trace_feed.h"
#include "trace_ranged.h"
#include "trace_tracks.h"
#include "prof/tables.h"
#include "model/names.h"
#include "model/sql.h"
#include "model/sums.h"
#include "model/thread_label.h"
#include "model/window.h"
#include "prof/saturate.h"
#include "prof/error.h"

#define SQL_MAX 16384     /* the event queries */
#define META_SQL_MAX 6144 /* the track lists */

static const enum tm_kind gpu_kinds[TM_GPU_KINDS] = { TM_KERNEL, TM_MEMCPY, TM_MEMSET,
						      TM_GRAPH };
static const char *const gpu_tables[TM_GPU_KINDS] = { PROF_T_KERNEL, PROF_T_MEMCPY,
						      PROF_T_MEMSET, PROF_T_GRAPH_TRACE };
static const enum tm_kind api_kinds[] = { TM_RUNTIME, TM_DRIVER };
static const char *const api_tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };

static int nomem(struct trace_merge *m)
{
	return prof_error__set(m->err, PROF_E_NOMEM, "out of memory");
}

/* ---- devices ------------------------------------------------------------ */

struct tm_device *trace_merge__device(struct trace_merge *m, int32_t id)
{
	for (size_t i = 0; i < m->ndevs; i++)
		if (m->devs[i].id == id)
			return &m->devs[i];
	return NULL;
}

static int device_add(struct trace_merge *m, int32_t id)
{
	struct tm_device *d;
	struct prof_error ignored = { 0 };

	if (trace_merge__device(m, id))
		return 0;
	d = realloc(m->devs, (m->ndevs + 1) * sizeof *d);
	if (!d)
		return nomem(m);
	m->devs = d;
	d = &m->devs[m->ndevs++];
	memset(d, 0, sizeof *d);
	d->id = id;
	/* without GPU limits a kernel simply has no occupancy */
	d->have_occ = occ_gpu__from_store(m->store, id, &d->occ, &ignored) == 0;
	return 0;
}

void tm_device__label(const struct tm_device *d, char *buf, size_t cap)
{
	if (d->have_occ && d->occ.name[0])
		snprintf(buf, cap, "GPU %d: %s", d->id, d->occ.name);
	else
		snprintf(buf, cap, "GPU %d", d->id);
}

bool trace_merge__occupancy(struct trace_merge *m, struct prof_cursor *cur, double *occupancy)
{
	struct tm_device *d = trace_merge__device(m, (int32_t)prof_cursor__int64(cur, TM_GPU_DEVICE));
	int64_t bx = prof_cursor__int64(cur, TM_KERNEL_BLOCK_X);
	int64_t by = prof_cursor__int64(cur, TM_KERNEL_BLOCK_Y);
	int64_t bz = prof_cursor__int64(cur, TM_KERNEL_BLOCK_Z);
	struct occ_launch l = {
		.threads_per_block = (int)(bx * by * bz),
		.registers_per_thread = (int)prof_cursor__int64(cur, TM_KERNEL_REGISTERS),
		.shared_per_block_bytes = prof_cursor__int64(cur, TM_KERNEL_STATIC_SHARED) +
					  prof_cursor__int64(cur, TM_KERNEL_DYNAMIC_SHARED),
	};
	struct occ_result r;

	if (!d || !d->have_occ || occ__compute(&d->occ, &l, &r) != 0 ||
	    r.limiter == OCC_LIMIT_INVALID)
		return false;
	*occupancy = r.occupancy;
	return true;
}

void trace_merge__memory(struct trace_merge *m, struct prof_cursor *cur,
			 struct tm_memory_step *step)
{
	struct tm_device *d = trace_merge__device(m, (int32_t)prof_cursor__int64(cur, TM_MEM_DEVICE));
	int64_t ts = prof_cursor__int64(cur, TM_MEM_START), bytes = prof_cursor__int64(cur, TM_MEM_BYTES);
	bool in_window = prof_cursor__int64(cur, TM_MEM_IN_WINDOW) != 0;

	*step = (struct tm_memory_step){ .d = d };
	if (!d)
		return;
	/* the level at the window's start, so a narrowed trace starts right */
	step->at_from = !d->mem_emitted && in_window && ts > m->w.from_abs_ns &&
			m->w.from_abs_ns != INT64_MIN && !m->w.range_name;
	step->from_bytes = d->mem_in_use_bytes;
	d->mem_in_use_bytes = prof_cursor__int64(cur, TM_MEM_IS_FREE) == 0
				      ? prof_add_saturated(d->mem_in_use_bytes, bytes)
				      : prof_span_saturated(bytes, d->mem_in_use_bytes);
	step->sample = in_window;
	if (step->at_from || step->sample)
		d->mem_emitted = true;
}

/* ---- names -------------------------------------------------------------- */

/* The rows carry a kernel's and a call's name as its StringIds id, so
 * that the sorts behind the merge move an integer, not the text, and no
 * row joins StringIds: each name is read once into a direct-mapped cache
 * of TM_NAME_SLOTS, an id that meets another's slot read again. */
static struct tm_name *name_slot(struct trace_merge *m, int64_t id)
{
	return &m->names[((uint64_t)id * 0x9E3779B97F4A7C15ull) >> (64 - TM_NAME_BITS)];
}

const char *trace_merge__name(struct trace_merge *m, struct prof_cursor *cur, int col)
{
	return m->ahead ? m->ahead->name(m->ahead, cur) : tm_in_place__name(m, cur, col);
}

const char *tm_in_place__name(struct trace_merge *m, struct prof_cursor *cur, int col)
{
	struct prof_cursor *q = NULL;
	struct prof_error ignored = { 0 };
	struct tm_name *slot;
	int64_t id;
	char *text;

	if (prof_cursor__is_null(cur, col))
		return "";
	id = prof_cursor__int64(cur, col);
	if (!m->names && !(m->names = calloc(TM_NAME_SLOTS, sizeof *m->names))) {
		m->names_failed = true;
		return "";
	}
	slot = name_slot(m, id);
	if (slot->text && slot->id == id)
		return slot->text;
	/* a failed read names nothing, as a join that finds no row */
	text = NULL;
	if (prof_cursor__open(m->store, "SELECT value FROM " PROF_T_STRINGS " WHERE id = ?1", &q,
			      &ignored) == 0 &&
	    prof_cursor__bind_int64(q, 1, id) == 0 && prof_cursor__next(q, &ignored) > 0 &&
	    prof_cursor__text(q, 0))
		text = strdup(prof_cursor__text(q, 0));
	else
		text = strdup("");
	prof_cursor__close(q);
	if (!text) {
		m->names_failed = true;
		return "";
	}
	free(slot->text);
	slot->id = id;
	slot->text = text;
	return text;
}


const char *tm_api_name(const char *name, char *buf, size_t cap)
{
	size_t keep = sum_api_name_len(name);

	if (keep >= cap || keep == strlen(name))
		return name;
	memcpy(buf, name, keep);
	buf[keep] = '\0';
	return buf;
}

static const char *copy_kind_name(int64_t k)
{
	static const char *const names[] = {
		"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH",
		"PtoP", "UVM HtoD", "UVM DtoH", "UVM DtoD",
	};
	return k >= 0 && k < (int64_t)(sizeof names / sizeof names[0]) ? names[k] : "Unknown";
}

static const char *mem_kind_name(int64_t k)
{
	static const char *const names[] = {
		"Pageable", "Pinned", "Device", "Array", "Managed", "Device Static",
		"Managed Static", "Unknown",
	};
	return k >= 0 && k < (int64_t)(sizeof names / sizeof names[0]) ? names[k] : "Unknown";
}

void tm_copy_name(char *buf, size_t cap, int64_t copy_kind, int64_t src_kind, int64_t dst_kind)
{
	snprintf(buf, cap, "Memcpy %s (%s -> %s)", copy_kind_name(copy_kind),
		 mem_kind_name(src_kind), mem_kind_name(dst_kind));
}

void tm_set_name(char *buf, size_t cap, int64_t mem_kind)
{
	snprintf(buf, cap, "Memset (%s)", mem_kind_name(mem_kind));
}

/* The kind in the low two bits: kernels 1, copies 2, memsets 3 and graph
 * launches 0, whose ids are still above 0 (a rowid is). */
uint64_t trace_merge__flow_id(enum tm_kind gpu_kind, int64_t rowid)
{
	return (uint64_t)rowid << 2 | (uint64_t)(gpu_kind - TM_KERNEL + 1) % TM_GPU_KINDS;
}

/* ---- queries ------------------------------------------------------------ */

/* Open sql on store; windowed queries (those using ?1..?3) get the window
 * bound. */
static int open_cursor_on(struct trace_merge *m, struct prof_store *store, const char *sql,
			  bool windowed, struct prof_cursor **cur)
{
	int rc = prof_cursor__open(store, sql, cur, m->err);

	if (rc < 0 || !windowed)
		return rc;
	rc = export_window__bind(&m->w, *cur, m->err);
	if (rc < 0) {
		prof_cursor__close(*cur);
		*cur = NULL;
	}
	return rc;
}

static int open_cursor(struct trace_merge *m, const char *sql, bool windowed,
		       struct prof_cursor **cur)
{
	return open_cursor_on(m, m->store, sql, windowed, cur);
}

/* Appends " UNION SELECT ..." for each present table to buf. */
static void union_of(struct trace_merge *m, char *buf, size_t cap, const char *op,
		     const char *cols, const enum tm_kind *kinds, const char *const *tables,
		     int n, const char *where)
{
	size_t used = strlen(buf);
	bool any = false;

	for (int i = 0; i < n; i++) {
		if (!m->have[kinds[i]])
			continue;
		used += (size_t)snprintf(buf + used, cap > used ? cap - used : 0,
					 "%sSELECT %s FROM %s %s", any ? op : "", cols, tables[i],
					 where);
		any = true;
	}
	if (!any)
		snprintf(buf + used, cap > used ? cap - used : 0, "SELECT %s FROM (SELECT 0 AS "
			 "correlationId, 0 AS globalPid, 0 AS globalTid, 0 AS deviceId, 0 AS streamId, "
			 "0 AS start, 0 AS end) WHERE 0", cols);
}

static void append(char *sql, size_t cap, const char *text)
{
	size_t used = strlen(sql);

	snprintf(sql + used, cap > used ? cap - used : 0, "%s", text);
}

/* The track lists read two temporary tables, each filled by one pass over
 * the tables it draws from when a list first asks: the distinct globalTid
 * of the API calls and NVTX events (NULL included, as the calls may hold
 * it), and the distinct (globalPid, deviceId, streamId) of the GPU work.
 * Each list asked its own UNION of the whole tables, four passes over the
 * calls and three over the GPU work. The columns have no affinity, so the
 * values stay as the capture holds them. Where the pairs' passes gathered
 * them (m->tracks), they come from there, with the distinct (globalTid,
 * nameId) of each API table's calls that the threads' labels read. The
 * tables are emptied, not dropped: a statement of the connection may be
 * reading another table (SQLite drops none then). */
#define HOST_IDS "perfkit_tm_host_ids"
#define GPU_IDS "perfkit_tm_gpu_ids"
#define CALL_NAMES_RUNTIME "perfkit_tm_runtime_names"
#define CALL_NAMES_DRIVER "perfkit_tm_driver_names"

static int make_track_tables(struct trace_merge *m)
{
	static const char *const setup[] = {
		/* UNIQUE: the gathered threads join the NVTX rows' read before */
		"CREATE TEMP TABLE IF NOT EXISTS " HOST_IDS " (g UNIQUE)",
		"CREATE TEMP TABLE IF NOT EXISTS " GPU_IDS " (gp, d, s)",
		"CREATE TEMP TABLE IF NOT EXISTS " CALL_NAMES_RUNTIME " (globalTid, nameId)",
		"CREATE TEMP TABLE IF NOT EXISTS " CALL_NAMES_DRIVER " (globalTid, nameId)",
		("DELETE FROM temp." HOST_IDS), ("DELETE FROM temp." GPU_IDS),
		("DELETE FROM temp." CALL_NAMES_RUNTIME), ("DELETE FROM temp." CALL_NAMES_DRIVER),
	};
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < sizeof setup / sizeof setup[0]; i++)
		rc = prof_store__exec(m->store, setup[i], m->err);
	return rc;
}

/* The tables made, with the threads of the NVTX rows, which the pairs'
 * passes do not read. */
static int track_tables_nvtx(struct trace_merge *m)
{
	int rc = make_track_tables(m);

	if (rc == 0 && m->have[TM_NVTX])
		rc = prof_store__exec(m->store, "INSERT INTO temp." HOST_IDS " SELECT DISTINCT globalTid "
				      "FROM " PROF_T_NVTX " WHERE globalTid IS NOT NULL", m->err);
	return rc;
}

/* The ids from the pairs' passes, beside the NVTX rows' threads. */
static int track_ids_gathered(struct trace_merge *m)
{
	static const char *const call_names[] = { CALL_NAMES_RUNTIME, CALL_NAMES_DRIVER };
	int rc = m->nvtx_early ? 0 : track_tables_nvtx(m);

	return rc ? rc : tm_tracks__fill(m->tracks, m->store, HOST_IDS, GPU_IDS, call_names, m->err);
}

static int index_track_ids(struct trace_merge *m)
{
	char *sql;
	int rc;

	if (m->track_ids)
		return 0;
	if (tm_tracks__usable(m->tracks)) {
		rc = track_ids_gathered(m);
		m->track_ids = rc == 0;
		return rc;
	}
	rc = make_track_tables(m);
	sql = rc == 0 ? malloc(META_SQL_MAX) : NULL;
	if (rc == 0 && !sql)
		return nomem(m);
	if (rc == 0 && (m->have[TM_RUNTIME] || m->have[TM_DRIVER] || m->have[TM_NVTX])) {
		/* DISTINCT: a capture of one table of calls has no UNION to
		 * make its threads distinct (each call listed its thread) */
		snprintf(sql, META_SQL_MAX, "INSERT INTO temp." HOST_IDS " SELECT DISTINCT * FROM (");
		union_of(m, sql, META_SQL_MAX, " UNION ", "globalTid", api_kinds, api_tables, 2, "");
		if (m->have[TM_NVTX])
			append(sql, META_SQL_MAX, " UNION SELECT globalTid FROM " PROF_T_NVTX
			       " WHERE globalTid IS NOT NULL");
		append(sql, META_SQL_MAX, ")");
		rc = prof_store__exec(m->store, sql, m->err);
	}
	if (rc == 0) {
		snprintf(sql, META_SQL_MAX, "INSERT INTO temp." GPU_IDS " SELECT DISTINCT * FROM (");
		union_of(m, sql, META_SQL_MAX, " UNION ", "globalPid, deviceId, streamId", gpu_kinds,
			 gpu_tables, TM_GPU_KINDS, "");
		append(sql, META_SQL_MAX, ")");
		rc = prof_store__exec(m->store, sql, m->err);
	}
	free(sql);
	m->track_ids = rc == 0;
	return rc;
}

/* Run sql, whose rows are (process id, name or NULL), calling fn with the
 * name or "process ID" for a missing one. */
static int each_named(struct trace_merge *m, const char *sql,
		      int (*fn)(void *ctx, int64_t id, const char *name), void *ctx)
{
	struct prof_cursor *cur = NULL;
	int rc = open_cursor(m, sql, false, &cur);

	while (rc >= 0 && (rc = prof_cursor__next(cur, m->err)) > 0) {
		int64_t id = prof_cursor__int64(cur, 0);
		const char *name = prof_cursor__text(cur, 1);
		char fallback[48];

		snprintf(fallback, sizeof fallback, "process %" PRId64, id);
		rc = fn(ctx, id, name && *name ? name : fallback);
	}
	prof_cursor__close(cur);
	return rc < 0 ? rc : 0;
}

int trace_merge__each_process(struct trace_merge *m,
			      int (*fn)(void *ctx, int64_t pid, const char *name), void *ctx)
{
	/* p keeps the bits above the pid (nsys's machine id, a merged job's
	 * host index): processes of two hosts with one pid stay two */
	int rc = index_track_ids(m);

	if (rc < 0)
		return rc;
	return each_named(m, "SELECT p, (SELECT name FROM " PROF_T_PROCESSES " WHERE "
			  PROF_SQL_PID_OF_TID("globalPid") " = p LIMIT 1) FROM (SELECT "
			  PROF_SQL_PID_OF_TID("g") " AS p FROM temp." HOST_IDS " UNION SELECT "
			  PROF_SQL_PID_OF_TID("gp") " FROM temp." GPU_IDS ") ORDER BY p", fn, ctx);
}

int trace_merge__each_thread(struct trace_merge *m,
			     int (*fn)(void *ctx, int64_t global_tid, const char *name), void *ctx)
{
	struct sum_thread_labels *labels = NULL;
	struct prof_cursor *cur = NULL;
	int rc;

	if (!m->have[TM_RUNTIME] && !m->have[TM_DRIVER] && !m->have[TM_NVTX])
		return 0;
	rc = index_track_ids(m);
	if (rc == 0 && tm_tracks__usable(m->tracks)) {
		/* the threads and their calls' names gathered, NVTX's and
		 * ThreadNames' read */
		struct sum_thread_tables t = {
			.threads = { "(SELECT g AS globalTid FROM temp." HOST_IDS ")",
				     prof_store__has_table(m->store, PROF_T_THREAD_NAMES)
					     ? PROF_T_THREAD_NAMES : NULL },
			.calls = { m->have[TM_RUNTIME] ? "temp." CALL_NAMES_RUNTIME : NULL,
				   m->have[TM_DRIVER] ? "temp." CALL_NAMES_DRIVER : NULL },
		};

		rc = sum_thread_labels__load_from(m->store, &t, &labels, m->err);
	} else if (rc == 0) {
		rc = sum_thread_labels__load(m->store, &labels, m->err);
	}
	if (rc == 0)
		rc = open_cursor(m, "SELECT g FROM temp." HOST_IDS " ORDER BY g", false, &cur);
	while (rc >= 0 && (rc = prof_cursor__next(cur, m->err)) > 0) {
		int64_t g = prof_cursor__int64(cur, 0);

		rc = fn(ctx, g, sum_thread_labels__get(labels, g));
	}
	prof_cursor__close(cur);
	sum_thread_labels__delete(labels);
	return rc < 0 ? rc : 0;
}

int trace_merge__each_stream(struct trace_merge *m,
			     int (*fn)(void *ctx, struct tm_device *d, bool new_device,
				       int64_t stream),
			     void *ctx)
{
	char sql[META_SQL_MAX] = "SELECT deviceId, streamId FROM (SELECT DISTINCT d AS deviceId, "
				 "s AS streamId FROM temp." GPU_IDS;
	struct prof_cursor *cur = NULL;
	int32_t last_dev = -1;
	bool any = false;
	int rc = index_track_ids(m);

	/* a device with allocations but no work still gets its counter track */
	if (m->have[TM_MEMORY])
		append(sql, sizeof sql, " UNION SELECT deviceId, NULL FROM " PROF_T_MEMORY);
	append(sql, sizeof sql, ") ORDER BY deviceId, streamId");

	if (rc == 0)
		rc = open_cursor(m, sql, false, &cur);
	while (rc >= 0 && (rc = prof_cursor__next(cur, m->err)) > 0) {
		int32_t dev = (int32_t)prof_cursor__int64(cur, 0);
		bool new_device = !any || dev != last_dev;

		if (new_device) {
			rc = device_add(m, dev);
			if (rc < 0)
				break;
			last_dev = dev;
			any = true;
		}
		rc = fn(ctx, trace_merge__device(m, dev), new_device,
			prof_cursor__is_null(cur, 1) ? -1 : prof_cursor__int64(cur, 1));
	}
	prof_cursor__close(cur);
	return rc < 0 ? rc : 0;
}

int trace_merge__each_process_stream(struct trace_merge *m,
				     int (*fn)(void *ctx, int64_t pid, int64_t device,
					       int64_t stream),
				     void *ctx)
{
	struct prof_cursor *cur = NULL;
	int rc = index_track_ids(m);

	if (rc == 0)
		rc = open_cursor(m, "SELECT DISTINCT " PROF_SQL_PID_OF_TID("gp") " AS p, d, s FROM temp."
				 GPU_IDS " ORDER BY p, d, s", false, &cur);
	while (rc >= 0 && (rc = prof_cursor__next(cur, m->err)) > 0)
		rc = fn(ctx, prof_cursor__int64(cur, 0), prof_cursor__int64(cur, 1),
			prof_cursor__int64(cur, 2));
	prof_cursor__close(cur);
	return rc < 0 ? rc : 0;
}

/* The API calls by (correlation id, process), in temporary tables made
 * once per export: the GPU queries (one a GPU table) look their launching
 * call up there. Joined to the API tables themselves, each of those
 * queries had SQLite build an automatic index of both whole API tables
 * (neither has an index on correlationId: libprof/src/schema.c says why),
 * six sorts of every call instead of two. The index holds what the joins
 * read after the key in the table's column order, as the automatic index
 * did, so calls sharing an id come out in the same order. */
#define CALLS_RUNTIME "perfkit_tm_runtime_calls"
#define CALLS_DRIVER "perfkit_tm_driver_calls"

static int index_calls(struct trace_merge *m, struct prof_store *store)
{
	char sql[512];
	int rc = 0;

	for (int a = 0; rc == 0 && a < 2; a++) {
		const char *t = a == 0 ? CALLS_RUNTIME : CALLS_DRIVER;

		if (!m->have[api_kinds[a]])
			continue;
		snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS temp.%s", t);
		rc = prof_store__exec(store, sql, m->err);
		if (rc == 0) {
			snprintf(sql, sizeof sql, "CREATE TEMP TABLE %s AS SELECT correlationId, "
				 PROF_SQL_PID_OF_TID("globalTid") " AS p, start, end, globalTid FROM %s "
				 "WHERE correlationId IS NOT NULL ORDER BY rowid", t, api_tables[a]);
			rc = prof_store__exec(store, sql, m->err);
		}
		if (rc == 0) {
			snprintf(sql, sizeof sql, "CREATE INDEX temp.%s_c ON %s (correlationId, p, "
				 "start, end, globalTid)", t, t);
			rc = prof_store__exec(store, sql, m->err);
		}
	}
	return rc;
}

/* The launching API call of GPU row g: runtime first, the driver when the
 * runtime has no call with that correlation id. nsys exports can hold
 * several calls with one id (a call made inside another): the join then
 * repeats the GPU row once per call, which the Chrome trace keeps; with
 * launch_rows the repeats come next to each other, the earliest call's
 * first, and the merge hands out only that one. */
struct api_exprs {
	char join[512];
	char start[48], end[48], tid[64];
};

/* Whether the GPU rows are paired in the merge (m->pairs), or are to be
 * where the pairs are made (paired_sql): no join, the call's columns NULL */
static bool paired(const struct trace_merge *m)
{
	return m->pairs || m->paired_sql;
}

static void api_exprs__init(struct trace_merge *m, struct api_exprs *a)
{
	bool rt = m->have[TM_RUNTIME] && !paired(m), drv = m->have[TM_DRIVER] && !paired(m);

	snprintf(a->join, sizeof a->join, "%s%s",
		 rt ? " LEFT JOIN temp." CALLS_RUNTIME " r ON r.correlationId = g.correlationId"
		      " AND r.p = " PROF_SQL_PID_OF_TID("g.globalPid") : "",
		 drv ? " LEFT JOIN temp." CALLS_DRIVER " d ON d.correlationId = g.correlationId"
		       " AND d.p = " PROF_SQL_PID_OF_TID("g.globalPid") : "");
#define PICK(field) (rt && drv ? "coalesce(r." field ", d." field ")" : rt ? "r." field \
		     : drv ? "d." field : "NULL")
	snprintf(a->start, sizeof a->start, "%s", PICK("start"));
	snprintf(a->end, sizeof a->end, "%s", PICK("end"));
	snprintf(a->tid, sizeof a->tid, "%s", PICK("globalTid"));
#undef PICK
}

/* A name as its StringIds id, which trace_merge__name reads once (an id
 * that is no integer names no string, as in a join on the id) */
#define NAME_ID(X) "CASE WHEN typeof(" X ") = 'integer' THEN " X " END"
#define KERNEL_COLS NAME_ID(PROF_SQL_KERNEL_NAME_ID("g.")) ", g.gridX, g.gridY, g.gridZ, " \
	"g.blockX, g.blockY, g.blockZ, g.registersPerThread, g.staticSharedMemory, "         \
	"g.dynamicSharedMemory"
#define KERNEL_FROM PROF_T_KERNEL " g"
#define MEMCPY_COLS "g.bytes, g.copyKind, g.srcKind, g.dstKind"
#define MEMSET_COLS "g.bytes, g.memKind"
#define GRAPH_COLS "g.graphId"

/* The columns TM_GPU_*: those of every GPU source, then the kind's own.
 * With --range, a row with a launching call counts where its call lies
 * inside an instance, else where it starts; without, the test is ?3 IS
 * NULL alone, where the instance lookups cost a tenth of the kernel query
 * only to say true. */
static int gpu_sql(struct trace_merge *m, char *sql, size_t cap, const char *table,
		   const char *extra_cols)
{
	struct api_exprs a;
	char in_api[512], in_gpu[512], api_pid[96], in_range[1200] = "?3 IS NULL";

	api_exprs__init(m, &a);
	snprintf(api_pid, sizeof api_pid, PROF_SQL_PID_OF_TID("%s"), a.tid);
	if (export_window__in_range(in_api, sizeof in_api, a.start, api_pid) < 0 ||
	    export_window__in_range(in_gpu, sizeof in_gpu, "g.start", PROF_SQL_PID_OF_TID("g.globalPid")) < 0)
		return prof_error__set(m->err, PROF_E_USAGE, "export query too long");
	if (m->w.range_name)
		snprintf(in_range, sizeof in_range, "CASE WHEN %s IS NOT NULL THEN %s ELSE %s END",
			 a.start, in_api, in_gpu);
	if ((size_t)snprintf(sql, cap,
		 "SELECT g.start, g.end, g.deviceId, g.streamId, g.correlationId, g.globalPid, "
		 "%s, CASE WHEN %s IS NOT NULL AND %s > ?1 AND %s < ?2 THEN %s END, g.rowid, %s "
		 "FROM %s%s WHERE g.end > ?1 AND g.start < ?2 AND NOT " SUM_BAD_SPAN("g.") " "
		 "AND %s ORDER BY g.start, g.end DESC, g.rowid%s%s",
		 a.tid, a.start, a.end, a.start, a.start, extra_cols, table, a.join,
		 in_range, m->launch_rows && !paired(m) ? ", " : "",
		 m->launch_rows && !paired(m) ? a.start : "") >= cap)
		return prof_error__set(m->err, PROF_E_USAGE, "export query too long");
	return 0;
}

/* With launch_rows: the GPU work of every kind that the export holds
 * (gpu_sql's condition), by (process, correlation id), in a temporary
 * table made once per export, in the order of kind then rowid within an
 * id, the order the flows go out. trace_merge__launched walks it beside
 * the calls. Sought in each GPU table per call, three or four subqueries
 * a call cost three times the seeks, most of them for calls that launch
 * nothing; an nsys export's tables, which have no correlationId index,
 * were grouped by id once per API table. */
#define LAUNCHED "perfkit_tm_launched"

static int index_launched(struct trace_merge *m)
{
	struct prof_cursor *cur = NULL;
	char sql[2048];
	size_t used;
	int rc;

	rc = prof_store__exec(m->store, "DROP TABLE IF EXISTS temp." LAUNCHED, m->err);
	if (rc == 0)
		rc = prof_store__exec(m->store, "CREATE TEMP TABLE " LAUNCHED " (c INT, p INT, k INT, "
				      "r INT, PRIMARY KEY (p, c, k, r)) WITHOUT ROWID", m->err);
	if (rc < 0)
		return rc;
	used = (size_t)snprintf(sql, sizeof sql, "INSERT INTO temp." LAUNCHED " ");
	for (int g = 0, arm = 0; g < TM_GPU_KINDS; g++) {
		if (!m->have[gpu_kinds[g]])
			continue;
		used += (size_t)snprintf(sql + used, sizeof sql > used ? sizeof sql - used : 0,
			"%sSELECT correlationId, " PROF_SQL_PID_OF_TID("globalPid") ", %d, rowid FROM %s "
			"WHERE correlationId IS NOT NULL AND globalPid IS NOT NULL AND end > ?1 "
			"AND start < ?2 AND NOT " SUM_BAD_SPAN(""),
			arm++ ? " UNION ALL " : "", g, gpu_tables[g]);
	}
	if (used >= sizeof sql)
		return prof_error__set(m->err, PROF_E_USAGE, "export query too long");
	rc = open_cursor(m, sql, false, &cur);
	if (rc == 0 && (prof_cursor__bind_int64(cur, 1, m->w.from_abs_ns) != 0 ||
			prof_cursor__bind_int64(cur, 2, m->w.to_abs_ns) != 0))
		rc = prof_error__set(m->err, PROF_E_SQL, "cannot bind the export window");
	if (rc == 0)
		rc = prof_cursor__next(cur, m->err);
	prof_cursor__close(cur);
	m->have_launched = rc >= 0;
	return rc < 0 ? rc : 0;
}

/* The launched work of a call: LAUNCHED's rows of its (process,
 * correlation id), found by a walk per process rather than a correlated
 * subquery a call. That aggregate ran for every call, most of which launch
 * nothing (1.7 s of the runtime and driver queries' 3.8 s at 1M kernels):
 * a process's calls come in start order, and its correlation ids rise with
 * the start, so the walk mostly compares the id with the row it stands on
 * and steps on; an id behind the walk, or far ahead, seeks. */
#define WALK_STEPS 16 /* rows stepped over before a seek is cheaper */

static int walk_step(struct trace_merge *m, struct tm_launch_walk *w)
{
	int rc = prof_cursor__next(w->cur, m->err);

	w->has_row = rc > 0;
	if (w->has_row) {
		w->corr = prof_cursor__int64(w->cur, 0);
		w->kind = prof_cursor__int64(w->cur, 1);
		w->rowid = prof_cursor__int64(w->cur, 2);
	}
	return rc < 0 ? rc : 0;
}

static int walk_seek(struct trace_merge *m, struct tm_launch_walk *w, int64_t corr)
{
	prof_cursor__reset(w->cur);
	if (prof_cursor__bind_int64(w->cur, 2, corr) != 0)
		return prof_error__set(m->err, PROF_E_SQL, "cannot bind a correlation id");
	w->sought = true;
	w->sought_corr = corr;
	return walk_step(m, w);
}

/* The walk of process, opened at its first call. The walks are kept by
 * process and found by halving: a merged job's calls, in start order,
 * take turns among its ranks, and a scan of every walk a call would grow
 * with the ranks. */
static int walk_of(struct trace_merge *m, int64_t process, struct tm_launch_walk **out)
{
	struct prof_cursor *cur = NULL;
	size_t lo = sum_sorted__count_before(m->walks, m->nwalks, sizeof *m->walks,
					     offsetof(struct tm_launch_walk, process), process, false);
	int rc;

	if (lo < m->nwalks && m->walks[lo].process == process) {
		*out = &m->walks[lo];
		return 0;
	}
	if (sum_array__grow(&m->walks, &m->cap_walks, m->nwalks, sizeof *m->walks) < 0)
		return nomem(m);
	rc = open_cursor(m, "SELECT c, k, r FROM temp." LAUNCHED " WHERE p = ?1 AND c >= ?2 "
			 "ORDER BY c, k, r", false, &cur);
	if (rc < 0)
		return rc;
	if (prof_cursor__bind_int64(cur, 1, process) != 0) {
		prof_cursor__close(cur);
		return prof_error__set(m->err, PROF_E_SQL, "cannot bind a process id");
	}
	memmove(&m->walks[lo + 1], &m->walks[lo], (m->nwalks - lo) * sizeof *m->walks);
	m->walks[lo] = (struct tm_launch_walk){ .process = process, .cur = cur };
	m->nwalks++;
	*out = &m->walks[lo];
	return 0;
}

static int launched_add(struct trace_merge *m, uint64_t flow_id)
{
	if (sum_array__grow(&m->launched, &m->cap_launched, m->nlaunched, sizeof *m->launched) < 0)
		return nomem(m);
	m->launched[m->nlaunched++] = flow_id;
	return 0;
}

/* The rows of (process, corr) into m->launched, the walk left past them. */
static int walk_take(struct trace_merge *m, int64_t process, int64_t corr)
{
	struct tm_launch_walk *w = NULL;
	bool took = false;
	int rc = walk_of(m, process, &w);

	if (rc == 0 && (!w->sought || corr < w->sought_corr))
		rc = walk_seek(m, w, corr);
	for (int steps = 0; rc == 0 && w->has_row && w->corr < corr; steps++)
		rc = steps < WALK_STEPS ? walk_step(m, w) : walk_seek(m, w, corr);
	if (rc == 0)
		w->sought_corr = corr;
	while (rc == 0 && w->has_row && w->corr == corr) {
		took = true;
		if (w->kind >= 0 && w->kind < TM_GPU_KINDS)
			rc = launched_add(m, trace_merge__flow_id((enum tm_kind)(TM_KERNEL + w->kind),
								   w->rowid));
		if (rc == 0)
			rc = walk_step(m, w);
	}
	/* the id's rows are behind the walk now: asking for it again seeks */
	if (rc == 0 && took) {
		w->sought = corr != INT64_MAX;
		w->sought_corr = corr + (corr != INT64_MAX);
	}
	return rc;
}

/* The connection holding the calls' temporary tables (index_calls): the
 * GPU side's, which made them (its own apart, else m's). */
static struct prof_store *calls_store(const struct trace_merge *m);

/* The calls' connection held (hold) or given back: where the feed's
 * thread steps the side's sources on it, between its batches. */
static void calls_hold(struct trace_merge *m, bool hold)
{
	if (!m->feed)
		return;
	if (hold)
		tm_feed__lock(m->feed);
	else
		tm_feed__unlock(m->feed);
}

/* A statement of the calls' temporary tables on (corr, process),
 * prepared once: 1 on its first row, 0 on none (under calls_hold). */
static int seek_calls(struct trace_merge *m, struct prof_cursor **cur, const char *sql,
		      int64_t corr, int64_t process)
{
	int rc = 0;

	if (!*cur)
		rc = open_cursor_on(m, calls_store(m), sql, false, cur);
	else
		prof_cursor__reset(*cur);
	if (rc == 0 && (prof_cursor__bind_int64(*cur, 1, corr) != 0 ||
			prof_cursor__bind_int64(*cur, 2, process) != 0))
		rc = prof_error__set(m->err, PROF_E_SQL, "cannot bind a correlation id");
	return rc == 0 ? prof_cursor__next(*cur, m->err) : rc;
}

/* An integer answer of a statement on (corr, process), prepared once:
 * *has_value false where it answers NULL. */
static int ask_calls(struct trace_merge *m, struct prof_cursor **cur, const char *sql,
		     int64_t corr, int64_t process, bool *has_value, int64_t *value)
{
	int rc;

	calls_hold(m, true);
	rc = seek_calls(m, cur, sql, corr, process);
	*has_value = rc > 0 && !prof_cursor__is_null(*cur, 0);
	*value = *has_value ? prof_cursor__int64(*cur, 0) : 0;
	calls_hold(m, false);
	return rc < 0 ? rc : 0;
}

/* A driver call launched the work only when no runtime call has its id;
 * of calls sharing an id, the earliest launched it (gpu_sql's order).
 * Both asked only of the calls that launched something (few driver
 * calls do). */
int trace_merge__launched(struct trace_merge *m, enum tm_kind api, struct prof_cursor *cur,
			  uint64_t **flow_ids, size_t *n)
{
	if (!m->ahead)
		return tm_in_place__launched(m, api, cur, flow_ids, n);
	m->ahead->launched(m->ahead, flow_ids, n);
	return 0;
}

int tm_in_place__launched(struct trace_merge *m, enum tm_kind api, struct prof_cursor *cur,
			  uint64_t **flow_ids, size_t *n)
{
	int driver = api == TM_DRIVER;
	int64_t corr, process, value;
	bool has_value;
	int rc;

	m->nlaunched = 0;
	*flow_ids = m->launched;
	*n = 0;
	if (!m->have_launched || prof_cursor__is_null(cur, TM_API_CORR) ||
	    prof_cursor__is_null(cur, TM_API_TID))
		return 0;
	corr = prof_cursor__int64(cur, TM_API_CORR);
	process = prof_process_of(prof_cursor__int64(cur, TM_API_TID));
	rc = walk_take(m, process, corr);
	if (rc == 0 && m->nlaunched && driver && m->have[TM_RUNTIME]) {
		if (m->pairs)
			has_value = tm_pairs__has_call(m->pairs, 0, process, corr);
		else
			rc = ask_calls(m, &m->runtime_has, "SELECT 1 FROM temp." CALLS_RUNTIME " WHERE "
				       "correlationId = ?1 AND p = ?2 LIMIT 1", corr, process,
				       &has_value, &value);
		if (has_value)
			m->nlaunched = 0;
	}
	if (rc == 0 && m->nlaunched && m->shared_corr[driver]) {
		rc = ask_calls(m, &m->first_start[driver], driver
			       ? "SELECT min(start) FROM temp." CALLS_DRIVER " WHERE correlationId = ?1 AND p = ?2"
			       : "SELECT min(start) FROM temp." CALLS_RUNTIME " WHERE correlationId = ?1 AND p = ?2",
			       corr, process, &has_value, &value);
		if (!has_value || value != prof_cursor__int64(cur, TM_API_START))
			m->nlaunched = 0;
	}
	if (rc < 0)
		return rc;
	*flow_ids = m->launched;
	*n = m->nlaunched;
	return 0;
}

static int api_sql(struct trace_merge *m, char *sql, size_t cap, enum tm_kind kind)
{
	const char *table = kind == TM_RUNTIME ? PROF_T_RUNTIME : PROF_T_DRIVER;
	char in_range[512];

	export_window__in_range(in_range, sizeof in_range, "a.start", PROF_SQL_PID_OF_TID("a.globalTid"));
	if ((size_t)snprintf(sql, cap,
		 "SELECT a.start, a.end, a.globalTid, a.correlationId, " NAME_ID("a.nameId") " "
		 "FROM %s a "
		 "WHERE a.end > ?1 AND a.start < ?2 AND NOT " SUM_BAD_SPAN("a.") " AND %s "
		 "ORDER BY a.start, a.end DESC",
		 table, in_range) >= cap)
		return prof_error__set(m->err, PROF_E_USAGE, "export query too long");
	return 0;
}

/* Whether calls of the table share correlation ids (nsys: nested calls),
 * asked of its calls' temporary index (index_calls), whose order puts
 * calls of one id together: the first id twice ends the walk, where a
 * count of distinct ids sorted every call. */
static int shared_corr(struct trace_merge *m, const char *calls, bool *shared)
{
	char sql[192];
	struct prof_cursor *cur = NULL;
	int rc;

	snprintf(sql, sizeof sql, "SELECT EXISTS (SELECT 1 FROM temp.%s GROUP BY correlationId "
		 "HAVING count(*) > 1)", calls);
	rc = open_cursor(m, sql, false, &cur);
	if (rc == 0 && (rc = prof_cursor__next(cur, m->err)) > 0)
		*shared = prof_cursor__int64(cur, 0) != 0;
	prof_cursor__close(cur);
	return rc < 0 ? rc : 0;
}

static int nvtx_sql(struct trace_merge *m, char *sql, size_t cap)
{
	char in_range[512];

	export_window__in_range(in_range, sizeof in_range, "n.start", PROF_SQL_PID_OF_TID("n.globalTid"));
	snprintf(sql, cap,
		 "SELECT n.start, coalesce(n.end, n.start), n.globalTid, %s, n.end IS NULL "
		 "FROM " PROF_T_NVTX " n LEFT JOIN " PROF_T_STRINGS " t ON t.id = n.textId "
		 "WHERE n.eventType IN (" PROF_SQL_NVTX_MARK ", " PROF_SQL_NVTX_PUSHPOP ", " PROF_SQL_NVTX_STARTEND ") AND n.globalTid IS NOT NULL "
		 "AND coalesce(n.end, n.start) >= ?1 AND n.start < ?2 "
		 "AND (n.end IS NULL OR NOT " SUM_BAD_SPAN("n.") ") AND %s "
		 "ORDER BY n.start, n.end DESC",
		 m->w.nvtx_name, in_range);
	return 0;
}

static int memory_sql(char *sql, size_t cap)
{
	char in_range[512];

	export_window__in_range(in_range, sizeof in_range, "m.start", PROF_SQL_PID_OF_TID("m.globalPid"));
	/* every event before the window still counts towards the level */
	snprintf(sql, cap,
		 "SELECT m.start, m.globalPid, m.deviceId, m.bytes, m.memoryOperationType, "
		 "(m.start >= ?1 AND %s) FROM " PROF_T_MEMORY " m "
		 "WHERE m.start < ?2 AND m.memKind = %d ORDER BY m.start",
		 in_range, PROF_MEM_DEVICE);
	return 0;
}

static int source_sql(struct trace_merge *m, enum tm_kind kind, char *sql, size_t cap)
{
	switch (kind) {
	case TM_NVTX: return nvtx_sql(m, sql, cap);
	case TM_RUNTIME:
	case TM_DRIVER: return api_sql(m, sql, cap, kind);
	case TM_KERNEL: return gpu_sql(m, sql, cap, KERNEL_FROM, KERNEL_COLS);
	case TM_MEMCPY: return gpu_sql(m, sql, cap, PROF_T_MEMCPY " g", MEMCPY_COLS);
	case TM_MEMSET: return gpu_sql(m, sql, cap, PROF_T_MEMSET " g", MEMSET_COLS);
	case TM_GRAPH: return gpu_sql(m, sql, cap, PROF_T_GRAPH_TRACE " g", GRAPH_COLS);
	case TM_MEMORY: return memory_sql(sql, cap);
	case TM_GPU_NVTX: /* computed by project_ranges, not read by a query */
	case TM__COUNT: break;
	}
	return PROF_E_USAGE;
}

/* ---- NVTX ranges projected onto the GPU ---------------------------------- */

/* Each NVTX range on the GPU: per (range, device, stream), the span of the
 * GPU work launched by API calls that the range's thread made inside it.
 * The calls stream by in (thread, start) order beside the walk of the same
 * threads' ranges (folded_ranges.h), so each launch widens the spans of the
 * ranges open at its call, and a range's spans are final when it leaves the
 * open list. Work costs one pass over the launches, not a pass per range. */

static int spans_reserve(struct trace_merge *m, struct tm_span **v, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 64;
	struct tm_span *grown;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	grown = realloc(*v, n * sizeof *grown);
	if (!grown)
		return nomem(m);
	*v = grown;
	*cap = n;
	return 0;
}

/* Widen the span of (range, device, stream) to cover [start, end). */
static int span_add(struct trace_merge *m, int64_t row, int64_t process, int64_t device,
		    int64_t stream, int64_t start, int64_t end)
{
	struct tm_projection *p = &m->proj;
	int rc;

	for (size_t i = 0; i < p->nlive; i++) {
		struct tm_span *g = &p->live[i];

		if (g->row != row || g->device != device || g->stream != stream)
			continue;
		if (start < g->start_ns)
			g->start_ns = start;
		if (end > g->end_ns)
			g->end_ns = end;
		return 0;
	}
	rc = spans_reserve(m, &p->live, &p->cap_live, p->nlive + 1);
	if (rc < 0)
		return rc;
	p->live[p->nlive++] = (struct tm_span){ .start_ns = start, .end_ns = end, .row = row,
						 .process = process, .device = device,
						 .stream = stream };
	return 0;
}

static int name_add(struct trace_merge *m, const char *name, size_t *off)
{
	struct tm_projection *p = &m->proj;
	size_t len = strlen(name) + 1;

	if (p->names_len + len > p->names_cap) {
		size_t cap = p->names_cap ? p->names_cap : 4096;
		char *grown;

		while (cap < p->names_len + len)
			cap *= 2;
		grown = realloc(p->names, cap);
		if (!grown)
			return nomem(m);
		p->names = grown;
		p->names_cap = cap;
	}
	memcpy(p->names + p->names_len, name, len);
	*off = p->names_len;
	p->names_len += len;
	return 0;
}

/* A range left the open list: its spans move to done, those overlapping the
 * window only. */
static int range_closed(void *ctx, const struct open_range *r)
{
	struct trace_merge *m = ctx;
	struct tm_projection *p = &m->proj;
	bool named = false;
	size_t kept = 0, off = 0;
	int rc = 0;

	for (size_t i = 0; i < p->nlive; i++) {
		struct tm_span g = p->live[i];

		if (g.row != r->row) {
			p->live[kept++] = g;
			continue;
		}
		if (rc < 0 || g.end_ns <= m->w.from_abs_ns || g.start_ns >= m->w.to_abs_ns)
			continue;
		if (!named) {
			rc = name_add(m, r->name, &off);
			named = true;
		}
		if (rc == 0)
			rc = spans_reserve(m, &p->done, &p->cap_done, p->ndone + 1);
		if (rc == 0) {
			g.name_off = off;
			p->done[p->ndone++] = g;
		}
	}
	p->nlive = kept;
	return rc;
}

/* Merge order: by start, the longer first; ties in NVTX row order (a range's
 * row is written when it ends, so an inner range comes first), then device
 * and stream, so that equal spans always come out in one order. */
static int span_cmp(const void *a, const void *b)
{
	const struct tm_span *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->end_ns != y->end_ns)
		return x->end_ns > y->end_ns ? -1 : 1;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return (x->stream > y->stream) - (x->stream < y->stream);
}

/* The NVTX ranges that the projection can place a call in, by thread, in a
 * temporary table made once per export: per (thread, start), m the latest
 * end among the thread's ranges starting no later (peers included), so a
 * call at t lies inside one of them exactly when m of the last entry at or
 * before t is later than t (range_walk's start <= t < end). Only those
 * calls' launches are read: a call outside every range widens no span,
 * and most calls are (97% of gpu_work's). Every range is kept, whatever
 * --range: the walk itself still decides which ranges count. */
#define NVTX_OPEN "perfkit_tm_nvtx_open"

static int index_nvtx_open(struct trace_merge *m, bool *any)
{
	struct prof_cursor *cur = NULL;
	int rc;

	*any = false;
	rc = prof_store__exec(m->store, "DROP TABLE IF EXISTS temp." NVTX_OPEN, m->err);
	if (rc == 0)
		rc = prof_store__exec(m->store, "CREATE TEMP TABLE " NVTX_OPEN " (g INTEGER, s INTEGER, "
				      "m INTEGER)", m->err);
	if (rc == 0)
		rc = prof_store__exec(m->store, "INSERT INTO temp." NVTX_OPEN " SELECT n.globalTid, "
				      "n.start, max(n.end) OVER (PARTITION BY n.globalTid ORDER BY n.start) "
				      "FROM " PROF_T_NVTX " n WHERE n.eventType IN (" PROF_SQL_NVTX_RANGES ") "
				      "AND NOT " SUM_BAD_SPAN("n.") " AND n.globalTid IS NOT NULL", m->err);
	if (rc == 0)
		rc = prof_store__exec(m->store, "CREATE INDEX temp." NVTX_OPEN "_gs ON " NVTX_OPEN
				      " (g, s)", m->err);
	if (rc == 0)
		rc = open_cursor(m, "SELECT EXISTS (SELECT 1 FROM temp." NVTX_OPEN ")", false, &cur);
	if (rc == 0 && (rc = prof_cursor__next(cur, m->err)) > 0)
		*any = prof_cursor__int64(cur, 0) != 0;
	prof_cursor__close(cur);
	return rc < 0 ? rc : 0;
}

/* Every (API call, GPU work it launched) pair as (thread, call start, device,
 * stream, work start, work end) whose call lies inside an NVTX range of its
 * thread (index_nvtx_open), in (thread, call start) order: one arm per
 * pair of tables, each a scan of the GPU table with its launching calls
 * found in the calls' temporary index (index_calls), which holds the
 * thread and the start a launch needs; one sort of the pairs. Scanning
 * the calls instead sought every call in each GPU table, three times the
 * seeks, most of them for calls that launch nothing. Pairs of one thread
 * and start widen the same spans in any order. */
static int launches_sql(struct trace_merge *m, char *sql, size_t cap)
{
	size_t used = 0;

	sql[0] = '\0';
	for (int a = 0; a < 2; a++) {
		for (int g = 0; g < TM_GPU_KINDS; g++) {
			if (!m->have[api_kinds[a]] || !m->have[gpu_kinds[g]])
				continue;
			used += (size_t)snprintf(sql + used, cap > used ? cap - used : 0,
				"%sSELECT a.globalTid, a.start, g.deviceId, g.streamId, g.start, g.end "
				"FROM %s g JOIN temp.%s a ON a.correlationId = g.correlationId "
				"AND a.p = " PROF_SQL_PID_OF_TID("g.globalPid") " "
				"WHERE a.globalTid IS NOT NULL AND a.start IS NOT NULL "
				"AND NOT " SUM_BAD_SPAN("g.") " AND (SELECT o.m FROM temp." NVTX_OPEN " o "
				"WHERE o.g = a.globalTid AND o.s <= a.start ORDER BY o.s DESC LIMIT 1) "
				"> a.start",
				used ? " UNION ALL " : "", gpu_tables[g], a == 0 ? CALLS_RUNTIME : CALLS_DRIVER);
		}
	}
	used += (size_t)snprintf(sql + used, cap > used ? cap - used : 0, " ORDER BY 1, 2");
	if (used >= cap)
		return prof_error__set(m->err, PROF_E_USAGE, "export query too long");
	return 0;
}

/* The same pairs where the GPU rows are paired in the merge: the calls
 * inside a range (trace_ranged.h, made by the pairs' pass over the calls)
 * joined to each GPU table by id. */
static int ranged_launches_sql(struct trace_merge *m, char *sql, size_t cap)
{
	size_t used = 0;

	sql[0] = '\0';
	for (int g = 0; g < TM_GPU_KINDS; g++) {
		if (!m->have[gpu_kinds[g]])
			continue;
		used += (size_t)snprintf(sql + used, cap > used ? cap - used : 0,
			"%sSELECT a.g, a.s, g.deviceId, g.streamId, g.start, g.end "
			"FROM temp." TM_RANGED_CALLS " a JOIN %s g ON g.correlationId = a.c "
			"AND " PROF_SQL_PID_OF_TID("g.globalPid") " = a.p WHERE NOT " SUM_BAD_SPAN("g."),
			used ? " UNION ALL " : "", gpu_tables[g]);
	}
	used += (size_t)snprintf(sql + used, cap > used ? cap - used : 0, " ORDER BY 1, 2");
	if (used >= cap)
		return prof_error__set(m->err, PROF_E_USAGE, "export query too long");
	return 0;
}

/* Fill proj.done, sorted for the merge. */
static int project_ranges(struct trace_merge *m)
{
	struct range_walk rw = { .make_name = strdup, .on_close = range_closed, .ctx = m };
	struct prof_cursor *cur = NULL;
	char *sql;
	bool any = m->ranged;
	int rc = m->pairs ? 0 : index_nvtx_open(m, &any);

	/* no range to place a call in: nothing to project */
	if (rc < 0 || !any)
		return rc;
	sql = malloc(SQL_MAX);
	if (!sql)
		return nomem(m);
	rc = m->pairs ? ranged_launches_sql(m, sql, SQL_MAX) : launches_sql(m, sql, SQL_MAX);
	if (rc == 0)
		rc = open_cursor(m, sql, false, &cur);
	/* ranges of both kinds, each counted on the thread that opened it */
	if (rc == 0)
		rc = range_walk__open(&rw, m->store, &m->w, true, true, m->err);
	while (rc >= 0 && (rc = prof_cursor__next(cur, m->err)) > 0) {
		rc = range_walk__at(&rw, prof_cursor__int64(cur, 0), prof_cursor__int64(cur, 1));
		for (size_t i = 0; rc >= 0 && i < rw.nopen; i++)
			rc = span_add(m, rw.open[i].row, prof_process_of(prof_cursor__int64(cur, 0)),
				      prof_cursor__int64(cur, 2),
				      prof_cursor__int64(cur, 3), prof_cursor__int64(cur, 4),
				      prof_cursor__int64(cur, 5));
	}
	if (rc >= 0)
		rc = range_walk__close_all(&rw);
	range_walk__exit(&rw);
	prof_cursor__close(cur);
	free(sql);
	if (rc < 0)
		return rc;
	if (m->proj.ndone > 1)
		qsort(m->proj.done, m->proj.ndone, sizeof *m->proj.done, span_cmp);
	return 0;
}

/* ---- the merge ---------------------------------------------------------- */

static int source_next(struct trace_merge *m, struct tm_source *s)
{
	int rc;

	if (s->fed)
		return tm_feed__next(s->feed, s->fed - 1, s, m->err);
	if (s->kind == TM_GPU_NVTX) {
		s->has_row = m->proj.next < m->proj.ndone;
		if (s->has_row)
			s->start_ns = m->proj.done[m->proj.next++].start_ns;
		return 0;
	}
	rc = prof_cursor__next(s->cur, m->err);
	/* a GPU row repeated for calls sharing its id: the first only */
	while (rc > 0 && m->launch_rows && tm_kind__is_gpu(s->kind) &&
	       s->has_row && prof_cursor__int64(s->cur, TM_GPU_ROWID) == s->last_rowid)
		rc = prof_cursor__next(s->cur, m->err);
	s->has_row = rc > 0;
	if (s->has_row) {
		s->start_ns = prof_cursor__int64(s->cur, 0);
		if (tm_kind__is_gpu(s->kind))
			s->last_rowid = prof_cursor__int64(s->cur, TM_GPU_ROWID);
	}
	return rc < 0 ? rc : 0;
}

static void side_start(struct trace_merge *m, const struct export_window *w);

int trace_merge__init(struct trace_merge *m, struct prof_store *s, const struct export_filter *f,
		      bool launch_rows, struct prof_error *err)
{
	static const char *const tables[TM__COUNT] = {
		[TM_NVTX] = PROF_T_NVTX, [TM_RUNTIME] = PROF_T_RUNTIME, [TM_DRIVER] = PROF_T_DRIVER,
		[TM_KERNEL] = PROF_T_KERNEL, [TM_MEMCPY] = PROF_T_MEMCPY, [TM_MEMSET] = PROF_T_MEMSET,
		[TM_GRAPH] = PROF_T_GRAPH_TRACE,
		[TM_MEMORY] = PROF_T_MEMORY,
	};
	struct export_window early;
	int rc;

	memset(m, 0, sizeof *m);
	m->store = s;
	m->err = err;
	m->launch_rows = launch_rows;
	for (int k = 0; k < TM__COUNT; k++)
		m->have[k] = tables[k] && prof_store__has_table(s, tables[k]);
	m->have[TM_GPU_NVTX] = m->have[TM_NVTX] &&
		(m->have[TM_RUNTIME] || m->have[TM_DRIVER]) &&
		(m->have[TM_KERNEL] || m->have[TM_MEMCPY] || m->have[TM_MEMSET] || m->have[TM_GRAPH]);
	/* the side begins as early as its window is known: before the
	 * capture's extent is read (a pass over every table), unless --from or
	 * --to count from it */
	if (export_window__without_capture(&early, f))
		side_start(m, &early);
	/* a whole export whose side runs apart has the time base read at
	 * trace_merge__open, with the extent of the tables the side's passes
	 * read (trace_tracks.h) */
	if (m->side && !early.range_name) {
		m->w = early;
		m->time_later = true;
		return export_window__index(&m->w, s, err);
	}
	rc = export_window__init(&m->w, s, f, err);
	if (rc == 0)
		side_start(m, &m->w);
	return rc;
}

/* The window's time base, where trace_merge__init left it for now: the
 * extent of the tables the side's passes read, where they gathered it,
 * and the other tables' read. */
static int time_now(struct trace_merge *m)
{
	const char *tables[TM__COUNT + 2] = { 0 };
	struct sum_extent_known known = { .tables = tables, .lo = INT64_MAX, .hi = INT64_MIN };
	struct sum_capture_time time;
	size_t n = 0;
	int rc;

	if (!m->time_later)
		return 0;
	m->time_later = false;
	if (tm_tracks__usable(m->tracks)) {
		for (const char *const *t = tm_tracks__extent_tables(m->tracks); *t && n < TM__COUNT; t++)
			tables[n++] = *t;
		tm_tracks__extent(m->tracks, &known.lo, &known.hi);
	}
	if (m->nvtx_early) {
		tables[n++] = PROF_T_NVTX;
		known.lo = m->nvtx_lo < known.lo ? m->nvtx_lo : known.lo;
		known.hi = m->nvtx_hi > known.hi ? m->nvtx_hi : known.hi;
	}
	rc = sum_capture__time_known(m->store, &known, &time, m->err);
	if (rc == 0)
		export_window__set_time(&m->w, &time);
	return rc;
}

/* ---- the GPU side ------------------------------------------------------- */

static bool has_gpu_work(const struct trace_merge *m)
{
	return m->have[TM_KERNEL] || m->have[TM_MEMCPY] || m->have[TM_MEMSET] || m->have[TM_GRAPH];
}

/* The sources the GPU side opens: the GPU queries and the projection,
 * which the calls' index or the pairs feed. */
static bool is_gpu_side(enum tm_kind k)
{
	return k == TM_GPU_NVTX || tm_kind__is_gpu(k);
}

/* Open source kind at s and read its first row (for a query, when SQLite
 * sorts it). */
static int source_open(struct trace_merge *m, struct prof_store *store, enum tm_kind kind,
		       struct tm_source *s, char *sql)
{
	int rc;

	*s = (struct tm_source){ .kind = kind };
	if (kind == TM_GPU_NVTX) {
		rc = project_ranges(m);
	} else {
		rc = source_sql(m, kind, sql, SQL_MAX);
		if (rc == 0)
			rc = open_cursor_on(m, store, sql, true, &s->cur);
	}
	return rc < 0 ? rc : source_next(m, s);
}

/* The GPU rows paired with their calls in the merge (m->pairs), where
 * the export is the whole capture: a window leaves out calls whose work
 * it holds, and --range counts a GPU row by its call's start, in SQL.
 * With the pairs come the calls inside NVTX ranges, from the same pass. */
static bool pairs_wanted(const struct trace_merge *m)
{
	return has_gpu_work(m) && !m->w.range_name && m->w.from_abs_ns == INT64_MIN &&
	       m->w.to_abs_ns == INT64_MAX;
}

static int make_pairs(struct trace_merge *m)
{
	struct tm_pairs_input in = { .from = m->w.from_abs_ns, .to = m->w.to_abs_ns };
	struct tm_ranged *ranged = NULL;
	int rc = 0;

	if (!pairs_wanted(m))
		return 0;
	/* none: the track lists and the time base read SQL */
	in.tracks = m->tracks = tm_tracks__new();
	for (int g = 0; g < TM_GPU_KINDS; g++)
		in.gpu_tables[g] = m->have[gpu_kinds[g]] ? gpu_tables[g] : NULL;
	for (int a = 0; a < 2; a++)
		in.api_tables[a] = m->have[api_kinds[a]] ? api_tables[a] : NULL;
	if (m->have[TM_GPU_NVTX]) {
		rc = tm_ranged__open(m->store, &ranged, m->err);
		/* ranges of another type: the SQL projection compares them */
		if (rc < 0 || !ranged)
			return rc;
		if (tm_ranged__any(ranged)) {
			in.on_call = tm_ranged__call;
			in.ctx = ranged;
		}
	}
	rc = tm_pairs__make(m->store, &in, &m->pairs, m->err);
	m->ranged = m->pairs && in.on_call;
	/* the passes read every row only where the pairs were made */
	if (!m->pairs) {
		tm_tracks__free(m->tracks);
		m->tracks = NULL;
	}
	if (ranged) {
		int closed = tm_ranged__close(ranged);

		rc = rc < 0 ? rc : closed;
	}
	return rc;
}

/* A copy of the merge that works apart from the caller's thread, with
 * its own error: the GPU side, which gpu_side fills on a thread and a
 * connection of its own where it can be (apart), else in place at
 * trace_merge__open on the merge's connection (trace_merge__open then
 * takes its sources, projection and answers over); the GPU queries sorted
 * beside the side's passes; what the merge's own sources are fed with.
 * While its thread runs it touches only the copy and its connection. */
struct tm_apart {
	bool apart;
	bool joined;
	pthread_t thread;
	struct trace_merge m;
	struct prof_error err;
	int rc;
};

/* The GPU queries as for pairs, sorted (each one's first row read) on a
 * thread and a connection of their own while the pairs' passes run: after
 * the passes the side spent 5 to 8 s of a 10M-kernel trace sorting them
 * alone, on one core. Taken where the pairs are made; else closed, and the
 * queries that join the calls made as before. */
static void *sorts_run(void *arg)
{
	struct tm_apart *t = arg;
	char *sql = malloc(SQL_MAX);

	t->rc = sql ? export_window__index(&t->m.w, t->m.store, t->m.err) : nomem(&t->m);
	for (int k = 0; t->rc == 0 && k < TM__COUNT; k++) {
		if (!t->m.have[k] || !tm_kind__is_gpu((enum tm_kind)k))
			continue;
		t->rc = source_open(&t->m, t->m.store, (enum tm_kind)k, &t->m.src[t->m.nsrc], sql);
		if (t->m.src[t->m.nsrc].cur || t->rc == 0)
			t->m.nsrc++;
	}
	free(sql);
	return NULL;
}

/* The sorts begun where m (the side's copy) has a connection for them and
 * will make pairs; NULL otherwise, or where the thread cannot be made. */
static struct tm_apart *sorts_start(struct trace_merge *m)
{
	struct tm_apart *t;

	if (!m->sorted_on || !pairs_wanted(m) || !(t = calloc(1, sizeof *t)))
		return NULL;
	t->m = (struct trace_merge){ .store = m->sorted_on, .w = m->w, .launch_rows = m->launch_rows,
				     .paired_sql = true, .err = &t->err };
	memcpy(t->m.have, m->have, sizeof m->have);
	if (pthread_create(&t->thread, NULL, sorts_run, t) != 0) {
		free(t);
		return NULL;
	}
	return t;
}

/* The sorts joined: true with their sources, in kind order, in src (n
 * of them) where they went well and m made pairs; else their cursors and
 * connection closed (m->sorted_on NULL). */
static bool sorts_take(struct trace_merge *m, struct tm_apart *t, struct tm_source *src, int *n)
{
	bool take;

	*n = 0;
	if (!t)
		return false;
	pthread_join(t->thread, NULL);
	take = t->rc == 0 && m->pairs;
	if (take) {
		memcpy(src, t->m.src, (size_t)t->m.nsrc * sizeof *src);
		*n = t->m.nsrc;
	} else {
		for (int i = 0; i < t->m.nsrc; i++)
			prof_cursor__close(t->m.src[i].cur);
		prof_store__close(m->sorted_on);
		m->sorted_on = NULL;
	}
	free(t);
	return take;
}

/* The GPU side on m's connection: the pairs or else the calls' index and
 * whether calls share ids, and the GPU side's sources into m->src in kind
 * order. Without GPU work no call launched anything: no index to make. */
static int gpu_side(struct trace_merge *m)
{
	struct tm_apart *sorts = sorts_start(m);
	struct tm_source sorted[TM_GPU_KINDS];
	int nsorted = 0, next_sorted = 0;
	bool took;
	char *sql;
	int rc = 0;

	rc = make_pairs(m);
	took = sorts_take(m, sorts, sorted, &nsorted);
	if (rc == 0 && has_gpu_work(m) && !m->pairs) {
		rc = index_calls(m, m->store);
		m->calls_indexed = rc == 0;
		for (int a = 0; rc == 0 && a < 2 && m->launch_rows; a++)
			if (m->have[api_kinds[a]])
				rc = shared_corr(m, a == 0 ? CALLS_RUNTIME : CALLS_DRIVER,
						 &m->shared_corr[a]);
	}
	sql = rc == 0 ? malloc(SQL_MAX) : NULL;
	if (rc == 0 && !sql)
		rc = nomem(m);
	for (int k = 0; k < TM__COUNT; k++) {
		if (!m->have[k] || !is_gpu_side((enum tm_kind)k))
			continue;
		/* the sorted sources are m's to close from here on, failed or not */
		if (took && tm_kind__is_gpu((enum tm_kind)k)) {
			if (next_sorted < nsorted && sorted[next_sorted].kind == (enum tm_kind)k)
				m->src[m->nsrc++] = sorted[next_sorted++];
			continue;
		}
		if (rc < 0)
			continue;
		rc = source_open(m, m->store, (enum tm_kind)k, &m->src[m->nsrc], sql);
		/* a source opened is closed at exit, whatever came of its row */
		if (m->src[m->nsrc].cur || rc == 0)
			m->nsrc++;
	}
	free(sql);
	return rc;
}


static void *gpu_side_apart(void *arg)
{
	struct tm_apart *g = arg;

	/* its connection's own temporary tables: the window's first */
	g->rc = export_window__index(&g->m.w, g->m.store, g->m.err);
	if (g->rc == 0)
		g->rc = gpu_side(&g->m);
	return NULL;
}

/* The copy, reading store through the window w: what the side reads of
 * the merge (the tables, the window, launch_rows), nothing the caller's
 * thread changes meanwhile. */
static struct tm_apart *side_new(const struct trace_merge *m, struct prof_store *store,
				    const struct export_window *w)
{
	struct tm_apart *g = calloc(1, sizeof *g);

	if (!g)
		return NULL;
	g->m = (struct trace_merge){ .store = store, .w = *w,
				     .launch_rows = m->launch_rows, .err = &g->err };
	memcpy(g->m.have, m->have, sizeof m->have);
	return g;
}

/* The side begun on its thread, reading the window w (the merge's, or
 * the part of it that needs nothing of the capture, when that is all). */
static void side_start(struct trace_merge *m, const struct export_window *w)
{
	struct prof_error ignored = { 0 };
	struct prof_store *own = NULL;
	struct tm_apart *g;

	/* a capture that cannot be opened again (prof_store__reopen) has
	 * its side made in place */
	if (m->side || !has_gpu_work(m) || prof_store__reopen(m->store, &own, &ignored) != 0)
		return;
	g = side_new(m, own, w);
	if (!g) {
		prof_store__close(own);
		return;
	}
	g->apart = true;
	/* where the side will make pairs; none: it sorts its queries itself,
	 * after the passes */
	if (pairs_wanted(&g->m) && prof_store__reopen(m->store, &g->m.sorted_on, &ignored) != 0)
		g->m.sorted_on = NULL;
	if (pthread_create(&g->thread, NULL, gpu_side_apart, g) != 0) {
		prof_store__close(g->m.sorted_on);
		prof_store__close(own);
		free(g);
		return;
	}
	m->side = g;
}

/* The side done (its thread joined, or run in place now): its rc, and
 * its error in m's when it failed and m had not. */
static int side_finish(struct trace_merge *m, int rc)
{
	struct tm_apart *g = m->side;

	if (!g->joined) {
		if (g->apart)
			pthread_join(g->thread, NULL);
		else if (rc == 0)
			g->rc = gpu_side(&g->m);
		g->joined = true;
	}
	if (rc == 0 && g->rc < 0 && m->err)
		*m->err = g->err;
	return rc < 0 ? rc : g->rc;
}

/* m's own sources (own, in kind order) and the side's into m->src in kind
 * order, the tie-break order; the side's projection and answers are m's
 * from now on. */
static void side_take(struct trace_merge *m, const struct tm_source *own, int nown)
{
	struct tm_apart *g = m->side;
	int i = 0, j = 0;

	while (i < nown || j < g->m.nsrc)
		m->src[m->nsrc++] = j >= g->m.nsrc || (i < nown && own[i].kind < g->m.src[j].kind)
					    ? own[i++] : g->m.src[j++];
	g->m.nsrc = 0;
	m->proj = g->m.proj;
	memset(&g->m.proj, 0, sizeof g->m.proj);
	memcpy(m->shared_corr, g->m.shared_corr, sizeof m->shared_corr);
	m->pairs = g->m.pairs;
	g->m.pairs = NULL;
	m->tracks = g->m.tracks;
	g->m.tracks = NULL;
	m->ranged = g->m.ranged;
	m->calls_indexed = g->m.calls_indexed;
}

static int feed_step(void *ctx, struct tm_source *s)
{
	return source_next(ctx, s);
}

/* A source on a connection the merge's thread leaves alone, once the
 * side, apart, is done, of the side's (side) or of own_apart, where m's
 * own were opened there. */
static bool is_apart(const struct trace_merge *m, const struct tm_source *s, bool side)
{
	return s->cur && is_gpu_side(s->kind) == side && (side || m->own_apart);
}

/* The sources apart of one connection (side: the side's, else
 * own_apart) stepped on a feed's thread from now on (trace_feed.h), with
 * ctx and its failures in err; m reads the copies, each source on its
 * current row again. Where the thread cannot be made, m steps them in
 * place. */
static int feed_group(struct trace_merge *m, bool side, struct tm_feed **feed,
		      struct trace_merge *ctx, const struct prof_error *err)
{
	struct tm_source fed[TM__COUNT];
	int n = 0, rc = 0;

	for (int k = 0; k < m->nsrc; k++)
		if (is_apart(m, &m->src[k], side))
			fed[n++] = m->src[k];
	if (n == 0)
		return 0;
	tm_feed__start(feed, fed, n, feed_step, ctx, err);
	if (!*feed)
		return 0;
	for (int k = 0, i = 0; k < m->nsrc; k++)
		if (is_apart(m, &m->src[k], side)) {
			m->src[k].fed = ++i;
			m->src[k].feed = *feed;
			m->src[k].cur = NULL;
			if (rc == 0)
				rc = tm_feed__next(*feed, i - 1, &m->src[k], m->err);
		}
	return rc;
}

/* The side's sources fed on one thread, m's own (the calls, ranges and
 * memory, on own_apart) on another: one thread stepping every source
 * bound the merge at 10M kernels (busy nine tenths of the time, where the
 * writer's was half), with the other core partly idle. The own sources'
 * thread steps them with a merge of its own, which holds what stepping
 * reads (launch_rows) and its own error. */
static int feed_apart(struct trace_merge *m)
{
	int rc = feed_group(m, true, &m->feed, &m->side->m, m->side->m.err);

	if (rc < 0 || !m->own_apart)
		return rc;
	m->own_step = calloc(1, sizeof *m->own_step);
	if (!m->own_step)
		return nomem(m);
	m->own_step->m.launch_rows = m->launch_rows;
	m->own_step->m.err = &m->own_step->err;
	return feed_group(m, false, &m->own_feed, &m->own_step->m, &m->own_step->err);
}

/* m's own sources (the calls, ranges and memory) opened on a connection
 * of their own, which the feed steps once the side is done, where the
 * side is apart and the capture opens again; else on m's, stepped in
 * place. Fed with the side's, they leave the merge's thread only the
 * merge and the writer's work: the GPU rows fed alone left it bound by
 * the calls' reads (docs/distributed.md has the figures). */
static void own_apart_open(struct trace_merge *m)
{
	struct prof_error ignored = { 0 };

	if (!m->side || !m->side->apart || prof_store__reopen(m->store, &m->own_apart, &ignored) != 0)
		return;
	if (export_window__index(&m->w, m->own_apart, &ignored) != 0) {
		prof_store__close(m->own_apart);
		m->own_apart = NULL;
	}
}

static struct prof_store *calls_store(const struct trace_merge *m)
{
	return m->side ? m->side->m.store : m->store;
}

static void side_exit(struct trace_merge *m)
{
	struct tm_apart *g = m->side;

	if (!g)
		return;
	if (g->apart && !g->joined)
		pthread_join(g->thread, NULL);
	/* the feed's thread steps the side's sources closed below */
	tm_feed__stop(m->feed);
	m->feed = NULL;
	for (int i = 0; i < g->m.nsrc; i++)
		prof_cursor__close(g->m.src[i].cur);
	tm_pairs__free(g->m.pairs);
	tm_tracks__free(g->m.tracks);
	free(g->m.proj.live);
	free(g->m.proj.done);
	free(g->m.proj.names);
}

/* The rows of an impossible span, where the side was to make pairs: the
 * tables their passes read counted there. */
static int count_left_out(struct trace_merge *m)
{
	static const char *const paired[] = { PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET,
					      PROF_T_GRAPH_TRACE, PROF_T_RUNTIME, PROF_T_DRIVER,
					      NULL };
	int rc;

	if (!m->pairs)
		return sum_bad_spans__count(m->store, &m->rows_left_out, m->err);
	rc = sum_bad_spans__count_but(m->store, paired, &m->rows_left_out, m->err);
	m->rows_left_out += tm_pairs__bad_rows(m->pairs);
	return rc;
}

int trace_merge__open(struct trace_merge *m)
{
	struct tm_source own[TM__COUNT];
	int nown = 0, rc = 0;
	char *sql;

	/* without GPU work there is no side: no call launched anything */
	if (has_gpu_work(m) && !m->side && !(m->side = side_new(m, m->store, &m->w)))
		return nomem(m);
	/* the temporary tables first: SQLite drops a table (a second export's
	 * on the same connection) only while no statement of the connection
	 * is reading */
	if (has_gpu_work(m) && m->launch_rows)
		rc = index_launched(m);
	if (rc == 0 && m->side && !m->side->apart)
		rc = side_finish(m, rc);
	sql = rc == 0 ? malloc(SQL_MAX) : NULL;
	if (rc == 0 && !sql)
		rc = nomem(m);
	if (rc == 0)
		own_apart_open(m);
	for (int k = 0; rc == 0 && k < TM__COUNT; k++) {
		if (!m->have[k] || is_gpu_side((enum tm_kind)k))
			continue;
		rc = source_open(m, m->own_apart ? m->own_apart : m->store, (enum tm_kind)k,
				 &own[nown], sql);
		if (own[nown].cur || rc == 0)
			nown++;
	}
	free(sql);
	/* a pass over the tables the writer needs only at its end, made while
	 * the side is still busy; where the side makes pairs, their passes
	 * count the tables they read */
	if (rc == 0 && !pairs_wanted(m))
		rc = sum_bad_spans__count(m->store, &m->rows_left_out, m->err);
	/* while the side runs, what the time base and the track lists read of
	 * the NVTX rows, which the side's passes do not: after the side, on a
	 * capture of many ranges (py_hf_gpt2_train's modules) the trace took
	 * 5% longer than when the lists were read beside it */
	if (rc == 0 && m->time_later && m->have[TM_NVTX]) {
		rc = sum_capture__table_extent(m->store, PROF_T_NVTX, &m->nvtx_lo, &m->nvtx_hi,
					       m->err);
		if (rc == 0)
			rc = track_tables_nvtx(m);
		m->nvtx_early = rc == 0;
	}
	/* the side is finished even after a failure here, and its sources,
	 * made or not, are closed with m's; the first failure is the one told */
	if (m->side) {
		rc = side_finish(m, rc);
		side_take(m, own, nown);
		if (rc == 0 && m->side->apart)
			rc = feed_apart(m);
	} else {
		memcpy(m->src, own, (size_t)nown * sizeof *own);
		m->nsrc = nown;
	}
	if (rc == 0)
		rc = time_now(m);
	if (rc == 0 && pairs_wanted(m))
		rc = count_left_out(m);
	return rc;
}

bool trace_merge__apart(const struct trace_merge *m)
{
	return m->side && m->side->apart;
}

int trace_merge__next(struct trace_merge *m, struct tm_row *row)
{
	return m->ahead ? m->ahead->next(m->ahead, row) : tm_in_place__next(m, row);
}

/* The call of (corr, process) that a GPU row's join would have found, for
 * a row the pairs did not keep the call of: each field the runtime's
 * call's, else the driver's, as the join's coalesce; through the calls'
 * temporary index, made at the first such row. */
static int ask_launch(struct trace_merge *m, int64_t process, int64_t corr, struct tm_launch *l)
{
	static const char *const sql[2] = {
		"SELECT globalTid, start, end FROM temp." CALLS_RUNTIME " WHERE correlationId = ?1 "
		"AND p = ?2 LIMIT 1",
		"SELECT globalTid, start, end FROM temp." CALLS_DRIVER " WHERE correlationId = ?1 "
		"AND p = ?2 LIMIT 1",
	};
	bool has[3] = { false, false, false };
	int64_t v[3] = { 0, 0, 0 }; /* thread, start, end */
	int rc = 0;

	calls_hold(m, true);
	if (!m->calls_indexed) {
		rc = index_calls(m, calls_store(m));
		m->calls_indexed = rc == 0;
	}
	for (int a = 0; rc == 0 && a < 2; a++) {
		if (!m->have[api_kinds[a]])
			continue;
		if ((rc = seek_calls(m, &m->call_of[a], sql[a], corr, process)) > 0) {
			for (int f = 0; f < 3; f++)
				if (!has[f] && !prof_cursor__is_null(m->call_of[a], f)) {
					has[f] = true;
					v[f] = prof_cursor__int64(m->call_of[a], f);
				}
			rc = 0;
		}
	}
	calls_hold(m, false);
	*l = (struct tm_launch){ .tid = v[0], .start = v[1] };
	l->has_start = has[1] && has[2] && v[2] > m->w.from_abs_ns && v[1] < m->w.to_abs_ns;
	return rc < 0 ? rc : 0;
}

/* What the row handed out tells the pairs, and for GPU work its call. */
static int pair_row(struct trace_merge *m, const struct tm_source *s, struct tm_launch *l)
{
	struct prof_cursor *c = s->cur;
	int64_t process, corr;

	*l = (struct tm_launch){ 0 };
	if (!m->pairs) {
		if (tm_kind__is_gpu(s->kind) && !prof_cursor__is_null(c, TM_GPU_LAUNCH_START)) {
			l->has_start = true;
			l->tid = prof_cursor__int64(c, TM_GPU_LAUNCH_TID);
			l->start = prof_cursor__int64(c, TM_GPU_LAUNCH_START);
		}
		return 0;
	}
	if (s->kind == TM_RUNTIME || s->kind == TM_DRIVER) {
		if (prof_cursor__is_null(c, TM_API_TID) || prof_cursor__is_null(c, TM_API_CORR))
			return 0;
		return tm_pairs__call(m->pairs, s->kind == TM_DRIVER, prof_cursor__int64(c, TM_API_TID),
				      prof_cursor__int64(c, TM_API_CORR),
				      prof_cursor__int64(c, TM_API_START),
				      prof_cursor__int64(c, TM_API_END)) < 0 ? nomem(m) : 0;
	}
	if (!tm_kind__is_gpu(s->kind) || prof_cursor__is_null(c, TM_GPU_CORR) ||
	    prof_cursor__is_null(c, TM_GPU_PID))
		return 0;
	process = prof_process_of(prof_cursor__int64(c, TM_GPU_PID));
	corr = prof_cursor__int64(c, TM_GPU_CORR);
	if (tm_pairs__gpu(m->pairs, process, corr, l) == 1)
		return 0;
	return ask_launch(m, process, corr, l);
}

int tm_in_place__next(struct trace_merge *m, struct tm_row *row)
{
	struct tm_source *best = NULL;
	int rc;

	if (m->names_failed)
		return nomem(m);

	if (m->current) {
		rc = source_next(m, m->current);
		m->current = NULL;
		if (rc < 0)
			return rc;
	}
	/* sources are in tie-break order, so strict < keeps the earlier */
	for (int i = 0; i < m->nsrc; i++)
		if (m->src[i].has_row && (!best || m->src[i].start_ns < best->start_ns))
			best = &m->src[i];
	if (!best)
		return 0;
	m->current = best;
	row->kind = best->kind;
	row->cur = best->cur;
	row->span = NULL;
	row->span_name = NULL;
	row->launch = (struct tm_launch){ 0 };
	if (best->cur && (rc = pair_row(m, best, &row->launch)) < 0)
		return rc;
	if (best->kind == TM_GPU_NVTX) {
		row->span = &m->proj.done[m->proj.next - 1];
		row->span_name = m->proj.names + row->span->name_off;
	}
	return 1;
}

void trace_merge__exit(struct trace_merge *m)
{
	/* the thread reading ahead steps the cursors closed below */
	if (m->ahead)
		m->ahead->stop(m->ahead);
	m->ahead = NULL;
	side_exit(m);
	/* the own sources' feed closes their cursors on own_apart, closed below */
	tm_feed__stop(m->own_feed);
	free(m->own_step);
	/* a fed source's cursor is a copy, the feed's */
	for (int i = 0; i < m->nsrc; i++)
		if (!m->src[i].fed)
			prof_cursor__close(m->src[i].cur);
	for (size_t i = 0; i < m->nwalks; i++)
		prof_cursor__close(m->walks[i].cur);
	free(m->walks);
	prof_cursor__close(m->runtime_has);
	prof_cursor__close(m->first_start[0]);
	prof_cursor__close(m->first_start[1]);
	prof_cursor__close(m->call_of[0]);
	prof_cursor__close(m->call_of[1]);
	tm_pairs__free(m->pairs);
	tm_tracks__free(m->tracks);
	/* the side's connections, once no cursor is left on them */
	if (m->side && m->side->apart) {
		prof_store__close(m->side->m.store);
		prof_store__close(m->side->m.sorted_on);
	}
	prof_store__close(m->own_apart);
	free(m->side);
	free(m->launched);
	for (size_t i = 0; m->names && i < TM_NAME_SLOTS; i++)
		free(m->names[i].text);
	free(m->names);
	free(m->devs);
	free(m->proj.live);
	free(m->proj.done);
	free(m->proj.names);
	memset(m, 0, sizeof *m);
}
