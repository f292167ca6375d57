/* context.h - what every rule sees (diagnose.c): the analysis scope of the
 * capture (analysis/core/scope.h) with the settings and the report the
 * findings go into, the rule API (add a finding, skip a rule, read a
 * threshold, a share of the window) and a rule's entry in its family. */
#ifndef REPORT_DIAG_CONTEXT_H
#define REPORT_DIAG_CONTEXT_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/intervals.h"
#include "analysis/core/scope.h"
#include "analysis/core/text.h"
#include "findings.h"
#include "settings.h"

struct diag_ahead;
struct diag_job;
struct kernel_groups;
struct api_groups;
struct diag_tally;
struct timeline_unit;

/* What every rule sees: the scope of the analysis, its members also by
 * name (ctx->store, ctx->w, ctx->busy_ns), with the settings, the report
 * the findings go into and, for the job's rules, the job. */
struct diag_context {
	union {
		struct diag_scope scope; /* for what reads the timeline (core/, timeline/) */
		struct {
			DIAG_SCOPE_FIELDS
		};
	};
	const struct diag_settings *settings;
	struct diag_report *report;
	const struct diag_job *job; /* the job's ranks and collectives, for the job's rules
				     * (rules_ranks.c, diag_job.h); NULL elsewhere */
	/* The window's idle attribution (timeline/gpu_idle.h), made once by the
	 * first rule that weighs by it (the verdict, sync_api) and freed by
	 * the run that owns the context (rules/rules.c). */
	struct gpu_idle_result *idle;
	/* The window's kernels by name (rules/kernel_groups.h), read once by
	 * the first rule that judges kernels by their names and freed by the
	 * run, as idle is. */
	struct kernel_groups *kernel_groups;
	/* The window's calls by name (rules/api_groups.h), the same way. */
	struct api_groups *api_groups;
	/* Where the run leaves that attribution and the critical path it
	 * walked (timeline/timeline_units.h) for a reader that shows them too,
	 * instead of freeing them; NULL: nowhere. */
	struct timeline_unit *keep;
	/* The passes over the GPU tables alone made on a thread of their own
	 * (ahead.h) for the steps that take them; NULL: each is made in place. */
	struct diag_ahead *ahead;
};

struct diag_rule {
	const char *id;             /* several ids joined by '+' when one pass finds them all */
	const char *title;
	int (*run)(struct diag_context *ctx, struct prof_error *err);
	bool timing;                /* judges host time, idle time or launch cost: skipped
				     * on a kernel-replay capture, whose timeline is the
				     * profiler's */
};

/* What diag__run sets up before its rules run (the API call view, the
 * window, the busy intervals), for analyses that read a capture outside the
 * rules (the gpu_idle_sum and critical_path reports): ctx->report is a new
 * report holding the window and no findings. diag_context__exit frees what
 * init made, the report included unless the caller took it (set it NULL). */
int diag_context__init(struct diag_context *ctx, struct prof_store *store,
		       const struct diag_settings *settings, struct prof_error *err);
/* diag_context__init in a window found already, with the same settings in
 * the same scope (a job's rank times find each rank's): the search is a
 * tenth of a rank's diagnosis and finds the same window again. */
int diag_context__init_in(struct diag_context *ctx, struct prof_store *store,
			  const struct diag_settings *settings, const struct sum_window *known,
			  struct prof_error *err);
/* diag_context__init_in with the passes over the GPU tables alone made on
 * a thread beside it where they can be (ahead.h), left in ctx->ahead for
 * the rules to take; the caller ends it (diag_ahead__finish) after
 * diag_context__exit or before. */
struct diag_ahead_pass;
int diag_context__init_ahead(struct diag_context *ctx, struct prof_store *store,
			     const struct diag_settings *settings, const struct sum_window *known,
			     const struct diag_ahead_pass *passes, struct prof_error *err);
/* diag_context__init for what reads only its scope (the idle attribution,
 * the critical path): without the program's model and its PyTorch test,
 * which only the rules read (the report's pytorch and program stay 0). */
int diag_context__init_scope(struct diag_context *ctx, struct prof_store *store,
			     const struct diag_settings *settings, struct prof_error *err);
void diag_context__exit(struct diag_context *ctx);
/* Set the has_* flags of ctx from the file ctx->store reads (an empty
 * table is a capture that recorded none; a missing one, an export that did
 * not trace them). */
void diag_context__note_tables(struct diag_context *ctx);

/* Add a finding; severity is derived from share unless capped lower by
 * max_severity. evidence/change are printf-formatted by the caller first
 * (diag__fmt). Takes ownership of evidence and change. Returns the new finding
 * (to fill top offenders) or NULL on allocation failure. */
struct diag_finding *diag__add(struct diag_context *ctx, const char *rule_id, const char *title,
			       double share, int64_t time_ns, enum diag_severity max_severity,
			       char *evidence, char *change);
void diag__offender(struct diag_finding *f, const char *name, int64_t count, int64_t time_ns,
		    int64_t bytes);
int diag__skip(struct diag_context *ctx, const char *rule_id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
double diag__get(const struct diag_context *ctx, const char *key);
/* The severity a share earns by the settings' thresholds. */
enum diag_severity diag__severity_of(const struct diag_context *ctx, double share);

/* The window's queries and unions (analysis/core/scope.h) for a rule. */
static inline int diag__open_window(const struct diag_context *ctx, const char *sql, enum diag_side side,
				    struct prof_cursor **out, struct prof_error *err)
{
	return diag_scope__open_window(&ctx->scope, sql, side, out, err);
}

static inline int diag__load_union(const struct diag_context *ctx, const char *sql, enum diag_side side,
				   struct diag_intervals *u, struct prof_error *err)
{
	return diag_scope__load_union(&ctx->scope, sql, side, u, err);
}

/* A share of the window (of the GPU's busy time under kernel replay), 0..1. */
double diag__share(const struct diag_context *ctx, int64_t ns);
int64_t diag__window_ns(const struct diag_context *ctx);
/* GPU busy time inside [a, b). */
int64_t diag__busy_in(const struct diag_context *ctx, int64_t a, int64_t b);

/* Per-iteration divisor: iterations, or 1 when no loop was found. */
double diag__per_iter(const struct diag_context *ctx);

#endif
