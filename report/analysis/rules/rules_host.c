/* rules_host.c - the CPU side dominating while the GPU waits: the GPU is
 * idle most of the window and, while it is, the host threads are outside
 * any CUDA call (doing their own work), not launching or waiting. */
#include "analysis/diagnose/diagnose.h"

#include <stdlib.h>

#include "analysis/core/record_cost.h"
#include "analysis/diagnose/python.h"
#include "analysis/timeline/gpu_idle.h"
#include "prof/saturate.h"
#include "prof/error.h"

/* Host time inside CUDA API calls, as a sorted union of intervals. */
static int load_api_union(struct diag_context *ctx, struct diag_interval **out, int *n,
			  struct prof_error *err)
{
	const char *sql = "SELECT start, end FROM " DIAG_API_CALLS
			  " WHERE end > ?1 AND start < ?2 ORDER BY rowid"; /* by start */
	struct diag_interval *v = NULL;
	struct prof_cursor *c;
	int cap = 0, cnt = 0, rc;

	rc = diag__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t s = prof_cursor__int64(c, 0), e = prof_cursor__int64(c, 1);
		if (cnt && s <= v[cnt - 1].end_ns) {
			if (e > v[cnt - 1].end_ns)
				v[cnt - 1].end_ns = e;
			continue;
		}
		if (cnt == cap) {
			int ncap = cap ? cap * 2 : 1024;
			struct diag_interval *nv = realloc(v, sizeof *nv * (size_t)ncap);
			if (!nv) {
				prof_cursor__close(c);
				free(v);
				return prof_error__set(err, PROF_E_NOMEM, "out of memory");
			}
			v = nv;
			cap = ncap;
		}
		v[cnt].start_ns = s;
		v[cnt].end_ns = e;
		cnt++;
	}
	prof_cursor__close(c);
	if (rc < 0) {
		free(v);
		return rc;
	}
	*out = v;
	*n = cnt;
	return 0;
}

/* Length of [a, b) covered by the sorted disjoint intervals v. */
static int64_t covered(const struct diag_interval *v, int n, int *from, int64_t a, int64_t b)
{
	int64_t sum = 0;
	int i = *from;

	while (i < n && v[i].end_ns <= a)
		i++;
	*from = i;
	for (; i < n && v[i].start_ns < b; i++) {
		int64_t s = v[i].start_ns > a ? v[i].start_ns : a;
		int64_t e = v[i].end_ns < b ? v[i].end_ns : b;
		if (e > s)
			sum = prof_add_saturated(sum, prof_span_saturated(s, e));
	}
	return sum;
}

static int rule_cpu_bound(struct diag_context *ctx, struct prof_error *err)
{
	int64_t len = diag__window_ns(ctx), idle = len - ctx->busy_ns, host_ns = 0, in_api = 0;
	double busy_frac = (double)ctx->busy_ns / (double)len;
	struct diag_interval *api = NULL;
	const struct window_calls *seen;
	int napi = 0, from = 0, rc;
	int64_t prev = ctx->w->start_ns;
	char b1[32], b2[32], b3[32], calls[320];
	struct record_cost cost;
	int64_t launches = 0, other_calls = 0;
	struct diag_py_line top;
	char *lines = NULL, *pytorch = NULL;

	if (!ctx->has_api_calls || busy_frac >= diag__get(ctx, "cpu_bound.max_gpu_busy") || idle <= 0)
		return 0;
	/* the idle attribution's pass measured it where it read the calls */
	seen = gpu_idle__calls_seen(ctx->idle, &ctx->scope);
	if (seen) {
		in_api = seen->in_calls_idle_ns;
	} else {
		rc = load_api_union(ctx, &api, &napi, err);
		if (rc)
			return rc;
		/* walk the GPU's idle stretches: before, between and after busy intervals */
		for (int i = 0; i <= ctx->nbusy; i++) {
			int64_t a = prev, b = i < ctx->nbusy ? ctx->busy[i].start_ns : ctx->w->end_ns;
			if (b > a)
				in_api += covered(api, napi, &from, a, b);
			if (i < ctx->nbusy)
				prev = ctx->busy[i].end_ns;
		}
		free(api);
	}
	host_ns = idle - in_api;
	if ((double)host_ns < diag__get(ctx, "cpu_bound.min_host_fraction") * (double)idle)
		return 0;
	/* the idle time in CUDA calls as measured and without perfkit's cost */
	rc = record_cost__load(ctx->store, &cost, err);
	if (!rc && cost.measured)
		rc = record_cost__idle_calls(&ctx->scope, &launches, &other_calls, err);
	if (rc)
		return rc;
	record_cost__idle_sentence(&cost, in_api, launches, other_calls, calls, sizeof calls);
	/* where the capture sampled Python, the lines that run there */
	rc = diag_python__host_lines(ctx, &lines, &top, err);
	if (rc)
		return rc;
	pytorch = top.text[0] ? diag__fmt(diag_pytorch_host_work_at_line, top.text, 100 * top.share) : NULL;
	diag__add(ctx, "cpu_bound", "The CPU side dominates while the GPU waits", diag__share(ctx, host_ns),
		  host_ns, DIAG_HIGH,
		  diag__fmt("The GPU is busy %.1f%% of the window; of its %s idle time the host spends %s "
			    "(%.0f%%) outside any CUDA call, i.e. in its own work: %s per iteration.%s%s",
			    100 * busy_frac, diag__ns(b1, sizeof b1, idle), diag__ns(b2, sizeof b2, host_ns),
			    100.0 * (double)host_ns / (double)idle,
			    diag__ns(b3, sizeof b3, (int64_t)((double)host_ns / diag__per_iter(ctx))), calls,
			    lines ? lines : ""),
		  diag__with_pytorch(ctx,
			  /* the gain replays a graph where the host's work is
			   * dispatch (rules/gains.c): the change leads with it */
			  diag__fmt("{?dispatch {!graphs The host's work here is what launching the step's "
				    "kernels costs (dispatch, at most %d us a launch): replay the step as a CUDA "
				    "graph, or fuse kernels into fewer launches. Where the host does other "
				    "work, find it}{?graphs Find the host work}}{!dispatch Find the host work} in "
				    "the gaps (NVTX ranges, a CPU profiler) and overlap it with the GPU: prepare the next batch on a worker thread while the GPU "
				    "runs this one (an asynchronous pipeline), batch small pieces of work, or "
				    "move the preprocessing to the GPU.",
				    DISPATCH_NS_PER_LAUNCH / 1000),
			  pytorch ? pytorch : diag_pytorch_host_work));
	free(lines);
	free(pytorch);
	return 0;
}

const struct diag_rule diag_rules_host[] = {
	{ "cpu_bound", "The CPU side dominates while the GPU waits", rule_cpu_bound, true },
	{ NULL, NULL, NULL, false },
};
