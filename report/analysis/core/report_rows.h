/* report_rows.h - what the reports this folder computes (gpu_idle_sum,
 * critical_path, rank_sum, nccl_sum) share in making their rows: cells of
 * each type, a share in percent, and the error for a sink that failed. */
#ifndef REPORT_ANALYSIS_REPORT_ROWS_H
#define REPORT_ANALYSIS_REPORT_ROWS_H

#include <stdint.h>

#include "prof/error.h"
#include "sink/table.h"

static inline struct rpt_cell int_cell(int64_t v) { return (struct rpt_cell){ .i = v }; }
static inline struct rpt_cell real_cell(double v) { return (struct rpt_cell){ .d = v }; }
static inline struct rpt_cell text_cell(const char *v)
{ return (struct rpt_cell){ .s = v, .is_null = v == NULL }; }
static inline struct rpt_cell null_cell(void) { return (struct rpt_cell){ .is_null = true }; }
/* A count or time where < 0 means unknown. */
static inline struct rpt_cell known_cell(int64_t v) { return v < 0 ? null_cell() : int_cell(v); }

/* part as a percentage of whole; 0 for an empty whole. */
static inline double percent(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* err for a sink call that failed with rc. */
static inline int sink_failed(int rc, struct prof_error *err)
{
	return rc == PROF_E_NOMEM ? prof_error__set(err, rc, "out of memory")
				  : prof_error__set(err, rc, "cannot write the report output");
}

#endif
