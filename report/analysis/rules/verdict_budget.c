/* verdict_budget.c - the budget of a mean step (diagnose/verdict.h): the
 * busiest GPU's busy time split by kernel unions, its idle time by the idle
 * attribution's causes, divided by the steps. It lives among the rules
 * because it reads the timeline's attribution, as they do. */
#include "rules.h"

#include <string.h>

#include "analysis/diagnose/diagnose.h"
#include "analysis/rules/api_groups.h"
#include "analysis/timeline/gpu_idle.h"
#include "prof/saturate.h"
#include "prof/error.h"

/* The busy part split: every kernel (and graph launched whole), and the
 * kernels that are not NCCL's, as the idle attribution's pass over the
 * device found them (gpu_idle_device's kernels_ns and compute_ns). */
static void split_busy(const struct gpu_idle_device *d, int64_t out[VERDICT_NPARTS])
{
	int64_t kernels_ns = d->kernels_ns < d->busy_ns ? d->kernels_ns : d->busy_ns;
	int64_t compute_ns = d->compute_ns < kernels_ns ? d->compute_ns : kernels_ns;

	out[PART_COMPUTE] = compute_ns;
	out[PART_COMMUNICATION] = kernels_ns - compute_ns;
	out[PART_COPIES] = d->busy_ns - kernels_ns;
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
	rc = api_groups__idle_of(ctx, &idle, err);
	if (rc)
		goto out;
	for (int i = 0; i < idle->ndev; i++)
		if (!d || idle->dev[i].busy_ns > d->busy_ns)
			d = &idle->dev[i];
	if (!d || d->busy_ns <= 0)
		goto out;
	split_busy(d, total);
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
