/* rules_launch.c - launch overhead: streams of short kernels with idle gaps
 * between them (CUDA graphs, fusion, more work per launch), and runs of
 * launches of the same small kernel: for GEMMs (gemm_names.h), one batched
 * GEMM where the run looks independent or cannot be told apart, graphs and
 * epilogue fusion where it looks like a chain of layers (gemm_runs.h); one
 * fused launch for anything else. A finding about runs counts the time they
 * cover in the window once, however many of them overlap (two GEMMs whose
 * runs interleave on one stream, runs on several streams); its offenders
 * show each kernel's own GPU time. */
#include "analysis/diagnose/diagnose.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/core/record_cost.h"
#include "analysis/diagnose/ahead.h"
#include "analysis/diagnose/python.h"
#include "analysis/rules/api_groups.h"
#include "analysis/kernel_metrics/gemm_names.h"
#include "analysis/kernel_metrics/gemm_runs.h"
#include "analysis/rules/rules.h"
#include "prof/tables.h"
#include "model/names.h"
#include "model/string_cache.h"
#include "model/sql.h"
#include "model/sums.h"
#include "prof/saturate.h"
#include "prof/error.h"

struct run_state {
	int64_t stream, name_id, grid, block;
	int64_t start_ns, end_ns, len, kernel_ns;
	char name[256];
};

/* The GEMM runs being built on the current stream: launches of one GEMM
 * with at most repeat.max_between other kernels between two of them. A few
 * GEMMs may interleave (a layer's two products), each with its own run. */
#define GEMM_TRACKERS 4
struct gemm_tracker {
	bool active;
	struct gemm_run run;
	int64_t others_since; /* kernels since the run's last launch */
};

struct launch_scan {
	/* launch-bound */
	int64_t kernels, short_kernels, short_ns, kernel_ns, gaps_ns, gaps;
	struct diag_tally short_by_name;
	/* runs of another small kernel: key = kernel name; count = launches in
	 * runs, time = their GPU time, aux = runs; and the runs' spans */
	struct diag_tally other_runs;
	struct diag_intervals other_spans;
	/* runs of small GEMMs, every one (even of one launch): runs of one GEMM
	 * on several streams are grouped before they are judged */
	struct gemm_run *gemm_runs;
	int ngemm_runs, cap_gemm_runs;
	struct diag_tally gemm_names; /* the GEMMs' names (key), each with its name id (bytes) */
};

static int close_run(struct diag_context *ctx, struct launch_scan *s, const struct run_state *r)
{
	struct diag_tally_entry *e;

	if (r->len < (int64_t)diag__get(ctx, "repeat.min_run"))
		return 0;
	e = diag_tally__get(&s->other_runs, r->name);
	if (!e)
		return PROF_E_NOMEM;
	e->count += r->len;
	e->time_ns = prof_add_saturated(e->time_ns, r->kernel_ns);
	e->bytes = -1;
	e->aux += 1;
	return diag_intervals__push(&s->other_spans, r->start_ns, r->end_ns);
}

static int close_gemm_run(struct launch_scan *s, struct gemm_tracker *t)
{
	if (!t->active)
		return 0;
	t->active = false;
	if (s->ngemm_runs == s->cap_gemm_runs) {
		int cap = s->cap_gemm_runs ? s->cap_gemm_runs * 2 : 256;
		struct gemm_run *n = realloc(s->gemm_runs, sizeof *n * (size_t)cap);
		if (!n)
			return PROF_E_NOMEM;
		s->gemm_runs = n;
		s->cap_gemm_runs = cap;
	}
	s->gemm_runs[s->ngemm_runs++] = t->run;
	return 0;
}

static int close_gemm_runs(struct launch_scan *s, struct gemm_tracker *t)
{
	for (int i = 0; i < GEMM_TRACKERS; i++)
		if (close_gemm_run(s, &t[i]))
			return PROF_E_NOMEM;
	return 0;
}

/* An idle tracker, else the one whose run was extended longest ago (its
 * run ends). */
static struct gemm_tracker *free_tracker(struct gemm_tracker *t)
{
	struct gemm_tracker *oldest = &t[0];

	for (int i = 0; i < GEMM_TRACKERS; i++) {
		if (!t[i].active)
			return &t[i];
		if (t[i].run.end_ns < oldest->run.end_ns)
			oldest = &t[i];
	}
	return oldest;
}

/* One kernel of the stream, in start order: a launch of a run's GEMM
 * extends that run; for every other run it is a kernel between, and a run
 * with more than repeat.max_between of them in a row ends. A small GEMM no
 * run was waiting for starts one (the oldest run ends if all are taken). */
static int track_gemm(struct diag_context *ctx, struct launch_scan *s, struct gemm_tracker *t,
		      const struct gemm_run *launch, bool small_gemm, const char *name)
{
	int64_t max_between = (int64_t)diag__get(ctx, "repeat.max_between");
	struct gemm_tracker *slot;
	bool extended = false;
	struct diag_tally_entry *e;

	for (int i = 0; i < GEMM_TRACKERS; i++) {
		struct gemm_run *r = &t[i].run;

		if (!t[i].active)
			continue;
		if (small_gemm && launch->name_id == r->name_id && launch->grid == r->grid &&
		    launch->block == r->block) {
			r->launches++;
			r->end_ns = launch->end_ns;
			r->kernel_ns += launch->end_ns - launch->start_ns;
			if (t[i].others_since)
				r->interleaved++;
			else
				r->adjacent++;
			r->others += t[i].others_since;
			t[i].others_since = 0;
			extended = true;
		} else if (++t[i].others_since > max_between && close_gemm_run(s, &t[i])) {
			return PROF_E_NOMEM;
		}
	}
	if (extended || !small_gemm)
		return 0;
	slot = free_tracker(t);
	if (close_gemm_run(s, slot))
		return PROF_E_NOMEM;
	e = diag_tally__get(&s->gemm_names, name);
	if (!e)
		return PROF_E_NOMEM;
	e->bytes = launch->name_id;
	slot->active = true;
	slot->run = *launch;
	slot->run.launches = 1;
	slot->run.kernel_ns = launch->end_ns - launch->start_ns;
	slot->run.streams = 1;
	slot->others_since = 0;
	return 0;
}

static int scan(struct diag_context *ctx, struct launch_scan *s, struct prof_error *err)
{
	const char *sql =
		"SELECT k.deviceId * 1000000 + k.streamId, k.start, k.end, " PROF_SQL_KERNEL_NAME_ID("k.") ","
		" k.gridX * k.gridY * k.gridZ, k.blockX * k.blockY * k.blockZ, k.deviceId"
		" FROM " PROF_T_KERNEL " k WHERE k.start >= ?1 AND k.start < ?2"
		" AND NOT " SUM_BAD_SPAN("k.") " ORDER BY 1, k.start";
	int64_t max_short = (int64_t)(diag__get(ctx, "launch_bound.max_kernel_us") * 1000);
	int64_t max_gap = (int64_t)(diag__get(ctx, "launch_bound.max_gap_us") * 1000);
	int64_t max_small = (int64_t)(diag__get(ctx, "repeat.max_kernel_us") * 1000);
	struct run_state run = { .stream = -1, .name_id = -1 };
	struct gemm_tracker gemms[GEMM_TRACKERS] = { 0 };
	int64_t prev_stream = -1, prev_end = 0;
	bool prev_short = false;
	struct string_cache *names = NULL;
	struct prof_cursor *c = NULL;
	int rc;

	/* each name read, and told GEMM or not, once: a subquery a launch
	 * and its text in the sort cost most of this pass (0.9 s at 1M) */
	rc = string_cache__new(ctx->store, &names, err);
	if (rc == 0)
		rc = diag__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);
	if (rc) {
		string_cache__free(names);
		return rc;
	}
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t stream = prof_cursor__int64(c, 0), start = prof_cursor__int64(c, 1);
		int64_t end = prof_cursor__int64(c, 2), name_id = prof_cursor__int64(c, 3);
		int64_t grid = prof_cursor__int64(c, 4), block = prof_cursor__int64(c, 5);
		const char *name;
		int *role_of_name;
		int64_t dur = prof_span_saturated(start, end);
		bool is_short = dur < max_short, small = dur < max_small;
		enum gemm_role role;
		bool gemm;
		struct gemm_run launch = {
			.name_id = name_id, .grid = grid, .block = block, .device = prof_cursor__int64(c, 6),
			.stream = stream, .start_ns = start, .end_ns = end,
		};

		rc = string_cache__of_column(names, c, 3, &name, &role_of_name, err);
		if (rc < 0)
			break;
		if (!name)
			name = "?";
		if (*role_of_name < 0)
			*role_of_name = (int)gemm_name__role(name);
		role = (enum gemm_role)*role_of_name;
		gemm = role != GEMM_ROLE_OTHER;
		s->kernels++;
		s->kernel_ns = prof_add_saturated(s->kernel_ns, dur);
		if (is_short) {
			struct diag_tally_entry *e = diag_tally__get(&s->short_by_name, name);
			if (!e)
				goto nomem;
			e->count++, e->time_ns = prof_add_saturated(e->time_ns, dur), e->bytes = -1;
			s->short_kernels++;
			s->short_ns = prof_add_saturated(s->short_ns, dur);
		}
		if (stream == prev_stream && (is_short || prev_short)) {
			int64_t gap = prof_span_saturated(prev_end, start);
			if (gap > 0 && gap <= max_gap) {
				s->gaps_ns = prof_add_saturated(s->gaps_ns, gap);
				s->gaps++;
			}
		}
		/* another stream, or an idle gap longer than max_gap_us, ends
		 * every run */
		if ((stream != prev_stream || prof_span_saturated(prev_end, start) > max_gap) &&
		    close_gemm_runs(s, gemms))
			goto nomem;
		if (role != GEMM_ROLE_HELPER && track_gemm(ctx, s, gemms, &launch, gemm && small, name))
			goto nomem;
		/* runs of the same small kernel (not a GEMM) with the same launch
		 * shape: another kernel on the stream ends one */
		if (!gemm && stream == run.stream && name_id == run.name_id && grid == run.grid &&
		    block == run.block && small && prof_span_saturated(run.end_ns, start) <= max_gap) {
			run.len++;
			run.end_ns = end;
			run.kernel_ns = prof_add_saturated(run.kernel_ns, dur);
		} else {
			if (close_run(ctx, s, &run))
				goto nomem;
			run.stream = stream;
			run.name_id = small && !gemm ? name_id : -1;
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
	if (rc < 0) {
		string_cache__free(names);
		return rc;
	}
	rc = close_run(ctx, s, &run) || close_gemm_runs(s, gemms);
	string_cache__free(names);
	return rc ? prof_error__set(err, PROF_E_NOMEM, "out of memory") : 0;
nomem:
	prof_cursor__close(c);
	string_cache__free(names);
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

static int launch_api(struct diag_context *ctx, int64_t *n, int64_t *ns, struct prof_error *err)
{
	return api_groups__tally(ctx, "s.value LIKE '%LaunchKernel%' OR s.value LIKE 'cuLaunch%'", NULL, n, ns,
				 err);
}

static void report_launch_bound(struct diag_context *ctx, struct launch_scan *s, int64_t api_n,
				int64_t api_ns)
{
	int64_t idle = diag__window_ns(ctx) - ctx->busy_ns;
	int64_t gaps = s->gaps_ns < idle ? s->gaps_ns : idle;
	double frac = (double)s->gaps_ns / ((double)s->gaps_ns + (double)s->kernel_ns + 1);
	char b1[32], b2[32], b3[256] = "";
	struct diag_finding *f;
	struct record_cost cost;
	char *module = NULL;

	if (s->short_kernels < (int64_t)diag__get(ctx, "launch_bound.min_kernels") ||
	    2 * s->short_kernels < s->kernels || frac < diag__get(ctx, "launch_bound.min_gap_fraction"))
		return;
	/* the cost per call as measured and without perfkit's own recording;
	 * a capture whose peaks cannot be read is said to lack the measurement */
	if (record_cost__load(ctx->store, &cost, NULL) < 0)
		cost.measured = false;
	record_cost__launch_sentence(&cost, api_n, api_ns, b3, sizeof b3);
	/* where the capture has module ranges, the module whose kernels these are */
	if (diag_python__busiest_module(ctx, &module, NULL) < 0)
		module = NULL;
	diag_tally__sort_by_time(&s->short_by_name);
	f = diag__add(ctx, "launch_bound", "Launch-bound: short kernels with gaps between them",
		      diag__share(ctx, gaps), gaps, DIAG_HIGH,
		      diag__fmt("%.1f kernels per iteration, %lld of %lld shorter than %.0f us (%s on "
				"average); the streams sit idle %s between them, summed over streams (%lld gaps of at most %.0f us), "
				"%.0f%% of the streams' active time.%s%s",
				(double)s->kernels / diag__per_iter(ctx), (long long)s->short_kernels,
				(long long)s->kernels, diag__get(ctx, "launch_bound.max_kernel_us"),
				diag__ns(b1, sizeof b1, s->short_ns / (s->short_kernels ? s->short_kernels : 1)),
				diag__ns(b2, sizeof b2, s->gaps_ns), (long long)s->gaps,
				diag__get(ctx, "launch_bound.max_gap_us"), 100 * frac, b3, module ? module : ""),
		      diag__with_pytorch(ctx,
			      diag__fmt("Give each launch more work: batch independent items into one launch"
					"{?graphs  and fuse consecutive kernels: only fewer kernels cut their cost}"
					"{!graphs , fuse consecutive kernels{?bound_launch , and capture the fixed "
					"sequence of launches in a CUDA graph (cudaStreamBeginCapture / "
					"cudaGraphLaunch) to pay launch cost once}}."),
			      diag_pytorch_launch));
	diag_tally__offenders(&s->short_by_name, f);
	free(module);
}

/* What a tally of runs holds (count = launches, time = the kernels' GPU
 * time, aux = runs) and the time their spans cover in the window, each
 * instant once; false when the launches fall below repeat.min_run per
 * iteration. */
struct runs_total {
	int64_t launches, kernel_ns, runs, covered_ns;
};

static bool runs_worth_it(struct diag_context *ctx, const struct diag_tally *t, struct diag_intervals *spans,
			  struct runs_total *total)
{
	memset(total, 0, sizeof *total);
	for (int i = 0; i < t->n; i++) {
		total->launches += t->e[i].count;
		total->kernel_ns = prof_add_saturated(total->kernel_ns, t->e[i].time_ns);
		total->runs += (int64_t)t->e[i].aux;
	}
	if (!total->runs || (double)total->launches / diag__per_iter(ctx) < diag__get(ctx, "repeat.min_run"))
		return false;
	total->covered_ns = diag_intervals__union_ns(spans, ctx->w->start_ns, ctx->w->end_ns);
	return true;
}

/* "the runs cover X of the window, in which the kernels run Y of GPU time" */
static const char *runs_cover(char *buf, size_t cap, const struct runs_total *t, const char *kernels)
{
	char b1[32], b2[32];

	snprintf(buf, cap, "the runs cover %s of the window (from each run's first launch to its last), "
		 "in which the %s run %s of GPU time",
		 diag__ns(b1, sizeof b1, t->covered_ns), kernels, diag__ns(b2, sizeof b2, t->kernel_ns));
	return buf;
}

static void report_repeated_kernel(struct diag_context *ctx, struct launch_scan *s)
{
	struct runs_total t;
	char cover[192];
	struct diag_finding *f;

	if (!runs_worth_it(ctx, &s->other_runs, &s->other_spans, &t))
		return;
	diag_tally__sort_by_time(&s->other_runs);
	f = diag__add(ctx, "repeated_kernel", "Many consecutive launches of the same small kernel",
		      diag__share(ctx, t.covered_ns), t.covered_ns, DIAG_HIGH,
		      diag__fmt("%lld run%s of back-to-back launches of the same small kernel with the "
				"same shape, %.1f launches per run, %.1f per iteration; %s.",
				(long long)t.runs, t.runs == 1 ? "" : "s", (double)t.launches / (double)t.runs,
				(double)t.launches / diag__per_iter(ctx),
				runs_cover(cover, sizeof cover, &t, "kernels")),
		      diag__with_pytorch(ctx,
			      diag__fmt("Fuse the run into one launch that handles every item (an extra grid "
					"dimension or an index table), e.g. one lookup kernel for all embedding "
					"tables."),
			      "In PyTorch: replace the Python loop over tensors with one batched op on "
			      "stacked tensors (torch.stack, torch._foreach_* ops, nn.EmbeddingBag)"
			      "{!compile , or let torch.compile fuse the loop}."));
	diag_tally__offenders(&s->other_runs, f);
}

/* The runs of small GEMMs, grouped and classified: chain-like runs go to
 * gemm_chain, the others (independent-like, or back to back: unknown) to
 * batched_gemm. Each tally: count = launches, time = the GEMMs' GPU time,
 * aux = runs; each list: the runs' spans. */
struct gemm_findings {
	struct diag_tally batched, chain;
	struct diag_intervals batched_spans, chain_spans;
	int64_t independent_runs, unknown_runs, chain_others, chain_gaps;
	int max_streams;
};

static const char *gemm_name(const struct launch_scan *s, int64_t name_id)
{
	for (int i = 0; i < s->gemm_names.n; i++)
		if (s->gemm_names.e[i].bytes == name_id)
			return s->gemm_names.e[i].key;
	return "?";
}

static int classify_gemm_runs(struct diag_context *ctx, struct launch_scan *s, struct gemm_findings *g)
{
	int n = gemm_runs__group(s->gemm_runs, s->ngemm_runs);
	int64_t min_run = (int64_t)diag__get(ctx, "repeat.min_run");
	char key[320];

	for (int i = 0; i < n; i++) {
		const struct gemm_run *r = &s->gemm_runs[i];
		enum gemm_run_kind kind = gemm_run__classify(r);
		struct diag_tally_entry *e;
		struct diag_intervals *spans;

		if (r->launches < min_run)
			continue;
		if (kind == GEMM_RUN_CHAIN) {
			e = diag_tally__get(&g->chain, gemm_name(s, r->name_id));
			spans = &g->chain_spans;
			g->chain_others += r->others;
			g->chain_gaps += r->interleaved + r->adjacent;
		} else {
			if (kind == GEMM_RUN_INDEPENDENT)
				snprintf(key, sizeof key, "%s: on several streams at once", gemm_name(s, r->name_id));
			else
				snprintf(key, sizeof key, "%s: back to back on one stream", gemm_name(s, r->name_id));
			e = diag_tally__get(&g->batched, key);
			spans = &g->batched_spans;
			g->independent_runs += kind == GEMM_RUN_INDEPENDENT;
			g->unknown_runs += kind == GEMM_RUN_UNKNOWN;
			if (r->streams > g->max_streams)
				g->max_streams = r->streams;
		}
		if (!e || diag_intervals__push(spans, r->start_ns, r->end_ns))
			return PROF_E_NOMEM;
		e->count += r->launches;
		e->time_ns = prof_add_saturated(e->time_ns, r->kernel_ns);
		e->bytes = -1;
		e->aux += 1;
	}
	return 0;
}

static const char *const pytorch_gemms =
	"In PyTorch: independent products go into one torch.bmm/torch.baddbmm on stacked tensors; "
	"a stack of layers{?dispatch {!graphs  into torch.compile(mode=\"reduce-overhead\") or "
	"a CUDA graph (torch.cuda.graphs, torch.cuda.make_graphed_callables),}} with a larger "
	"batch per step.";

static void report_batched_gemm(struct diag_context *ctx, struct gemm_findings *g)
{
	struct runs_total t;
	char cover[192], how[400];
	struct diag_finding *f;

	if (!runs_worth_it(ctx, &g->batched, &g->batched_spans, &t))
		return;
	if (g->unknown_runs == 0)
		snprintf(how, sizeof how, "All of them run on several streams at once (up to %d), so the "
			 "program already treats them as independent.", g->max_streams);
	else if (g->independent_runs == 0)
		snprintf(how, sizeof how, "They run back to back on one stream with no other kernel "
			 "between: independent products (one per head, per expert) look like this, and so "
			 "do layers that each consume the last one's output; the trace cannot tell which.");
	else
		snprintf(how, sizeof how, "%lld of them run back to back on one stream with no other kernel "
			 "between, which independent products (one per head, per expert) and layers that "
			 "each consume the last one's output both do; the other %lld run on several streams "
			 "at once (independent).", (long long)g->unknown_runs, (long long)g->independent_runs);
	diag_tally__sort_by_time(&g->batched);
	f = diag__add(ctx, "batched_gemm", "Many consecutive launches of the same small GEMM",
		      diag__share(ctx, t.covered_ns), t.covered_ns, DIAG_HIGH,
		      diag__fmt("%lld run%s of launches of the same small GEMM with the same shape, %.1f "
				"launches per run, %.1f per iteration; %s. %s",
				(long long)t.runs, t.runs == 1 ? "" : "s", (double)t.launches / (double)t.runs,
				(double)t.launches / diag__per_iter(ctx),
				runs_cover(cover, sizeof cover, &t, "GEMMs"), how),
		      diag__with_pytorch(ctx,
			      g->unknown_runs == 0
				      ? diag__fmt("Replace each group with one batched GEMM "
						  "(cublasGemmStridedBatchedEx, cublasGemmBatchedEx) so one "
						  "launch fills the GPU instead of several streams sharing it.")
				      : diag__fmt("If these GEMMs are independent (per head, per expert: none "
						  "reads another's output), replace each run with one batched GEMM "
						  "(cublasSgemmStridedBatched, cublasGemmStridedBatchedEx). If each "
						  "consumes the last one's output they cannot be batched: "
						  "{!graphs {?dispatch capture the sequence in a CUDA graph to pay "
						  "launch cost once and }}give each launch more work (a larger batch)."),
			      pytorch_gemms));
	diag_tally__offenders(&g->batched, f);
}

static void report_gemm_chain(struct diag_context *ctx, struct gemm_findings *g)
{
	struct runs_total t;
	char cover[192];
	struct diag_finding *f;

	if (!runs_worth_it(ctx, &g->chain, &g->chain_spans, &t))
		return;
	diag_tally__sort_by_time(&g->chain);
	f = diag__add(ctx, "gemm_chain", "A chain of small GEMMs with other kernels between them",
		      diag__share(ctx, t.covered_ns), t.covered_ns, DIAG_HIGH,
		      diag__fmt("%lld run%s in which the same small GEMM alternates with other kernels on "
				"one stream (%.1f other kernels between two launches on average), %.1f "
				"launches per run, %.1f per iteration; %s. This is how a stack of layers "
				"runs, each GEMM followed by its bias or activation and consuming the last "
				"one's output: such GEMMs cannot become one batched GEMM.",
				(long long)t.runs, t.runs == 1 ? "" : "s", g->chain_gaps ? (double)g->chain_others / (double)g->chain_gaps : 0.0,
				(double)t.launches / (double)t.runs, (double)t.launches / diag__per_iter(ctx),
				runs_cover(cover, sizeof cover, &t, "GEMMs")),
		      diag__with_pytorch(ctx,
			      diag__fmt("Cut the launches, not the chain: {!graphs {?dispatch capture the "
					"sequence in a CUDA graph (cudaStreamBeginCapture / cudaGraphLaunch) to pay "
					"launch cost once, }}give each GEMM more rows (a larger batch per launch), and fuse the bias and "
					"activation into the GEMM's epilogue (cublasLt epilogues such as "
					"CUBLASLT_EPILOGUE_RELU_BIAS, or CUTLASS) to drop the kernels between. "
					"If the GEMMs are in fact independent, batch them "
					"(cublasGemmStridedBatchedEx)."),
			      pytorch_gemms));
	diag_tally__offenders(&g->chain, f);
}

void launch_scan__free(void *scan)
{
	struct launch_scan *s = scan;

	if (!s)
		return;
	diag_tally__exit(&s->short_by_name);
	diag_tally__exit(&s->other_runs);
	diag_intervals__exit(&s->other_spans);
	diag_tally__exit(&s->gemm_names);
	free(s->gemm_runs);
	free(s);
}

int launch_scan__make(struct diag_context *ctx, void **out, struct prof_error *err)
{
	struct launch_scan *s = calloc(1, sizeof *s);
	int rc;

	*out = NULL;
	if (!s)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = scan(ctx, s, err);
	if (rc) {
		launch_scan__free(s);
		return rc;
	}
	*out = s;
	return 0;
}

static int rule_launch(struct diag_context *ctx, struct prof_error *err)
{
	struct gemm_findings g = { 0 };
	struct launch_scan *s;
	int64_t api_n, api_ns;
	void *made;
	int rc;

	if (!ctx->has_kernel)
		return 0;
	rc = diag_ahead__take_or_make(ctx, DIAG_AHEAD_LAUNCH_SCAN, launch_scan__make, &made, err);
	s = made;
	if (!rc)
		rc = launch_api(ctx, &api_n, &api_ns, err);
	if (!rc && classify_gemm_runs(ctx, s, &g))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (!rc) {
		report_launch_bound(ctx, s, api_n, api_ns);
		report_batched_gemm(ctx, &g);
		report_gemm_chain(ctx, &g);
		report_repeated_kernel(ctx, s);
	}
	launch_scan__free(s);
	diag_tally__exit(&g.batched);
	diag_tally__exit(&g.chain);
	diag_intervals__exit(&g.batched_spans);
	diag_intervals__exit(&g.chain_spans);
	return rc;
}

const struct diag_rule diag_rules_launch[] = {
	{ "launch_bound+batched_gemm+gemm_chain+repeated_kernel", "Launch overhead", rule_launch, true },
	{ NULL, NULL, NULL, false },
};
