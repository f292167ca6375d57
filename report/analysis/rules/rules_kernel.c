/* rules_kernel.c - rules about individual kernels: low theoretical occupancy
 * with its limiter, from the launch records alone (block size, registers,
 * static and dynamic shared memory), so that a capture with and without
 * hardware metrics says the same. NCCL's kernels are left out: NCCL
 * chooses their launch, and their time is communication and waiting for
 * other ranks, which the job's rules judge (rules_ranks.c). */
#include "analysis/diagnose/diagnose.h"

#include <stdlib.h>

#include "analysis/rules/kernel_groups.h"
#include "analysis/kernel_metrics/occupancy.h"
#include "prof/tables.h"
#include "prof/saturate.h"
#include "prof/error.h"

/* Launches whose records say 0 registers per thread: kernel rows that an
 * older `perfkit run --metrics` rebuilt from its profiled launches without
 * their registers and static shared memory. Their occupancy would come out
 * as if they had neither; they are counted and left out instead. */
struct occupancy_unknown {
	int64_t launches, time_ns;
	struct diag_tally names;
};

static int note_unknown(struct occupancy_unknown *u, const char *name, int64_t launches, int64_t time_ns)
{
	struct diag_tally_entry *e = diag_tally__get(&u->names, name);

	if (!e)
		return PROF_E_NOMEM;
	e->count += launches;
	u->launches += launches;
	u->time_ns = prof_add_saturated(u->time_ns, time_ns);
	return 0;
}

static char *unknown_sentence(const struct occupancy_unknown *u)
{
	return diag__fmt("%lld launches of %d kernels record 0 registers per thread (kernel rows an "
			 "older `perfkit run --metrics` rebuilt without the launch's registers and static "
			 "shared memory), so their occupancy is not computed: capture again with this "
			 "perfkit, or diagnose a capture made without --metrics",
			 (long long)u->launches, u->names.n);
}

static void report_occupancy(struct diag_context *ctx, struct diag_tally *t, const struct occ_gpu *gpu,
			     int64_t n, int64_t ns, const struct occupancy_unknown *u)
{
	struct diag_finding *f;
	char b1[32], *unknown = u->launches ? unknown_sentence(u) : NULL;

	diag_tally__sort_by_time(t);
	/* low occupancy is a cause only when the kernel is latency-bound,
	 * which the launch records cannot show: at most low severity */
	f = diag__add(ctx, "low_occupancy", "Low theoretical occupancy", diag__share(ctx, ns), ns, DIAG_LOW,
		      diag__fmt("%lld kernel configurations below %.0f%% theoretical occupancy on %s "
				"run %s in the window (see the limiter of each below).%s%s%s",
				(long long)n, 100 * diag__get(ctx, "occupancy.max"),
				gpu->name[0] ? gpu->name : "this GPU", diag__ns(b1, sizeof b1, ns),
				unknown ? " Besides, " : "", unknown ? unknown : "", unknown ? "." : ""),
		      diag__with_pytorch(ctx,
			      diag__fmt("{!pytorch {!jax Registers: cap them with __launch_bounds__(threads, "
					"minBlocks) or -maxrregcount; shared memory: smaller tiles or fewer stages; "
					"block size: use 128-256 threads per block. Check with `perfkit roofline` "
					"whether the kernel is latency-bound before trading registers for "
					"occupancy.}}{?jax These are XLA's and its libraries' kernels, whose launch "
					"the program does not choose.}"),
			      "In PyTorch these are library kernels (ATen, cuBLAS) whose launch you do not "
			      "choose{!bf16 : BF16 autocast{?fp32_gemm {!tf32  or "
			      "torch.backends.cuda.matmul.allow_tf32 = True}} picks tensor-core GEMMs}."));
	diag_tally__offenders(t, f);
	free(unknown);
}

static int rule_occupancy(struct diag_context *ctx, struct prof_error *err)
{
	double max_occ = diag__get(ctx, "occupancy.max");
	double min_share = diag__get(ctx, "occupancy.min_kernel_share");
	struct diag_tally t = { 0 };
	struct occupancy_unknown unknown = { 0 };
	const struct kernel_groups *g;
	struct occ_gpu gpu;
	struct prof_error gerr;
	int64_t ns = 0, n = 0;
	char key[512];
	int rc;

	if (!ctx->has_kernel)
		return 0;
	if (occ_gpu__from_store(ctx->store, 0, &gpu, &gerr))
		return diag__skip(ctx, "low_occupancy", "no usable GPU description: %s", gerr.msg);
	rc = kernel_groups__of(ctx, &g, err);
	if (rc)
		return rc;
	for (int i = 0; i < g->nshapes; i++) {
		const struct kernel_shape *k = &g->shapes[i];
		struct occ_launch l = {
			.threads_per_block = (int)k->threads_per_block,
			.registers_per_thread = (int)k->registers_per_thread,
			.shared_per_block_bytes = k->shared_bytes,
			.shared_config_bytes = k->shared_config_bytes,
		};
		struct occ_result r;
		struct diag_tally_entry *e;

		if (l.registers_per_thread <= 0) {
			if (note_unknown(&unknown, k->name, k->count, k->time_ns))
				goto nomem;
			continue;
		}
		if (diag__share(ctx, k->time_ns) < min_share)
			continue;
		if (occ__compute(&gpu, &l, &r) || r.limiter == OCC_LIMIT_INVALID || r.occupancy >= max_occ)
			continue;
		snprintf(key, sizeof key, "%s: %.0f%% (%d threads, %d regs, %lld B shared; limited by %s)",
			 k->name, 100 * r.occupancy, l.threads_per_block, l.registers_per_thread,
			 (long long)l.shared_per_block_bytes, occ_limiter__name(r.limiter));
		e = diag_tally__get(&t, key);
		if (!e)
			goto nomem;
		e->count += k->count;
		e->time_ns = prof_add_saturated(e->time_ns, k->time_ns);
		e->bytes = -1;
		ns = prof_add_saturated(ns, k->time_ns);
		n++;
	}
	if (n) {
		report_occupancy(ctx, &t, &gpu, n, ns, &unknown);
	} else if (unknown.launches) {
		char *why = unknown_sentence(&unknown);
		rc = why ? diag__skip(ctx, "low_occupancy", "%s", why) : PROF_E_NOMEM;
		free(why);
		if (rc)
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	diag_tally__exit(&t);
	diag_tally__exit(&unknown.names);
	return rc < 0 ? rc : 0;
nomem:
	diag_tally__exit(&t);
	diag_tally__exit(&unknown.names);
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* A capture that recorded CUDA graphs whole (--cuda-graph-trace=graph)
 * has their launches' times and nothing of their nodes: the rules that
 * read kernels see none of the kernels inside them, which the user is told
 * once, with the way to see them. */
static int rule_graph_nodes(struct diag_context *ctx, struct prof_error *err)
{
	const char *sql = "SELECT count(*) FROM " PROF_T_GRAPH_TRACE " WHERE start >= ?1 AND start < ?2";
	struct prof_cursor *c;
	int64_t launches = 0;
	int rc;

	if (!ctx->has_graph_trace)
		return 0;
	rc = diag__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);
	if (rc)
		return rc;
	rc = prof_cursor__next(c, err);
	if (rc == 1)
		launches = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	if (rc < 0)
		return rc;
	if (!launches)
		return 0;
	return diag__skip(ctx, "graph_nodes",
			  "the kernels inside %lld CUDA graph launches: the capture recorded each launch whole "
			  "(--cuda-graph-trace=graph); capture with --cuda-graph-trace=node to see them",
			  (long long)launches);
}

const struct diag_rule diag_rules_kernel[] = {
	{ "low_occupancy", "Low theoretical occupancy", rule_occupancy, false },
	{ "graph_nodes", "Kernels inside CUDA graphs", rule_graph_nodes, false },
	{ NULL, NULL, NULL, false },
};
