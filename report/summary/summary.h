/* summary.h - report/summary, the summary reports (the `nsys stats` reports
 * perfkit mirrors) and the one-screen overview: what reads the store and
 * yields rows.
 *
 * This is what cli/ and tui/ include. What the folder may use: sink/ (the
 * row model) and libprof, nothing else in report/. analysis/, compare/ and
 * export/ may use it.
 *
 * Each report is a function that reads a store and yields rows into a sink
 * (table.h); text, CSV, JSON and HTML are renderers of the same rows. Other
 * commands (HTML report, diff, top) call them by name through summary__run,
 * giving their own sink to collect the rows.
 *
 * Reports on a table the store does not have (nsys creates tables only when
 * it has data) yield zero rows, not an error. */
#ifndef REPORT_SUMMARY_H
#define REPORT_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>

#include "prof/error.h"
#include "prof/store.h"
#include "sink/table.h"
#include "summary/job_time.h"
#include "summary/thread_label.h" /* for cli/ and tui/: a thread's label */

/* Run the report called name ("cuda_gpu_kern_sum", ...; "overview" is the
 * overview). Returns 0, PROF_E_USAGE for an unknown name, or another negative
 * PROF_E_* code with err filled. */
int summary__run(const char *name, struct prof_store *s, struct rpt_sink *sink,
		 struct prof_error *err);
/* `--rank=N[,M]`: from here on every report, diagnosis and export of s
 * sees only those ranks' rows (ranks as struct sum_ranks of
 * summary/query.h numbers them). PROF_E_USAGE with a one-line message for a
 * malformed list or a rank the capture does not have. */
int summary__select_ranks(struct prof_store *s, const char *list, struct prof_error *err);

/* The report names summary__run knows, in the order `perfkit report` lists
 * them; *n receives the count. "overview" is last. */
const char *const *summary__names(size_t *n);
/* The human title of a report, or NULL for an unknown name. */
const char *summary__title(const char *name);

int summary__cuda_api_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
int summary__cuda_gpu_kern_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
int summary__cuda_gpu_mem_time_sum(struct prof_store *s, struct rpt_sink *sink,
				   struct prof_error *err);
int summary__cuda_gpu_mem_size_sum(struct prof_store *s, struct rpt_sink *sink,
				   struct prof_error *err);
int summary__cuda_gpu_trace(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
int summary__nvtx_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
int summary__nvtx_kern_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);

/* Why each GPU is idle in the diagnosis window (per cause, per step, the
 * longest stretches, streams held by event waits) and the critical path of
 * the median step. They need the window `perfkit diagnose` finds, so
 * report/analysis/idle_report.c computes them; they are listed here so that
 * every reader of the report list knows them by name. */
int summary__gpu_idle_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
int summary__critical_path(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
/* The sampled GPU metrics (`perfkit run --gpu-metrics`) per device over the
 * whole capture, and averaged over the time each kernel name and NVTX range
 * name ran; report/analysis/gpu_metrics_report.c computes them, with the
 * rules that read the same averages. */
int summary__gpu_metrics_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);

/* Each rank's steps (the loop finder run on its rows alone; median and
 * 95th percentile of their durations) and, over its window, its GPU's busy
 * time split into compute, communication (NCCL's kernels), communication
 * hidden under compute, exposed communication and idle time (rank_sum);
 * NCCL's collectives by kind and message size per rank: calls, bytes,
 * kernel time (median, 95th percentile), algorithm and bus bandwidth as
 * nccl-tests computes them, against the link's bandwidth `perfkit peaks`
 * measured (nccl_sum). report/analysis/rank_report.c computes them. */
int summary__rank_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
int summary__nccl_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);

/* The overview: several small reports on one sink (overview_run,
 * overview_gpu_busy, overview_top_kernels, overview_transfers,
 * overview_top_ranges, and overview_warnings when there is something to warn
 * about). */
int summary__overview(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);

/* How many rows the overview shows in its top-N sections. */
#define SUMMARY_OVERVIEW_TOP 5

#endif
