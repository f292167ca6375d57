/* job_time.c - the time base of a job from clock pairs: each host's capture
 * clock against its realtime clock, read together at the start and end of
 * each process. Hosts' realtime clocks are taken to agree (NTP, PTP); what
 * they do not is left for the collectives to find. Pure arithmetic on
 * values, kept in differences of nearby times so that no nanosecond is
 * lost to a double's 53 bits. */
#include "job_impl.h"

#include <math.h>

/* A capture clock that runs this far from its realtime clock has been
 * stepped, not drifted: its rate is not used. */
#define MAX_RATE 1e-3

void job_host_clock__add(struct job_host_clock *h, const struct job_capture *c)
{
	if (c->has_clock_start &&
	    (!h->has_start || c->clock_start.timestamp_ns < h->start.timestamp_ns)) {
		h->start = c->clock_start;
		h->has_start = true;
	}
	if (c->has_clock_end && (!h->has_end || c->clock_end.timestamp_ns > h->end.timestamp_ns)) {
		h->end = c->clock_end;
		h->has_end = true;
	}
}

/* realtime - timestamp at the start pair, and how it moves per ns of
 * timestamp towards the end pair (0 without one). */
static void offset_line(const struct job_host_clock *h, int64_t *offset, double *rate)
{
	*offset = h->start.realtime_ns - h->start.timestamp_ns;
	*rate = 0;
	if (h->has_end && h->end.timestamp_ns > h->start.timestamp_ns) {
		int64_t end_offset = h->end.realtime_ns - h->end.timestamp_ns;
		double r = (double)(end_offset - *offset) /
			   (double)(h->end.timestamp_ns - h->start.timestamp_ns);

		if (fabs(r) < MAX_RATE)
			*rate = r;
	}
}

bool job_time__clock_map(const struct job_host_clock *ref, const struct job_host_clock *h,
			 int64_t span_ns, struct prof_merge_map *map)
{
	int64_t a0, ah, p0, ph;
	double r0, rh, rate;

	map->shift_ns = 0;
	map->rate = 0;
	map->pivot_ns = 0;
	if (!ref->has_start || !h->has_start)
		return false;
	offset_line(ref, &a0, &r0);
	offset_line(h, &ah, &rh);
	p0 = ref->start.timestamp_ns;
	ph = h->start.timestamp_ns;
	/* The instant of h's timestamp t on the realtime clock is
	 * t + ah + rh (t - ph); ref's timestamp of it, t', solves
	 * t' + a0 + r0 (t' - p0) = that. At t = ph:
	 * t' - ph = (ah - a0 - r0 (ph - p0)) / (1 + r0), and t' - t grows by
	 * (rh - r0) / (1 + r0) per ns of t. */
	map->pivot_ns = ph;
	map->shift_ns = llround(((double)(ah - a0) - r0 * (double)(ph - p0)) / (1 + r0));
	rate = (rh - r0) / (1 + r0);
	if (fabs(rate) * (double)(span_ns > 0 ? span_ns : 0) >= 0.5)
		map->rate = rate;
	return true;
}

int64_t job_time__apply(const struct prof_merge_map *map, int64_t t)
{
	/* as SQLite computes it in the merge: round() half away from zero */
	return t + map->shift_ns + (map->rate != 0 ? llround((double)(t - map->pivot_ns) * map->rate)
						   : 0);
}
