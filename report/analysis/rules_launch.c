/* rules_launch.c - launch overhead: streams of short kernels with idle gaps
 * between them (CUDA graphs, fusion, more work per launch), and runs of
 * consecutive launches of the same small kernel: one batched GEMM for GEMMs
 * (cuBLAS/CUTLASS names), one fused launch for anything else. */
#include "diagnose.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "prof/tables.h"
#include "summary/query.h"

static bool is_gemm(const char *name)
{
	static const char *const words[] = { "gemm", "cutlass", "matmul", "cublas" };
	char low[256];
	size_t i;

	for (i = 0; name[i] && i + 1 < sizeof low; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[i] = 0;
	for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
		if (strstr(low, words[w]))
			return true;
	return false;
}

struct run_state {
	int64_t stream, name_id, grid, block;
	int64_t start_ns, end_ns, len, kernel_ns;
	char name[256];
};

struct launch_scan {
	/* launch-bound */
	int64_t kernels, short_kernels, short_ns, kernel_ns, gaps_ns, gaps;
	struct diag_tally short_by_name;
	/* repeated runs: key = kernel name; count = launches in runs, time = span, aux = runs */
	struct diag_tally gemm_runs, other_runs;
};

static int close_run(struct diag_context *ctx, struct launch_scan *s, const struct run_state *r)
{
	struct diag_tally_entry *e;

	if (r->len < (int64_t)diag__get(ctx, "repeat.min_run"))
		return 0;
	e = diag_tally__get(is_gemm(r->name) ? &s->gemm_runs : &s->other_runs, r->name);
	if (!e)
		return PROF_E_NOMEM;
	e->count += r->len;
	e->time_ns += r->end_ns - r->start_ns;
	e->bytes = -1;
	e->aux += 1;
	return 0;
}

static int scan(struct diag_context *ctx, struct launch_scan *s, struct prof_error *err)
{
	const char *sql =
		"SELECT k.deviceId * 1000000 + k.streamId, k.start, k.end, k.demangledName,"
		" k.gridX * k.gridY * k.gridZ, k.blockX * k.blockY * k.blockZ, " DIAG_KERNEL_NAME_SQL
		" FROM " PROF_T_KERNEL " k WHERE k.start >= ?1 AND k.start < ?2"
		" ORDER BY 1, k.start";
	int64_t max_short = (int64_t)(diag__get(ctx, "launch_bound.max_kernel_us") * 1000);
	int64_t max_gap = (int64_t)(diag__get(ctx, "launch_bound.max_gap_us") * 1000);
	int64_t max_small = (int64_t)(diag__get(ctx, "repeat.max_kernel_us") * 1000);
	struct run_state run = { .stream = -1, .name_id = -1 };
	int64_t prev_stream = -1, prev_end = 0;
	bool prev_short = false;
	struct prof_cursor *c;
	int rc;

	rc = diag__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t stream = prof_cursor__int64(c, 0), start = prof_cursor__int64(c, 1);
		int64_t end = prof_cursor__int64(c, 2), name_id = prof_cursor__int64(c, 3);
		int64_t grid = prof_cursor__int64(c, 4), block = prof_cursor__int64(c, 5);
		const char *name = prof_cursor__text(c, 6);
		int64_t dur = end - start;
		bool is_short = dur < max_short;

		s->kernels++;
		s->kernel_ns += dur;
		if (is_short) {
			struct diag_tally_entry *e = diag_tally__get(&s->short_by_name, name);
			if (!e)
				goto nomem;
			e->count++, e->time_ns += dur, e->bytes = -1;
			s->short_kernels++;
			s->short_ns += dur;
		}
		if (stream == prev_stream && (is_short || prev_short)) {
			int64_t gap = start - prev_end;
			if (gap > 0 && gap <= max_gap) {
				s->gaps_ns += gap;
				s->gaps++;
			}
		}
		/* runs of the same small kernel with the same launch shape */
		/* another kernel on the stream, or a gap longer than max_gap_us,
		 * ends a run */
		if (stream == run.stream && name_id == run.name_id && grid == run.grid &&
		    block == run.block && dur < max_small && start - run.end_ns <= max_gap) {
			run.len++;
			run.end_ns = end;
			run.kernel_ns += dur;
		} else {
			if (close_run(ctx, s, &run))
				goto nomem;
			run.stream = stream;
			run.name_id = dur < max_small ? name_id : -1;
			run.grid = grid;
			run.block = block;
			run.start_ns = start;
			run.end_ns = end;
			run.len = 1;
			run.kernel_ns = dur;
			snprintf(run.name, sizeof run.name, "%s", name ? name : "?");
		}
		if (stream != prev_stream || end > prev_end)
			prev_end = end;
		prev_stream = stream;
		prev_short = is_short;
	}
	prof_cursor__close(c);
	if (rc < 0)
		return rc;
	if (close_run(ctx, s, &run))
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	return 0;
nomem:
	prof_cursor__close(c);
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

static int launch_api(struct diag_context *ctx, int64_t *n, int64_t *ns, struct prof_error *err)
{
	const char *sql =
		"SELECT count(*), coalesce(sum(r.end - r.start), 0) FROM " DIAG_API_CALLS " r"
		" JOIN " SUM_API_NAMES " s ON s.id = r.nameId WHERE r.start >= ?1 AND r.start < ?2"
		" AND (s.value LIKE '%LaunchKernel%' OR s.value LIKE 'cuLaunch%')";
	struct prof_cursor *c;
	int rc;

	*n = *ns = 0;
	if (!ctx->has_api_calls)
		return 0;
	rc = diag__open_window(ctx, sql, DIAG_HOST_SIDE, &c, err);
	if (rc)
		return rc;
	if ((rc = prof_cursor__next(c, err)) == 1) {
		*n = prof_cursor__int64(c, 0);
		*ns = prof_cursor__int64(c, 1);
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

static void report_launch_bound(struct diag_context *ctx, struct launch_scan *s, int64_t api_n,
				int64_t api_ns)
{
	int64_t idle = diag__window_ns(ctx) - ctx->busy_ns;
	int64_t gaps = s->gaps_ns < idle ? s->gaps_ns : idle;
	double frac = (double)s->gaps_ns / (double)(s->gaps_ns + s->kernel_ns + 1);
	char b1[32], b2[32], b3[64] = "";
	struct diag_finding *f;

	if (s->short_kernels < (int64_t)diag__get(ctx, "launch_bound.min_kernels") ||
	    2 * s->short_kernels < s->kernels || frac < diag__get(ctx, "launch_bound.min_gap_fraction"))
		return;
	if (api_n)
		snprintf(b3, sizeof b3, " Each launch call costs the host %s.",
			 diag__ns(b2, sizeof b2, api_ns / api_n));
	diag_tally__sort_by_time(&s->short_by_name);
	f = diag__add(ctx, "launch_bound", "Launch-bound: short kernels with gaps between them",
		      diag__share(ctx, gaps), gaps, DIAG_HIGH,
		      diag__fmt("%.1f kernels per iteration, %lld of %lld shorter than %.0f us (%s on "
				"average); the streams sit idle %s between them, summed over streams (%lld gaps of at most %.0f us), "
				"%.0f%% of the streams' active time.%s",
				(double)s->kernels / diag__per_iter(ctx), (long long)s->short_kernels,
				(long long)s->kernels, diag__get(ctx, "launch_bound.max_kernel_us"),
				diag__ns(b1, sizeof b1, s->short_ns / (s->short_kernels ? s->short_kernels : 1)),
				diag__ns(b2, sizeof b2, s->gaps_ns), (long long)s->gaps,
				diag__get(ctx, "launch_bound.max_gap_us"), 100 * frac, b3),
		      diag__fmt("Give each launch more work: batch independent items into one launch, "
				"fuse consecutive kernels, and capture the fixed sequence of launches in a "
				"CUDA graph (cudaStreamBeginCapture / cudaGraphLaunch) to pay launch cost once."));
	diag_tally__offenders(&s->short_by_name, f);
}

static void report_runs(struct diag_context *ctx, struct diag_tally *t, bool gemm)
{
	int64_t launches = 0, span = 0, runs = 0;
	char b1[32];
	struct diag_finding *f;

	for (int i = 0; i < t->n; i++) {
		launches += t->e[i].count;
		span += t->e[i].time_ns;
		runs += (int64_t)t->e[i].aux;
	}
	if (!runs || (double)launches / diag__per_iter(ctx) < diag__get(ctx, "repeat.min_run"))
		return;
	diag_tally__sort_by_time(t);
	if (gemm)
		f = diag__add(ctx, "batched_gemm", "Many consecutive launches of the same small GEMM",
			      diag__share(ctx, span), span, DIAG_HIGH,
			      diag__fmt("%lld runs of back-to-back launches of the same small GEMM with the "
					"same shape, %.1f launches per run, %.1f per iteration; the runs span %s.",
					(long long)runs, (double)launches / (double)runs,
					(double)launches / diag__per_iter(ctx), diag__ns(b1, sizeof b1, span)),
			      diag__fmt("Replace each run with one batched GEMM (cublasGemmStridedBatchedEx or "
					"cublasGemmBatchedEx; torch.bmm) so one launch fills the GPU."));
	else
		f = diag__add(ctx, "repeated_kernel", "Many consecutive launches of the same small kernel",
			      diag__share(ctx, span), span, DIAG_HIGH,
			      diag__fmt("%lld runs of back-to-back launches of the same small kernel with the "
					"same shape, %.1f launches per run, %.1f per iteration; the runs span %s.",
					(long long)runs, (double)launches / (double)runs,
					(double)launches / diag__per_iter(ctx), diag__ns(b1, sizeof b1, span)),
			      diag__fmt("Fuse the run into one launch that handles every item (an extra grid "
					"dimension or an index table), e.g. one lookup kernel for all embedding tables."));
	diag_tally__offenders(t, f);
}

static int rule_launch(struct diag_context *ctx, struct prof_error *err)
{
	struct launch_scan s = { 0 };
	int64_t api_n, api_ns;
	int rc;

	if (!ctx->has_kernel)
		return 0;
	rc = scan(ctx, &s, err);
	if (!rc)
		rc = launch_api(ctx, &api_n, &api_ns, err);
	if (!rc) {
		report_launch_bound(ctx, &s, api_n, api_ns);
		report_runs(ctx, &s.gemm_runs, true);
		report_runs(ctx, &s.other_runs, false);
	}
	diag_tally__exit(&s.short_by_name);
	diag_tally__exit(&s.gemm_runs);
	diag_tally__exit(&s.other_runs);
	return rc;
}

const struct diag_rule diag_rules_launch[] = {
	{ "launch_bound+batched_gemm+repeated_kernel", "Launch overhead", rule_launch, true },
	{ NULL, NULL, NULL, false },
};
