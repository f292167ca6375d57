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
/* A group's rate is kept only where it stands this many standard errors
 * clear of none: collectives close together in time say little about a
 * rate, and a rate guessed from them would move the rows far from them by
 * more than it corrects. */
#define RATE_SIGNIFICANCE 2.0
/* Fewer collectives than this on a group give it no rate. */
#define RATE_MIN_OBS 3
/* A collective has a late rank when the longest of its kernels ran at
 * least this many times as long as the shortest: the others waited. */
#define LATE_FACTOR 2

static int cmp_key(const struct job_collective_key *a, const struct job_collective_key *b)
{
	if (a->space != b->space)
		return a->space < b->space ? -1 : 1;
	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

static int cmp_obs(const void *pa, const void *pb)
{
	const struct job_end_obs *a = pa, *b = pb;
	int c = cmp_key(&a->key, &b->key);

	return c ? c : (a->group > b->group) - (a->group < b->group);
}

static bool same_key(const struct job_end_obs *a, const struct job_end_obs *b)
{
	return !cmp_key(&a->key, &b->key);
}

/* The least-squares problem: end + offset[g] + rate[g] (end - pivot) =
 * T[collective] with group 0's line none, over the kept observations
 * (sorted by collective). Times are taken against the pivot, so that
 * doubles hold numbers of a capture's length, not of the epoch. */
struct fitter {
	struct job_end_obs *obs;
	size_t kept;
	int ngroups;
	int64_t pivot;
	int64_t *count;
	bool *rated;                 /* whether the group's rate is fitted */
	bool fit_late;               /* whether the late rank's delay is fitted */
	double late;                 /* that delay, ns */
	double *xbar, *sxx;          /* per group: mean time, and sum of squares about it */
	int64_t *lo, *hi;            /* per group: its earliest and latest end, kept or not */
	double *sy, *sxy;            /* per group, each round */
	double *rate_seen;           /* per group: the rate the collectives showed, kept or not */
	struct job_time_line *lines;
};

static double x_of(const struct fitter *f, const struct job_end_obs *o)
{
	return (double)(o->end_ns - f->pivot);
}

/* Where an end lands on the time base, less the late rank's delay: the
 * instant the collective ended by that end. */
static double aligned(const struct fitter *f, const struct job_end_obs *o)
{
	const struct job_time_line *l = &f->lines[o->group];
	double x = x_of(f, o);

	return x + l->offset_ns + l->rate * x - (o->late ? f->late : 0);
}

/* The end of [i, j), a collective's observations. */
static size_t collective_end(const struct fitter *f, size_t i)
{
	size_t j = i + 1;

	while (j < f->kept && same_key(&f->obs[i], &f->obs[j]))
		j++;
	return j;
}

/* The collective's time: the mean of its aligned ends. */
static double collective_time(const struct fitter *f, size_t i, size_t j)
{
	double t = 0;

	for (size_t k = i; k < j; k++)
		t += aligned(f, &f->obs[k]);
	return t / (double)(j - i);
}

/* In each collective whose ranks waited for one, that one (its kernel the
 * shortest); the delay is fitted only where the late one was on different
 * groups, else it cannot be told from the offset of the group that always
 * is. */
static void mark_late(struct fitter *f)
{
	int first = -1;

	f->fit_late = false;
	f->late = 0;
	for (size_t i = 0, j; i < f->kept; i = j) {
		size_t shortest = i;
		int64_t longest = 0;

		j = collective_end(f, i);
		for (size_t k = i; k < j; k++) {
			f->obs[k].late = false;
			if (f->obs[k].dur_ns < f->obs[shortest].dur_ns)
				shortest = k;
			if (f->obs[k].dur_ns > longest)
				longest = f->obs[k].dur_ns;
		}
		if (f->obs[shortest].dur_ns <= 0 || longest < LATE_FACTOR * f->obs[shortest].dur_ns)
			continue;
		f->obs[shortest].late = true;
		if (first < 0)
			first = f->obs[shortest].group;
		else if (first != f->obs[shortest].group)
			f->fit_late = true;
	}
	if (!f->fit_late)
		for (size_t k = 0; k < f->kept; k++)
			f->obs[k].late = false;
}

/* Each group's mean time and spread of times over its kept observations,
 * and whether they can carry a rate. */
static void group_moments(struct fitter *f)
{
	mark_late(f);
	for (int g = 0; g < f->ngroups; g++)
		f->xbar[g] = f->sxx[g] = 0;
	for (size_t k = 0; k < f->kept; k++)
		f->xbar[f->obs[k].group] += x_of(f, &f->obs[k]);
	for (int g = 0; g < f->ngroups; g++)
		f->xbar[g] = f->count[g] ? f->xbar[g] / (double)f->count[g] : 0;
	for (size_t k = 0; k < f->kept; k++) {
		double d = x_of(f, &f->obs[k]) - f->xbar[f->obs[k].group];

		f->sxx[f->obs[k].group] += d * d;
	}
	for (int g = 1; g < f->ngroups; g++)
		if (f->count[g] < RATE_MIN_OBS || !(f->sxx[g] > 0))
			f->rated[g] = false;
}

/* The line of group g given each collective's time: offset alone, or with
 * rate when fitted (else the rate of group 0, which is none once the
 * lines are put back on group 0's). */
static struct job_time_line group_line(const struct fitter *f, int g, bool rated, double rate0)
{
	double n = (double)f->count[g], rate = rated ? f->sxy[g] / f->sxx[g] : rate0;

	/* y = T - x = offset + rate x, centred on the group's mean time */
	return (struct job_time_line){ f->sy[g] / n - rate * f->xbar[g], rate };
}

/* The late rank's delay given the lines: its ends' mean distance from
 * their collectives' times as the others put them. */
static double late_delay(const struct fitter *f)
{
	double sum = 0;
	int64_t n = 0;

	for (size_t i = 0, j; i < f->kept; i = j) {
		double t = 0;
		int64_t others = 0;

		j = collective_end(f, i);
		for (size_t k = i; k < j; k++)
			if (!f->obs[k].late) {
				t += aligned(f, &f->obs[k]);
				others++;
			}
		for (size_t k = i; k < j && others; k++)
			if (f->obs[k].late) {
				sum += aligned(f, &f->obs[k]) + f->late - t / (double)others;
				n++;
			}
	}
	return n ? sum / (double)n : 0;
}

/* Alternating least squares: each collective's time from the lines, every
 * group's line from the times, then every line put back on group 0's (the
 * time base), which settles in a few rounds however many groups there are. */
static void fit(struct fitter *f)
{
	bool any = false;

	for (int g = 1; g < f->ngroups; g++)
		any |= f->rated[g];
	f->rated[0] = any;
	for (int round = 0; round < FIT_ROUNDS; round++) {
		struct job_time_line l0;

		for (int g = 0; g < f->ngroups; g++)
			f->sy[g] = f->sxy[g] = 0;
		for (size_t i = 0, j; i < f->kept; i = j) {
			double t;

			j = collective_end(f, i);
			t = collective_time(f, i, j);
			for (size_t k = i; k < j; k++) {
				const struct job_end_obs *o = &f->obs[k];
				double x = x_of(f, o), y = t - x + (o->late ? f->late : 0);

				f->sy[o->group] += y;
				f->sxy[o->group] += (x - f->xbar[o->group]) * y;
			}
		}
		if (f->fit_late)
			f->late = late_delay(f);
		l0 = group_line(f, 0, f->rated[0], 0);
		for (int g = 0; g < f->ngroups; g++) {
			struct job_time_line l = g ? group_line(f, g, f->rated[g], l0.rate) : l0;

			/* u = x + a0 + b0 x is the time base: x + a + b x in it */
			f->lines[g] = (struct job_time_line){ (l.offset_ns - l0.offset_ns) / (1 + l0.rate),
							      (l.rate - l0.rate) / (1 + l0.rate) };
		}
	}
}

/* How far apart one collective's aligned ends lie (obs[i..j) share a key). */
static double spread(const struct fitter *f, size_t i, size_t j)
{
	double lo = 0, hi = 0;

	for (size_t k = i; k < j; k++) {
		double t = aligned(f, &f->obs[k]);

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
 * are left out, so they cannot pull the lines; the fit runs again, and
 * again while it leaves some out. */
#define OUTLIER_FACTOR 4.0
#define OUTLIER_MIN_NS 5000.0
#define OUTLIER_PASSES 8

static void drop_outliers(struct fitter *f, int *matched)
{
	size_t ncoll = 0, out = 0, c = 0;
	double *spreads, limit;

	for (size_t i = 0; i < f->kept; i = collective_end(f, i))
		ncoll++;
	spreads = malloc(ncoll * sizeof *spreads);
	if (!spreads || ncoll < 3) {
		free(spreads);
		return;
	}
	for (size_t i = 0, j; i < f->kept; i = j) {
		j = collective_end(f, i);
		spreads[c++] = spread(f, i, j);
	}
	qsort(spreads, ncoll, sizeof *spreads, cmp_double);
	limit = spreads[ncoll / 2] * OUTLIER_FACTOR;
	if (limit < OUTLIER_MIN_NS)
		limit = OUTLIER_MIN_NS;
	for (size_t i = 0, j; i < f->kept; i = j) {
		j = collective_end(f, i);
		if (spread(f, i, j) > limit) {
			for (size_t k = i; k < j; k++)
				f->count[f->obs[k].group]--;
			--*matched;
			continue;
		}
		memmove(&f->obs[out], &f->obs[i], (j - i) * sizeof *f->obs);
		out += j - i;
	}
	f->kept = out;
	free(spreads);
}

static bool every_group_joined(const struct fitter *f)
{
	for (int g = 0; g < f->ngroups; g++)
		if (!f->count[g])
			return false;
	return true;
}

/* The spread of the aligned ends about their collective's time (RMS over
 * the degrees of freedom the lines leave). */
static double residual_rms(const struct fitter *f)
{
	double sq = 0;
	int64_t dof = 0;

	for (size_t i = 0, j; i < f->kept; i = j) {
		double t;

		j = collective_end(f, i);
		t = collective_time(f, i, j);
		for (size_t k = i; k < j; k++) {
			double r = aligned(f, &f->obs[k]) - t;

			sq += r * r;
		}
		dof += (int64_t)(j - i) - 1;
	}
	for (int g = 1; g < f->ngroups; g++)
		dof -= f->rated[g];
	dof -= f->fit_late;
	return dof > 0 ? sqrt(sq / (double)dof) : 0;
}

/* Fit with outliers left out: a far outlier widens every spread of the
 * first fit, so trim and fit again until no collective is left out.
 * False when only outliers joined a group. */
static bool fit_trimmed(struct fitter *f, int *matched)
{
	group_moments(f);
	fit(f);
	for (int pass = 0; pass < OUTLIER_PASSES; pass++) {
		size_t before = f->kept;

		drop_outliers(f, matched);
		if (!every_group_joined(f))
			return false;
		if (f->kept == before)
			break;
		group_moments(f);
		fit(f);
	}
	return true;
}

/* The standard error of group g's rate: the spread of its ends' distance
 * from another group's (sqrt(2) times that of one end about their mean,
 * for two groups; taken so for more) over the spread of its times. */
static double rate_error(const struct fitter *f, int g, double rms)
{
	return f->sxx[g] > 0 ? sqrt(2.0) * rms / sqrt(f->sxx[g]) : INFINITY;
}

/* Rates that do not stand RATE_SIGNIFICANCE standard errors clear of none
 * are dropped (the group keeps an offset alone): true when one was. */
static bool drop_weak_rates(struct fitter *f)
{
	double rms = residual_rms(f);
	bool dropped = false;

	for (int g = 1; g < f->ngroups; g++) {
		if (!f->rated[g])
			continue;
		f->rate_seen[g] = f->lines[g].rate;
		if (fabs(f->lines[g].rate) < RATE_SIGNIFICANCE * rate_error(f, g, rms)) {
			f->rated[g] = false;
			dropped = true;
		}
	}
	return dropped;
}

/* The error stated: the spread of a collective's aligned ends (RMS), and
 * what the uncertainty of a host's rate (its standard error, whether the
 * rate was kept or not) adds at its farthest collective from the pivot,
 * NCCL's first and last collectives lying near the start and end of a
 * job's GPU work; the largest over the hosts. */
static double stated_error(const struct fitter *f)
{
	double rms = residual_rms(f), worst = rms;

	for (int g = 1; g < f->ngroups; g++) {
		double reach = fmax(fabs((double)(f->lo[g] - f->pivot)), fabs((double)(f->hi[g] - f->pivot)));
		double drift, e;

		if (!(f->sxx[g] > 0))
			continue;
		drift = rate_error(f, g, rms) * reach;
		/* a rate left out as too uncertain may still be there */
		if (!f->rated[g])
			drift += fabs(f->rate_seen[g]) * reach;
		e = sqrt(rms * rms + drift * drift);
		if (e > worst)
			worst = e;
	}
	return worst;
}

int job_time__fit_collectives(struct job_end_obs *obs, size_t n, int ngroups,
			      struct job_time_fit *out)
{
	struct fitter f = { .obs = obs, .ngroups = ngroups };
	size_t ng = (size_t)ngroups;
	double *d = calloc(5 * ng, sizeof *d);
	int64_t *ends = calloc(2 * ng, sizeof *ends);
	int64_t sum = 0;
	int rc = 0;

	out->matched = 0;
	out->error_ns = -1;
	out->pivot_ns = 0;
	out->late_ns = 0;
	for (int g = 0; g < ngroups; g++)
		out->lines[g] = (struct job_time_line){ 0, 0 };
	f.lines = out->lines;
	f.count = calloc(ng, sizeof *f.count);
	f.rated = calloc(ng, sizeof *f.rated);
	if (!d || !ends || !f.count || !f.rated) {
		rc = PROF_E_NOMEM;
		goto out;
	}
	f.xbar = d;
	f.sxx = d + ng;
	f.sy = d + 2 * ng;
	f.sxy = d + 3 * ng;
	f.rate_seen = d + 4 * ng;
	f.lo = ends;
	f.hi = ends + ng;
	for (size_t k = 0; k < n; k++) {
		int g = obs[k].group;

		if (!f.lo[g] || obs[k].end_ns < f.lo[g])
			f.lo[g] = obs[k].end_ns;
		if (!f.hi[g] || obs[k].end_ns > f.hi[g])
			f.hi[g] = obs[k].end_ns;
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
			obs[f.kept++] = obs[k];
			f.count[obs[k].group]++;
		}
		out->matched++;
	}
	if (!every_group_joined(&f))
		goto out; /* a host no collective joins to the others: not refined */
	/* the pivot: the kept ends' mean, summed as differences from the first */
	for (size_t k = 0; k < f.kept; k++)
		sum += obs[k].end_ns - obs[0].end_ns;
	f.pivot = obs[0].end_ns + sum / (int64_t)f.kept;
	for (int g = 1; g < ngroups; g++)
		f.rated[g] = true;
	if (!fit_trimmed(&f, &out->matched))
		goto unrefined;
	if (drop_weak_rates(&f) && !fit_trimmed(&f, &out->matched))
		goto unrefined;
	out->pivot_ns = f.pivot;
	out->late_ns = f.late;
	out->error_ns = stated_error(&f);
	goto out;
unrefined:
	for (int g = 0; g < ngroups; g++)
		out->lines[g] = (struct job_time_line){ 0, 0 };
out:
	free(d);
	free(ends);
	free(f.count);
	free(f.rated);
	return rc;
}

void job_time__refine(struct prof_merge_map *map, const struct job_time_line *line,
		      int64_t pivot_ns, int64_t span_ns)
{
	/* the source time that the clock mapping takes to about the pivot */
	int64_t q = pivot_ns - map->shift_ns;
	double rate_c = map->rate;
	double shift, rate;

	if (line->offset_ns == 0 && line->rate == 0)
		return;
	/* t' = f(t) + a + b (f(t) - P), f(t) = t + s + r (t - pc): at t = q,
	 * f(q) - P = r (q - pc), so the shift there is s + (1 + b) r (q - pc)
	 * + a, and t' - t grows by r + b (1 + r) per ns of t */
	shift = (double)map->shift_ns + (1 + line->rate) * rate_c * (double)(q - map->pivot_ns) +
		line->offset_ns;
	rate = rate_c + line->rate * (1 + rate_c);
	map->shift_ns = llround(shift);
	map->pivot_ns = q;
	map->rate = fabs(rate) * (double)(span_ns > 0 ? span_ns : 0) >= 0.5 ? rate : 0;
}
