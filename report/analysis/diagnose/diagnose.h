/* diagnose.h - `perfkit diagnose`: rules that read a capture and say what is
 * slow, why, how much of the run it touches and what to change.
 *
 * The engine picks an analysis window (the steady-state loop when it can find
 * one, else the whole capture), loads the GPU busy intervals once, and runs
 * every rule over the window. Each rule lives in a report/analysis/rules_<family>.c
 * file and adds findings through diag__add(). Rules that need hardware
 * metrics say so instead of guessing when the capture has none.
 *
 * Thresholds live in one table (diag_settings) with documented defaults;
 * `--set key=value` and a JSON file override them. docs/diagnose.md lists
 * every key. */
#ifndef REPORT_DIAGNOSE_H
#define REPORT_DIAGNOSE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "prof/error.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "summary/query.h"
#include "analysis/core/program.h"
#include "verdict.h"

struct rpt_sink;
struct diag_report;

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
};

/* Findings as causes (diagnose_causes.c): fold the findings of one cause
 * into one, by the verdict's budget; order them, the verdict's bound first,
 * then by severity and share. */
struct diag_context;
int diag_report__fold(const struct diag_context *ctx, struct diag_report *r);
void diag_report__order(struct diag_report *r);
int diag_finding__add_also(struct diag_finding *f, const char *rule_id, const char *title,
			   double share, const char *evidence);
int diag_finding__copy_also(struct diag_finding *to, const struct diag_finding *from);
void diag_finding__free_also(struct diag_finding *f);

/* A rule that could not run on this capture and why (e.g. no metrics). */
struct diag_skip {
	char *rule_id;
	char *reason;
};

/* ---- settings (thresholds) ------------------------------------------- */

struct diag_setting_def {
	const char *key;
	double value; /* the default */
	const char *doc;
};

struct diag_settings {
	double *values; /* one per entry of diag_setting_defs, same order */
};

extern const struct diag_setting_def diag_setting_defs[];
extern const int diag_nsetting_defs;

int diag_settings__init(struct diag_settings *s);
void diag_settings__exit(struct diag_settings *s);
/* "key=value"; PROF_E_USAGE with a message for an unknown key or a bad value. */
int diag_settings__parse(struct diag_settings *s, const char *assignment, struct prof_error *err);
/* A JSON object {"key": number, ...}. */
int diag_settings__load_json(struct diag_settings *s, const char *path, struct prof_error *err);
/* The value of a known key; aborts on an unknown key (a programming error). */
double diag_settings__get(const struct diag_settings *s, const char *key);

/* ---- the analysis --------------------------------------------------- */

struct diag_interval {
	int64_t start_ns, end_ns;
};

/* One rank of a job, as its diagnosis saw it. */
struct diag_rank_window {
	int rank;
	char *label;                /* "rank 1 · node7 · GPU 1 (GPU-8c1f2a3b)" */
	struct sum_window window;   /* its own loop */
	int64_t gpu_busy_ns;
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
	 * rules of one process ran on each rank in its own window, in rank
	 * order; the job's rules (rules_ranks.c) on all of them. */
	struct diag_rank_window *ranks;
	int nranks;
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

/* What every rule sees. */
struct gpu_idle_result;
struct diag_job;

struct diag_context {
	struct prof_store *store;
	const struct diag_settings *settings;
	struct diag_report *report;
	const struct sum_window *w;
	/* Union of GPU activity (kernels, copies, sets) inside the window, sorted. */
	struct diag_interval *busy;
	int nbusy;
	int64_t busy_ns;
	bool has_kernel, has_memcpy, has_memset, has_sync_table, has_memory_events;
	bool has_api_calls;         /* CUDA API calls (runtime or driver) in DIAG_API_CALLS */
	struct gpu_idle_result *idle; /* the idle attribution, made on first use (gpu_idle__of) */
	const struct diag_job *job; /* the job's ranks and collectives, for the job's rules
				     * (rules_ranks.c, diagnose_job.h); NULL elsewhere */
};

/* The temporary view of every CUDA API call, runtime and driver (columns
 * start, end, globalTid, correlationId, nameId); join SUM_API_NAMES
 * (summary/query.h) for the names, as every report shows them. */
#define DIAG_API_CALLS "perfkit_api_calls"

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
void diag_context__exit(struct diag_context *ctx);

/* Run every rule; the report's findings come sorted by share, largest first.
 * A job of several ranks (--rank's choice of them) is diagnosed rank by
 * rank, each in its own window, the findings merged (one finding said once
 * when every rank has it), and the job's rules added. */
int diag__run(struct prof_store *store, const struct diag_settings *settings,
	      struct diag_report **out, struct prof_error *err);
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

/* ---- for rule files ------------------------------------------------- */

/* Add a finding; severity is derived from share unless capped lower by
 * max_severity. evidence/change are printf-formatted by the caller first
 * (diag__fmt). Takes ownership of evidence and change. Returns the new finding
 * (to fill top offenders) or NULL on allocation failure. */
struct diag_finding *diag__add(struct diag_context *ctx, const char *rule_id, const char *title,
			       double share, int64_t time_ns, enum diag_severity max_severity,
			       char *evidence, char *change);
struct diag_tally;
/* diag__add for a finding whose offenders are a tally's: the tally is
 * sorted by time and its first entries become the finding's top; time_ns
 * gives the share as well. */
struct diag_finding *diag__add_ranked(struct diag_context *ctx, struct diag_tally *t,
				      const char *rule_id, const char *title, int64_t time_ns,
				      enum diag_severity max_severity, char *evidence, char *change);
void diag__offender(struct diag_finding *f, const char *name, int64_t count, int64_t time_ns,
		    int64_t bytes);
int diag__skip(struct diag_context *ctx, const char *rule_id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
char *diag__fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double diag__get(const struct diag_context *ctx, const char *key);
/* The severity a share earns by the settings' thresholds. */
enum diag_severity diag__severity_of(const struct diag_context *ctx, double share);
/* Whether the capture is of a PyTorch program: kernels from libtorch (ATen)
 * or torch.compile, or a command line naming torch. */
int diag__detect_pytorch(struct prof_store *s, bool *pytorch, struct prof_error *err);
/* The change with its PyTorch sentence appended when the capture is a
 * PyTorch program (ctx->report->pytorch); takes ownership of change. */
char *diag__with_pytorch(const struct diag_context *ctx, char *change, const char *pytorch);
/* The PyTorch sentences of changes that several rules make (a rule and the
 * critical path naming the same cause advise alike). */
extern const char diag_pytorch_host_work[], diag_pytorch_sync[], diag_pytorch_alloc[],
	diag_pytorch_sync_copy[], diag_pytorch_launch[];
/* Which end of the window a query stops at: GPU work runs on to end_ns, API
 * calls stop at host_end_ns (see struct sum_window). */
enum diag_side { DIAG_GPU_SIDE, DIAG_HOST_SIDE };
/* Open sql with ?1 bound to the window's start and ?2 to the end of its
 * side; further parameters are the caller's to bind. */
int diag__open_window(const struct diag_context *ctx, const char *sql, enum diag_side side,
		      struct prof_cursor **out, struct prof_error *err);
double diag__share(const struct diag_context *ctx, int64_t ns);
int64_t diag__window_ns(const struct diag_context *ctx);
/* GPU busy time inside [a, b). */
int64_t diag__busy_in(const struct diag_context *ctx, int64_t a, int64_t b);

/* Time intervals (intervals.c): a list in any order, or, built with
 * diag_intervals__merge, a union kept sorted and disjoint, in which work
 * that runs at once (on several streams or threads) counts once. */
struct diag_intervals {
	struct diag_interval *v;
	int n, cap;
};
/* Appends [start, end) as it is; an empty interval is dropped. PROF_E_NOMEM. */
int diag_intervals__push(struct diag_intervals *l, int64_t start, int64_t end);
/* Adds [start, end) to a union built in start order: it merges into the last
 * interval where the two overlap or touch. PROF_E_NOMEM. */
int diag_intervals__merge(struct diag_intervals *u, int64_t start, int64_t end);
/* Of a union: its length, the length of [a, b) it covers, and the index of
 * its first interval ending after t (n when none does). */
int64_t diag_intervals__length(const struct diag_intervals *u);
int diag_intervals__first_ending_after(const struct diag_intervals *u, int64_t t);
int64_t diag_intervals__covered(const struct diag_intervals *u, int64_t a, int64_t b);
/* The length of the union of a list's intervals inside [lo, hi); sorts the
 * list by start. */
int64_t diag_intervals__union_ns(struct diag_intervals *l, int64_t lo, int64_t hi);
/* A list made a union in place: sorted by start, overlapping and touching
 * intervals merged. */
void diag_intervals__unite(struct diag_intervals *l);
/* The time two unions cover at once (both sorted and disjoint). */
int64_t diag_intervals__overlap_ns(const struct diag_intervals *a, const struct diag_intervals *b);
void diag_intervals__exit(struct diag_intervals *l);
/* The union of the (start, end) rows of sql, which orders them by start and
 * binds ?1 and ?2 as diag__open_window does, clipped to the window's side. */
int diag__load_union(const struct diag_context *ctx, const char *sql, enum diag_side side,
		     struct diag_intervals *u, struct prof_error *err);
/* Human units into a caller buffer. */
const char *diag__ns(char *buf, size_t cap, int64_t ns);
const char *diag__bytes(char *buf, size_t cap, double bytes);
/* Per-iteration divisor: iterations, or 1 when no loop was found. */
double diag__per_iter(const struct diag_context *ctx);
/* The SQL fragment for a kernel's name in nsys and perfkit stores. */
#define DIAG_KERNEL_NAME_SQL \
	"coalesce((SELECT value FROM " PROF_T_STRINGS " WHERE id = k.demangledName)," \
	" (SELECT value FROM " PROF_T_STRINGS " WHERE id = k.shortName), '?')"

/* A small group-by in C for offenders: key -> count, time, bytes. */
struct diag_tally_entry {
	char *key;
	int64_t count, time_ns, bytes;
	double aux; /* rule-specific (e.g. a duration sum for a median) */
};
struct diag_tally {
	struct diag_tally_entry *e;
	int n, cap;
};
/* Returns the entry for key (created with zeros), or NULL when out of memory. */
struct diag_tally_entry *diag_tally__get(struct diag_tally *t, const char *key);
void diag_tally__sort_by_time(struct diag_tally *t);
/* The first DIAG_MAX_OFFENDERS entries as offenders of f. */
void diag_tally__offenders(const struct diag_tally *t, struct diag_finding *f);
void diag_tally__exit(struct diag_tally *t);

/* Rule families (rules_*.c). */
extern const struct diag_rule diag_rules_nsys[];
extern const struct diag_rule diag_rules_transfer[];
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
/* run on jobs only (diagnose_job.c) */
extern const struct diag_rule diag_rules_ranks[];
extern const struct diag_rule diag_rules_collectives[];

#endif
