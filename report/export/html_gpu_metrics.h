/* html_gpu_metrics.h - the sampled GPU metrics' parts of the HTML report
 * (html_gpu_metrics.c): their plots under the GPU utilisation plot, on
 * the plots' time axis, and their section of tables. */
#ifndef REPORT_HTML_GPU_METRICS_H
#define REPORT_HTML_GPU_METRICS_H

#include <stdbool.h>

#include "html_report.h"
#include "time_axis.h"

/* The sampled metrics of each sampler over time on the axis, or a note
 * that says how to collect them. */
int html_gpu_metrics__plots(struct html_page *p, const struct time_axis *a, struct prof_error *err);
/* The section of gpu_metrics_sum's tables, for captures that have samples. */
bool html_gpu_metrics__applies(struct prof_store *s);
int html_gpu_metrics__section(struct html_page *p, struct prof_error *err);

#endif
