/* summary.h - report/summary, the summary reports (the `nsys stats` reports
 * perfkit mirrors) and the one-screen overview: what reads the store and
 * yields rows.
 *
 * This is what cli/ and tui/ include. What the folder may use: model/ (the
 * read model), sink/ (the row model) and libprof, nothing else in report/.
 * analysis/, compare/, export/ and the registry may use it.
 *
 * Each report is a function that reads a store and yields rows into a sink
 * (table.h); text, CSV, JSON and HTML are renderers of the same rows. Other
 * commands (HTML report, diff, top) call them by name through registry/
 * (registry__run), giving their own sink to collect the rows.
 *
 * Reports on a table the store does not have (nsys creates tables only when
 * it has data) yield zero rows, not an error. */
#ifndef REPORT_SUMMARY_H
#define REPORT_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"
#include "sink/table.h"
#include "model/job_time.h"
#include "model/capture_windows.h" /* for cli/: summary__select_window */
#include "model/ranks.h"        /* for cli/: summary__select_ranks */
#include "model/thread_label.h" /* for cli/ and tui/: a thread's label */
#include "model/names.h"        /* for tui/: a graph launch's name */

/* The reports this folder defines, in the order `perfkit report` lists
 * them (registry/ puts every folder's tables together); the overview is a
 * table of its own, which the registry lists last. */
const struct rpt_report *summary__reports(size_t *n);
const struct rpt_report *summary__overview_reports(size_t *n);

int summary__cuda_api_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
int summary__cuda_gpu_kern_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
int summary__cuda_gpu_mem_time_sum(struct prof_store *s, struct rpt_sink *sink,
				   struct prof_error *err);
int summary__cuda_gpu_mem_size_sum(struct prof_store *s, struct rpt_sink *sink,
				   struct prof_error *err);
int summary__cuda_gpu_trace(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
int summary__nvtx_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
int summary__nvtx_kern_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
/* Python's reports (summary_python.c), over the steady-state loop or the
 * whole capture: per nn.Module and direction, its calls, host time and the
 * GPU time launched inside it, total and self (`perfkit run
 * --pytorch=modules`); per Python line, the sampled host time, self and
 * total, and the share inside CUDA calls (`--python-sampling`). */
int summary__module_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
int summary__python_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
/* Whether report name reads a span --from and --to may give instead of
 * the loop (module_sum, python_sum), and the report over that span: times
 * after the capture's start (sum_capture__time's zero), an absent end the
 * capture's own. */
bool summary__takes_span(const char *name);
int summary__run_in_span(const char *name, struct prof_store *s, bool has_from, int64_t from_ns,
			 bool has_to, int64_t to_ns, struct rpt_sink *sink, struct prof_error *err);

/* Before the first report on s: the reports of names (n of them) will run
 * on it, so that the first pass over the calls counts what they ask of
 * them (the API summary's calls by name and duration). */
void summary__expect(struct prof_store *s, const char *const *names, int n);

/* The overview: several small reports on one sink (overview_run,
 * overview_gpu_busy, overview_top_kernels, overview_transfers,
 * overview_top_ranges, and overview_warnings when there is something to warn
 * about). */
int summary__overview(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);

#endif
