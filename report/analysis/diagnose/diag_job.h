/* diag_job.h - a job of several ranks as its rules (rules_ranks.c,
 * rules_collectives.c) read it (diag_job.c): each rank's steps and time,
 * NCCL's calls and collectives, how long each call waited for the last
 * rank of its collective, and a rank's work over a span. The engine
 * (analysis/diagnose_job.c) loads it once per job. */
#ifndef REPORT_DIAG_JOB_H
#define REPORT_DIAG_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/ranks/nccl.h"
#include "analysis/ranks/rank_time.h"
#include "context.h"
#include "model/ranks.h"

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

/* A rank's rows of table alias A (of the GPU table whose letter is T:
 * 'k' kernels, 'c' copies, 's' memsets; ?3 the process) bounded to the run
 * of rowids its process holds, noted once a job (diag_job__load): a merge
 * writes each capture's rows together, so a query of one rank seeks to
 * them instead of reading every rank's, which made the job's rules
 * quadratic in its ranks. Where nothing was noted the bound is the
 * whole table; the process condition still decides. */
#define DIAG_JOB_ROWS_TABLE "perfkit_job_rows"
#define DIAG_JOB_ROWS(A, T)                                                                   \
	A "rowid BETWEEN coalesce((SELECT lo FROM temp." DIAG_JOB_ROWS_TABLE " WHERE tbl = '" T \
	"' AND pid = ?3), -9223372036854775807 - 1) AND coalesce((SELECT hi FROM temp."         \
	DIAG_JOB_ROWS_TABLE " WHERE tbl = '" T "' AND pid = ?3), 9223372036854775807)"

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

/* The job of the chosen ranks (ranks, two or more), its loops found with
 * the settings' loop options; diag_job__exit frees it. */
int diag_job__load(struct prof_store *s, const struct diag_settings *settings, const struct sum_ranks *ranks,
		   struct diag_job *j, struct prof_error *err);
void diag_job__exit(struct diag_job *j);

#endif
