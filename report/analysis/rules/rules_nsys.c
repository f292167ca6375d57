/* rules_nsys.c - the rules `nsys analyze` has, on perfkit captures and nsys
 * exports alike: asynchronous copies from pageable memory, synchronous
 * copies, synchronous memsets, synchronisation calls, GPU idle gaps and low
 * GPU utilisation over time chunks. They need only the trace. */
#include "analysis/diagnose/diagnose.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/diagnose/python.h"
#include "analysis/rules/api_groups.h"
#include "analysis/timeline/gpu_idle.h"
#include "prof/event.h"
#include "prof/tables.h"
#include "model/names.h"
#include "model/sums.h"
#include "prof/saturate.h"
#include "prof/error.h"

/* The copy kinds an offender names; array and unified-memory copies read
 * "other", as do memory kinds without a word. */
static const char *copy_kind_name(int k)
{
	switch (k) {
	case PROF_COPY_HTOD:
	case PROF_COPY_DTOH:
	case PROF_COPY_DTOD:
	case PROF_COPY_HTOH:
	case PROF_COPY_PTOP:
		return sum_copy_short(k);
	default:
		return "other";
	}
}

static const char *mem_kind_name(int k)
{
	const char *word = sum_mem_word(k);

	return word ? word : "other";
}

static bool is_async_name(const char *api)
{
	return api && strstr(api, "Async");
}

/* One copy rule's offenders, keyed by call, kind and memory, and totals. */
struct copy_tally {
	struct diag_tally by_key;
	int64_t count, time_ns, bytes;
};

static int copy_tally__add(struct copy_tally *t, const char *key, int64_t time_ns, int64_t bytes)
{
	struct diag_tally_entry *e = diag_tally__get(&t->by_key, key);

	if (!e)
		return PROF_E_NOMEM;
	e->count++, e->time_ns = prof_add_saturated(e->time_ns, time_ns);
	e->bytes = prof_add_saturated(e->bytes, bytes);
	t->count++, t->time_ns = prof_add_saturated(t->time_ns, time_ns);
	t->bytes = prof_add_saturated(t->bytes, bytes);
	return 0;
}

/* What one pass over the copies in the window, joined to their API call,
 * finds for the two copy rules. */
struct copy_scan {
	struct copy_tally pageable; /* asynchronous copies from pageable memory */
	struct copy_tally sync;     /* synchronous copies */
};

static int scan_copies(struct diag_context *ctx, struct copy_scan *s, struct prof_error *err)
{
	const char *sql =
		"SELECT m.start, m.end, m.bytes, m.copyKind, m.srcKind, m.dstKind,"
		" m.srcDeviceId, m.dstDeviceId, r.start, r.end, s.value"
		" FROM " PROF_T_MEMCPY " m"
		" JOIN " DIAG_API_CALLS " r ON r.correlationId = m.correlationId"
		" LEFT JOIN " SUM_API_NAMES " s ON s.id = r.nameId"
		" WHERE m.start >= ?1 AND m.start < ?2";
	struct prof_cursor *c;
	char key[256];
	int rc;

	rc = diag__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t gpu_ns = prof_cursor__int64(c, 1) - prof_cursor__int64(c, 0);
		int64_t bytes = prof_cursor__int64(c, 2);
		int kind = (int)prof_cursor__int64(c, 3);
		int src = (int)prof_cursor__int64(c, 4), dst = (int)prof_cursor__int64(c, 5);
		int64_t api_ns = prof_cursor__int64(c, 9) - prof_cursor__int64(c, 8);
		const char *api = prof_cursor__text(c, 10);
		bool async = is_async_name(api);

		if (async && src != PROF_MEM_PAGEABLE && dst != PROF_MEM_PAGEABLE)
			continue;
		if (!async && kind == PROF_COPY_HTOD &&
		    bytes <= (int64_t)diag__get(ctx, "sync_memcpy.max_htod_bytes_ignored"))
			continue;
		if (!async && kind == PROF_COPY_DTOD && prof_cursor__int64(c, 6) == prof_cursor__int64(c, 7))
			continue;
		snprintf(key, sizeof key, "%s %s %s->%s", api ? api : "?", copy_kind_name(kind),
			 mem_kind_name(src), mem_kind_name(dst));
		/* a pageable "async" copy is staged by the CPU: it costs the longer
		 * of the call and the transfer; a synchronous one, the call */
		if (async ? copy_tally__add(&s->pageable, key, api_ns > gpu_ns ? api_ns : gpu_ns, bytes)
			  : copy_tally__add(&s->sync, key, api_ns, bytes))
			goto nomem;
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
nomem:
	prof_cursor__close(c);
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

static void report_pageable_async(struct diag_context *ctx, struct copy_tally *t)
{
	char moved[32], spent[32];

	diag__add_ranked(ctx, &t->by_key, "pageable_async_copy",
			 "Asynchronous copies from pageable memory", t->time_ns, DIAG_HIGH,
			 diag__fmt("%lld asynchronous copies (%.1f per iteration) use pageable host memory: "
				   "%s moved, %s spent; the driver stages them through a pinned buffer, so "
				   "they neither overlap with the CPU nor run at full PCIe speed.",
				   (long long)t->count, (double)t->count / diag__per_iter(ctx),
				   diag__bytes(moved, sizeof moved, (double)t->bytes),
				   diag__ns(spent, sizeof spent, t->time_ns)),
			 diag__with_pytorch(ctx,
				 diag__fmt("Allocate the host side with cudaMallocHost/cudaHostAlloc so the "
					   "copies are truly asynchronous."),
				 "In PyTorch: {?input DataLoader(..., pin_memory=True), or }tensor.pin_memory() for "
				 "tensors made by hand, then .to(\"cuda\", non_blocking=True)."));
}

static void report_sync_memcpy(struct diag_context *ctx, struct copy_tally *t)
{
	double ignored_bytes = diag__get(ctx, "sync_memcpy.max_htod_bytes_ignored");
	char blocked[32], moved[32];

	diag__add_ranked(ctx, &t->by_key, "sync_memcpy", "Synchronous memory copies", t->time_ns,
			 DIAG_HIGH,
			 diag__fmt("%lld synchronous copies (%.1f per iteration, HtoD up to %.0f bytes and "
				   "same-device copies ignored) block the calling thread for %s in all, %s moved.",
				   (long long)t->count, (double)t->count / diag__per_iter(ctx), ignored_bytes,
				   diag__ns(blocked, sizeof blocked, t->time_ns),
				   diag__bytes(moved, sizeof moved, (double)t->bytes)),
			 diag__with_pytorch(ctx,
				 diag__fmt("Use cudaMemcpyAsync on a stream{!pinned  with pinned host memory} and "
					   "synchronise once where the result is needed, so copies overlap with "
					   "CPU and GPU work."),
				 diag_pytorch_sync_copy));
}

/* One pass over the copies feeds both copy rules. */
static int rule_copies(struct diag_context *ctx, struct prof_error *err)
{
	struct copy_scan s = { 0 };
	int rc;

	if (!ctx->has_memcpy)
		return 0;
	if (!ctx->has_api_calls) {
		diag__skip(ctx, "pageable_async_copy", "the capture has no CUDA API calls to tell async from sync copies");
		return diag__skip(ctx, "sync_memcpy", "the capture has no CUDA API calls to tell async from sync copies");
	}
	rc = scan_copies(ctx, &s, err);
	if (!rc && s.pageable.count)
		report_pageable_async(ctx, &s.pageable);
	if (!rc && s.sync.count)
		report_sync_memcpy(ctx, &s.sync);
	diag_tally__exit(&s.pageable.by_key);
	diag_tally__exit(&s.sync.by_key);
	return rc;
}

static int rule_memset_sync(struct diag_context *ctx, struct prof_error *err)
{
	struct diag_tally t = { 0 };
	int64_t count = 0, ns = 0;
	char b[32];
	int rc;

	if (!ctx->has_api_calls)
		return diag__skip(ctx, "sync_memset", "the capture has no CUDA API calls");
	rc = api_groups__tally(ctx, "(s.value LIKE 'cudaMemset%' OR s.value LIKE 'cuMemsetD%')"
		       " AND s.value NOT LIKE '%Async%'", &t, &count, &ns, err);
	if (!rc && count) {
		struct diag_finding *f;
		diag_tally__sort_by_time(&t);
		for (int i = 0; i < t.n; i++)
			t.e[i].bytes = -1;
		f = diag__add(ctx, "sync_memset", "Synchronous memsets",
			      diag__share(ctx, ns), ns, DIAG_HIGH,
			      diag__fmt("%lld synchronous memset calls (%.1f per iteration) hold the calling "
					"thread for %s.", (long long)count, (double)count / diag__per_iter(ctx),
					diag__ns(b, sizeof b, ns)),
			      diag__with_pytorch(ctx,
				      diag__fmt("Use cudaMemsetAsync on the stream that uses the buffer, or fold "
						"the initialisation into the kernel that first writes it."),
				      "In PyTorch, torch.zeros and .zero_() on the GPU are asynchronous: a "
				      "synchronous memset comes from an extension or library call, which is "
				      "where to make the change."));
		diag_tally__offenders(&t, f);
	}
	diag_tally__exit(&t);
	return rc;
}

/* The device whose idle time synchronisation claims most (GPUs idle at the
 * same time, so their times do not add up), or NULL when it claims none. */
static const struct gpu_idle_device *most_synced(const struct gpu_idle_result *r)
{
	const struct gpu_idle_device *d = NULL;

	for (int i = 0; i < r->ndev; i++)
		if (r->dev[i].sync_claim_ns > (d ? d->sync_claim_ns : 0))
			d = &r->dev[i];
	return d;
}

/* A synchronisation call costs the idle time the attribution gives it
 * (idle__sync_claim): the host blocked in it while the GPU has nothing
 * queued, and the gap from its return to the host's next CUDA call where
 * the host is API-bound. One synchronisation per step followed by long host
 * work of its own is the host's cost (cpu_bound), not the call's. */
#define SYNC_CALLS                                                                              \
	"s.value LIKE 'cudaDeviceSynchronize%' OR s.value LIKE 'cudaStreamSynchronize%'"         \
	" OR s.value LIKE 'cudaEventSynchronize%' OR s.value LIKE 'cuCtxSynchronize%'"            \
	" OR s.value LIKE 'cuStreamSynchronize%' OR s.value LIKE 'cuEventSynchronize%'"
static int rule_sync_api(struct diag_context *ctx, struct prof_error *err)
{
	struct diag_py_line line;
	char *line_text = NULL;
	const struct gpu_idle_result *r;
	const struct gpu_idle_device *d;
	struct diag_tally t = { 0 };
	int64_t count = 0, ns = 0;
	char b1[32], b2[32], b3[32], b4[32], b5[32], after_text[160] = "", own_text[200] = "";
	int rc;

	if (!ctx->has_api_calls)
		return diag__skip(ctx, "sync_api", "the capture has no CUDA API calls");
	rc = api_groups__tally(ctx, SYNC_CALLS, &t, &count, &ns, err);
	if (rc || !count || (rc = api_groups__idle_of(ctx, &r, err)) || !(d = most_synced(r)))
		goto out;
	/* where the capture has Python's stacks, the line that synchronises */
	rc = diag_python__calling_line(ctx, SYNC_CALLS, &line_text, &line, err);
	if (rc)
		goto out;
	/* rank calls by the idle time they cause */
	for (int i = 0; i < t.n; i++) {
		t.e[i].time_ns = 0;
		t.e[i].bytes = -1;
	}
	for (int i = 0; i < d->nsync_calls; i++) {
		const struct api_name *name = api_names__find(&r->names, d->sync_calls[i].name_id);
		struct diag_tally_entry *te = diag_tally__get(&t, name ? name->name : "?");

		if (!te) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			goto out;
		}
		te->time_ns += d->sync_calls[i].time_ns;
		te->bytes = -1;
	}
	diag_tally__sort_by_time(&t);
	if (d->sync_gap_ns > 0)
		snprintf(after_text, sizeof after_text, ", and %s from their return to the host's next CUDA "
			 "call, the host going straight on to CUDA calls",
			 diag__ns(b4, sizeof b4, d->sync_gap_ns));
	if (d->sync_host_work_ns > 0)
		snprintf(own_text, sizeof own_text, " The host's own work right after them (%s) kept the GPU "
			 "idle as well; that is host work (cpu_bound), not theirs.",
			 diag__ns(b5, sizeof b5, d->sync_host_work_ns));
	diag_tally__offenders(
		&t, diag__add(ctx, "sync_api", "Synchronisation API calls", diag__share(ctx, d->sync_claim_ns),
			      d->sync_claim_ns, DIAG_HIGH,
			      diag__fmt("%lld synchronisation calls (%.1f per iteration) block the host for %s. "
					"The GPU sits idle %s because of them: %s while the host was blocked in "
					"them with nothing queued%s.%s%s",
					(long long)count, (double)count / diag__per_iter(ctx),
					diag__ns(b1, sizeof b1, ns), diag__ns(b2, sizeof b2, d->sync_claim_ns),
					diag__ns(b3, sizeof b3, d->sync_claim_ns - d->sync_gap_ns), after_text,
					own_text, line_text ? line_text : ""),
			      diag__with_pytorch(ctx,
				      diag__fmt("%s%s%sSynchronise only where the host needs a result; order work "
						"with streams and events (cudaStreamWaitEvent) instead of blocking "
						"the host, and enqueue the next step's work before waiting for "
						"this one's.", line_text ? "Start at " : "", line_text ? line.text : "",
						line_text ? ". " : ""),
				      diag_pytorch_sync)));
out:
	free(line_text);
	diag_tally__exit(&t);
	return rc;
}

static int rule_gpu_gaps(struct diag_context *ctx, struct prof_error *err)
{
	int64_t min_gap = (int64_t)(diag__get(ctx, "gpu_gaps.min_gap_ms") * 1e6);
	struct diag_tally t = { 0 };
	int64_t total = 0, n = 0;
	char b1[32], b2[64];

	if (ctx->nbusy < 2)
		return 0;
	for (int i = 1; i < ctx->nbusy; i++) {
		int64_t gap = prof_span_saturated(ctx->busy[i - 1].end_ns, ctx->busy[i].start_ns);
		struct diag_tally_entry *e;

		if (gap < min_gap)
			continue;
		total = prof_add_saturated(total, gap);
		n++;
		snprintf(b2, sizeof b2, "gap at +%.3f s",
			 (double)prof_span_saturated(ctx->w->zero_ns, ctx->busy[i - 1].end_ns) / 1e9);
		e = diag_tally__get(&t, b2);
		if (!e)
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		e->count = 1;
		e->time_ns = gap;
		e->bytes = -1;
	}
	if (n) {
		struct diag_finding *f;
		diag_tally__sort_by_time(&t);
		f = diag__add(ctx, "gpu_gaps", "GPU idle gaps", diag__share(ctx, total), total, DIAG_HIGH,
			      diag__fmt("The GPU is idle in %lld gaps of at least %.0f ms, %s in all.",
					(long long)n, diag__get(ctx, "gpu_gaps.min_gap_ms"),
					diag__ns(b1, sizeof b1, total)),
			      diag__with_pytorch(ctx,
				      diag__fmt("Look at what the host does in these gaps (perfkit report "
						"--report=cuda_api_sum, NVTX ranges) and overlap it with GPU work, "
						"or move it to the GPU."),
				      "In PyTorch:{?input  data loading is the usual cause: DataLoader(..., "
				      "num_workers=N{!pinned , pin_memory=True}, persistent_workers=True) prepares "
				      "batches while the GPU works;} torch.profiler shows the Python side of the gap."));
		diag_tally__offenders(&t, f);
	}
	diag_tally__exit(&t);
	return 0;
}

static int rule_gpu_util(struct diag_context *ctx, struct prof_error *err)
{
	int chunks = (int)diag__get(ctx, "gpu_util.chunks");
	double min_busy = diag__get(ctx, "gpu_util.min_busy");
	int64_t len = diag__window_ns(ctx), idle = 0;
	struct diag_tally t = { 0 };
	int flagged = 0;
	char b1[32], key[64];

	if (chunks < 1 || ctx->nbusy == 0)
		return 0;
	for (int i = 0; i < chunks; i++) {
		int64_t a = ctx->w->start_ns + sum_fraction_of(len, i, chunks);
		int64_t b = ctx->w->start_ns + sum_fraction_of(len, i + 1, chunks);
		int64_t busy = diag__busy_in(ctx, a, b);
		struct diag_tally_entry *e;

		if (b <= a || (double)busy >= min_busy * (double)(b - a))
			continue;
		flagged++;
		idle += (b - a) - busy;
		snprintf(key, sizeof key, "chunk %d at +%.3f s: %.0f%% busy", i + 1,
			 (double)prof_span_saturated(ctx->w->zero_ns, a) / 1e9,
			 100.0 * (double)busy / (double)(b - a));
		e = diag_tally__get(&t, key);
		if (!e)
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		e->count = 1;
		e->time_ns = (b - a) - busy;
		e->bytes = -1;
	}
	if (flagged) {
		struct diag_finding *f;
		diag_tally__sort_by_time(&t);
		f = diag__add(ctx, "gpu_util", "Low GPU utilisation", diag__share(ctx, idle), idle, DIAG_HIGH,
			      diag__fmt("%d of %d time chunks are less than %.0f%% busy; the GPU is idle %s in "
					"them. Over the whole window the GPU is busy %.1f%% of the time.",
					flagged, chunks, 100 * min_busy, diag__ns(b1, sizeof b1, idle),
					100.0 * (double)ctx->busy_ns / (double)len),
			      diag__with_pytorch(ctx,
				      diag__fmt("See the other findings for the cause (host work, launches, "
						"synchronisation, copies); give the GPU more work per launch and keep "
						"work queued ahead of it."),
				      "In PyTorch: a larger batch{?input , DataLoader workers (num_workers"
				      "{!pinned , pin_memory=True})}, no host reads (.item()) in the step"
				      "{?bound_launch {!graphs , and torch.compile(mode=\"reduce-overhead\")}} "
				      "keep the GPU fed."));
		diag_tally__offenders(&t, f);
	}
	diag_tally__exit(&t);
	return 0;
}

const struct diag_rule diag_rules_nsys[] = {
	{ "pageable_async_copy+sync_memcpy", "Copies", rule_copies, true },
	{ "sync_memset", "Synchronous memsets", rule_memset_sync, true },
	{ "sync_api", "Synchronisation API calls", rule_sync_api, true },
	{ "gpu_gaps", "GPU idle gaps", rule_gpu_gaps, true },
	{ "gpu_util", "Low GPU utilisation", rule_gpu_util, true },
	{ NULL, NULL, NULL, false },
};
