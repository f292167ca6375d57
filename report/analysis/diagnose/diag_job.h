/* diag_job.h - a job of several ranks as its rules (rules_ranks.c,
 * rules_collectives.c) read it (diag_job.c): each rank's steps and time,
 * NCCL's calls and collectives, how long each call waited for the last
 * rank of its collective, and where a rank's own rows are read: its own
 * diagnosis and its work over a span. The engine
 * (analysis/diagnose_job.c) gets it from one capture (diag_job__load) or
 * from the map and reduce of a job's captures (report/job), which keeps
 * of each rank only what is here. */
#ifndef REPORT_DIAG_JOB_H
#define REPORT_DIAG_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/ranks/nccl.h"
#include "analysis/ranks/rank_time.h"
#include "context.h"
#include "model/ranks.h"

struct diag_rank_work;

/* Where a rank's own rows are read: the capture that holds them, narrowed
 * to its process. diagnose: the rules of one process on its rows alone;
 * load_work: its work over [lo, hi) of the job's time base, as
 * diag_rank_work__load reads it. The chosen ranks are diagnosed on
 * several threads where the source gives each thread an arg of its own
 * (for_thread, NULL where it cannot; ended by end_thread); prepare, where
 * set, is called first for each of them in order, on one thread, for what
 * their diagnoses share. */
struct diag_job_source {
	int (*diagnose)(void *arg, int64_t global_pid, const struct diag_settings *settings,
			struct diag_report **out, struct prof_error *err);
	int (*load_work)(void *arg, int64_t global_pid, int64_t lo, int64_t hi, bool with_api,
			 struct diag_rank_work *w, struct prof_error *err);
	void *arg;
	int (*prepare)(void *arg, int64_t global_pid, struct prof_error *err);
	void *(*for_thread)(void *arg);
	void (*end_thread)(void *thread_arg);
};

struct diag_job {
	const struct sum_ranks *ranks;
	struct rank_times times;       /* the chosen ranks, in rank order, each with its
					* hidden intervals and slowed_ns (RANK_TIME_JOB) */
	struct nccl_calls calls;        /* by process, then kernel start */
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
	struct nccl_size_evidence sizes; /* why calls have no message size */
	struct diag_job_source src;
	/* how many ranks have their own rules run on them (rank_sum's
	 * numbers and the collectives are read of every rank) */
	int every_rank_up_to;
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

/* Why a rank's own rules run (diag_job__choose): a job of at most
 * job.every_rank_up_to ranks has them run on every rank; a larger one on
 * the ranks the verdict and the job's rules are about. */
enum diag_job_why {
	DIAG_JOB_EVERY = 1 << 0,    /* every rank is */
	DIAG_JOB_SLOWEST = 1 << 1,  /* the longest step: the job's pace, the verdict's */
	DIAG_JOB_MEDIAN = 1 << 2,   /* the median step: what a rank typically has */
	DIAG_JOB_AWAITED = 1 << 3,  /* the others wait for it most at the collectives */
};
/* why[i] for times.v[i] (0: its own rules do not run); how many run, or
 * PROF_E_NOMEM. */
int diag_job__choose(const struct diag_job *j, unsigned *why);
/* "the slowest step and the median step" */
void diag_job__why_words(unsigned why, char *buf, size_t cap);

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

/* DIAG_JOB_ROWS's runs in s: each process's lowest and highest rowid in
 * each GPU table, one pass a table (a table that cannot say is left out). */
int diag_job__note_rows(struct prof_store *s, struct prof_error *err);

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
/* w->pid's work over [lo, hi) into w (loaded set), read where the job's
 * source reads it. */
int diag_job__load_work(const struct diag_job *j, struct diag_rank_work *w, int64_t lo, int64_t hi,
			bool with_api, struct prof_error *err);
/* pid's work over [lo, hi) in s, each time moved by by_ns (the store's
 * times are the job's less by_ns), into w (loaded set); its API calls too
 * where calls is s's call source (sum_api_calls), NULL: none. */
int diag_rank_work__load(struct prof_store *s, int64_t pid, int64_t by_ns, int64_t lo, int64_t hi,
			 const char *calls, struct diag_rank_work *w, struct prof_error *err);
void diag_rank_work__exit(struct diag_rank_work *w);

/* The rank_time of a process; NULL when it is no chosen rank. */
const struct rank_time *diag_job__time_of(const struct diag_job *j, int64_t global_pid);
/* The median of the ranks' median steps; -1 when no rank has steps. */
int64_t diag_job__step_ns(const struct diag_job *j);

/* The job of the chosen ranks (ranks, two or more) of one capture, its
 * loops found with the settings' loop options, its ranks' own rows read
 * from s; diag_job__exit frees it. */
int diag_job__load(struct prof_store *s, const struct diag_settings *settings, const struct sum_ranks *ranks,
		   struct diag_job *j, struct prof_error *err);
/* The loop options of settings, as diag_job__load and a job's map use them. */
void diag_job__loop_options(const struct diag_settings *settings, struct sum_loop_options *o);
/* Once ranks, times, calls (ranks set), link_bytes_per_ns, sizes and src
 * are in: the collectives matched, each call's wait, one_host,
 * every_rank_up_to. */
int diag_job__prepare(struct diag_job *j, const struct diag_settings *settings, struct prof_error *err);
void diag_job__exit(struct diag_job *j);

#endif
