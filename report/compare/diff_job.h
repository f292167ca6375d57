/* diff_job.h - the rank a job's other ranks wait for (diff_job.c). */
#ifndef REPORT_DIFF_JOB_H
#define REPORT_DIFF_JOB_H

#include "diff.h"
#include "model/ranks.h"

/* p->straggler_rank and its figures from the collectives of s, a job
 * whose ranks p->ranks hold (rk names its processes). */
int diff_job__load_waits(struct diff_profile *p, struct prof_store *s, const struct sum_ranks *rk,
			 struct prof_error *err);

#endif
