/* verdict_budget.c - the budget of a mean step (diagnose/verdict.h): the
 * busiest GPU's busy time split by kernel unions, its idle time by the idle
 * attribution's causes, divided by the steps. It lives among the rules
 * because it reads the timeline's attribution, as they do. */
#include "rules.h"

#include <string.h>

#include "analysis/diagnose/diagnose.h"
#include "analysis/ranks/nccl.h"
#include "analysis/timeline/gpu_idle.h"
#include "prof/saturate.h"
#include "prof/tables.h"
#include "model/sql.h"
#include "prof/error.h"

/* The length of the union of sql's (start, end) rows on one device,
 * clipped to the window, into *ns; with other not NULL, that of the rows
 * whose third column is 0 too, into *other_ns: one pass in start order
 * gives both, and only their lengths are kept. */
static int union_on_device(const struct diag_context *ctx, const char *sql, int64_t device,
			   int64_t *ns, int64_t *other_ns, struct prof_error *err)
{
	struct diag_union_length u = { 0 }, o = { 0 };
	int64_t lo = ctx->w->start_ns, hi = ctx->w->end_ns;
	struct prof_cursor *c;
	int rc = diag__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);

	*ns = 0;
	if (other_ns)
		*other_ns = 0;
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 3, device);
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t s = prof_cursor__int64(c, 0), e = prof_cursor__int64(c, 1);

		s = s > lo ? s : lo;
		e = e < hi ? e : hi;
		diag_union_length__add(&u, s, e);
		if (other_ns && prof_cursor__int64(c, 2) == 0)
			diag_union_length__add(&o, s, e);
	}
	prof_cursor__close(c);
	*ns = diag_union_length__ns(&u);
	if (other_ns)
		*other_ns = diag_union_length__ns(&o);
	return rc < 0 ? rc : 0;
}

/* A CUDA graph launched whole (--cuda-graph-trace=graph) counts as
 * computing: what its nodes are is not recorded. */
#define GRAPHS_ON_DEVICE_SQL                                                   \
	" UNION ALL SELECT start, end, 0 FROM " PROF_T_GRAPH_TRACE " WHERE end > ?1" \
	" AND start < ?2 AND deviceId = ?3 AND NOT " SUM_BAD_SPAN("")

/* The busy part split: every kernel, and the kernels that are not NCCL's,
 * as the idle attribution's pass over the device found them, or read here. */
static int split_busy(const struct diag_context *ctx, const struct gpu_idle_result *idle,
		      const struct gpu_idle_device *d, int64_t out[VERDICT_NPARTS], struct prof_error *err)
{
	int64_t device = d->device_id, busy_ns = d->busy_ns;
	/* every kernel, each told NCCL's or not: the compute union is the
	 * same pass's other (a statement of its own sorted the kernels again) */
	const char *kernels_sql[2] = {
		"SELECT k.start, k.end, (" NCCL_KERNEL_SQL("k") ") IS 1 FROM " PROF_T_KERNEL " k"
		" WHERE k.end > ?1 AND k.start < ?2 AND k.deviceId = ?3 AND NOT " SUM_BAD_SPAN("k.")
		" ORDER BY k.start",
		"SELECT k.start, k.end, (" NCCL_KERNEL_SQL("k") ") IS 1 FROM " PROF_T_KERNEL " k"
		" WHERE k.end > ?1 AND k.start < ?2 AND k.deviceId = ?3 AND NOT " SUM_BAD_SPAN("k.")
		GRAPHS_ON_DEVICE_SQL " ORDER BY 1",
	};
	const char *graphs_sql = "SELECT start, end FROM " PROF_T_GRAPH_TRACE " WHERE end > ?1"
				 " AND start < ?2 AND deviceId = ?3 AND NOT " SUM_BAD_SPAN("")
				 " ORDER BY start";
	int64_t kernels_ns = 0, compute_ns = 0;
	int g = ctx->has_graph_trace;
	int rc;

	if (idle->kernel_unions) {
		kernels_ns = d->kernels_ns;
		compute_ns = d->compute_ns;
	} else if (ctx->has_kernel) {
		rc = union_on_device(ctx, kernels_sql[g], device, &kernels_ns, &compute_ns, err);
		if (rc)
			return rc;
	} else if (g) {
		rc = union_on_device(ctx, graphs_sql, device, &kernels_ns, NULL, err);
		if (rc)
			return rc;
		compute_ns = kernels_ns;
	}
	if (kernels_ns > busy_ns)
		kernels_ns = busy_ns;
	if (compute_ns > kernels_ns)
		compute_ns = kernels_ns;
	out[PART_COMPUTE] = compute_ns;
	out[PART_COMMUNICATION] = kernels_ns - compute_ns;
	out[PART_COPIES] = busy_ns - kernels_ns;
	return 0;
}

static const enum verdict_part part_of_cause[IDLE_NCAUSES] = {
	[IDLE_HOST_WORK] = PART_HOST_WORK, [IDLE_HOST_SYNC] = PART_SYNC,
	[IDLE_HOST_ALLOC] = PART_ALLOC,    [IDLE_HOST_COPY] = PART_BLOCKING_COPY,
	[IDLE_HOST_API] = PART_LAUNCH,     [IDLE_LAUNCH] = PART_LAUNCH,
	[IDLE_STREAM_WAIT] = PART_GPU_WAIT, [IDLE_QUEUED] = PART_QUEUED_GAP,
	[IDLE_UNKNOWN] = PART_UNACCOUNTED,
};

/* A faulting stretch is time the host (writing pages the GPU held) or a
 * kernel (reading pages the host held) stood stalled on pages moving: the
 * GPU sits idle for the host's work or computes slowly. The stretches'
 * time is taken from the parts it stalls, the host's idle parts first
 * (they hold the CPU faults' runs), then the GPU's computing (its fault
 * groups), never more than they hold. */
static int64_t take_migrations(int64_t total[VERDICT_NPARTS], int64_t stretch_ns)
{
	int64_t on_gpu = 0;

	static const enum verdict_part stalled[] = { PART_UNACCOUNTED, PART_HOST_WORK, PART_LAUNCH,
						     PART_COMPUTE, PART_COPIES };

	for (size_t k = 0; k < sizeof stalled / sizeof stalled[0] && stretch_ns > 0; k++) {
		int64_t take = total[stalled[k]] < stretch_ns ? total[stalled[k]] : stretch_ns;

		total[stalled[k]] -= take;
		total[PART_PAGE_MIGRATION] += take;
		stretch_ns -= take;
		if (stalled[k] == PART_COMPUTE || stalled[k] == PART_COPIES)
			on_gpu += take;
	}
	return on_gpu;
}

void diag_verdict__by_samples(struct diag_report *r, int64_t dram_roof_ns)
{
	struct diag_verdict *v = &r->verdict;

	if (!v->valid || v->gpu_bound_measured || !r->has_gpu_samples ||
	    (v->bound != BOUND_GPU_COMPUTE && v->bound != BOUND_GPU_MEMORY))
		return;
	v->gpu_bound_measured = true;
	/* at the DRAM roof for half the GPU's work in the step or more */
	if (2 * dram_roof_ns >= v->part_ns[PART_COMPUTE] * (v->steps > 0 ? v->steps : 1))
		v->bound = BOUND_GPU_MEMORY;
	diag_verdict__summarise(v);
}

int diag_verdict__make(struct diag_context *ctx, struct diag_verdict *v, struct prof_error *err)
{
	const struct gpu_idle_result *idle;
	const struct gpu_idle_device *d = NULL;
	int64_t window_ns, total[VERDICT_NPARTS] = { 0 }, sum = 0, stretch_ns = 0, migration_gpu_ns;
	int steps, rc;

	memset(v, 0, sizeof *v);
	if (ctx->busy_ns == 0 || ctx->report->replayed)
		return 0;
	rc = gpu_idle__of(&ctx->scope, &ctx->idle, &idle, err);
	if (rc)
		goto out;
	for (int i = 0; i < idle->ndev; i++)
		if (!d || idle->dev[i].busy_ns > d->busy_ns)
			d = &idle->dev[i];
	if (!d || d->busy_ns <= 0)
		goto out;
	rc = split_busy(ctx, idle, d, total, err);
	if (rc)
		goto out;
	for (int c = 0; c < IDLE_NCAUSES; c++)
		total[part_of_cause[c]] = prof_add_saturated(total[part_of_cause[c]], d->cause_ns[c]);
	rc = diag_managed__stretch_ns(ctx, &stretch_ns, err);
	if (rc)
		goto out;
	migration_gpu_ns = take_migrations(total, stretch_ns);
	window_ns = diag__window_ns(ctx);
	steps = ctx->w->iterations;
	for (int p = 0; p < VERDICT_NPARTS; p++) {
		v->part_ns[p] = steps > 0 ? total[p] / steps : total[p];
		sum = prof_add_saturated(sum, v->part_ns[p]);
	}
	/* the parts of a step add up to it: the window's length over its
	 * steps, less the remainder of the integer division */
	v->step_ns = steps > 0 ? window_ns / steps : window_ns;
	if (sum < v->step_ns)
		v->part_ns[PART_UNACCOUNTED] += v->step_ns - sum;
	else
		v->step_ns = sum;
	v->steps = steps;
	v->migration_gpu_ns = steps > 0 ? migration_gpu_ns / steps : migration_gpu_ns;
	v->device_id = d->device_id;
	v->bound = diag_verdict__bound_of(v->part_ns);
	v->valid = true;
	diag_verdict__summarise(v);
out:
	return rc;
}
