/* metric_overlap.c - time-weighted means of sample periods over groups of
 * intervals, in one pass over both (metric_overlap.h). */
#include "metric_overlap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/gpu_work.h"
#include "prof/error.h"
#include "prof/saturate.h"

static int by_start(const void *x, const void *y)
{
	const struct mo_interval *a = x, *b = y;

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->end_ns != b->end_ns)
		return a->end_ns < b->end_ns ? -1 : 1;
	return (a->group > b->group) - (a->group < b->group);
}

void mo_intervals__sort(struct mo_interval *iv, int n)
{
	if (n > 1)
		qsort(iv, (size_t)n, sizeof *iv, by_start);
}

int mo_intervals__merge(struct mo_interval **iv, int *n, int *cap, int *last, int64_t start_ns,
			int64_t end_ns, int32_t group)
{
	if (end_ns <= start_ns)
		return 0;
	if (*last >= 0 && start_ns <= (*iv)[*last].end_ns) {
		if (end_ns > (*iv)[*last].end_ns)
			(*iv)[*last].end_ns = end_ns;
		return 0;
	}
	if (array__grow((void **)iv, cap, *n + 1, sizeof **iv))
		return PROF_E_NOMEM;
	(*iv)[*n] = (struct mo_interval){ start_ns, end_ns, group };
	*last = (*n)++;
	return 0;
}

int mo_sweep__init(struct mo_sweep *s, const struct mo_interval *iv, int n, int ngroups, int nmetrics)
{
	size_t cells = (size_t)(ngroups > 0 ? ngroups : 1) * (size_t)(nmetrics > 0 ? nmetrics : 1);

	memset(s, 0, sizeof *s);
	s->iv = iv;
	s->n = n;
	s->ngroups = ngroups;
	s->nmetrics = nmetrics;
	s->groups = calloc((size_t)(ngroups > 0 ? ngroups : 1), sizeof *s->groups);
	s->sum = calloc(cells, sizeof *s->sum);
	s->weight_ns = calloc(cells, sizeof *s->weight_ns);
	if (!s->groups || !s->sum || !s->weight_ns) {
		mo_sweep__exit(s);
		return PROF_E_NOMEM;
	}
	for (int g = 0; g < ngroups; g++)
		s->groups[g].last_sample = -1;
	return 0;
}

/* The length of (from, to] inside [start, end), 0 when they do not meet. */
static int64_t overlap(int64_t from, int64_t to, int64_t start, int64_t end)
{
	int64_t a = from > start ? from : start, b = to < end ? to : end;

	return b > a ? prof_span_saturated(a, b) : 0;
}

int mo_sweep__add(struct mo_sweep *s, int64_t from_ns, int64_t to_ns, const double *values)
{
	int64_t period = to_ns > from_ns ? prof_span_saturated(from_ns, to_ns) : 0;
	int64_t sample = s->samples++;

	if (period <= 0)
		return 0;
	/* intervals that start before the period ends may overlap it */
	while (s->next < s->n && s->iv[s->next].start_ns < to_ns) {
		if (array__grow((void **)&s->active, &s->cap, s->nactive + 1, sizeof *s->active))
			return PROF_E_NOMEM;
		s->active[s->nactive++] = s->next++;
	}
	for (int i = 0; i < s->nactive;) {
		const struct mo_interval *v = &s->iv[s->active[i]];
		int64_t ov = overlap(from_ns, to_ns, v->start_ns, v->end_ns);

		if (ov > 0 && v->group >= 0 && v->group < s->ngroups) {
			struct mo_group *g = &s->groups[v->group];
			size_t cell = (size_t)v->group * (size_t)s->nmetrics;

			g->covered_ns = prof_add_saturated(g->covered_ns, ov);
			/* a period that meets two intervals of a group counts once */
			if (g->last_sample != sample) {
				g->touched_ns = prof_add_saturated(g->touched_ns, period);
				g->periods++;
				g->last_sample = sample;
			}
			for (int m = 0; m < s->nmetrics; m++) {
				if (!isfinite(values[m]))
					continue;
				s->sum[cell + (size_t)m] += values[m] * (double)ov;
				s->weight_ns[cell + (size_t)m] = prof_add_saturated(s->weight_ns[cell + (size_t)m], ov);
			}
		}
		/* later periods start at or after this one's end */
		if (v->end_ns <= to_ns)
			s->active[i] = s->active[--s->nactive];
		else
			i++;
	}
	return 0;
}

double mo_sweep__mean(const struct mo_sweep *s, int group, int metric)
{
	size_t cell = (size_t)group * (size_t)s->nmetrics + (size_t)metric;

	if (group < 0 || group >= s->ngroups || metric < 0 || metric >= s->nmetrics || s->weight_ns[cell] <= 0)
		return NAN;
	return s->sum[cell] / (double)s->weight_ns[cell];
}

int64_t mo_sweep__weight_ns(const struct mo_sweep *s, int group, int metric)
{
	if (group < 0 || group >= s->ngroups || metric < 0 || metric >= s->nmetrics)
		return 0;
	return s->weight_ns[(size_t)group * (size_t)s->nmetrics + (size_t)metric];
}

void mo_sweep__exit(struct mo_sweep *s)
{
	free(s->active);
	free(s->groups);
	free(s->sum);
	free(s->weight_ns);
	memset(s, 0, sizeof *s);
}

double mo_fraction(int64_t part, int64_t whole)
{
	double f;

	if (whole <= 0 || part <= 0)
		return 0;
	f = (double)part / (double)whole;
	return f > 1 ? 1 : f;
}
