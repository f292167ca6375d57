/* rules.c - the rule families of one process run over its capture
 * (rules.h): the context made, a capture without GPU work said so, every
 * family in order (a timing rule skipped under kernel replay), the
 * findings sorted. */
#include "rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diagnose/ahead.h"
#include "analysis/diagnose/diagnose.h"
#include "analysis/timeline/gpu_idle.h"
#include "api_groups.h"
#include "kernel_groups.h"
#include "analysis/timeline/timeline_units.h"
#include "model/context_failure.h"
#include "prof/error.h"

/* Each id of a timing rule, skipped with the reason. */
static int skip_under_replay(struct diag_context *ctx, const struct diag_rule *rule, struct prof_error *err)
{
	for (const char *id = rule->id; *id;) {
		size_t len = strcspn(id, "+");
		char one[64];

		snprintf(one, sizeof one, "%.*s", (int)len, id);
		if (diag__skip(ctx, one, "kernel replay (--metrics) serialised and slowed this run, so its host "
					 "times, idle gaps and launch costs are the profiler's: for these rules, "
					 "diagnose a capture made without --metrics"))
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		id += len + (id[len] == '+');
	}
	return 0;
}

int diag__run_family(struct diag_context *ctx, const struct diag_rule *family, struct prof_error *err)
{
	for (const struct diag_rule *rule = family; rule->id; rule++) {
		int rc = ctx->report->replayed && rule->timing ? skip_under_replay(ctx, rule, err)
							       : rule->run(ctx, err);

		if (rc)
			return rc;
	}
	return 0;
}

/* A context that failed ends the program's GPU work where it failed, and
 * takes the GPU times CUPTI had not read back: said above the findings,
 * which judge only the work that has times. */
static int note_failure(struct prof_store *store, struct diag_report *r, struct prof_error *err)
{
	struct sum_context_failure f;
	int rc = sum_context_failure__find(store, &f, err);

	if (rc < 0)
		return rc;
	sum_context_failure__say(&f, r->failure, sizeof r->failure);
	/* The trace knows the call that reported the failure, not the kernel
	 * that caused it: the next step is a tool that does. */
	if (f.failed)
		snprintf(r->failure_next, sizeof r->failure_next,
			 "run the program under `compute-sanitizer` (`compute-sanitizer --tool memcheck "
			 "PROGRAM`): it names the kernel and the access that failed%s",
			 r->pytorch ? "; in PyTorch, CUDA_LAUNCH_BLOCKING=1 also makes the traceback "
				      "point at the operation that launched it" : "");
	sum_context_failure__say_untimed(&f, r->untimed, sizeof r->untimed);
	return 0;
}

/* What the run made that keep's reader shows too: the idle attribution
 * (the critical path's rule left the path there itself). */
static void keep_timeline(struct diag_context *ctx)
{
	struct timeline_unit *x = ctx->keep;

	timeline_unit__note(x, ctx);
	if (!x->idle) {
		x->idle = ctx->idle;
		ctx->idle = NULL;
	}
}

int diag__run_process(struct prof_store *store, const struct diag_settings *settings,
		      struct timeline_unit *keep, struct diag_report **out, struct prof_error *err)
{
	return diag__run_process_in(store, settings, NULL, keep, out, err);
}

static int run_process(struct prof_store *store, const struct diag_settings *settings,
		       const struct sum_window *known, struct timeline_unit *keep, bool ahead,
		       struct diag_report **out, struct prof_error *err);

/* The passes a diagnosis that runs alone makes ahead (diagnose/ahead.h). */
static const struct diag_ahead_pass ahead_passes[DIAG_AHEAD_PIECES] = {
	[DIAG_AHEAD_PROGRAM] = { diag_program__make, free },
	[DIAG_AHEAD_BUSY] = { diag_busy__make, diag_busy__free },
	[DIAG_AHEAD_LAUNCH_SCAN] = { launch_scan__make, launch_scan__free },
	[DIAG_AHEAD_KERNEL_GROUPS] = { kernel_groups__make, kernel_groups__free_made },
	[DIAG_AHEAD_API_GROUPS] = { api_groups__make, api_groups__free_made },
};

int diag__run_process_in(struct prof_store *store, const struct diag_settings *settings,
			 const struct sum_window *known, struct timeline_unit *keep,
			 struct diag_report **out, struct prof_error *err)
{
	return run_process(store, settings, known, keep, false, out, err);
}

int diag__run_alone(struct prof_store *store, const struct diag_settings *settings,
		    struct timeline_unit *keep, struct diag_report **out, struct prof_error *err)
{
	return run_process(store, settings, NULL, keep, true, out, err);
}

static int run_process(struct prof_store *store, const struct diag_settings *settings,
		       const struct sum_window *known, struct timeline_unit *keep, bool ahead,
		       struct diag_report **out, struct prof_error *err)
{
	const struct diag_rule *const families[] = {
		diag_rules_nsys, diag_rules_transfer, diag_rules_managed, diag_rules_alloc,
		diag_rules_launch, diag_rules_kernel, diag_rules_memory, diag_rules_host,
		diag_rules_critical_path, diag_rules_gpu_metrics, diag_rules_precision,
	};
	struct diag_context ctx;
	struct diag_report *r;
	int rc;

	*out = NULL;
	rc = ahead ? diag_context__init_ahead(&ctx, store, settings, known, ahead_passes, err)
		   : diag_context__init_in(&ctx, store, settings, known, err);
	if (rc)
		goto out;
	ctx.keep = keep;
	r = ctx.report;
	r->gpu_busy_ns = ctx.busy_ns;
	rc = note_failure(store, r, err);
	if (rc)
		goto out;
	/* Without GPU work every rule would measure against nothing: a program
	 * that never reached the GPU "spends 100% on the host". */
	if (ctx.busy_ns == 0) {
		if (diag__skip(&ctx, "every rule", "the window holds no GPU activity (no kernel, "
			       "copy or memset): nothing to diagnose")) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			goto out;
		}
		goto done;
	}
	/* the verdict first: the rules' advice is for the step's bound */
	rc = diag_verdict__make(&ctx, &r->verdict, err);
	if (rc)
		goto out;
	r->program.bound = r->verdict.valid ? (int)r->verdict.bound : -1;
	/* without a verdict (or a loop) every clause stays: nothing to tell */
	r->program.dispatch = !r->verdict.valid ||
		(r->verdict.bound == BOUND_LAUNCH_HOST && r->program.kernels > 0 &&
		 (double)r->verdict.part_ns[PART_HOST_WORK] <=
			 (double)DISPATCH_NS_PER_LAUNCH * (double)r->program.kernels /
				 (double)(r->verdict.steps > 0 ? r->verdict.steps : 1));
	/* input advice where the step waits for its input, not for a loader
	 * that is merely there */
	r->program.input_wait =
		!r->verdict.valid || r->program.iterations <= 0
			? prog_model__has(&r->program, "input", 5, &(bool){ false })
			: r->program.h2d_copies >= r->program.iterations &&
				  (double)r->program.input_gap_ns / (double)r->program.iterations >=
					  0.25 * (double)r->verdict.part_ns[PART_HOST_WORK] &&
				  r->verdict.part_ns[PART_HOST_WORK] > 0;
	for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
		rc = diag__run_family(&ctx, families[f], err);
		if (rc)
			goto out;
	}
	{
		int64_t dram_roof_ns = 0;

		for (int i = 0; i < r->nfindings; i++)
			if (!strcmp(r->findings[i].rule_id, "dram_roof"))
				dram_roof_ns = r->findings[i].time_ns;
		diag_verdict__by_samples(r, dram_roof_ns);
		r->program.bound = r->verdict.valid ? (int)r->verdict.bound : -1;
	}
	if (diag_report__fold(&ctx, r)) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	diag_gains__apply(r);
	if (diag_report__sort(r)) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
done:
	if (keep)
		keep_timeline(&ctx);
	*out = r;
	ctx.report = NULL;
out:
	diag_ahead__finish(ctx.ahead);
	gpu_idle_result__delete(ctx.idle);
	kernel_groups__free(ctx.kernel_groups);
	api_groups__free(ctx.api_groups);
	diag_context__exit(&ctx);
	return rc;
}
