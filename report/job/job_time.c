/* job_time.c - the time base of a job from clock pairs: each host's capture
 * clock against its realtime clock, read together at the start and end of
 * each process. Hosts' realtime clocks are taken to agree (NTP, PTP); what
 * they do not is left for the collectives to find. Pure arithmetic on
 * values, kept in differences of nearby times so that no nanosecond is
 * lost to a double's 53 bits. */
#include "job_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- refined from collectives ------------------------------------------ */

/* Rounds of the alternating fit: each halves what is left at least when
 * the hosts are joined by collectives, so this is far past a nanosecond. */
#define FIT_ROUNDS 200

static int cmp_obs(const void *pa, const void *pb)
{
	const struct job_end_obs *a = pa, *b = pb;

	if (a->key_hash != b->key_hash)
		return a->key_hash < b->key_hash ? -1 : 1;
	if (a->key_ordinal != b->key_ordinal)
		return a->key_ordinal < b->key_ordinal ? -1 : 1;
	return (a->group > b->group) - (a->group < b->group);
}

static bool same_key(const struct job_end_obs *a, const struct job_end_obs *b)
{
	return a->key_hash == b->key_hash && a->key_ordinal == b->key_ordinal;
}

/* Least squares of end + offset[group] = T[collective] with offset[0] = 0,
 * by alternating means over the kept observations (each collective's ends
 * taken against its first, so that doubles hold small numbers). */
static void fit(const struct job_end_obs *obs, size_t kept, int ngroups, const int64_t *count,
		double *sum, double *offsets)
{
	for (int round = 0; round < FIT_ROUNDS; round++) {
		for (int g = 0; g < ngroups; g++)
			sum[g] = 0;
		for (size_t i = 0, j; i < kept; i = j) {
			double t = 0;

			for (j = i; j < kept && same_key(&obs[i], &obs[j]); j++)
				t += (double)(obs[j].end_ns - obs[i].end_ns) + offsets[obs[j].group];
			t /= (double)(j - i);
			for (size_t k = i; k < j; k++)
				sum[obs[k].group] += t - (double)(obs[k].end_ns - obs[i].end_ns);
		}
		for (int g = ngroups - 1; g >= 0; g--)
			offsets[g] = sum[g] / (double)count[g] - sum[0] / (double)count[0];
	}
}

/* How far apart one collective's aligned ends lie (obs[i..j) share a key). */
static double spread(const struct job_end_obs *obs, size_t i, size_t j, const double *offsets)
{
	double lo = 0, hi = 0;

	for (size_t k = i; k < j; k++) {
		double t = (double)(obs[k].end_ns - obs[i].end_ns) + offsets[obs[k].group];

		if (k == i || t < lo)
			lo = t;
		if (k == i || t > hi)
			hi = t;
	}
	return hi - lo;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* Collectives whose ends do not meet: a broadcast's root can finish before
 * its receivers have the data, a communicator's first collective carries
 * its setup. After a first fit, those whose aligned ends spread past
 * OUTLIER_FACTOR times the median collective's (and past OUTLIER_MIN_NS)
 * are left out, so they cannot pull the offsets; the fit runs again, and
 * again while it leaves some out. */
#define OUTLIER_FACTOR 4.0
#define OUTLIER_MIN_NS 2000.0
#define OUTLIER_PASSES 8

static size_t drop_outliers(struct job_end_obs *obs, size_t kept, const double *offsets,
			    int64_t *count, int *matched)
{
	size_t ncoll = 0, out = 0, c = 0;
	double *spreads, limit;

	for (size_t i = 0, j; i < kept; i = j, ncoll++)
		for (j = i + 1; j < kept && same_key(&obs[i], &obs[j]); j++)
			;
	spreads = malloc(ncoll * sizeof *spreads);
	if (!spreads || ncoll < 3) {
		free(spreads);
		return kept;
	}
	for (size_t i = 0, j; i < kept; i = j) {
		for (j = i + 1; j < kept && same_key(&obs[i], &obs[j]); j++)
			;
		spreads[c++] = spread(obs, i, j, offsets);
	}
	qsort(spreads, ncoll, sizeof *spreads, cmp_double);
	limit = spreads[ncoll / 2] * OUTLIER_FACTOR;
	if (limit < OUTLIER_MIN_NS)
		limit = OUTLIER_MIN_NS;
	for (size_t i = 0, j; i < kept; i = j) {
		for (j = i + 1; j < kept && same_key(&obs[i], &obs[j]); j++)
			;
		if (spread(obs, i, j, offsets) > limit) {
			for (size_t k = i; k < j; k++)
				count[obs[k].group]--;
			--*matched;
			continue;
		}
		memmove(&obs[out], &obs[i], (j - i) * sizeof *obs);
		out += j - i;
	}
	free(spreads);
	return out;
}

int job_time__fit_collectives(struct job_end_obs *obs, size_t n, int ngroups, double *offsets,
			      double *rms_ns, int *matched)
{
	double *sum = calloc((size_t)ngroups, sizeof *sum), sq = 0;
	int64_t *count = calloc((size_t)ngroups, sizeof *count), dof = 0;
	size_t kept = 0;
	int rc = 0;

	*matched = 0;
	*rms_ns = -1;
	for (int g = 0; g < ngroups; g++)
		offsets[g] = 0;
	if (!sum || !count) {
		rc = PROF_E_NOMEM;
		goto out;
	}
	qsort(obs, n, sizeof *obs, cmp_obs);
	/* keep the collectives seen on two groups or more (sorted by group
	 * within one: the first and last differ) */
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && same_key(&obs[i], &obs[j]); j++)
			;
		if (obs[i].group == obs[j - 1].group)
			continue;
		for (size_t k = i; k < j; k++) {
			obs[kept++] = obs[k];
			count[obs[k].group]++;
		}
		++*matched;
	}
	for (int g = 0; g < ngroups; g++)
		if (!count[g])
			goto out; /* a host no collective joins to the others: not refined */
	fit(obs, kept, ngroups, count, sum, offsets);
	/* a far outlier widens every spread of the first fit: trim and fit
	 * again until no collective is left out */
	for (int pass = 0; pass < OUTLIER_PASSES; pass++) {
		size_t before = kept;

		kept = drop_outliers(obs, kept, offsets, count, matched);
		for (int g = 0; g < ngroups; g++)
			if (!count[g])
				goto out; /* only outliers joined a host: not refined */
		if (kept == before)
			break;
		fit(obs, kept, ngroups, count, sum, offsets);
	}
	for (size_t i = 0, j; i < kept; i = j) {
		double t = 0;

		for (j = i; j < kept && same_key(&obs[i], &obs[j]); j++)
			t += (double)(obs[j].end_ns - obs[i].end_ns) + offsets[obs[j].group];
		t /= (double)(j - i);
		for (size_t k = i; k < j; k++) {
			double r = (double)(obs[k].end_ns - obs[i].end_ns) + offsets[obs[k].group] - t;

			sq += r * r;
		}
		dof += (int64_t)(j - i) - 1;
	}
	*rms_ns = dof > 0 ? sqrt(sq / (double)dof) : 0;
out:
	free(sum);
	free(count);
	return rc;
}
