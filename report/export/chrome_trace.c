/* chrome_trace.c - the Chrome/Perfetto trace export (see chrome_trace.h).
 *
 * The events come from the shared merge (trace_merge.h), in start order;
 * this file only prints them as Trace Event Format JSON.
 *
 * A capture of one process shows it as one process and each GPU as a
 * process of its streams. A job (several processes with CUDA work, or
 * ranks its launcher numbered) shows one process per rank, named
 * "rank N · host · GPU", holding its threads and, below them, the streams
 * of its GPU work and its device memory: ranks that each call their GPU
 * "device 0" then stay apart. */
#include "chrome_trace.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "prof/tables.h"
#include "model/names.h"
#include "model/ranks.h"
#include "trace_merge.h"
#include "trace_out.h"
#include "prof/saturate.h"
#include "prof/error.h"

/* Bytes per event of each kind in the output, measured on real traces,
 * GPU rows with the flow start and finish they write (about 90 bytes each);
 * only the size warning uses them. */
#define EST_KERNEL_BYTES 710
#define EST_COPY_BYTES 510
#define EST_GRAPH_BYTES 420
#define EST_API_BYTES 240
#define EST_NVTX_BYTES 190
#define EST_COUNTER_BYTES 110

/* One rank's device memory level (job mode): per process and device. */
struct rank_memory {
	int64_t pid;
	int32_t device;
	int64_t bytes;
	bool emitted;
};

struct chrome_ctx {
	struct trace_out o;
	struct trace_merge m;
	struct sum_ranks ranks;
	bool per_rank;      /* a job: GPU work under each rank's process */
	struct rank_memory *mem;
	int nmem, cap_mem;
	bool first_event;
	int64_t flows;      /* flow ids handed out: one per GPU activity whose
			     * launching call is in the export */
	const struct tm_launch *launch; /* the row's being written */
	struct prof_error *err;
};

/* ---- output helpers --------------------------------------------------- */

static void ev_sep(struct chrome_ctx *c)
{
	if (c->first_event)
		trace_out__put(&c->o, "\n", 1);
	else
		trace_out__put(&c->o, ",\n", 2);
	c->first_event = false;
}

/* Saturating: a memory event or NVTX mark (which have no span to be bad)
 * can lie further from the base than 64 bits of ns reach. */
static void put_ts(struct chrome_ctx *c, int64_t abs_ns)
{
	trace_out__puts(&c->o, ",\"ts\":");
	trace_out__us(&c->o, prof_span_saturated(c->m.w.base_ns, abs_ns));
}

static void put_dur(struct chrome_ctx *c, int64_t start_ns, int64_t end_ns)
{
	trace_out__puts(&c->o, ",\"dur\":");
	trace_out__us(&c->o, end_ns > start_ns ? prof_span_saturated(start_ns, end_ns) : 0);
}

/* ,"pid":P,"tid":T */
static void put_pid_tid(struct chrome_ctx *c, int64_t pid, int64_t tid)
{
	trace_out__puts(&c->o, ",\"pid\":");
	trace_out__i64(&c->o, pid);
	trace_out__puts(&c->o, ",\"tid\":");
	trace_out__i64(&c->o, tid);
}

/* {"ph":"X","cat":CAT,"name":NAME,"pid":P,"tid":T,"ts":..,"dur":.. — the
 * caller adds args and the closing brace. */
static void ev_complete(struct chrome_ctx *c, const char *cat, const char *name, int64_t pid,
			int64_t tid, int64_t start_ns, int64_t end_ns)
{
	ev_sep(c);
	trace_out__puts(&c->o, "{\"ph\":\"X\",\"cat\":\"");
	trace_out__puts(&c->o, cat);
	trace_out__puts(&c->o, "\",\"name\":");
	trace_out__json_name(&c->o, name);
	put_pid_tid(c, pid, tid);
	put_ts(c, start_ns);
	put_dur(c, start_ns, end_ns);
}

static void ev_flow(struct chrome_ctx *c, bool start, int64_t id, int64_t pid, int64_t tid,
		    int64_t ts_ns)
{
	ev_sep(c);
	trace_out__puts(&c->o, start ? "{\"ph\":\"s\",\"id\":" : "{\"ph\":\"f\",\"id\":");
	trace_out__i64(&c->o, id);
	put_pid_tid(c, pid, tid);
	put_ts(c, ts_ns);
	trace_out__puts(&c->o, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"");
	trace_out__puts(&c->o, start ? "}" : ",\"bp\":\"e\"}");
}

static void ev_meta(struct chrome_ctx *c, const char *what, int64_t pid, int64_t tid,
		    bool with_tid, const char *key, const char *text, int64_t number)
{
	ev_sep(c);
	trace_out__printf(&c->o, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId64, what, pid);
	if (with_tid)
		trace_out__printf(&c->o, ",\"tid\":%" PRId64, tid);
	trace_out__printf(&c->o, ",\"ts\":0,\"args\":{\"%s\":", key);
	if (text)
		trace_out__json(&c->o, text);
	else
		trace_out__i64(&c->o, number);
	trace_out__puts(&c->o, "}}");
}

/* ---- where GPU work goes ---------------------------------------------- */

/* In job mode a stream is a thread of its rank's process, numbered past
 * any thread id (which Linux keeps below 2^22). */
static int64_t stream_tid(int64_t device, int64_t stream)
{
	return ((int64_t)1 << 30) + (device & 0x3FF) * ((int64_t)1 << 20) + (stream & 0xFFFFF);
}

/* The (pid, tid) a stream's events go to. */
static void gpu_track(const struct chrome_ctx *c, int64_t global_pid, int64_t device,
		      int64_t stream, int64_t *pid, int64_t *tid)
{
	if (c->per_rank) {
		*pid = prof_pid_of(global_pid);
		*tid = stream_tid(device, stream);
	} else {
		*pid = device;
		*tid = stream;
	}
}

/* ---- metadata --------------------------------------------------------- */

/* pid: prof_process_of(globalPid), as the merge lists processes. */
static int process_meta(void *ctx, int64_t pid, const char *name)
{
	struct chrome_ctx *c = ctx;
	const struct sum_process *p = NULL;
	char label[320];

	for (int i = 0; i < c->ranks.n && !p; i++)
		if (prof_process_of(c->ranks.p[i].global_pid) == pid)
			p = &c->ranks.p[i];
	/* events carry the pid's low 24 bits (an export's ids have more) */
	pid &= 0xFFFFFF;
	if (!c->per_rank || !p) {
		ev_meta(ctx, "process_name", pid, 0, false, "name", name, 0);
		return 0;
	}
	sum_process__label(p, label, sizeof label);
	ev_meta(c, "process_name", pid, 0, false, "name", label, 0);
	/* ranks in rank order, then the processes that are none */
	ev_meta(c, "process_sort_index", pid, 0, false, "sort_index", NULL,
		p->rank >= 0 ? p->rank : ((int64_t)1 << 24) + pid);
	return 0;
}

/* Job mode: each stream a thread of its rank, after the CPU threads. */
static int rank_stream_meta(void *ctx, int64_t pid, int64_t device, int64_t stream)
{
	struct chrome_ctx *c = ctx;
	int64_t tid = stream_tid(device, stream);
	char label[64];

	snprintf(label, sizeof label, "GPU %" PRId64 " stream %" PRId64, device, stream);
	ev_meta(c, "thread_name", pid & 0xFFFFFF, tid, true, "name", label, 0);
	ev_meta(c, "thread_sort_index", pid & 0xFFFFFF, tid, true, "sort_index", NULL, tid);
	return 0;
}

static int thread_meta(void *ctx, int64_t gt, const char *name)
{
	ev_meta(ctx, "thread_name", prof_pid_of(gt), prof_tid_of(gt), true, "name", name, 0);
	return 0;
}

static int gpu_meta(void *ctx, struct tm_device *d, bool new_device, int64_t stream)
{
	struct chrome_ctx *c = ctx;
	char label[160];

	/* job mode: the ranks hold their streams (rank_stream_meta) */
	if (c->per_rank)
		return 0;
	if (new_device) {
		tm_device__label(d, label, sizeof label);
		ev_meta(c, "process_name", d->id, 0, false, "name", label, 0);
		/* GPUs sort after the CPU processes */
		ev_meta(c, "process_sort_index", d->id, 0, false, "sort_index", NULL,
			(int64_t)1 << 24 | d->id);
	}
	if (stream < 0)
		return 0;
	snprintf(label, sizeof label, "stream %" PRId64, stream);
	ev_meta(c, "thread_name", d->id, stream, true, "name", label, 0);
	ev_meta(c, "thread_sort_index", d->id, stream, true, "sort_index", NULL, stream);
	return 0;
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

	trace_out__puts(&c->o, "\"deviceProperties\":[");
	rc = prof_cursor__open(c->m.store, "SELECT * FROM " PROF_T_GPU " ORDER BY id", &cur, c->err);
	if (rc < 0)
		return rc;
	while ((rc = prof_cursor__next(cur, c->err)) > 0) {
		bool first_key = true;

		trace_out__puts(&c->o, first_dev ? "\n  {" : ",\n  {");
		first_dev = false;
		for (size_t m = 0; m < sizeof map / sizeof map[0]; m++) {
			for (int col = 0; col < prof_cursor__columns(cur); col++) {
				if (strcmp(prof_cursor__column_name(cur, col), map[m].column) != 0 ||
				    prof_cursor__is_null(cur, col))
					continue;
				trace_out__printf(&c->o, "%s\"%s\":", first_key ? "" : ",",
						  map[m].key);
				first_key = false;
				if (strcmp(map[m].column, "name") == 0)
					trace_out__json(&c->o, prof_cursor__text(cur, col));
				else
					trace_out__i64(&c->o, prof_cursor__int64(cur, col));
			}
		}
		trace_out__puts(&c->o, "}");
	}
	prof_cursor__close(cur);
	if (rc < 0)
		return rc;
	trace_out__puts(&c->o, "],\n");
	return 0;
}

/* ---- events ------------------------------------------------------------- */

/* GB/s = bytes / ns; printed with three decimals. */
static void put_bandwidth(struct chrome_ctx *c, int64_t bytes, int64_t start, int64_t end)
{
	if (end > start)
		trace_out__printf(&c->o, ",\"memory bandwidth (GB/s)\":%.3f",
				  (double)bytes / (double)(end - start));
}

static void gpu_common_args(struct chrome_ctx *c, struct prof_cursor *cur)
{
	trace_out__puts(&c->o, ",\"args\":{\"correlation\":");
	trace_out__i64(&c->o, prof_cursor__int64(cur, TM_GPU_CORR));
	trace_out__puts(&c->o, ",\"device\":");
	trace_out__i64(&c->o, prof_cursor__int64(cur, TM_GPU_DEVICE));
	trace_out__puts(&c->o, ",\"stream\":");
	trace_out__i64(&c->o, prof_cursor__int64(cur, TM_GPU_STREAM));
}

/* One flow per GPU activity, from the call that launched it: a graph launch
 * starts one arrow per node, and each arrow has an id of its own because a
 * viewer binds one start to one finish per id. The start is written here,
 * out of file order, which the format allows. */
static void gpu_flow(struct chrome_ctx *c, struct prof_cursor *cur)
{
	int64_t gt = c->launch->tid, id, pid, tid;

	if (!c->launch->has_start)
		return;

	id = ++c->flows;
	ev_flow(c, true, id, prof_pid_of(gt), prof_tid_of(gt), c->launch->start);
	gpu_track(c, prof_cursor__int64(cur, TM_GPU_PID), prof_cursor__int64(cur, TM_GPU_DEVICE),
		  prof_cursor__int64(cur, TM_GPU_STREAM), &pid, &tid);
	ev_flow(c, false, id, pid, tid, prof_cursor__int64(cur, TM_GPU_START));
}

static void gpu_complete(struct chrome_ctx *c, struct prof_cursor *cur, const char *cat,
			 const char *name)
{
	int64_t pid, tid;

	gpu_track(c, prof_cursor__int64(cur, TM_GPU_PID), prof_cursor__int64(cur, TM_GPU_DEVICE),
		  prof_cursor__int64(cur, TM_GPU_STREAM), &pid, &tid);
	ev_complete(c, cat, name, pid, tid, prof_cursor__int64(cur, TM_GPU_START),
		    prof_cursor__int64(cur, TM_GPU_END));
	gpu_common_args(c, cur);
}

/* "X,Y,Z" of the three columns from col on */
static void put_dims(struct chrome_ctx *c, struct prof_cursor *cur, int col)
{
	for (int i = 0; i < 3; i++) {
		if (i)
			trace_out__put(&c->o, ",", 1);
		trace_out__i64(&c->o, prof_cursor__int64(cur, col + i));
	}
}

static void emit_kernel(struct chrome_ctx *c, struct prof_cursor *cur)
{
	double occupancy;

	gpu_complete(c, cur, "kernel", trace_merge__name(&c->m, cur, TM_KERNEL_NAME));
	trace_out__puts(&c->o, ",\"grid\":[");
	put_dims(c, cur, TM_KERNEL_GRID_X);
	trace_out__puts(&c->o, "],\"block\":[");
	put_dims(c, cur, TM_KERNEL_BLOCK_X);
	trace_out__puts(&c->o, "],\"registers per thread\":");
	trace_out__i64(&c->o, prof_cursor__int64(cur, TM_KERNEL_REGISTERS));
	trace_out__puts(&c->o, ",\"shared memory\":");
	trace_out__i64(&c->o, prof_cursor__int64(cur, TM_KERNEL_STATIC_SHARED) +
			      prof_cursor__int64(cur, TM_KERNEL_DYNAMIC_SHARED));
	if (trace_merge__occupancy(&c->m, cur, &occupancy)) {
		trace_out__puts(&c->o, ",\"est. achieved occupancy %\":");
		trace_out__f0(&c->o, occupancy * 100.0);
		trace_out__puts(&c->o, ",\"occupancy basis\":\"theoretical: registers, shared memory "
				"and block size vs. GPU limits\"");
	}
	trace_out__puts(&c->o, "}}");
	gpu_flow(c, cur);
}

/* A launch of a CUDA graph recorded whole: one slice for all its nodes. */
static void emit_graph(struct chrome_ctx *c, struct prof_cursor *cur)
{
	char name[96];

	sum_graph_launch_name(name, sizeof name, !prof_cursor__is_null(cur, TM_GRAPH_ID),
			      prof_cursor__int64(cur, TM_GRAPH_ID));
	gpu_complete(c, cur, "cuda_graph", name);
	if (!prof_cursor__is_null(cur, TM_GRAPH_ID)) {
		trace_out__puts(&c->o, ",\"graphId\":");
		trace_out__i64(&c->o, prof_cursor__int64(cur, TM_GRAPH_ID));
	}
	trace_out__puts(&c->o, ",\"nodes\":\"not recorded (--cuda-graph-trace=graph)\"}}");
	gpu_flow(c, cur);
}

/* A copy or memset: its bytes and bandwidth after the common args. */
static void emit_transfer(struct chrome_ctx *c, struct prof_cursor *cur, const char *cat,
			  const char *name)
{
	int64_t bytes = prof_cursor__int64(cur, TM_COPY_BYTES);

	gpu_complete(c, cur, cat, name);
	trace_out__puts(&c->o, ",\"bytes\":");
	trace_out__i64(&c->o, bytes);
	put_bandwidth(c, bytes, prof_cursor__int64(cur, TM_GPU_START),
		      prof_cursor__int64(cur, TM_GPU_END));
	trace_out__puts(&c->o, "}}");
	gpu_flow(c, cur);
}

static void emit_api(struct chrome_ctx *c, struct prof_cursor *cur, enum tm_kind kind)
{
	int64_t start = prof_cursor__int64(cur, TM_API_START), gt = prof_cursor__int64(cur, TM_API_TID);
	char buf[256];

	ev_sep(c);
	trace_out__puts(&c->o, kind == TM_RUNTIME ? "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":"
						 : "{\"ph\":\"X\",\"cat\":\"cuda_driver\",\"name\":");
	/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": the version suffix is
	 * an ABI detail, and PyTorch traces show the plain name */
	trace_out__json_name(&c->o, tm_api_name(trace_merge__name(&c->m, cur, TM_API_NAME), buf,
						sizeof buf));
	put_pid_tid(c, prof_pid_of(gt), prof_tid_of(gt));
	put_ts(c, start);
	put_dur(c, start, prof_cursor__int64(cur, TM_API_END));
	trace_out__puts(&c->o, ",\"args\":{\"correlation\":");
	trace_out__i64(&c->o, prof_cursor__int64(cur, TM_API_CORR));
	trace_out__puts(&c->o, "}}");
}

static void emit_nvtx(struct chrome_ctx *c, struct prof_cursor *cur)
{
	int64_t start = prof_cursor__int64(cur, TM_NVTX_START), gt = prof_cursor__int64(cur, TM_NVTX_TID);
	bool mark = prof_cursor__int64(cur, TM_NVTX_IS_MARK) != 0;

	ev_sep(c);
	if (mark)
		trace_out__puts(&c->o, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"user_annotation\",\"name\":");
	else
		trace_out__puts(&c->o, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":");
	trace_out__json_name(&c->o, prof_cursor__text(cur, TM_NVTX_NAME));
	put_pid_tid(c, prof_pid_of(gt), prof_tid_of(gt));
	put_ts(c, start);
	if (!mark)
		put_dur(c, start, prof_cursor__int64(cur, TM_NVTX_END));
	trace_out__puts(&c->o, "}");
}

/* A device memory level: under the GPU's process, or (job mode, pid >= 0)
 * under the rank's, one counter per GPU it used. */
static void counter_sample(struct chrome_ctx *c, int64_t pid, int32_t dev, int64_t ts_ns,
			   int64_t bytes)
{
	ev_sep(c);
	if (pid >= 0)
		trace_out__printf(&c->o, "{\"ph\":\"C\",\"name\":\"GPU %d memory in use\",\"pid\":%"
				  PRId64, dev, pid);
	else
		trace_out__printf(&c->o, "{\"ph\":\"C\",\"name\":\"device memory in use\",\"pid\":%d",
				  dev);
	put_ts(c, ts_ns);
	trace_out__puts(&c->o, ",\"args\":{\"bytes\":");
	trace_out__i64(&c->o, bytes);
	trace_out__puts(&c->o, "}}");
}

/* Job mode: the level of one rank's memory on one GPU, which the merge
 * (keeping one level per device id) cannot tell apart when ranks share
 * an id. NULL when out of memory. */
static struct rank_memory *rank_memory(struct chrome_ctx *c, int64_t pid, int32_t dev)
{
	for (int i = 0; i < c->nmem; i++)
		if (c->mem[i].pid == pid && c->mem[i].device == dev)
			return &c->mem[i];
	if (c->nmem == c->cap_mem) {
		int ncap = c->cap_mem ? c->cap_mem * 2 : 8;
		struct rank_memory *nv = realloc(c->mem, sizeof *nv * (size_t)ncap);

		if (!nv)
			return NULL;
		c->mem = nv;
		c->cap_mem = ncap;
	}
	c->mem[c->nmem] = (struct rank_memory){ pid, dev, 0, false };
	return &c->mem[c->nmem++];
}

/* trace_merge__memory's steps, per rank and GPU. */
static void emit_rank_memory(struct chrome_ctx *c, struct prof_cursor *cur)
{
	int64_t pid = prof_pid_of(prof_cursor__int64(cur, TM_MEM_PID));
	int32_t dev = (int32_t)prof_cursor__int64(cur, TM_MEM_DEVICE);
	int64_t ts = prof_cursor__int64(cur, TM_MEM_START), bytes = prof_cursor__int64(cur, TM_MEM_BYTES);
	bool in_window = prof_cursor__int64(cur, TM_MEM_IN_WINDOW) != 0;
	struct rank_memory *r = rank_memory(c, pid, dev);

	if (!r)
		return;
	if (!r->emitted && in_window && ts > c->m.w.from_abs_ns && c->m.w.from_abs_ns != INT64_MIN &&
	    !c->m.w.range_name) {
		counter_sample(c, pid, dev, c->m.w.from_abs_ns, r->bytes);
		r->emitted = true;
	}
	r->bytes = prof_cursor__int64(cur, TM_MEM_IS_FREE) == 0 ? prof_add_saturated(r->bytes, bytes)
								 : prof_span_saturated(bytes, r->bytes);
	if (in_window) {
		counter_sample(c, pid, dev, ts, r->bytes);
		r->emitted = true;
	}
}

static void emit_memory(struct chrome_ctx *c, struct prof_cursor *cur)
{
	struct tm_memory_step st;

	if (c->per_rank) {
		emit_rank_memory(c, cur);
		return;
	}

	trace_merge__memory(&c->m, cur, &st);
	if (st.at_from)
		counter_sample(c, -1, st.d->id, c->m.w.from_abs_ns, st.from_bytes);
	if (st.sample)
		counter_sample(c, -1, st.d->id, prof_cursor__int64(cur, TM_MEM_START),
			       st.d->mem_in_use_bytes);
}

static void emit(struct chrome_ctx *c, const struct tm_row *r)
{
	char name[96];

	c->launch = &r->launch;
	switch (r->kind) {
	case TM_NVTX: emit_nvtx(c, r->cur); break;
	case TM_GPU_NVTX: {
		int64_t pid, tid;

		gpu_track(c, r->span->process << 24, r->span->device, r->span->stream, &pid, &tid);
		ev_complete(c, "gpu_user_annotation", r->span_name, pid, tid, r->span->start_ns,
			    r->span->end_ns);
		trace_out__puts(&c->o, "}");
		break;
	}
	case TM_RUNTIME:
	case TM_DRIVER: emit_api(c, r->cur, r->kind); break;
	case TM_KERNEL: emit_kernel(c, r->cur); break;
	case TM_MEMCPY: {
		int64_t kind = prof_cursor__int64(r->cur, TM_COPY_KIND);

		tm_copy_name(name, sizeof name, kind, prof_cursor__int64(r->cur, TM_COPY_SRC_KIND),
			     prof_cursor__int64(r->cur, TM_COPY_DST_KIND));
		/* managed memory's migrations (nobody's copy call) apart from
		 * the copies, so that a viewer can show or hide them alone */
		emit_transfer(c, r->cur, kind >= PROF_COPY_UVM_HTOD && kind <= PROF_COPY_UVM_DTOD
						 ? "um_migration" : "gpu_memcpy", name);
		break;
	}
	case TM_MEMSET:
		tm_set_name(name, sizeof name, prof_cursor__int64(r->cur, TM_SET_MEM_KIND));
		emit_transfer(c, r->cur, "gpu_memset", name);
		break;
	case TM_GRAPH: emit_graph(c, r->cur); break;
	case TM_MEMORY: emit_memory(c, r->cur); break;
	case TM__COUNT: break;
	}
}

static int write_events(struct chrome_ctx *c)
{
	struct tm_row r;
	int rc;

	while ((rc = trace_merge__next(&c->m, &r)) > 0)
		emit(c, &r);
	return rc;
}

int chrome_trace__estimate(struct prof_store *s, const struct export_window *w,
			   uint64_t *bytes, struct prof_error *err)
{
	static const struct { const char *table; uint64_t bytes; } per_row[] = {
		{ PROF_T_KERNEL, EST_KERNEL_BYTES }, { PROF_T_MEMCPY, EST_COPY_BYTES },
		{ PROF_T_MEMSET, EST_COPY_BYTES }, { PROF_T_GRAPH_TRACE, EST_GRAPH_BYTES },
		{ PROF_T_RUNTIME, EST_API_BYTES },
		{ PROF_T_DRIVER, EST_API_BYTES }, { PROF_T_NVTX, EST_NVTX_BYTES },
	};
	/* a whole export counts every row: SQLite counts a table's b-tree
	 * cells without reading them (10M kernels and 22M calls: 0.6 to 1.6
	 * s, where the window's test on each row took 2.8 s) */
	bool whole = w->from_abs_ns == INT64_MIN && w->to_abs_ns == INT64_MAX;
	char sql[192];
	int rc = 0;

	*bytes = 0;
	for (size_t i = 0; i < sizeof per_row / sizeof per_row[0]; i++) {
		struct prof_cursor *cur = NULL;

		snprintf(sql, sizeof sql, "SELECT count(*) FROM %s%s", per_row[i].table,
			 whole ? "" : " WHERE coalesce(end, start) >= ?1 AND start < ?2");
		rc = prof_cursor__open(s, sql, &cur, err);
		if (rc < 0)
			return rc;
		if (!whole) {
			prof_cursor__bind_int64(cur, 1, w->from_abs_ns);
			prof_cursor__bind_int64(cur, 2, w->to_abs_ns);
		}
		rc = prof_cursor__next(cur, err);
		if (rc > 0)
			*bytes += (uint64_t)prof_cursor__int64(cur, 0) * per_row[i].bytes;
		prof_cursor__close(cur);
		if (rc < 0)
			return rc;
	}
	{
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
	struct chrome_ctx *c = calloc(1, sizeof *c);
	uint64_t limit = opts && opts->warn_bytes ? opts->warn_bytes : CHROME_TRACE_WARN_BYTES;
	uint64_t estimate;
	int rc;

	if (!c)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	c->first_event = true;
	c->err = err;
	trace_out__init(&c->o, out);

	rc = trace_merge__init(&c->m, s, opts ? &opts->filter : NULL, false, err);
	if (rc == 0 && sum_ranks__may_be_job(s))
		rc = sum_ranks__load(s, &c->ranks, err);
	c->per_rank = rc == 0 && sum_ranks__is_job(&c->ranks);
	if (rc == 0)
		rc = chrome_trace__estimate(s, &c->m.w, &estimate, err);
	if (rc < 0)
		goto out;
	if (estimate > limit)
		fprintf(opts && opts->warn ? opts->warn : stderr,
			"perfkit: warning: the trace will be about %" PRIu64 " MB, more than a browser "
			"loads comfortably; write --format=perfetto instead (several times smaller), "
			"or narrow it with --from/--to (e.g. --from=1s --to=1.5s) or --range=NAME\n",
			estimate / 1000000);
	/* the time base and the track lists may come from the GPU side's
	 * passes, done when the merge's sources are open */
	rc = trace_merge__open(&c->m);
	if (rc < 0)
		goto out;

	trace_out__puts(&c->o, "{\"schemaVersion\":1,\"traceName\":");
	trace_out__json(&c->o, prof_store__path(s));
	trace_out__puts(&c->o, ",\n\"baseTimeNanoseconds\":");
	trace_out__i64(&c->o, c->m.w.base_utc_ns);
	trace_out__puts(&c->o, ",\n\"displayTimeUnit\":\"ms\",\n");
	rc = write_device_properties(c);
	if (rc < 0)
		goto out;
	trace_out__puts(&c->o, "\"traceEvents\":[");
	rc = trace_merge__each_process(&c->m, process_meta, c);
	if (rc == 0)
		rc = trace_merge__each_thread(&c->m, thread_meta, c);
	if (rc == 0)
		rc = trace_merge__each_stream(&c->m, gpu_meta, c);
	if (rc == 0 && c->per_rank)
		rc = trace_merge__each_process_stream(&c->m, rank_stream_meta, c);
	if (rc == 0)
		rc = write_events(c);
	if (rc < 0)
		goto out;
	trace_out__puts(&c->o, "\n]}\n");
	trace_out__flush(&c->o);
	if (ferror(out))
		rc = prof_error__set(err, PROF_E_IO, "cannot write the trace");
	else
		export__say_left_out(s, c->m.rows_left_out, "the trace", opts ? opts->warn : NULL);
out:
	trace_out__exit(&c->o);
	trace_merge__exit(&c->m);
	sum_ranks__exit(&c->ranks);
	free(c->mem);
	free(c);
	return rc;
}
