/* verdict.c - one verdict per step (verdict.h): the budget of a mean step
 * from the GPU's busy time and the idle attribution, and the bound. */
#include "verdict.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "diagnose.h"
#include "analysis/timeline/gpu_idle.h"
#include "prof/saturate.h"
#include "prof/tables.h"

static const struct {
	const char *id, *title;
	int bound;
} parts[VERDICT_NPARTS] = {
	[PART_COMPUTE] = { "gpu_compute", "GPU computing", BOUND_GPU_COMPUTE },
	[PART_COMMUNICATION] = { "communication", "communication kernels", BOUND_COMMUNICATION },
	[PART_COPIES] = { "copies", "copies and memsets", BOUND_TRANSFER },
	[PART_HOST_WORK] = { "host_work", "GPU idle for the host's own work", BOUND_LAUNCH_HOST },
	[PART_LAUNCH] = { "launch_calls", "GPU idle for launch and other CUDA calls", BOUND_LAUNCH_HOST },
	[PART_SYNC] = { "synchronisation", "GPU idle while the host waits in a synchronisation", BOUND_SYNC },
	[PART_BLOCKING_COPY] = { "blocking_copies", "GPU idle in blocking or pageable copy calls", BOUND_TRANSFER },
	[PART_ALLOC] = { "allocation", "GPU idle while the host allocates or frees", BOUND_LAUNCH_HOST },
	[PART_GPU_WAIT] = { "stream_waits", "GPU idle with work queued behind another stream's event", BOUND_SYNC },
	[PART_QUEUED_GAP] = { "queued_gaps", "GPU idle between queued kernels (the GPU's launch latency)", BOUND_LAUNCH_HOST },
	[PART_UNACCOUNTED] = { "unaccounted", "GPU idle, no recorded call launched what followed", -1 },
};

static const char *const bound_names[VERDICT_NBOUNDS] = {
	[BOUND_GPU_COMPUTE] = "GPU compute", [BOUND_GPU_MEMORY] = "GPU memory",
	[BOUND_LAUNCH_HOST] = "launch/host", [BOUND_SYNC] = "synchronisation",
	[BOUND_TRANSFER] = "transfer", [BOUND_COMMUNICATION] = "communication",
	[BOUND_ANOTHER_RANK] = "another rank",
};

const char *verdict_bound__name(enum verdict_bound b)
{
	return b >= 0 && b < VERDICT_NBOUNDS ? bound_names[b] : "?";
}

const char *verdict_part__id(enum verdict_part p)
{
	return p >= 0 && p < VERDICT_NPARTS ? parts[p].id : "?";
}

const char *verdict_part__title(enum verdict_part p)
{
	return p >= 0 && p < VERDICT_NPARTS ? parts[p].title : "?";
}

int verdict_part__bound(enum verdict_part p)
{
	return p >= 0 && p < VERDICT_NPARTS ? parts[p].bound : -1;
}

enum verdict_bound diag_verdict__bound_of(const int64_t part_ns[VERDICT_NPARTS])
{
	int64_t by_bound[VERDICT_NBOUNDS] = { 0 };
	enum verdict_bound best = BOUND_GPU_COMPUTE;

	for (int p = 0; p < VERDICT_NPARTS; p++)
		if (parts[p].bound >= 0)
			by_bound[parts[p].bound] = prof_add_saturated(by_bound[parts[p].bound], part_ns[p]);
	for (int b = 0; b < VERDICT_NBOUNDS; b++)
		if (by_bound[b] > by_bound[best])
			best = (enum verdict_bound)b;
	return best;
}

/* "bound by GPU compute: a step takes 262.15 us (the mean of 204); GPU
 * computing 86%, ..." */
void diag_verdict__summarise(struct diag_verdict *v)
{
	int order[VERDICT_NPARTS], n = 0;
	size_t len;
	char b[32];

	for (int p = 0; p < VERDICT_NPARTS; p++)
		if (v->part_ns[p] > 0)
			order[n++] = p;
	/* the largest parts first: insertion sort of at most ten */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v->part_ns[order[j]] > v->part_ns[order[j - 1]]; j--) {
			int t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	if (v->steps > 0)
		len = (size_t)snprintf(v->summary, sizeof v->summary, "bound by %s: a step takes %s (the mean of %d)",
				       verdict_bound__name(v->bound), diag__ns(b, sizeof b, v->step_ns), v->steps);
	else
		len = (size_t)snprintf(v->summary, sizeof v->summary, "bound by %s: the window takes %s (no repeating step found)",
				       verdict_bound__name(v->bound), diag__ns(b, sizeof b, v->step_ns));
	for (int i = 0; i < n && i < 3 && len < sizeof v->summary; i++)
		len += (size_t)snprintf(v->summary + len, sizeof v->summary - len, "%s %s %.0f%%",
					i ? "," : ";", parts[order[i]].title,
					v->step_ns > 0 ? 100.0 * (double)v->part_ns[order[i]] / (double)v->step_ns : 0.0);
	if (len < sizeof v->summary)
		snprintf(v->summary + len, sizeof v->summary - len, ".");
}

/* The union of sql's (start, end) rows on one device, clipped to the window. */
static int union_on_device(const struct diag_context *ctx, const char *sql, int64_t device,
			   int64_t *ns, struct prof_error *err)
{
	struct diag_intervals u = { 0 };
	int64_t lo = ctx->w->start_ns, hi = ctx->w->end_ns;
	struct prof_cursor *c;
	int rc = diag__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);

	*ns = 0;
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 3, device);
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t s = prof_cursor__int64(c, 0), e = prof_cursor__int64(c, 1);

		if (diag_intervals__merge(&u, s > lo ? s : lo, e < hi ? e : hi)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
	}
	prof_cursor__close(c);
	*ns = diag_intervals__length(&u);
	diag_intervals__exit(&u);
	return rc < 0 ? rc : 0;
}

/* The busy part split: every kernel, and the kernels that are not NCCL's. */
static int split_busy(const struct diag_context *ctx, int64_t device, int64_t busy_ns,
		      int64_t out[VERDICT_NPARTS], struct prof_error *err)
{
	const char *all_sql =
		"SELECT start, end FROM " PROF_T_KERNEL " WHERE end > ?1 AND start < ?2"
		" AND deviceId = ?3 AND NOT " SUM_BAD_SPAN("") " ORDER BY start";
	const char *compute_sql =
		"SELECT start, end FROM " PROF_T_KERNEL " WHERE end > ?1 AND start < ?2"
		" AND deviceId = ?3 AND NOT " SUM_BAD_SPAN("")
		" AND coalesce(demangledName, shortName) NOT IN (SELECT id FROM " PROF_T_STRINGS
		"  WHERE value LIKE 'ncclDevKernel%' OR value LIKE 'ncclKernel%') ORDER BY start";
	int64_t kernels_ns = 0, compute_ns = 0;
	int rc;

	if (ctx->has_kernel) {
		rc = union_on_device(ctx, all_sql, device, &kernels_ns, err);
		if (!rc)
			rc = union_on_device(ctx, compute_sql, device, &compute_ns, err);
		if (rc)
			return rc;
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

int diag_verdict__make(struct diag_context *ctx, struct diag_verdict *v, struct prof_error *err)
{
	const struct gpu_idle_result *idle;
	const struct gpu_idle_device *d = NULL;
	int64_t window_ns, total[VERDICT_NPARTS] = { 0 }, sum = 0;
	int steps, rc;

	memset(v, 0, sizeof *v);
	if (ctx->busy_ns == 0 || ctx->report->replayed)
		return 0;
	rc = gpu_idle__of(ctx, &idle, err);
	if (rc)
		return rc;
	for (int i = 0; i < idle->ndev; i++)
		if (!d || idle->dev[i].busy_ns > d->busy_ns)
			d = &idle->dev[i];
	if (!d || d->busy_ns <= 0)
		return 0;
	rc = split_busy(ctx, d->device_id, d->busy_ns, total, err);
	if (rc)
		return rc;
	for (int c = 0; c < IDLE_NCAUSES; c++)
		total[part_of_cause[c]] = prof_add_saturated(total[part_of_cause[c]], d->cause_ns[c]);
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
	v->device_id = d->device_id;
	v->bound = diag_verdict__bound_of(v->part_ns);
	v->valid = true;
	diag_verdict__summarise(v);
	return 0;
}
