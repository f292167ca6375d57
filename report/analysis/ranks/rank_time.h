/* rank_time.h - where each rank's time goes: its steps (the loop finder of
 * model/window.c run on that rank's rows alone) and, over its window,
 * its GPU's busy time split into compute and communication (NCCL's
 * kernels), the communication hidden under compute, the exposed rest and
 * the idle time. What `perfkit report --report=rank_sum` prints and the
 * HTML report's Ranks section draws.
 *
 * compute: kernels other than NCCL's, copies and memsets, as a union
 * (work on several streams at once counts once); communication: NCCL's
 * kernels, likewise; hidden: the time both run at once; exposed:
 * communication alone; idle: the window less the union of both. So
 * compute - hidden + hidden + exposed + idle = the window. */
#ifndef REPORT_RANK_TIME_H
#define REPORT_RANK_TIME_H

#include <stdint.h>

#include "analysis/core/intervals.h"
#include "model/window.h"

struct rank_time {
	int rank;
	int64_t global_pid;
	char label[256];               /* "rank 1 · node7 · GPU 1 (GPU-8c1f2a3b)" */
	struct sum_window w;           /* this rank's loop */
	struct sum_step *steps;        /* its iterations (none without a loop) */
	int nsteps;
	/* each step's GPU span: the first start and last end of the work its
	 * calls launched (NVTX steps; -1 where it launched none; NULL for
	 * steps marked by a kernel, which are GPU periods already) */
	int64_t *step_gpu_start_ns, *step_gpu_end_ns;
	int64_t step_med_ns, step_p95_ns; /* of the steps' durations, each from the start of its
					   * GPU work to the next step's (rank_time.c); -1 without steps */
	int64_t window_ns;
	int64_t busy_ns, compute_ns, comm_ns, hidden_ns, exposed_ns, idle_ns;
	int64_t kernels;               /* kernels other than NCCL's starting in the window */
	int64_t rows_left_out;         /* GPU rows whose end precedes their start */
	/* Read only with RANK_TIME_JOB: what diagnose's job rules need of the
	 * rank past these numbers, so that they need not read its rows again
	 * (a job of many captures keeps only these of each). */
	struct diag_intervals hidden;  /* the compute under its communication in the window:
					* a wait inside an NCCL kernel runs beside compute
					* only there */
	int64_t slowed_ns;             /* what its kernels in the window ran longer beside its
					* own NCCL kernels than alone (job_judge__contention_ns) */
};

/* What rank_times__load and rank_time__load_process read of a rank. */
enum rank_time_flags {
	RANK_TIME_JOB = 1 << 0,   /* also hidden and slowed_ns */
	RANK_TIME_ALONE = 1 << 1, /* the store holds that process's rows alone: no
				   * narrowing (sum_ranks__holds_only) */
};

struct rank_times {
	struct rank_time *v;
	int n;
};

/* The chosen ranks' time (every rank without --rank), in rank order, each
 * rank's loop searched for with o (NULL: the defaults diagnose documents);
 * flags: RANK_TIME_JOB or 0. */
int rank_times__load(struct prof_store *s, const struct sum_loop_options *o, unsigned flags,
		     struct rank_times *out, struct prof_error *err);
void rank_times__exit(struct rank_times *t);
/* One process's time, its rows alone (the views narrowed to it and put
 * back after), as rank_times__load finds each rank's in a capture of
 * several processes: for a job read one capture at a time (report/job).
 * rank and label are left for the caller. */
int rank_time__load_process(struct prof_store *s, const struct sum_loop_options *o,
			    int64_t global_pid, unsigned flags, struct rank_time *t, struct prof_error *err);
/* What a rank_time holds besides itself (its steps, hidden). */
void rank_time__exit(struct rank_time *t);

/* The p-th percentile (0..100) of n durations by nearest rank, sorting
 * them; -1 when n is 0. */
int64_t rank_time__percentile(int64_t *v, int n, double p);

#endif
