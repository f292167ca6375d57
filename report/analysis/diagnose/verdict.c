/* verdict.c - one verdict per step (verdict.h): the parts and bounds by
 * name, the bound of a budget and its sentence. The budget itself is
 * measured by rules/verdict_budget.c. */
#include "verdict.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analysis/core/text.h"
#include "prof/saturate.h"

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
	[PART_PAGE_MIGRATION] = { "page_migrations", "stalled on managed memory's page migrations", BOUND_TRANSFER },
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

int diag_verdict__parts_by_size(const struct diag_verdict *v, int order[VERDICT_NPARTS])
{
	bool done[VERDICT_NPARTS] = { false };
	int n = 0;

	for (int k = 0; k < VERDICT_NPARTS; k++) {
		int best = -1;

		for (int p = 0; p < VERDICT_NPARTS; p++)
			if (!done[p] && v->part_ns[p] > 0 && (best < 0 || v->part_ns[p] > v->part_ns[best]))
				best = p;
		if (best < 0)
			break;
		done[best] = true;
		order[n++] = best;
	}
	return n;
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
	const char *unmeasured = v->bound == BOUND_GPU_COMPUTE && !v->gpu_bound_measured
		? " (or GPU memory: without hardware metrics the two look alike; `perfkit run --gpu-metrics` tells)"
		: "";

	if (v->steps > 0)
		len = (size_t)snprintf(v->summary, sizeof v->summary, "bound by %s%s: a step takes %s (the mean of %d)",
				       verdict_bound__name(v->bound), unmeasured, diag__ns(b, sizeof b, v->step_ns),
				       v->steps);
	else
		len = (size_t)snprintf(v->summary, sizeof v->summary,
				       "bound by %s%s: the window takes %s (no repeating step found)",
				       verdict_bound__name(v->bound), unmeasured, diag__ns(b, sizeof b, v->step_ns));
	for (int i = 0; i < n && i < 3 && len < sizeof v->summary; i++)
		len += (size_t)snprintf(v->summary + len, sizeof v->summary - len, "%s %s %.0f%%",
					i ? "," : ";", parts[order[i]].title,
					v->step_ns > 0 ? 100.0 * (double)v->part_ns[order[i]] / (double)v->step_ns : 0.0);
	if (len < sizeof v->summary)
		snprintf(v->summary + len, sizeof v->summary - len, ".");
}

