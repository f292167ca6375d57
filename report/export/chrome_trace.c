/* chrome_trace.c - the Chrome/Perfetto trace export (see chrome_trace.h).
 *
 * Every kind of event has its own cursor ordered by start; the writer merges
 * them by start time (ties: enclosing kinds first, so an NVTX range precedes
 * the API call it contains and a projected range the kernel it contains).
 * Held in memory: per-track metadata (threads, streams, devices) and the
 * NVTX ranges projected onto the GPU, one span per (range, stream), which
 * one walk over the API calls computes before the merge. */
#include "chrome_trace.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/occupancy.h"
#include "folded_ranges.h"
#include "prof/escape.h"
#include "prof/tables.h"
#include "summary/query.h"


#define SQL_MAX 6144

/* Bytes per event of each kind in the output, measured on real traces,
 * GPU rows with the flow start and finish they write (about 90 bytes each);
 * only the size warning uses them. */
#define EST_KERNEL_BYTES 710
#define EST_COPY_BYTES 510
#define EST_API_BYTES 240
#define EST_NVTX_BYTES 190
#define EST_COUNTER_BYTES 110

enum src_kind { SRC_NVTX, SRC_GPU_NVTX, SRC_RUNTIME, SRC_DRIVER, SRC_KERNEL, SRC_MEMCPY,
		SRC_MEMSET, SRC_MEMORY, SRC__COUNT };

struct device {
	int32_t id;
	bool have_occ;
	struct occ_gpu occ;
	int64_t mem_in_use_bytes;
	bool mem_emitted; /* a counter sample was written */
};

/* The span of the GPU work that the API calls inside one NVTX range
 * launched on one stream. */
struct gpu_span {
	int64_t start_ns, end_ns;
	int64_t row;      /* the range's NVTX_EVENTS rowid */
	int64_t stream;
	int64_t device;
	size_t name_off;  /* into projection.names; set when the range closes */
};

/* NVTX ranges projected onto the GPU streams. */
struct projection {
	struct gpu_span *live;   /* spans of the ranges open on the walked thread */
	size_t nlive, cap_live;
	struct gpu_span *done;   /* finished spans, sorted for the merge */
	size_t ndone, cap_done;
	char *names;             /* the finished ranges' names, each '\0'-terminated */
	size_t names_len, names_cap;
	size_t next;             /* merge position in done */
};

struct chrome_ctx {
	FILE *out;
	struct prof_store *store;
	struct export_window w;
	bool first_event;
	int64_t flows;      /* flow ids handed out: one per GPU activity whose
			     * launching call is in the export */
	struct device *devs;
	size_t ndevs;
	bool have[SRC__COUNT];
	struct projection proj;
	struct prof_error *err;
};

struct source {
	enum src_kind kind;
	struct prof_cursor *cur; /* NULL for SRC_GPU_NVTX, which reads proj.done */
	bool has_row;
	int64_t start_ns;
};

/* ---- output helpers --------------------------------------------------- */

static void ev_sep(struct chrome_ctx *c)
{
	fputs(c->first_event ? "\n" : ",\n", c->out);
	c->first_event = false;
}

static void put_ts(struct chrome_ctx *c, const char *key, int64_t abs_ns)
{
	fprintf(c->out, ",\"%s\":", key);
	export_fput_us(c->out, abs_ns - c->w.base_ns);
}

static void put_dur(struct chrome_ctx *c, int64_t start_ns, int64_t end_ns)
{
	fputs(",\"dur\":", c->out);
	export_fput_us(c->out, end_ns > start_ns ? end_ns - start_ns : 0);
}

/* {"ph":"X","cat":CAT,"name":NAME,"pid":P,"tid":T,"ts":..,"dur":.. — the
 * caller adds args and the closing brace. */
static void ev_complete(struct chrome_ctx *c, const char *cat, const char *name, int64_t pid,
			int64_t tid, int64_t start_ns, int64_t end_ns)
{
	ev_sep(c);
	fprintf(c->out, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", cat);
	prof_fputs_json(c->out, name);
	fprintf(c->out, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64, pid, tid);
	put_ts(c, "ts", start_ns);
	put_dur(c, start_ns, end_ns);
}

static void ev_flow(struct chrome_ctx *c, bool start, int64_t id, int64_t pid, int64_t tid,
		    int64_t ts_ns)
{
	ev_sep(c);
	fprintf(c->out, "{\"ph\":\"%s\",\"id\":%" PRId64 ",\"pid\":%" PRId64 ",\"tid\":%" PRId64,
		start ? "s" : "f", id, pid, tid);
	put_ts(c, "ts", ts_ns);
	fputs(",\"cat\":\"ac2g\",\"name\":\"ac2g\"", c->out);
	fputs(start ? "}" : ",\"bp\":\"e\"}", c->out);
}

static void ev_meta(struct chrome_ctx *c, const char *what, int64_t pid, int64_t tid,
		    bool with_tid, const char *key, const char *text, int64_t number)
{
	ev_sep(c);
	fprintf(c->out, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId64, what, pid);
	if (with_tid)
		fprintf(c->out, ",\"tid\":%" PRId64, tid);
	fprintf(c->out, ",\"ts\":0,\"args\":{\"%s\":", key);
	if (text)
		prof_fputs_json(c->out, text);
	else
		fprintf(c->out, "%" PRId64, number);
	fputs("}}", c->out);
}

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": the version suffix is an
 * ABI detail, and PyTorch traces show the plain name. */
static void put_api_name_json(FILE *out, const char *name)
{
	char buf[256];
	const char *us = strrchr(name, '_');
	size_t keep = strlen(name);

	if (us && us[1] == 'v' && us[2]) {
		const char *p = us + 2;

		while (*p >= '0' && *p <= '9')
			p++;
		if (!*p)
			keep = (size_t)(us - name);
	}
	if (keep >= sizeof buf || keep == strlen(name)) {
		prof_fputs_json(out, name);
		return;
	}
	memcpy(buf, name, keep);
	buf[keep] = '\0';
	prof_fputs_json(out, buf);
}

/* ---- metadata --------------------------------------------------------- */

static struct device *device_get(struct chrome_ctx *c, int32_t id)
{
	for (size_t i = 0; i < c->ndevs; i++)
		if (c->devs[i].id == id)
			return &c->devs[i];
	return NULL;
}

static int device_add(struct chrome_ctx *c, int32_t id)
{
	struct device *d;
	struct prof_error ignored = { 0 };

	if (device_get(c, id))
		return 0;
	d = realloc(c->devs, (c->ndevs + 1) * sizeof *d);
	if (!d)
		return prof_error__set(c->err, PROF_E_NOMEM, "out of memory");
	c->devs = d;
	d = &c->devs[c->ndevs++];
	memset(d, 0, sizeof *d);
	d->id = id;
	/* without GPU limits a kernel simply has no occupancy arg */
	d->have_occ = occ_gpu__from_store(c->store, id, &d->occ, &ignored) == 0;
	return 0;
}

/* Open sql; windowed queries (those using ?1..?3) get the window bound. */
static int open_cursor(struct chrome_ctx *c, const char *sql, bool windowed,
		       struct prof_cursor **cur)
{
	int rc = prof_cursor__open(c->store, sql, cur, c->err);

	if (rc < 0 || !windowed)
		return rc;
	rc = export_window__bind(&c->w, *cur, c->err);
	if (rc < 0) {
		prof_cursor__close(*cur);
		*cur = NULL;
	}
	return rc;
}

/* Appends " UNION SELECT ..." for each present table to buf. */
static void union_of(struct chrome_ctx *c, char *buf, size_t cap, const char *op,
		     const char *cols, const enum src_kind *kinds, const char *const *tables,
		     int n, const char *where)
{
	size_t used = strlen(buf);
	bool any = false;

	for (int i = 0; i < n; i++) {
		if (!c->have[kinds[i]])
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

static const enum src_kind gpu_kinds[] = { SRC_KERNEL, SRC_MEMCPY, SRC_MEMSET };
static const char *const gpu_tables[] = { PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET };
static const enum src_kind api_kinds[] = { SRC_RUNTIME, SRC_DRIVER };
static const char *const api_tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };

static int write_process_meta(struct chrome_ctx *c)
{
	char sql[SQL_MAX] = "SELECT p, (SELECT name FROM " PROF_T_PROCESSES " WHERE pid = p LIMIT 1) FROM (";
	bool have_proc = prof_store__has_table(c->store, PROF_T_PROCESSES);
	struct prof_cursor *cur = NULL;
	size_t used;
	int rc;

	if (!have_proc)
		snprintf(sql, sizeof sql, "SELECT p, NULL FROM (");
	used = strlen(sql);
	union_of(c, sql, sizeof sql, " UNION ", "globalTid >> 24 AS p", api_kinds, api_tables, 2, "");
	if (c->have[SRC_NVTX]) {
		used = strlen(sql);
		snprintf(sql + used, sizeof sql - used, " UNION SELECT globalTid >> 24 FROM " PROF_T_NVTX
			 " WHERE globalTid IS NOT NULL");
	}
	used = strlen(sql);
	snprintf(sql + used, sizeof sql - used, " UNION ");
	union_of(c, sql, sizeof sql, " UNION ", "globalPid >> 24", gpu_kinds, gpu_tables, 3, "");
	used = strlen(sql);
	snprintf(sql + used, sizeof sql - used, ") ORDER BY p");

	rc = open_cursor(c, sql, false, &cur);
	while (rc >= 0 && (rc = prof_cursor__next(cur, c->err)) > 0) {
		int64_t pid = prof_cursor__int64(cur, 0);
		const char *name = prof_cursor__text(cur, 1);
		char fallback[48];

		snprintf(fallback, sizeof fallback, "process %" PRId64, pid);
		ev_meta(c, "process_name", pid, 0, false, "name", name && *name ? name : fallback, 0);
	}
	prof_cursor__close(cur);
	return rc < 0 ? rc : 0;
}

static int write_thread_meta(struct chrome_ctx *c)
{
	char sql[SQL_MAX] = "SELECT g, ";
	struct prof_cursor *cur = NULL;
	size_t used;
	int rc;

	if (!c->have[SRC_RUNTIME] && !c->have[SRC_DRIVER] && !c->have[SRC_NVTX])
		return 0;
	used = strlen(sql);
	if (prof_store__has_table(c->store, PROF_T_THREAD_NAMES))
		snprintf(sql + used, sizeof sql - used,
			 "(SELECT s.value FROM " PROF_T_THREAD_NAMES " tn JOIN " PROF_T_STRINGS
			 " s ON s.id = tn.nameId WHERE tn.globalTid = g LIMIT 1) FROM (");
	else
		snprintf(sql + used, sizeof sql - used, "NULL FROM (");
	union_of(c, sql, sizeof sql, " UNION ", "globalTid AS g", api_kinds, api_tables, 2, "");
	if (c->have[SRC_NVTX]) {
		used = strlen(sql);
		snprintf(sql + used, sizeof sql - used, " UNION SELECT globalTid FROM " PROF_T_NVTX
			 " WHERE globalTid IS NOT NULL");
	}
	used = strlen(sql);
	snprintf(sql + used, sizeof sql - used, ") ORDER BY g");

	rc = open_cursor(c, sql, false, &cur);
	while (rc >= 0 && (rc = prof_cursor__next(cur, c->err)) > 0) {
		int64_t gt = prof_cursor__int64(cur, 0);
		const char *name = prof_cursor__text(cur, 1);
		char fallback[48];

		snprintf(fallback, sizeof fallback, "thread %" PRIu32, prof_tid_of(gt));
		ev_meta(c, "thread_name", prof_pid_of(gt), prof_tid_of(gt), true, "name",
			name && *name ? name : fallback, 0);
	}
	prof_cursor__close(cur);
	return rc < 0 ? rc : 0;
}

static int write_gpu_meta(struct chrome_ctx *c)
{
	char sql[SQL_MAX] = "SELECT deviceId, streamId FROM (";
	struct prof_cursor *cur = NULL;
	size_t used;
	int32_t last_dev = -1;
	bool any = false;
	int rc;

	union_of(c, sql, sizeof sql, " UNION ", "deviceId, streamId", gpu_kinds, gpu_tables, 3, "");
	if (c->have[SRC_MEMORY]) {
		/* a device with allocations but no work still gets its counter track */
		used = strlen(sql);
		snprintf(sql + used, sizeof sql - used, " UNION SELECT deviceId, NULL FROM " PROF_T_MEMORY);
	}
	used = strlen(sql);
	snprintf(sql + used, sizeof sql - used, ") ORDER BY deviceId, streamId");

	rc = open_cursor(c, sql, false, &cur);
	while (rc >= 0 && (rc = prof_cursor__next(cur, c->err)) > 0) {
		int32_t dev = (int32_t)prof_cursor__int64(cur, 0);
		char label[160];

		if (!any || dev != last_dev) {
			struct device *d;

			rc = device_add(c, dev);
			if (rc < 0)
				break;
			d = device_get(c, dev);
			if (d->have_occ && d->occ.name[0])
				snprintf(label, sizeof label, "GPU %d: %s", dev, d->occ.name);
			else
				snprintf(label, sizeof label, "GPU %d", dev);
			ev_meta(c, "process_name", dev, 0, false, "name", label, 0);
			/* GPUs sort after the CPU processes */
			ev_meta(c, "process_sort_index", dev, 0, false, "sort_index", NULL,
				(int64_t)1 << 24 | dev);
			last_dev = dev;
			any = true;
		}
		if (prof_cursor__is_null(cur, 1))
			continue;
		snprintf(label, sizeof label, "stream %" PRId64, prof_cursor__int64(cur, 1));
		ev_meta(c, "thread_name", dev, prof_cursor__int64(cur, 1), true, "name", label, 0);
		ev_meta(c, "thread_sort_index", dev, prof_cursor__int64(cur, 1), true, "sort_index",
			NULL, prof_cursor__int64(cur, 1));
	}
	prof_cursor__close(cur);
	return rc < 0 ? rc : 0;
}

/* TARGET_INFO_GPU under the key names of PyTorch's deviceProperties. */
static int write_device_properties(struct chrome_ctx *c)
{
	static const struct { const char *column, *key; } map[] = {
		{ "id", "id" }, { "name", "name" }, { "totalMemory", "totalGlobalMem" },
		{ "computeMajor", "computeMajor" }, { "computeMinor", "computeMinor" },
		{ "maxThreadsPerBlock", "maxThreadsPerBlock" }, { "threadsPerWarp", "warpSize" },
		{ "maxRegistersPerBlock", "regsPerBlock" },
		{ "maxRegistersPerSm", "regsPerMultiprocessor" },
		{ "maxShmemPerBlock", "sharedMemPerBlock" },
		{ "maxShmemPerSm", "sharedMemPerMultiprocessor" }, { "smCount", "numSms" },
		{ "maxWarpsPerSm", "maxWarpsPerSm" }, { "maxBlocksPerSm", "maxBlocksPerSm" },
		{ "memoryBandwidth", "memoryBandwidthBytesPerSecond" },
		{ "clockRate", "clockRateHz" },
	};
	struct prof_cursor *cur = NULL;
	bool first_dev = true;
	int rc;

	fputs("\"deviceProperties\":[", c->out);
	if (!prof_store__has_table(c->store, PROF_T_GPU))
		goto done;
	rc = prof_cursor__open(c->store, "SELECT * FROM " PROF_T_GPU " ORDER BY id", &cur, c->err);
	if (rc < 0)
		return rc;
	while ((rc = prof_cursor__next(cur, c->err)) > 0) {
		bool first_key = true;

		fputs(first_dev ? "\n  {" : ",\n  {", c->out);
		first_dev = false;
		for (size_t m = 0; m < sizeof map / sizeof map[0]; m++) {
			for (int col = 0; col < prof_cursor__columns(cur); col++) {
				if (strcmp(prof_cursor__column_name(cur, col), map[m].column) != 0 ||
				    prof_cursor__is_null(cur, col))
					continue;
				fprintf(c->out, "%s\"%s\":", first_key ? "" : ",", map[m].key);
				first_key = false;
				if (strcmp(map[m].column, "name") == 0)
					prof_fputs_json(c->out, prof_cursor__text(cur, col));
				else
					fprintf(c->out, "%" PRId64, prof_cursor__int64(cur, col));
			}
		}
		fputs("}", c->out);
	}
	prof_cursor__close(cur);
	if (rc < 0)
		return rc;
done:
	fputs("],\n", c->out);
	return 0;
}

/* ---- the event sources -------------------------------------------------- */

/* The launching API call of GPU row g: runtime first, the driver when the
 * runtime has no call with that correlation id. */
struct api_exprs {
	char join[512];
	char start[48], end[48], tid[64];
};

static void api_exprs__init(struct chrome_ctx *c, struct api_exprs *a)
{
	bool rt = c->have[SRC_RUNTIME], drv = c->have[SRC_DRIVER];

	snprintf(a->join, sizeof a->join, "%s%s",
		 rt ? " LEFT JOIN " PROF_T_RUNTIME " r ON r.correlationId = g.correlationId"
		      " AND (r.globalTid >> 24) = (g.globalPid >> 24)" : "",
		 drv ? " LEFT JOIN " PROF_T_DRIVER " d ON d.correlationId = g.correlationId"
		       " AND (d.globalTid >> 24) = (g.globalPid >> 24)" : "");
#define PICK(field) (rt && drv ? "coalesce(r." field ", d." field ")" : rt ? "r." field \
		     : drv ? "d." field : "NULL")
	snprintf(a->start, sizeof a->start, "%s", PICK("start"));
	snprintf(a->end, sizeof a->end, "%s", PICK("end"));
	snprintf(a->tid, sizeof a->tid, "%s", PICK("globalTid"));
#undef PICK
}

/* Columns 0..7 shared by the GPU sources: start, end, deviceId, streamId,
 * correlationId, globalPid, launching thread, and the launching call's start
 * when that call is in the export too (else NULL: no flow). */
static int gpu_sql(struct chrome_ctx *c, char *sql, size_t cap, const char *table,
		   const char *extra_cols)
{
	struct api_exprs a;
	char in_api[512], in_gpu[512], api_pid[96];

	api_exprs__init(c, &a);
	snprintf(api_pid, sizeof api_pid, "%s >> 24", a.tid);
	if (export_window__in_range(in_api, sizeof in_api, a.start, api_pid) < 0 ||
	    export_window__in_range(in_gpu, sizeof in_gpu, "g.start", "g.globalPid >> 24") < 0)
		return prof_error__set(c->err, PROF_E_USAGE, "export query too long");
	snprintf(sql, cap,
		 "SELECT g.start, g.end, g.deviceId, g.streamId, g.correlationId, g.globalPid, "
		 "%s, CASE WHEN %s IS NOT NULL AND %s > ?1 AND %s < ?2 THEN %s END, %s "
		 "FROM %s%s WHERE g.end > ?1 AND g.start < ?2 "
		 "AND CASE WHEN %s IS NOT NULL THEN %s ELSE %s END "
		 "ORDER BY g.start, g.end DESC",
		 a.tid, a.start, a.end, a.start, a.start, extra_cols, table, a.join,
		 a.start, in_api, in_gpu);
	return 0;
}

static int api_sql(char *sql, size_t cap, enum src_kind kind)
{
	const char *table = kind == SRC_RUNTIME ? PROF_T_RUNTIME : PROF_T_DRIVER;
	char in_range[512];

	export_window__in_range(in_range, sizeof in_range, "a.start", "a.globalTid >> 24");
	snprintf(sql, cap,
		 "SELECT a.start, a.end, a.globalTid, a.correlationId, coalesce(s.value, '') "
		 "FROM %s a LEFT JOIN " PROF_T_STRINGS " s ON s.id = a.nameId "
		 "WHERE a.end > ?1 AND a.start < ?2 AND %s ORDER BY a.start, a.end DESC",
		 table, in_range);
	return 0;
}

static int nvtx_sql(struct chrome_ctx *c, char *sql, size_t cap)
{
	char in_range[512];

	export_window__in_range(in_range, sizeof in_range, "n.start", "n.globalTid >> 24");
	snprintf(sql, cap,
		 "SELECT n.start, coalesce(n.end, n.start), n.globalTid, %s, n.end IS NULL "
		 "FROM " PROF_T_NVTX " n LEFT JOIN " PROF_T_STRINGS " t ON t.id = n.textId "
		 "WHERE n.eventType IN (" PROF_SQL_NVTX_MARK ", " PROF_SQL_NVTX_RANGES ") "
		 "AND n.globalTid IS NOT NULL "
		 "AND coalesce(n.end, n.start) >= ?1 AND n.start < ?2 AND %s "
		 "ORDER BY n.start, n.end DESC",
		 c->w.nvtx_name, in_range);
	return 0;
}

static int memory_sql(char *sql, size_t cap)
{
	char in_range[512];

	export_window__in_range(in_range, sizeof in_range, "m.start", "m.globalPid >> 24");
	/* every event before the window still counts towards the level */
	snprintf(sql, cap,
		 "SELECT m.start, m.start, m.deviceId, m.bytes, m.memoryOperationType, "
		 "(m.start >= ?1 AND %s) FROM " PROF_T_MEMORY " m "
		 "WHERE m.start < ?2 AND m.memKind = %d ORDER BY m.start",
		 in_range, PROF_MEM_DEVICE);
	return 0;
}

/* GB/s = bytes / ns; printed with three decimals. */
static void put_bandwidth(struct chrome_ctx *c, int64_t bytes, int64_t start, int64_t end)
{
	if (end > start)
		fprintf(c->out, ",\"memory bandwidth (GB/s)\":%.3f", (double)bytes / (double)(end - start));
}

static void gpu_common_args(struct chrome_ctx *c, struct prof_cursor *cur)
{
	fprintf(c->out, ",\"args\":{\"correlation\":%" PRId64 ",\"device\":%" PRId64
		",\"stream\":%" PRId64, prof_cursor__int64(cur, 4), prof_cursor__int64(cur, 2),
		prof_cursor__int64(cur, 3));
}

/* One flow per GPU activity, from the call that launched it: a graph launch
 * starts one arrow per node, and each arrow has an id of its own because a
 * viewer binds one start to one finish per id. The start is written here,
 * out of file order, which the format allows. */
static void gpu_flow(struct chrome_ctx *c, struct prof_cursor *cur)
{
	int64_t gt = prof_cursor__int64(cur, 6), id;

	if (prof_cursor__is_null(cur, 7))
		return;
	id = ++c->flows;
	ev_flow(c, true, id, prof_pid_of(gt), prof_tid_of(gt), prof_cursor__int64(cur, 7));
	ev_flow(c, false, id, prof_cursor__int64(cur, 2), prof_cursor__int64(cur, 3),
		prof_cursor__int64(cur, 0));
}

#define KERNEL_COLS "coalesce(kn.value, ''), g.gridX, g.gridY, g.gridZ, g.blockX, g.blockY, " \
	"g.blockZ, g.registersPerThread, g.staticSharedMemory, g.dynamicSharedMemory"
#define KERNEL_FROM PROF_T_KERNEL " g LEFT JOIN " PROF_T_STRINGS " kn ON kn.id = g.demangledName"

static void emit_kernel(struct chrome_ctx *c, struct prof_cursor *cur)
{
	int64_t start = prof_cursor__int64(cur, 0), end = prof_cursor__int64(cur, 1);
	int64_t bx = prof_cursor__int64(cur, 12), by = prof_cursor__int64(cur, 13);
	int64_t bz = prof_cursor__int64(cur, 14), regs = prof_cursor__int64(cur, 15);
	int64_t shared = prof_cursor__int64(cur, 16) + prof_cursor__int64(cur, 17);
	struct device *d = device_get(c, (int32_t)prof_cursor__int64(cur, 2));

	ev_complete(c, "kernel", prof_cursor__text(cur, 8), prof_cursor__int64(cur, 2),
		    prof_cursor__int64(cur, 3), start, end);
	gpu_common_args(c, cur);
	fprintf(c->out, ",\"grid\":[%" PRId64 ",%" PRId64 ",%" PRId64 "],\"block\":[%" PRId64 ",%"
		PRId64 ",%" PRId64 "],\"registers per thread\":%" PRId64 ",\"shared memory\":%" PRId64,
		prof_cursor__int64(cur, 9), prof_cursor__int64(cur, 10), prof_cursor__int64(cur, 11),
		bx, by, bz, regs, shared);
	if (d && d->have_occ) {
		struct occ_launch l = {
			.threads_per_block = (int)(bx * by * bz),
			.registers_per_thread = (int)regs,
			.shared_per_block_bytes = shared,
		};
		struct occ_result r;

		if (occ__compute(&d->occ, &l, &r) == 0 && r.limiter != OCC_LIMIT_INVALID)
			fprintf(c->out, ",\"est. achieved occupancy %%\":%.0f,\"occupancy basis\":"
				"\"theoretical: registers, shared memory and block size vs. GPU limits\"",
				r.occupancy * 100.0);
	}
	fputs("}}", c->out);
	gpu_flow(c, cur);
}

#define MEMCPY_COLS "g.bytes, g.copyKind, g.srcKind, g.dstKind"
static void emit_memcpy(struct chrome_ctx *c, struct prof_cursor *cur)
{
	int64_t start = prof_cursor__int64(cur, 0), end = prof_cursor__int64(cur, 1);
	int64_t bytes = prof_cursor__int64(cur, 8);
	const char *kind = sum_copy_short(prof_cursor__int64(cur, 9));
	char name[96];

	snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", kind ? kind : "Unknown",
		 sum_mem_kind(prof_cursor__int64(cur, 10)), sum_mem_kind(prof_cursor__int64(cur, 11)));
	ev_complete(c, "gpu_memcpy", name, prof_cursor__int64(cur, 2), prof_cursor__int64(cur, 3),
		    start, end);
	gpu_common_args(c, cur);
	fprintf(c->out, ",\"bytes\":%" PRId64, bytes);
	put_bandwidth(c, bytes, start, end);
	fputs("}}", c->out);
	gpu_flow(c, cur);
}

#define MEMSET_COLS "g.bytes, g.memKind"
static void emit_memset(struct chrome_ctx *c, struct prof_cursor *cur)
{
	int64_t start = prof_cursor__int64(cur, 0), end = prof_cursor__int64(cur, 1);
	int64_t bytes = prof_cursor__int64(cur, 8);
	char name[64];

	snprintf(name, sizeof name, "Memset (%s)", sum_mem_kind(prof_cursor__int64(cur, 9)));
	ev_complete(c, "gpu_memset", name, prof_cursor__int64(cur, 2), prof_cursor__int64(cur, 3),
		    start, end);
	gpu_common_args(c, cur);
	fprintf(c->out, ",\"bytes\":%" PRId64, bytes);
	put_bandwidth(c, bytes, start, end);
	fputs("}}", c->out);
	gpu_flow(c, cur);
}

static void emit_api(struct chrome_ctx *c, struct prof_cursor *cur, enum src_kind kind)
{
	int64_t start = prof_cursor__int64(cur, 0), gt = prof_cursor__int64(cur, 2);
	int64_t corr = prof_cursor__int64(cur, 3);

	ev_sep(c);
	fprintf(c->out, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":",
		kind == SRC_RUNTIME ? "cuda_runtime" : "cuda_driver");
	put_api_name_json(c->out, prof_cursor__text(cur, 4));
	fprintf(c->out, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, prof_pid_of(gt), prof_tid_of(gt));
	put_ts(c, "ts", start);
	put_dur(c, start, prof_cursor__int64(cur, 1));
	fprintf(c->out, ",\"args\":{\"correlation\":%" PRId64 "}}", corr);
}

static void emit_nvtx(struct chrome_ctx *c, struct prof_cursor *cur)
{
	int64_t start = prof_cursor__int64(cur, 0), gt = prof_cursor__int64(cur, 2);

	ev_sep(c);
	if (prof_cursor__int64(cur, 4)) {
		fputs("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"user_annotation\",\"name\":", c->out);
	} else {
		fputs("{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":", c->out);
	}
	prof_fputs_json(c->out, prof_cursor__text(cur, 3));
	fprintf(c->out, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, prof_pid_of(gt), prof_tid_of(gt));
	put_ts(c, "ts", start);
	if (!prof_cursor__int64(cur, 4))
		put_dur(c, start, prof_cursor__int64(cur, 1));
	fputs("}", c->out);
}

static void emit_gpu_nvtx(struct chrome_ctx *c, const struct gpu_span *g)
{
	ev_complete(c, "gpu_user_annotation", c->proj.names + g->name_off, g->device, g->stream,
		    g->start_ns, g->end_ns);
	fputs("}", c->out);
}

static void counter_sample(struct chrome_ctx *c, struct device *d, int64_t ts_ns)
{
	ev_sep(c);
	fprintf(c->out, "{\"ph\":\"C\",\"name\":\"device memory in use\",\"pid\":%d", d->id);
	put_ts(c, "ts", ts_ns);
	fprintf(c->out, ",\"args\":{\"bytes\":%" PRId64 "}}", d->mem_in_use_bytes);
	d->mem_emitted = true;
}

static void emit_memory(struct chrome_ctx *c, struct prof_cursor *cur)
{
	struct device *d = device_get(c, (int32_t)prof_cursor__int64(cur, 2));
	int64_t ts = prof_cursor__int64(cur, 0), bytes = prof_cursor__int64(cur, 3);

	if (!d)
		return;
	/* the level at the window's start, so a narrowed trace starts right */
	if (!d->mem_emitted && prof_cursor__int64(cur, 5) && ts > c->w.from_abs_ns &&
	    c->w.from_abs_ns != INT64_MIN && !c->w.range_name)
		counter_sample(c, d, c->w.from_abs_ns);
	d->mem_in_use_bytes += prof_cursor__int64(cur, 4) == 0 ? bytes : -bytes;
	if (prof_cursor__int64(cur, 5))
		counter_sample(c, d, ts);
}

/* ---- NVTX ranges projected onto the GPU ---------------------------------- */

/* Each NVTX range on the GPU: per (range, device, stream), the span of the
 * GPU work launched by API calls that the range's thread made inside it.
 * The calls stream by in (thread, start) order beside the walk of the same
 * threads' ranges (folded_ranges.h), so each launch widens the spans of the
 * ranges open at its call, and a range's spans are final when it leaves the
 * open list. Work costs one pass over the launches, not a pass per range. */

static int spans_reserve(struct chrome_ctx *c, struct gpu_span **v, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 64;
	struct gpu_span *grown;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	grown = realloc(*v, n * sizeof *grown);
	if (!grown)
		return prof_error__set(c->err, PROF_E_NOMEM, "out of memory");
	*v = grown;
	*cap = n;
	return 0;
}

/* Widen the span of (range, device, stream) to cover [start, end). */
static int span_add(struct chrome_ctx *c, int64_t row, int64_t device, int64_t stream,
		    int64_t start, int64_t end)
{
	struct projection *p = &c->proj;
	int rc;

	for (size_t i = 0; i < p->nlive; i++) {
		struct gpu_span *g = &p->live[i];

		if (g->row != row || g->device != device || g->stream != stream)
			continue;
		if (start < g->start_ns)
			g->start_ns = start;
		if (end > g->end_ns)
			g->end_ns = end;
		return 0;
	}
	rc = spans_reserve(c, &p->live, &p->cap_live, p->nlive + 1);
	if (rc < 0)
		return rc;
	p->live[p->nlive++] = (struct gpu_span){ .start_ns = start, .end_ns = end, .row = row,
						  .device = device, .stream = stream };
	return 0;
}

static int name_add(struct chrome_ctx *c, const char *name, size_t *off)
{
	struct projection *p = &c->proj;
	size_t len = strlen(name) + 1;

	if (p->names_len + len > p->names_cap) {
		size_t cap = p->names_cap ? p->names_cap : 4096;
		char *grown;

		while (cap < p->names_len + len)
			cap *= 2;
		grown = realloc(p->names, cap);
		if (!grown)
			return prof_error__set(c->err, PROF_E_NOMEM, "out of memory");
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
	struct chrome_ctx *c = ctx;
	struct projection *p = &c->proj;
	bool named = false;
	size_t kept = 0, off = 0;
	int rc = 0;

	for (size_t i = 0; i < p->nlive; i++) {
		struct gpu_span g = p->live[i];

		if (g.row != r->row) {
			p->live[kept++] = g;
			continue;
		}
		if (rc < 0 || g.end_ns <= c->w.from_abs_ns || g.start_ns >= c->w.to_abs_ns)
			continue;
		if (!named) {
			rc = name_add(c, r->name, &off);
			named = true;
		}
		if (rc == 0)
			rc = spans_reserve(c, &p->done, &p->cap_done, p->ndone + 1);
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
	const struct gpu_span *x = a, *y = b;

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

/* Every (API call, GPU work it launched) pair as (thread, call start, device,
 * stream, work start, work end), in (thread, call start) order: one arm per
 * pair of tables, each read in the order of the call table's (globalTid,
 * start) index with the work found by correlation id, so SQLite merges the
 * arms instead of sorting the launches. */
static int launches_sql(struct chrome_ctx *c, char *sql, size_t cap)
{
	size_t used = 0;

	sql[0] = '\0';
	for (int a = 0; a < 2; a++) {
		for (int g = 0; g < 3; g++) {
			if (!c->have[api_kinds[a]] || !c->have[gpu_kinds[g]])
				continue;
			used += (size_t)snprintf(sql + used, cap > used ? cap - used : 0,
				"%sSELECT a.globalTid, a.start, g.deviceId, g.streamId, g.start, g.end "
				"FROM %s a CROSS JOIN %s g ON g.correlationId = a.correlationId "
				"AND (g.globalPid >> 24) = (a.globalTid >> 24) "
				"WHERE a.globalTid IS NOT NULL AND a.start IS NOT NULL "
				"AND g.start IS NOT NULL AND g.end IS NOT NULL",
				used ? " UNION ALL " : "", api_tables[a], gpu_tables[g]);
		}
	}
	used += (size_t)snprintf(sql + used, cap > used ? cap - used : 0, " ORDER BY 1, 2");
	if (used >= cap)
		return prof_error__set(c->err, PROF_E_USAGE, "export query too long");
	return 0;
}

/* Fill proj.done, sorted for the merge. */
static int project_ranges(struct chrome_ctx *c)
{
	struct range_walk rw = { .make_name = strdup, .on_close = range_closed, .ctx = c };
	struct prof_cursor *cur = NULL;
	char *sql = malloc(SQL_MAX);
	int rc;

	if (!sql)
		return prof_error__set(c->err, PROF_E_NOMEM, "out of memory");
	rc = launches_sql(c, sql, SQL_MAX);
	if (rc == 0)
		rc = open_cursor(c, sql, false, &cur);
	/* ranges of both kinds, each counted on the thread that opened it */
	if (rc == 0)
		rc = range_walk__open(&rw, c->store, &c->w, true, true, c->err);
	while (rc >= 0 && (rc = prof_cursor__next(cur, c->err)) > 0) {
		rc = range_walk__at(&rw, prof_cursor__int64(cur, 0), prof_cursor__int64(cur, 1));
		for (size_t i = 0; rc >= 0 && i < rw.nopen; i++)
			rc = span_add(c, rw.open[i].row, prof_cursor__int64(cur, 2),
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
	if (c->proj.ndone > 1)
		qsort(c->proj.done, c->proj.ndone, sizeof *c->proj.done, span_cmp);
	return 0;
}

/* ---- the merge ---------------------------------------------------------- */

static int source_next(struct chrome_ctx *c, struct source *s)
{
	int rc;

	if (s->kind == SRC_GPU_NVTX) {
		s->has_row = c->proj.next < c->proj.ndone;
		if (s->has_row)
			s->start_ns = c->proj.done[c->proj.next++].start_ns;
		return 0;
	}
	rc = prof_cursor__next(s->cur, c->err);

	s->has_row = rc > 0;
	if (s->has_row)
		s->start_ns = prof_cursor__int64(s->cur, 0);
	return rc < 0 ? rc : 0;
}

static void source_emit(struct chrome_ctx *c, struct source *s)
{
	switch (s->kind) {
	case SRC_NVTX: emit_nvtx(c, s->cur); break;
	case SRC_GPU_NVTX: emit_gpu_nvtx(c, &c->proj.done[c->proj.next - 1]); break;
	case SRC_RUNTIME:
	case SRC_DRIVER: emit_api(c, s->cur, s->kind); break;
	case SRC_KERNEL: emit_kernel(c, s->cur); break;
	case SRC_MEMCPY: emit_memcpy(c, s->cur); break;
	case SRC_MEMSET: emit_memset(c, s->cur); break;
	case SRC_MEMORY: emit_memory(c, s->cur); break;
	case SRC__COUNT: break;
	}
}

static int source_sql(struct chrome_ctx *c, enum src_kind kind, char *sql, size_t cap)
{
	switch (kind) {
	case SRC_NVTX: return nvtx_sql(c, sql, cap);
	case SRC_RUNTIME:
	case SRC_DRIVER: return api_sql(sql, cap, kind);
	case SRC_KERNEL: return gpu_sql(c, sql, cap, KERNEL_FROM, KERNEL_COLS);
	case SRC_MEMCPY: return gpu_sql(c, sql, cap, PROF_T_MEMCPY " g", MEMCPY_COLS);
	case SRC_MEMSET: return gpu_sql(c, sql, cap, PROF_T_MEMSET " g", MEMSET_COLS);
	case SRC_MEMORY: return memory_sql(sql, cap);
	case SRC_GPU_NVTX: /* computed by project_ranges, not read by a query */
	case SRC__COUNT: break;
	}
	return PROF_E_USAGE;
}

static int write_events(struct chrome_ctx *c)
{
	struct source src[SRC__COUNT];
	char *sql = malloc(SQL_MAX);
	int n = 0, rc = 0;

	if (!sql)
		return prof_error__set(c->err, PROF_E_NOMEM, "out of memory");
	for (int k = 0; k < SRC__COUNT; k++) {
		if (!c->have[k])
			continue;
		src[n] = (struct source){ .kind = (enum src_kind)k };
		if (k == SRC_GPU_NVTX) {
			rc = project_ranges(c);
		} else {
			rc = source_sql(c, (enum src_kind)k, sql, SQL_MAX);
			if (rc == 0)
				rc = open_cursor(c, sql, true, &src[n].cur);
		}
		if (rc < 0)
			goto out;
		n++;
		rc = source_next(c, &src[n - 1]);
		if (rc < 0)
			goto out;
	}
	for (;;) {
		struct source *best = NULL;

		/* sources are in tie-break order, so strict < keeps the earlier */
		for (int i = 0; i < n; i++)
			if (src[i].has_row && (!best || src[i].start_ns < best->start_ns))
				best = &src[i];
		if (!best)
			break;
		source_emit(c, best);
		rc = source_next(c, best);
		if (rc < 0)
			goto out;
	}
out:
	for (int i = 0; i < n; i++)
		prof_cursor__close(src[i].cur);
	free(sql);
	return rc;
}

static void detect_sources(struct chrome_ctx *c)
{
	static const char *const tables[SRC__COUNT] = {
		[SRC_NVTX] = PROF_T_NVTX, [SRC_RUNTIME] = PROF_T_RUNTIME, [SRC_DRIVER] = PROF_T_DRIVER,
		[SRC_KERNEL] = PROF_T_KERNEL, [SRC_MEMCPY] = PROF_T_MEMCPY, [SRC_MEMSET] = PROF_T_MEMSET,
		[SRC_MEMORY] = PROF_T_MEMORY,
	};

	for (int k = 0; k < SRC__COUNT; k++)
		c->have[k] = tables[k] && prof_store__has_table(c->store, tables[k]);
	c->have[SRC_GPU_NVTX] = c->have[SRC_NVTX] &&
		(c->have[SRC_RUNTIME] || c->have[SRC_DRIVER]) &&
		(c->have[SRC_KERNEL] || c->have[SRC_MEMCPY] || c->have[SRC_MEMSET]);
}

int chrome_trace__estimate(struct prof_store *s, const struct export_window *w,
			   uint64_t *bytes, struct prof_error *err)
{
	static const struct { const char *table; uint64_t bytes; } per_row[] = {
		{ PROF_T_KERNEL, EST_KERNEL_BYTES }, { PROF_T_MEMCPY, EST_COPY_BYTES },
		{ PROF_T_MEMSET, EST_COPY_BYTES }, { PROF_T_RUNTIME, EST_API_BYTES },
		{ PROF_T_DRIVER, EST_API_BYTES }, { PROF_T_NVTX, EST_NVTX_BYTES },
	};
	char sql[192];
	int rc = 0;

	*bytes = 0;
	for (size_t i = 0; i < sizeof per_row / sizeof per_row[0]; i++) {
		struct prof_cursor *cur = NULL;

		if (!prof_store__has_table(s, per_row[i].table))
			continue;
		snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE coalesce(end, start) >= ?1 "
			 "AND start < ?2", per_row[i].table);
		rc = prof_cursor__open(s, sql, &cur, err);
		if (rc < 0)
			return rc;
		prof_cursor__bind_int64(cur, 1, w->from_abs_ns);
		prof_cursor__bind_int64(cur, 2, w->to_abs_ns);
		rc = prof_cursor__next(cur, err);
		if (rc > 0)
			*bytes += (uint64_t)prof_cursor__int64(cur, 0) * per_row[i].bytes;
		prof_cursor__close(cur);
		if (rc < 0)
			return rc;
	}
	if (prof_store__has_table(s, PROF_T_MEMORY)) {
		struct prof_cursor *cur = NULL;

		rc = prof_cursor__open(s, "SELECT count(*) FROM " PROF_T_MEMORY, &cur, err);
		if (rc < 0)
			return rc;
		rc = prof_cursor__next(cur, err);
		if (rc > 0)
			*bytes += (uint64_t)prof_cursor__int64(cur, 0) * EST_COUNTER_BYTES;
		prof_cursor__close(cur);
	}
	return rc < 0 ? rc : 0;
}

int chrome_trace__write(struct prof_store *s, const struct chrome_options *opts, FILE *out,
			struct prof_error *err)
{
	struct chrome_ctx c = { .out = out, .store = s, .first_event = true, .err = err };
	uint64_t limit = opts && opts->warn_bytes ? opts->warn_bytes : CHROME_TRACE_WARN_BYTES;
	uint64_t estimate;
	int rc;

	rc = export_window__init(&c.w, s, opts ? &opts->filter : NULL, err);
	if (rc < 0)
		return rc;
	rc = chrome_trace__estimate(s, &c.w, &estimate, err);
	if (rc < 0)
		return rc;
	if (estimate > limit)
		fprintf(opts && opts->warn ? opts->warn : stderr,
			"perfkit: warning: the trace will be about %" PRIu64 " MB, more than a browser "
			"loads comfortably; narrow it with --from/--to (e.g. --from=1s --to=1.5s) or "
			"--range=NAME\n", estimate / 1000000);
	detect_sources(&c);

	fprintf(out, "{\"schemaVersion\":1,\"traceName\":");
	prof_fputs_json(out, prof_store__path(s));
	fprintf(out, ",\n\"baseTimeNanoseconds\":%" PRId64 ",\n\"displayTimeUnit\":\"ms\",\n",
		c.w.base_ns);
	rc = write_device_properties(&c);
	if (rc < 0)
		goto out;
	fputs("\"traceEvents\":[", out);
	rc = write_process_meta(&c);
	if (rc == 0)
		rc = write_thread_meta(&c);
	if (rc == 0)
		rc = write_gpu_meta(&c);
	if (rc == 0)
		rc = write_events(&c);
	if (rc < 0)
		goto out;
	fputs("\n]}\n", out);
	if (ferror(out))
		rc = prof_error__set(err, PROF_E_IO, "cannot write the trace");
out:
	free(c.devs);
	free(c.proj.live);
	free(c.proj.done);
	free(c.proj.names);
	return rc;
}
