/* rules.h - report/analysis/rules, diagnose's rules: one rules_<family>.c
 * per family, each a table of rules (struct diag_rule) that read the
 * capture through the context and add findings (diagnose/context.h). The
 * engine (analysis/diagnose_run.c) runs the families of one process and,
 * on a job, the job's families.
 *
 * What the folder may use: every other analysis folder but the engine
 * above it (core, diagnose, timeline, ranks, gpu_metrics, kernel_metrics),
 * summary/, model/, sink/ and libprof. */
#ifndef REPORT_RULES_H
#define REPORT_RULES_H

#include "analysis/diagnose/context.h"

/* Rule families (rules_*.c). */
extern const struct diag_rule diag_rules_nsys[];
extern const struct diag_rule diag_rules_transfer[];
extern const struct diag_rule diag_rules_managed[];
extern const struct diag_rule diag_rules_alloc[];
extern const struct diag_rule diag_rules_launch[];
extern const struct diag_rule diag_rules_kernel[];
extern const struct diag_rule diag_rules_memory[];
extern const struct diag_rule diag_rules_host[];
extern const struct diag_rule diag_rules_critical_path[];
extern const struct diag_rule diag_rules_gpu_metrics[];
extern const struct diag_rule diag_rules_precision[];
/* The change for FP32 GEMMs on the CUDA cores, and its PyTorch sentence
 * (rules_precision.c; rules_gpu_metrics.c gives the same when it measures it). */
extern const char diag_change_tf32[], diag_pytorch_tf32[];

/* The verdict of ctx's window (verdict_budget.c): the budget of its mean
 * step on the busiest GPU and the bound (diagnose/verdict.h). */
struct diag_verdict;
struct diag_report;
int diag_verdict__make(struct diag_context *ctx, struct diag_verdict *v, struct prof_error *err);
/* Once the sampled GPU metrics' rules ran: a step the GPU sets is GPU
 * memory when its work sat at the DRAM roof (dram_roof's time, in the
 * window) for half of it or more, else GPU compute, as measured. */
void diag_verdict__by_samples(struct diag_report *r, int64_t dram_roof_ns);
/* The union of managed memory's faulting stretches in ctx's window
 * (rules_managed.c): on-demand migrations, GPU fault groups, runs of CPU
 * faults; 0 without unified-memory rows. */
int diag_managed__stretch_ns(struct diag_context *ctx, int64_t *ns, struct prof_error *err);
/* Each finding's gain (gains.c): the mean step after its change, from the
 * critical path's step replayed with the change, or from the budget. */
void diag_gains__apply(struct diag_report *r);
/* run on jobs only (analysis/diagnose_job.c) */
extern const struct diag_rule diag_rules_ranks[];
extern const struct diag_rule diag_rules_collectives[];

/* The diagnosis of one process (or the one process the store's views
 * show): every family of one process over its window, the findings
 * sorted (rules.c), the idle attribution and the critical path the rules
 * made left in keep (NULL: freed); and one family over a context, a
 * timing rule skipped under kernel replay. */
int diag__run_process(struct prof_store *store, const struct diag_settings *settings,
		      struct timeline_unit *keep, struct diag_report **out, struct prof_error *err);
/* diag__run_process for a diagnosis that runs alone, not one of a job's
 * ranks on threads of their own: the passes over the window's kernels
 * alone are made on a thread beside it (diagnose/ahead.h). */
int diag__run_alone(struct prof_store *store, const struct diag_settings *settings,
		    struct timeline_unit *keep, struct diag_report **out, struct prof_error *err);
/* The launch rules' pass over each stream's kernels in ctx's window
 * (rules_launch.c), as a piece made ahead (diagnose/ahead.h) is. */
int launch_scan__make(struct diag_context *ctx, void **out, struct prof_error *err);
void launch_scan__free(void *scan);
/* diag__run_process in known, the window diag_context__init_in takes. */
int diag__run_process_in(struct prof_store *store, const struct diag_settings *settings,
			 const struct sum_window *known, struct timeline_unit *keep,
			 struct diag_report **out, struct prof_error *err);
int diag__run_family(struct diag_context *ctx, const struct diag_rule *family, struct prof_error *err);

#endif
