/* diagnose_job.h - the diagnosis of a job of several ranks (diagnose_job.c)
 * and what its rules (rules_ranks.c) read: each rank's steps and time,
 * NCCL's calls and collectives, and how long each call waited for the
 * last rank of its collective.
 *
 * diag__run hands a job here: each chosen rank is diagnosed alone (the
 * store's views narrowed to its rows, its own loop for a window), as one
 * process would be; the findings are merged, a rule's finding said once
 * when every rank has it; then the job's rules run over all of them. */
#ifndef REPORT_DIAGNOSE_JOB_H
#define REPORT_DIAGNOSE_JOB_H

#include "analysis/diagnose/diagnose.h"
#include "analysis/ranks/nccl.h"
#include "analysis/ranks/rank_time.h"

struct diag_job {
	const struct sum_ranks *ranks;
	struct rank_times times;       /* the chosen ranks, in rank order */
	struct nccl_calls calls;
	struct nccl_collectives cols;
	/* per call (index into calls.v): the time it waited for the last
	 * rank of its collective (job_judge__waits); -1 where its collective
	 * has one call or a call with a bad span */
	int64_t *wait_ns;
	/* per collective: the call of the last arrival (-1: none), and whether
	 * every call of it started in its rank's window */
	int *last_call;
	bool *in_window;
	double link_bytes_per_ns;      /* nccl_link_bytes_per_ns; 0: not measured */
	bool one_host;                 /* every rank on one host */
};

/* What the job's rules share (rules_ranks.c, rules_collectives.c): a
 * process's index among the ranks (times.v; -1: none), a rank's steps (1
 * without a loop), a time as a share of its window, the ranks a finding is
 * on (those with on[i], each with ns[i] of its window), and "rank 0 1.2 ms,
 * rank 1 3.4 ms" for the ranks with on[i] (past DIAG_JOB_LIST_RANKS of
 * them, the least and the most). */
#define DIAG_JOB_LIST_RANKS 8
#define DIAG_JOB_NO_NCCL "the job has no NCCL collectives (no NCCL kernels)"
enum diag_job_unit { DIAG_JOB_NS, DIAG_JOB_SHARE, DIAG_JOB_COUNT };
int diag_job__rank_index(const struct diag_job *j, int64_t global_pid);
double diag_job__steps(const struct rank_time *t);
double diag_job__share(const struct rank_time *t, int64_t ns);
int diag_job__set_ranks(struct diag_finding *f, const struct diag_job *j, const bool *on, const int64_t *ns,
			int share_rank);
void diag_job__amounts(const struct diag_job *j, const bool *on, const double *v, enum diag_job_unit unit,
		       char *buf, size_t cap);

/* A rank's GPU work and host calls over a span, as unions: the
 * straggler's stretch before a collective (rules_ranks.c), the compute
 * beside the exposed communication (rules_collectives.c). */
struct diag_rank_work {
	int64_t pid;
	bool loaded;
	struct diag_intervals compute;  /* kernels other than NCCL's */
	struct diag_intervals copies;   /* copies and memsets */
	struct diag_intervals busy;     /* both: rank_sum's Compute */
	struct diag_intervals api;      /* its threads' CUDA calls (with_api) */
	int64_t *kernel_starts;         /* of compute's kernels, in start order */
	int nkernels, cap_kernels;
};
#define DIAG_JOB_NOT_NCCL "(" NCCL_KERNEL_SQL("k") ") IS NOT 1"
/* w->pid's work over [lo, hi) into w (loaded set). */
int diag_job__load_work(struct diag_context *ctx, struct diag_rank_work *w, int64_t lo, int64_t hi,
			bool with_api, struct prof_error *err);
void diag_rank_work__exit(struct diag_rank_work *w);
/* The union of the (start, end) rows of sql (ordered by start; ?1, ?2 the
 * span, ?3 the process); the starts into starts->kernel_starts when
 * starts is not NULL. */
int diag_job__load_union(struct prof_store *s, const char *sql, int64_t lo, int64_t hi, int64_t pid,
			 struct diag_intervals *u, struct diag_rank_work *starts, struct prof_error *err);

/* The rank_time of a process; NULL when it is no chosen rank. */
const struct rank_time *diag_job__time_of(const struct diag_job *j, int64_t global_pid);
/* The median of the ranks' median steps; -1 when no rank has steps. */
int64_t diag_job__step_ns(const struct diag_job *j);

/* diagnose.c, for the job's diagnosis: the diagnosis of the one process
 * (or --rank's choice) the store's views show; a family of rules run in
 * ctx (timing rules skipped under kernel replay); the report's skips
 * grouped by reason; the API call view (DIAG_API_CALLS) over the views. */
int diag__run_process(struct prof_store *store, const struct diag_settings *settings,
		      struct diag_report **out, struct prof_error *err);
int diag__run_family(struct diag_context *ctx, const struct diag_rule *family, struct prof_error *err);
int diag__group_skips(struct diag_report *r);
int diag__api_view(struct diag_context *ctx, struct prof_error *err);

/* The job's diagnosis: ranks holds the chosen ranks (two or more). */
int diag__run_job(struct prof_store *store, const struct diag_settings *settings,
		  const struct sum_ranks *ranks, struct diag_report **out, struct prof_error *err);

#endif
