/* time_axis.c - where the bins of the plots' time axis start (time_axis.h). */
#include "time_axis.h"

#include "prof/saturate.h"

int64_t time_axis__bin_start_ns(const struct time_axis *a, int b)
{
	/* (b - 1) * bin_ns, at most 199 200ths of a span rounded up, fits; one
	 * bin more may not, when the span is near INT64_MAX */
	int64_t off = b > 0 ? prof_add_saturated((int64_t)(b - 1) * a->bin_ns, a->bin_ns) : 0;

	return prof_add_saturated(a->base_ns, off);
}

double time_axis__bin_ms(const struct time_axis *a, int b)
{
	double from_zero = (double)prof_span_saturated(a->zero_ns, a->base_ns);
	double off = b < PLOT_BINS ? (double)b * (double)a->bin_ns : (double)a->span_ns;

	return (from_zero + off) / 1e6;
}
