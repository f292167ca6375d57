/* html_plots.h - what the plot files of the HTML report share: the time
 * axis every plot over time uses (bins of the capture's extent, so the
 * plots line up), and the sampled GPU metrics' parts of the page
 * (html_gpu_metrics.c): their plots under the GPU utilisation plot and
 * their section of tables. */
#ifndef REPORT_HTML_PLOTS_H
#define REPORT_HTML_PLOTS_H

#include <stdint.h>

#include "html_report.h"

#define PLOT_BINS 200

struct time_axis {
	int64_t base_ns, span_ns, bin_ns;
};

/* Where bin b (0 to PLOT_BINS: the end of the last bin) starts, on the
 * capture's clock, held at INT64_MAX. */
int64_t time_axis__bin_start_ns(const struct time_axis *a, int b);
/* Where bin b starts, in ms since the capture's start. */
double time_axis__bin_ms(const struct time_axis *a, int b);

/* The sampled metrics of each sampler over time on the axis, or a note
 * that says how to collect them. */
int html_gpu_metrics__plots(struct html_page *p, const struct time_axis *a, struct prof_error *err);
/* The section of gpu_metrics_sum's tables, for captures that have samples. */
bool html_gpu_metrics__applies(struct prof_store *s);
int html_gpu_metrics__section(struct html_page *p, struct prof_error *err);

#endif
