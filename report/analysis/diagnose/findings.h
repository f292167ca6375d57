/* findings.h - what `perfkit diagnose` says of a capture: its findings
 * (rule, severity, share of the window, evidence, change, top offenders,
 * the ranks of a job they are on), the rules it skipped and why, and the
 * report holding them with its window; the report's printers (text, JSON,
 * rows) and `--save` (diagnose_print.c, diagnose_save.c). */
#ifndef REPORT_FINDINGS_H
#define REPORT_FINDINGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/core/program.h"
#include "prof/error.h"
#include "model/job_time.h"
#include "model/window.h"
#include "verdict.h"

struct rpt_sink;

enum diag_severity { DIAG_INFO = 0, DIAG_LOW = 1, DIAG_MEDIUM = 2, DIAG_HIGH = 3 };

const char *diag_severity__name(enum diag_severity s);

/* One offending kernel, call, copy group or range, with what it cost. */
struct diag_offender {
	char *name;
	int64_t count;
	int64_t time_ns;
	int64_t bytes; /* < 0: not applicable */
};

#define DIAG_MAX_OFFENDERS 5

/* A finding's share on one rank of a job: of that rank's own window. */
struct diag_rank_share {
	int rank;
	double share;
	int64_t time_ns;
};

/* A finding folded into another that names the same cause
 * (diagnose_causes.c): kept as that finding's evidence. */
struct diag_also {
	const char *rule_id, *title; /* static */
	double share;
	char *evidence;
};

struct diag_finding {
	const char *rule_id; /* static, e.g. "small_htod_copies" */
	const char *title;   /* static */
	enum diag_severity severity;
	double share;        /* 0..1 of the analysis window: the Amdahl bound */
	int64_t time_ns;     /* the time the finding touches */
	char *evidence;      /* counts, bytes, times in one paragraph */
	char *change;        /* the change to make */
	struct diag_offender top[DIAG_MAX_OFFENDERS];
	int ntop;
	/* A job of several ranks (NULL, 0 for a capture of one process): the
	 * ranks the finding is on, in rank order, each with its share;
	 * every_rank when each rank diagnosed has it; per_rank for a rule of
	 * one process run on each rank (the evidence and offenders are then
	 * share_rank's, the rank of the largest share), else a rule of the
	 * job (rules_ranks.c); share_rank: whose window share is of (-1: none). */
	struct diag_rank_share *ranks;
	int nranks;
	bool every_rank, per_rank;
	int share_rank;
	/* the findings of the same cause folded into this one */
	struct diag_also *also;
	int nalso;
	/* What the change would give (rules/gains.c): the mean step after it
	 * (0: not estimated) and how that was found ("replay:graph",
	 * "budget:page_migrations"; static). */
	int64_t gain_step_ns;
	const char *gain_basis;
	/* What the change saves one step, where the rule measures it itself
	 * (the straggler: the others' wait for it); 0: not measured */
	int64_t saves_ns;
};

/* One step replayed forward (timeline/step_replay.h), set by the
 * critical-path rule: its measured span, and the replay with each set of
 * changes (by enum replay_change's bits; [0]: as measured; 0: not
 * replayed). */
#define DIAG_NREPLAYS 32
struct diag_replay {
	bool valid;
	int64_t measured_ns;
	int64_t after_ns[DIAG_NREPLAYS];
	double pinned_bytes_per_ns;   /* the bandwidth REPLAY_PINNED used */
	/* as measured, each call less perfkit's recording cost (0: unmeasured) */
	int64_t unrecorded_ns;
	double record_launch_ns, record_alloc_ns, record_copy_ns, record_call_ns;
};

/* A rule that could not run on this capture and why (e.g. no metrics). */
struct diag_skip {
	char *rule_id;
	char *reason;
};

/* One rank of a job, as its diagnosis saw it. */
struct diag_rank_window {
	int rank;
	char *label;                /* "rank 1 · node7 · GPU 1 (GPU-8c1f2a3b)" */
	struct sum_window window;   /* its own loop */
	int64_t gpu_busy_ns;
	/* why the rules of one process ran on it (enum diag_job_why of
	 * diag_job.h); 0: only the job's rules read it */
	unsigned diagnosed;
};

struct diag_report {
	struct sum_window window;   /* the analysis window: the steady-state loop (a job:
				     * the span of its ranks' windows) */
	struct diag_finding *findings;
	int nfindings, cap_findings;
	struct diag_skip *skips;
	int nskips, cap_skips;
	bool has_metrics, has_peaks;
	bool has_gpu_samples;       /* sampled GPU metrics (--gpu-metrics): their rules ran */
	bool replayed;              /* captured with --metrics: kernel replay serialised and
				     * slowed the run; shares are of the GPU's busy time */
	bool pytorch;               /* a PyTorch program: changes say how in PyTorch terms too */
	struct diag_verdict verdict; /* the step's budget and bound (a job: see
				      * diagnose_job.c) */
	struct diag_replay replay;  /* the critical path's step, replayed */
	/* The findings whose cause is the critical path's longest part outside
	 * GPU work (NULL-ended rule ids; NULL: none names it), into which the
	 * critical path folds (diagnose_causes.c). */
	const char *const *path_causes;
	struct prog_model program;  /* what the program is built on and already does
				     * (a job: what any rank does); every change is
				     * rendered for it (prog_model__render) */
	int64_t gpu_busy_ns;        /* the GPU's busy time in the window: the base of
				     * the shares under kernel replay */
	char *path;
	/* Where the program's CUDA context failed, how to find the kernel
	 * that failed, and the GPU work without times ("" for none;
	 * sum_context_failure__say, __say_untimed). */
	char failure[256], failure_next[256], untimed[256];
	/* Rows with a bad span (SUM_BAD_SPAN), which no rule reads. */
	int64_t rows_left_out;
	/* A job of several ranks (NULL, 0 for a capture of one process): the
	 * rules of one process ran on ndiagnosed of them (every rank of a
	 * small job; ranks[i].diagnosed), each in its own window, in rank
	 * order; the job's rules (rules_ranks.c) on all of them. */
	struct diag_rank_window *ranks;
	int nranks;
	int ndiagnosed;
	/* --rank's choice (NULL, 0 without it): the ranks in rank order, and
	 * how the header names them ("rank 1 · node7 · GPU 1 (GPU-8c1f2a3b)",
	 * "ranks 0, 2") */
	int *chosen;
	int nchosen;
	char *chosen_label;
	/* A job of several hosts' captures: its time base and alignment
	 * error (sum_job_time__load), said in the header. */
	bool has_job_time;
	struct sum_job_time job_time;
};

void diag_report__delete(struct diag_report *r);

/* The ranks a job's finding is on, as text shows them: "every rank",
 * "rank 1", "ranks 0-3, 7". */
void diag_finding__rank_list(const struct diag_finding *f, char *buf, size_t cap);

/* Text for people; offenders' kernel names in their short form unless
 * full_names (JSON and CSV always carry full names). */
int diag_report__print_text(const struct diag_report *r, bool full_names, FILE *out);
/* The end (exclusive) of the run of skips from i on that share i's reason. */
int diag_report__skip_group_end(const struct diag_report *r, int i);
int diag_report__print_json(const struct diag_report *r, FILE *out);
/* The findings as flat rows (for CSV and the HTML report). */
int diag_report__rows(const struct diag_report *r, struct rpt_sink *sink);
/* Store the findings in the capture's PERFKIT_FINDINGS (`--save`), replacing
 * what an earlier diagnosis stored. */
int diag_report__save(const struct diag_report *r, const char *capture, struct prof_error *err);

/* Rules skipped for the same reason listed together, in the order the
 * reasons came. PROF_E_NOMEM. */
int diag__group_skips(struct diag_report *r);
/* The findings by share, largest first, and the skips grouped. PROF_E_NOMEM. */
int diag_report__sort(struct diag_report *r);
/* Findings as causes (diagnose_causes.c): fold the findings of one cause
 * into one, by the verdict's budget, and cap host-side findings by the
 * idle time their causes explain; order them, the verdict's bound first,
 * then by severity and share (diag_report__sort does). */
struct diag_context;
int diag_report__fold(const struct diag_context *ctx, struct diag_report *r);
/* A job's late rank explains the others' waits: its own host-side findings
 * (cpu_bound and the rules that see the same, on that rank) fold into the
 * finding at index into (the straggler) as its evidence. */
int diag_report__fold_rank_into(struct diag_report *r, int into, int rank);
void diag_report__order(struct diag_report *r);
int diag_finding__add_also(struct diag_finding *f, const char *rule_id, const char *title,
			   double share, const char *evidence);
int diag_finding__copy_also(struct diag_finding *to, const struct diag_finding *from);
void diag_finding__free_also(struct diag_finding *f);

#endif
