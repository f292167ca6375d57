/* metric_overlap.h - sampled counters averaged over the time a set of
 * intervals covers: the arithmetic of gpu_metrics_sum, the GPU metrics
 * plots and the GPU metrics rules. Pure: no store, tested with values.
 *
 * A sampler gives one value per metric for each sample period (from, to]:
 * the period runs from the sampler's previous timestamp to this one's, and
 * the value is the counter's mean over it. A group is a set of disjoint
 * intervals [start, end): the union of one kernel name's launches on one
 * device, of one NVTX range name's instances, a time bin. A sample counts
 * in a group's mean with the time its period overlaps the group's
 * intervals, so the mean is the counter over the time the group ran, as far
 * as the samples resolve it. Two figures say how far that is:
 *
 *   covered_ns  the group's time that sample periods overlap (time before
 *               the first sample or after the last has no value);
 *   touched_ns  the summed length of the periods that overlap the group:
 *               covered / touched is the share of those periods the group
 *               filled. A kernel of 5 us in one 100 us period fills 5% of
 *               it, and its mean is mostly what ran around it: an estimate.
 *
 * Samples are given in time order (each period starts at or after the
 * previous one's end) and the intervals sorted by start (mo_intervals__sort),
 * so one pass over both does the work: memory holds the intervals and the
 * few that a period can still overlap. */
#ifndef REPORT_METRIC_OVERLAP_H
#define REPORT_METRIC_OVERLAP_H

#include <stddef.h>
#include <stdint.h>

struct mo_interval {
	int64_t start_ns, end_ns;
	int32_t group;
};

struct mo_group {
	int64_t covered_ns;
	int64_t touched_ns;
	int64_t periods;     /* the sample periods that overlap it */
	int64_t last_sample; /* the last sample counted in touched_ns (internal) */
};

struct mo_sweep {
	const struct mo_interval *iv;
	int n, next;          /* next: the first interval no period has reached */
	int *active;          /* intervals a later period may still overlap */
	int nactive, cap;
	int ngroups, nmetrics;
	struct mo_group *groups;
	double *sum;          /* [group * nmetrics + metric]: value x overlap (ns) */
	int64_t *weight_ns;   /* [group * nmetrics + metric]: overlap where the metric had a value */
	int64_t samples;      /* periods given */
};

/* Sort intervals by start (then end, then group). */
void mo_intervals__sort(struct mo_interval *iv, int n);
/* Add [start, end) to group in a list built in start order per group: it
 * merges into *last (the group's last interval, an index into *iv, -1 when
 * the group has none) where the two overlap or touch, so a group's
 * intervals stay disjoint. 0 or PROF_E_NOMEM. */
int mo_intervals__merge(struct mo_interval **iv, int *n, int *cap, int *last, int64_t start_ns,
			int64_t end_ns, int32_t group);

/* iv (n intervals, sorted, each group's disjoint; kept by the caller until
 * mo_sweep__exit) against samples of nmetrics values. 0 or PROF_E_NOMEM. */
int mo_sweep__init(struct mo_sweep *s, const struct mo_interval *iv, int n, int ngroups, int nmetrics);
/* One sample period (from, to] with values[nmetrics] (NaN: the sample has
 * no value for that metric). An empty or reversed period counts for
 * nothing. 0 or PROF_E_NOMEM. */
int mo_sweep__add(struct mo_sweep *s, int64_t from_ns, int64_t to_ns, const double *values);
/* The group's time-weighted mean of a metric; NaN when no sample with a
 * value for it overlaps the group. */
double mo_sweep__mean(const struct mo_sweep *s, int group, int metric);
/* The time of the group's intervals with a value for the metric. */
int64_t mo_sweep__weight_ns(const struct mo_sweep *s, int group, int metric);
void mo_sweep__exit(struct mo_sweep *s);

/* part / whole as a fraction in [0, 1]; 0 when whole is not positive. */
double mo_fraction(int64_t part, int64_t whole);

#endif
