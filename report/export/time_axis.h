/* time_axis.h - the time axis every plot over time of the HTML report
 * uses (time_axis.c): bins of the capture's extent, so the plots line up. */
#ifndef REPORT_TIME_AXIS_H
#define REPORT_TIME_AXIS_H

#include <stdint.h>

#define PLOT_BINS 200

struct time_axis {
	int64_t base_ns, span_ns, bin_ns;
	int64_t zero_ns; /* the capture's start, which the axis' labels count from */
};

/* Where bin b (0 to PLOT_BINS: the end of the last bin) starts, on the
 * capture's clock, held at INT64_MAX. */
int64_t time_axis__bin_start_ns(const struct time_axis *a, int b);
/* Where bin b (0 to PLOT_BINS) starts, in ms since the capture's start. */
double time_axis__bin_ms(const struct time_axis *a, int b);

#endif
