/* ranks_reports.h - the reports analysis/ranks/ defines, and their
 * table, which registry/ lists by name with every folder's. */
#ifndef REPORT_RANKS_REPORTS_H
#define REPORT_RANKS_REPORTS_H

#include <stddef.h>

#include "sink/table.h"

/* Each rank's steps (the loop finder run on its rows alone; median and
 * 95th percentile of their durations) and, over its window, its GPU's busy
 * time split into compute, communication (NCCL's kernels), communication
 * hidden under compute, exposed communication and idle time (rank_sum);
 * NCCL's collectives by kind and message size per rank: calls, bytes,
 * kernel time (median, 95th percentile), algorithm and bus bandwidth as
 * nccl-tests computes them, against the link's bandwidth `perfkit peaks`
 * measured (nccl_sum). rank_report.c computes them. */
int summary__rank_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
int summary__nccl_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);

const struct rpt_report *ranks__reports(size_t *n);

#endif
