/* gpu_metrics_reports.h - the reports analysis/gpu_metrics/ defines, and their
 * table, which registry/ lists by name with every folder's. */
#ifndef REPORT_GPU_METRICS_REPORTS_H
#define REPORT_GPU_METRICS_REPORTS_H

#include <stddef.h>

#include "sink/table.h"

/* The sampled GPU metrics (`perfkit run --gpu-metrics`) per device over the
 * whole capture, and averaged over the time each kernel name and NVTX range
 * name ran; gpu_metrics_report.c computes them, with the rules that read
 * the same averages. */
int summary__gpu_metrics_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);

const struct rpt_report *gpu_metrics__reports(size_t *n);

#endif
