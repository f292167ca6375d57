/* rules_alloc.c - allocation churn: device or pinned allocations and frees
 * inside the steady-state loop. cudaMalloc is slow and cudaFree synchronises
 * the device, so both belong before the loop (a pool, or preallocation).
 * Stream-ordered cudaMallocAsync/cudaFreeAsync use a pool and are left out.
 * The window already leaves out the warm-up iteration, which may allocate for
 * good: what remains in it repeats. */
#include "analysis/diagnose/diagnose.h"
#include "analysis/diagnose/python.h"
#include "analysis/rules/api_groups.h"

#include <stdlib.h>

#include "prof/tables.h"
#include "model/names.h"
#include "model/sums.h"
#include "prof/saturate.h"
#include "prof/error.h"

/* The allocation and free calls of the loop (the stream-ordered ones are
 * the cure, not the churn). */
#define ALLOC_CALLS                                                                               \
	"s.value NOT LIKE '%Async%' AND ("                                                        \
	"  s.value LIKE 'cudaMalloc%' OR s.value LIKE 'cudaFree%' OR s.value LIKE 'cudaHostAlloc%'"  \
	"  OR s.value LIKE 'cuMemAlloc%' OR s.value LIKE 'cuMemFree%' OR s.value LIKE 'cuMemHostAlloc%')"

static int rule_alloc_churn(struct diag_context *ctx, struct prof_error *err)
{
	const char *bytes_sql =
		"SELECT count(*), " SUM_TOTAL_SATURATED("bytes") " FROM " PROF_T_MEMORY
		" WHERE memoryOperationType = 0 AND start >= ?1 AND start < ?2";
	struct diag_tally t = { 0 };
	struct diag_py_line line;
	char *line_text = NULL;
	int64_t n = 0, ns = 0, allocs = 0, alloc_bytes = 0;
	int iters = ctx->w->iterations >= 1 ? ctx->w->iterations : 1;
	struct prof_cursor *c;
	char b1[32], b2[32], more[128] = "";
	int rc;

	if (!ctx->has_api_calls)
		return diag__skip(ctx, "alloc_churn", "the capture has no CUDA API calls");
	rc = api_groups__tally(ctx, ALLOC_CALLS, &t, &n, &ns, err);
	if (rc)
		goto out;
	for (int i = 0; i < t.n; i++)
		t.e[i].bytes = -1;
	if (!n || (double)n / iters < diag__get(ctx, "alloc_churn.min_per_iteration"))
		goto out;
	if (ctx->has_memory_events && !diag__open_window(ctx, bytes_sql, DIAG_HOST_SIDE, &c, err)) {
		if (prof_cursor__next(c, err) == 1) {
			allocs = prof_cursor__int64(c, 0);
			alloc_bytes = prof_cursor__int64(c, 1);
		}
		prof_cursor__close(c);
	}
	if (allocs > 0)
		snprintf(more, sizeof more, " The driver recorded %lld allocations of %s in all.",
			 (long long)allocs, diag__bytes(b2, sizeof b2, (double)alloc_bytes));
	diag_tally__sort_by_time(&t);
	/* where the capture has Python's stacks, the line that allocates */
	rc = diag_python__calling_line(ctx, ALLOC_CALLS, &line_text, &line, err);
	if (rc)
		goto out;
	{
		struct diag_finding *f = diag__add(
			ctx, "alloc_churn", "Allocation churn inside the loop", diag__share(ctx, ns), ns, DIAG_HIGH,
			diag__fmt("%lld allocation/free calls in the loop (%.1f per iteration) "
				  "take %s; cudaFree also waits for the whole device.%s%s",
				  (long long)n, (double)n / iters, diag__ns(b1, sizeof b1, ns), more,
				  line_text ? line_text : ""),
			diag__with_pytorch(ctx,
				diag__fmt("%s%s%sAllocate buffers once before the loop and reuse them (a "
					  "buffer pool keyed by size), or use stream-ordered "
					  "cudaMallocAsync/cudaFreeAsync with a memory pool.",
					  line_text ? "Start at " : "", line_text ? line.text : "",
					  line_text ? ". " : ""),
				diag_pytorch_alloc));
		diag_tally__offenders(&t, f);
	}
out:
	free(line_text);
	diag_tally__exit(&t);
	return rc;
}

const struct diag_rule diag_rules_alloc[] = {
	{ "alloc_churn", "Allocation churn inside the loop", rule_alloc_churn, true },
	{ NULL, NULL, NULL, false },
};
