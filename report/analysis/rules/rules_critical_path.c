/* rules_critical_path.c - what sets a step's length: the longest parts of
 * the critical path of the median step (critical_path.h), and what
 * shortening each can gain at most: its time on the path. */
#include "analysis/diagnose/diagnose.h"
#include "analysis/timeline/critical_path.h"
#include "analysis/timeline/timeline_units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink/symbol.h"

static bool is_gpu_work(const struct cp_part *p)
{
	return !strcmp(p->kind, "kernel") || !strcmp(p->kind, "copy") || !strcmp(p->kind, "memset") ||
	       !strcmp(p->kind, "CUDA graph");
}

/* A part as a finding names it: a call with its kind, the rest by label. */
static const char *part_name(const struct cp_part *p, char *buf, size_t cap)
{
	if (!strncmp(p->kind, "CUDA call", 9))
		snprintf(buf, cap, "%s (%s)", p->label, p->kind);
	else
		snprintf(buf, cap, "%s", p->label);
	return buf;
}

/* A part as the evidence names it: GPU work in its short form with its
 * kind ("gemm<...> (kernel)"), as text shows kernels; the offenders carry
 * the full names. */
static const char *evidence_name(const struct cp_part *p, char *buf, size_t cap)
{
	char brief[512];

	if (!is_gpu_work(p))
		return part_name(p, buf, cap);
	rpt_symbol__shorten(p->label, RPT_SYMBOL_SHORT, brief, sizeof brief);
	snprintf(buf, cap, "%s (%s)", brief, p->kind);
	return buf;
}

/* The change that shortens a part, by its kind, and how in PyTorch. */
struct part_change {
	const char *change, *pytorch;
};

static struct part_change change_for(const struct cp_part *p)
{
	if (!strcmp(p->kind, "host work"))
		return (struct part_change){
			"the host's own work between CUDA calls is on the path: overlap it with the GPU "
			"(prepare the next step on another thread while this one runs) or move it to the GPU",
			diag_pytorch_host_work };
	if (!strcmp(p->kind, "CUDA call: synchronisation"))
		return (struct part_change){
			"the host waits for the GPU and then submits the next work: synchronise only where "
			"a result is needed, after the next step's work is queued, and order streams with "
			"events instead",
			diag_pytorch_sync };
	if (!strcmp(p->kind, "CUDA call: allocation"))
		return (struct part_change){
			"allocations and frees are on the path (cudaFree waits for the device): allocate once "
			"before the loop and reuse the buffers, or use cudaMallocAsync with a memory pool",
			diag_pytorch_alloc };
	if (!strcmp(p->kind, "CUDA call: copy"))
		return (struct part_change){
			"copies are on the path: move fewer bytes{!pinned , copy from pinned memory "
			"(cudaMallocHost)}{!overlap , and issue them with cudaMemcpyAsync on another "
			"stream so they overlap with compute}",
			diag_pytorch_sync_copy };
	if (!strcmp(p->kind, "CUDA call: launch") || !strcmp(p->kind, "launch latency"))
		return (struct part_change){
			"launches are on the path: fewer, larger launches (fuse kernels, batch work)"
			"{!graphs  or capture the step in a CUDA graph}",
			diag_pytorch_launch };
	if (!strcmp(p->kind, "cross-stream wait"))
		return (struct part_change){
			"a stream waits for another stream's event: start the independent work earlier or "
			"rebalance the work between the streams",
			"In PyTorch: queue the independent work on the waiting stream before its "
			"wait_stream() or event.wait(), so it has work while the other stream finishes." };
	if (!strcmp(p->kind, "stream order") || !strcmp(p->kind, "queued before the step"))
		return (struct part_change){
			"the GPU starts queued work late: fewer, larger kernels (fusion{!graphs "
			"{?bound_launch , a CUDA graph}}) leave fewer such gaps",
			diag_pytorch_launch };
	return (struct part_change){ "each part below is what the step waited for at that point",
				     diag_pytorch_launch };
}

/* The rules that name the cause of a part outside GPU work, by its kind:
 * the critical path is their evidence where one of them fires. */
static const char *const *causes_of(const struct cp_part *p)
{
	static const char *const host[] = { "cpu_bound", NULL };
	static const char *const sync[] = { "sync_api", "sync_memcpy", NULL };
	static const char *const alloc[] = { "alloc_churn", NULL };
	static const char *const copy[] = { "sync_memcpy", "pageable_async_copy", "small_htod_copies", NULL };
	static const char *const launch[] = { "launch_bound", "gpu_gaps", NULL };

	if (!p)
		return NULL;
	if (!strcmp(p->kind, "host work"))
		return host;
	if (!strcmp(p->kind, "CUDA call: synchronisation"))
		return sync;
	if (!strcmp(p->kind, "CUDA call: allocation"))
		return alloc;
	if (!strcmp(p->kind, "CUDA call: copy"))
		return copy;
	if (!strcmp(p->kind, "CUDA call: launch") || !strcmp(p->kind, "launch latency") ||
	    !strcmp(p->kind, "stream order") || !strcmp(p->kind, "queued before the step"))
		return launch;
	return NULL;
}

/* "1 launch", "2 launches": a count with its noun. */
static const char *counted(char *buf, size_t cap, int n, const char *one, const char *many)
{
	snprintf(buf, cap, "%d %s", n, n == 1 ? one : many);
	return buf;
}

_Static_assert(DIAG_NREPLAYS == REPLAY_NSETS, "findings.h's replays are step_replay.h's changes");

/* The step's replays, for the gains (rules/gains.c). */
static void diag_replay__set(struct diag_replay *r, const struct critical_path *cp)
{
	r->valid = cp->replay_ns[REPLAY_AS_MEASURED] > 0;
	r->measured_ns = cp->end_ns - cp->start_ns;
	memcpy(r->after_ns, cp->replay_ns, sizeof r->after_ns);
	r->pinned_bytes_per_ns = cp->pinned_bytes_per_ns;
	r->unrecorded_ns = cp->unrecorded_ns;
	r->record_launch_ns = cp->record_launch_ns;
	r->record_call_ns = cp->record_call_ns;
	r->record_alloc_ns = cp->record_alloc_ns;
	r->record_copy_ns = cp->record_copy_ns;
}

/* The path goes to the run's keep where it has one (with the step's rows
 * the walk left there), else it is freed. */
static void done_with(struct diag_context *ctx, struct critical_path *cp)
{
	if (ctx->keep && !ctx->keep->cp)
		ctx->keep->cp = cp;
	else
		critical_path__delete(cp);
}

static int rule_critical_path(struct diag_context *ctx, struct prof_error *err)
{
	struct critical_path *cp = NULL;
	int64_t span, window = diag__window_ns(ctx);
	char parts[1024] = "", b1[32], b2[32];
	char launches[32], syncs[40], copies[40], links[40], waits[40];
	size_t used = 0;
	const struct cp_part *longest_waste = NULL; /* parts come longest first */
	struct diag_finding *f;
	char name[640];
	int64_t waste = 0;
	double share;
	int rc = ctx->keep ? critical_path__analyse_rows(&ctx->scope, ctx->idle, &cp, &ctx->keep->rows, err)
			   : critical_path__analyse(&ctx->scope, ctx->idle, &cp, err);

	if (rc)
		return rc;
	span = cp->end_ns - cp->start_ns;
	if (cp->step == 0) {
		rc = diag__skip(ctx, "critical_path", "%s", cp->why_none);
		done_with(ctx, cp);
		return rc ? prof_error__set(err, rc, "out of memory") : 0;
	}
	if (cp->nparts == 0 || span <= 0) {
		done_with(ctx, cp);
		return 0;
	}
	diag_replay__set(&ctx->report->replay, cp);
	for (int i = 0; i < cp->nparts; i++) {
		if (is_gpu_work(&cp->parts[i]))
			continue;
		waste += cp->parts[i].time_ns;
		if (!longest_waste)
			longest_waste = &cp->parts[i];
	}
	for (int i = 0; i < cp->nparts && i < 4 && used < sizeof parts; i++) {
		used += (size_t)snprintf(parts + used, sizeof parts - used, "%s%s %s, %.0f%%", i ? "; " : "",
					 evidence_name(&cp->parts[i], name, sizeof name),
					 diag__ns(b1, sizeof b1, cp->parts[i].time_ns),
					 100.0 * (double)cp->parts[i].time_ns / (double)span);
	}
	/* a path through GPU work is a step the GPU sets: what can be gained
	 * is the rest, the host's part and the gaps (its share of the step
	 * stands for its share of the loop) */
	share = (double)waste / (double)span;
	f = diag__add(ctx, "critical_path", "What sets the length of a step (critical path)", share,
		      (int64_t)(share * (double)window), DIAG_HIGH,
		      diag__fmt("Step %d of %d (the median, %s from its start to the end of its last work) "
				"runs through %d segments, %.0f%% of it outside GPU work (host work, CUDA calls, "
				"latencies and waits); the longest parts: %s. The path follows %s, %s, %s, %s "
				"and %s%s. Shortening a part "
				"shortens the step by at most its time on the path (%s for the longest), less "
				"where another chain takes over.",
				cp->step, cp->nsteps, diag__ns(b2, sizeof b2, span), cp->nseg, 100.0 * share, parts,
				counted(launches, sizeof launches, cp->edges[CP_EDGE_LAUNCH], "launch", "launches"),
				counted(syncs, sizeof syncs, cp->edges[CP_EDGE_SYNC], "synchronisation",
					"synchronisations"),
				counted(copies, sizeof copies, cp->edges[CP_EDGE_COPY], "blocking copy",
					"blocking copies"),
				counted(links, sizeof links, cp->edges[CP_EDGE_STREAM], "stream-order link",
					"stream-order links"),
				counted(waits, sizeof waits, cp->edges[CP_EDGE_EVENT], "cross-stream wait",
					"cross-stream waits"),
				/* how a wait was found, said only where there is one */
				cp->edges[CP_EDGE_EVENT]
					? " (inferred: a cudaStreamWaitEvent on the stream, the event's "
					  "recorder taken to be the other stream's work that ended last)"
					: "",
				diag__ns(b1, sizeof b1, cp->parts[0].time_ns)),
		      longest_waste
			      ? diag__with_pytorch(ctx,
						   diag__fmt("Outside GPU work the longest part is %s: %s. `perfkit "
							     "report --report=critical_path` lists every part of "
							     "the path.",
							     longest_waste->label, change_for(longest_waste).change),
						   change_for(longest_waste).pytorch)
			      : diag__with_pytorch(ctx,
						   diag__fmt("The GPU sets the step's length: only faster or fewer "
							     "kernels and copies shorten it (see the kernel findings)."),
						   "In PyTorch:{!compile {!triton  torch.compile fuses kernels.}}"
						   "{!bf16  Mixed precision (torch.autocast with bfloat16) "
						   "shortens the matrix products.}"));
	ctx->report->path_causes = causes_of(longest_waste);
	for (int i = 0; f && i < cp->nparts && i < DIAG_MAX_OFFENDERS; i++)
		diag__offender(f, part_name(&cp->parts[i], name, sizeof name), cp->parts[i].count,
			       cp->parts[i].time_ns, -1);
	done_with(ctx, cp);
	return 0;
}

const struct diag_rule diag_rules_critical_path[] = {
	{ "critical_path", "What sets the length of a step (critical path)", rule_critical_path, true },
	{ NULL, NULL, NULL, false },
};
