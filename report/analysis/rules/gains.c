/* gains.c - what each finding's change would give the step: the mean step
 * after the change, from the critical path's step replayed forward with the
 * change applied (timeline/step_replay.h), scaled to the verdict's mean
 * step; for managed memory, from the budget (the stalls its faulting
 * stretches put on kernels and copies). A finding whose change the replay
 * cannot model, or a replay that does not give back the measured step,
 * gets no estimate: the order then falls back to its share. */
#include "rules.h"

#include <string.h>

#include "analysis/diagnose/diagnose.h"
#include "analysis/timeline/critical_path.h"

/* A replay as measured further than this from the measured step is not
 * trusted: the rows miss what held the step. */
#define REPLAY_TOLERANCE 0.20

static const char *basis_id(int ch)
{
	switch (ch) {
	case REPLAY_GRAPH: return "replay:graph";
	case REPLAY_HOST_HIDDEN: return "replay:host_hidden";
	case REPLAY_NO_SYNC: return "replay:no_sync";
	case REPLAY_PINNED: return "replay:pinned";
	case REPLAY_NO_ALLOC: return "replay:no_alloc";
	default: return NULL;
	}
}

/* The replay of the change f's advice makes, or -1. The host's part
 * (cpu_bound and what folds into it) is the dispatch a graph removes when
 * the host's work is what launching costs, else work a pipeline moves off
 * the launching thread; a program already replaying graphs gets the
 * pipeline. */
static int change_of(const struct diag_report *r, const struct diag_finding *f)
{
	bool graphs = r->program.uses[USE_CUDA_GRAPHS];
	static const struct {
		const char *rule;
		int change;
	} changes[] = {
		{ "sync_api", REPLAY_NO_SYNC },	    { "sync_memset", REPLAY_NO_SYNC },
		{ "sync_memcpy", REPLAY_PINNED },   { "pageable_async_copy", REPLAY_PINNED },
		{ "alloc_churn", REPLAY_NO_ALLOC },
	};

	for (size_t k = 0; k < sizeof changes / sizeof changes[0]; k++)
		if (!strcmp(changes[k].rule, f->rule_id))
			return changes[k].change;
	if (!strcmp(f->rule_id, "launch_bound") || !strcmp(f->rule_id, "gpu_gaps"))
		return graphs ? REPLAY_HOST_HIDDEN : REPLAY_GRAPH;
	if (!strcmp(f->rule_id, "cpu_bound") || !strcmp(f->rule_id, "critical_path") ||
	    !strcmp(f->rule_id, "gpu_util"))
		return r->program.dispatch && !graphs ? REPLAY_GRAPH : REPLAY_HOST_HIDDEN;
	return -1;
}

static bool replay_trusted(const struct diag_replay *p)
{
	double as_measured = (double)p->after_ns[REPLAY_AS_MEASURED];

	return p->valid && p->measured_ns > 0 && as_measured > 0 &&
	       as_measured >= (1 - REPLAY_TOLERANCE) * (double)p->measured_ns &&
	       as_measured <= (1 + REPLAY_TOLERANCE) * (double)p->measured_ns;
}

/* The mean step after replay ch, scaled from the replayed step. */
static int64_t step_after(const struct diag_report *r, int ch)
{
	double ratio = (double)r->replay.after_ns[ch] / (double)r->replay.after_ns[REPLAY_AS_MEASURED];

	return ratio < 1 ? (int64_t)((double)r->verdict.step_ns * ratio) : r->verdict.step_ns;
}

void diag_gains__apply(struct diag_report *r)
{
	struct diag_verdict *v = &r->verdict;
	bool replay = replay_trusted(&r->replay);
	unsigned named = 0;     /* the changes the findings name */
	int64_t budget_ns = 0;  /* what the budget-based gains take off */

	if (!v->valid || v->step_ns <= 0)
		return;
	/* the program's own step: the host times less what recording added */
	if (replay && r->replay.unrecorded_ns > 0) {
		double ratio = (double)r->replay.unrecorded_ns / (double)r->replay.after_ns[REPLAY_AS_MEASURED];

		v->unrecorded_step_ns = (int64_t)((double)v->step_ns * (ratio < 1 ? ratio : 1));
		v->record_launch_ns = r->replay.record_launch_ns;
		v->record_call_ns = r->replay.record_call_ns;
		v->record_alloc_ns = r->replay.record_alloc_ns;
		v->record_copy_ns = r->replay.record_copy_ns;
	}
	for (int i = 0; i < r->nfindings; i++) {
		struct diag_finding *f = &r->findings[i];
		int ch = change_of(r, f);

		if (!strcmp(f->rule_id, "managed_memory") && v->migration_gpu_ns > 0) {
			f->gain_step_ns = v->step_ns - v->migration_gpu_ns;
			f->gain_basis = "budget:page_migrations";
			budget_ns += v->migration_gpu_ns;
		} else if (ch >= 0 && replay) {
			f->gain_step_ns = step_after(r, ch);
			f->gain_basis = basis_id(ch);
			named |= (unsigned)ch;
		}
		if (f->gain_step_ns <= 0) {
			f->gain_step_ns = 0;
			f->gain_basis = NULL;
		}
	}
	/* the changes together: replayed at once (the host's work is gone
	 * in a graph: the pipeline adds nothing then), less the budget's */
	if (named & REPLAY_GRAPH)
		named &= ~(unsigned)REPLAY_HOST_HIDDEN;
	if (named || budget_ns) {
		v->all_changes_ns = (named ? step_after(r, (int)named) : v->step_ns) - budget_ns;
		if (v->all_changes_ns <= 0)
			v->all_changes_ns = 0;
	}
}
