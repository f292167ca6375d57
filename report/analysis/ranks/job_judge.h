/* job_judge.h - the decisions of a job's rules (rules_ranks.c) as pure
 * functions of numbers, so that tests can pin each one down with values:
 * how long each rank waited at one collective, whether one rank is the
 * straggler, how uneven the ranks' compute is, what the straggler did
 * more than the others before a collective, and whether overlap could hide
 * the exposed communication. */
#ifndef REPORT_JOB_JUDGE_H
#define REPORT_JOB_JUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The time each of a collective's n calls waited for the last rank to
 * arrive, into wait[]; returns the index of the last arrival (the latest
 * kernel start; the first of equals), -1 when n < 1.
 *
 * A collective ends on its ranks together, so a rank that arrives early
 * spends the difference inside its kernel. Two measures of it: the last
 * arrival's start less this rank's, which also counts anything that
 * starts the ranks' kernels apart besides readiness (ranks sharing one GPU
 * are time-sliced, a few ms apart; clocks of several hosts agree only so
 * far), and this rank's kernel time less the last arrival's, which also
 * counts a collective that does not end together on every rank (a
 * broadcast's root, a send before its receive). Each inflates where the
 * other does not: the wait is the smaller, never below 0. */
int job_judge__waits(const int64_t *start, const int64_t *dur, int n, int64_t *wait);

/* One rank's lateness over the collectives of the window. */
struct job_lateness {
	int64_t late_count;   /* collectives it arrived last at, by the margin */
	int64_t late_wait_ns; /* the others' mean wait at those collectives, summed */
};

/* The straggler: the rank (index into v) that the most waiting at late
 * collectives was for, when it arrived last at min_count of them or more
 * and the waiting for it is at least min_fraction of the waiting at all of
 * them; -1 when no rank is (a balanced job: its late collectives, if any,
 * are late for one rank or another). */
int job_judge__straggler(const struct job_lateness *v, int n, int64_t min_count, double min_fraction);

/* Of n values (compute per step), the largest's excess over the smallest
 * as a fraction of the largest, the indexes of both in *hi and *lo; 0
 * (and -1, -1) when n < 2 or the largest is not above 0. */
double job_judge__imbalance(const double *v, int n, int *hi, int *lo);

/* One kernel of a rank: its launch configuration (the kernel's name and
 * its grid and block), its time, and whether one of the rank's own NCCL
 * kernels ran beside it. */
struct job_kernel {
	int64_t name;
	int32_t grid[3], block[3];
	int64_t dur_ns;
	bool beside_comm;
};

/* What n kernels of one rank ran longer beside the rank's NCCL kernels
 * than the same launch configuration without one beside it (its median
 * time then): the sum over those beside of their time past that median;
 * a configuration never run alone adds nothing. A rank that waits at a
 * collective spins in its NCCL kernel, which holds SMs and memory
 * bandwidth while its compute runs: the compute slows for the wait, which
 * is no more work of the rank's own. Sorts v. */
int64_t job_judge__contention_ns(struct job_kernel *v, int n);

/* Where a rank's time from the end of its previous collective to its
 * arrival at the next went (averages over the late collectives). */
struct job_gap {
	double gap_ns;       /* the whole stretch */
	double compute_ns;   /* its GPU ran kernels (other than NCCL's) */
	double copies_ns;    /* its GPU copied or set memory */
	double host_ns;      /* its GPU idle while no thread of it was in a CUDA call */
	double calls_ns;     /* its GPU idle while a thread was in a CUDA call */
	double kernels;      /* kernels (other than NCCL's) started in it */
};

enum job_cause {
	JOB_CAUSE_NONE,      /* the straggler did no more than the others */
	JOB_CAUSE_HOST,      /* its host's own work kept its GPU waiting */
	JOB_CAUSE_MORE_GPU,  /* its GPU ran more kernels */
	JOB_CAUSE_SLOW_GPU,  /* its GPU ran as many kernels, for longer */
	JOB_CAUSE_COPIES,    /* it copied longer */
	JOB_CAUSE_CALLS,     /* its host sat in CUDA calls while its GPU waited */
};

/* Adds one stretch's parts to a sum of stretches. */
void job_gap__add(struct job_gap *sum, const struct job_gap *one);

/* What the straggler s did more than the rank w that waited, the largest
 * excess of the four; the GPU's splits by the kernels it ran (more than
 * w's by a tenth: more work, else the same work slower). NONE when no
 * excess is above 0. *extra_ns: that excess. */
enum job_cause job_judge__cause(const struct job_gap *s, const struct job_gap *w, double *extra_ns);

/* Whether overlapping communication with compute could hide at least half
 * of the exposed communication: the compute that has no communication
 * beside it yet (compute - hidden) is at least half the exposed time. */
bool job_judge__overlap_can_hide(int64_t exposed_ns, int64_t compute_ns, int64_t hidden_ns);

/* Rank numbers in ascending order as "rank 3", "ranks 0, 2", "ranks 0-3, 7"
 * (runs of three or more as ranges), cut with "..." at cap. */
void job_judge__rank_list(const int *ranks, int n, char *buf, size_t cap);

#endif
