/* intervals.c - unions of time intervals for the analyses (intervals.h):
 * the GPU's busy time, and the time runs of launches cover. Work that runs
 * at once (on several streams, or two runs that interleave on one stream)
 * is counted once, so no union is longer than the span it lies in. */
#include "intervals.h"

#include <stdlib.h>

#include "grow.h"
#include "prof/saturate.h"
#include "prof/error.h"

/* Folds [start, end), which starts no earlier than *last, into *last when
 * the two overlap or touch; false when it starts after *last ends. */
static bool extends(struct diag_interval *last, int64_t start, int64_t end)
{
	if (start > last->end_ns)
		return false;
	if (end > last->end_ns)
		last->end_ns = end;
	return true;
}

static int grow(struct diag_intervals *l)
{
	return array__grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v);
}

int diag_intervals__push(struct diag_intervals *l, int64_t start, int64_t end)
{
	if (end <= start)
		return 0;
	if (grow(l))
		return PROF_E_NOMEM;
	l->v[l->n].start_ns = start;
	l->v[l->n].end_ns = end;
	l->n++;
	return 0;
}

int diag_intervals__merge(struct diag_intervals *l, int64_t start, int64_t end)
{
	if (end > start && l->n && extends(&l->v[l->n - 1], start, end))
		return 0;
	return diag_intervals__push(l, start, end);
}

int64_t diag_intervals__length(const struct diag_intervals *u)
{
	int64_t sum = 0;

	for (int i = 0; i < u->n; i++)
		sum = prof_add_saturated(sum, prof_span_saturated(u->v[i].start_ns, u->v[i].end_ns));
	return sum;
}

int diag_intervals__first_ending_after(const struct diag_intervals *u, int64_t t)
{
	int lo = 0, hi = u->n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (u->v[mid].end_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int64_t diag_intervals__covered(const struct diag_intervals *u, int64_t a, int64_t b)
{
	int64_t sum = 0;

	for (int i = diag_intervals__first_ending_after(u, a); i < u->n && u->v[i].start_ns < b; i++) {
		int64_t s = u->v[i].start_ns > a ? u->v[i].start_ns : a;
		int64_t e = u->v[i].end_ns < b ? u->v[i].end_ns : b;
		if (e > s)
			sum = prof_add_saturated(sum, prof_span_saturated(s, e));
	}
	return sum;
}

int64_t diag_intervals__overlap_ns(const struct diag_intervals *a, const struct diag_intervals *b)
{
	int64_t sum = 0;
	int i = 0, j = 0;

	/* walk both in step: the one that ends first moves on */
	while (i < a->n && j < b->n) {
		int64_t s = a->v[i].start_ns > b->v[j].start_ns ? a->v[i].start_ns : b->v[j].start_ns;
		int64_t e = a->v[i].end_ns < b->v[j].end_ns ? a->v[i].end_ns : b->v[j].end_ns;

		if (e > s)
			sum = prof_add_saturated(sum, prof_span_saturated(s, e));
		if (a->v[i].end_ns < b->v[j].end_ns)
			i++;
		else
			j++;
	}
	return sum;
}

int diag_intervals__intersect(const struct diag_intervals *a, const struct diag_intervals *b,
			      struct diag_intervals *out)
{
	int i = 0, j = 0;

	while (i < a->n && j < b->n) {
		int64_t s = a->v[i].start_ns > b->v[j].start_ns ? a->v[i].start_ns : b->v[j].start_ns;
		int64_t e = a->v[i].end_ns < b->v[j].end_ns ? a->v[i].end_ns : b->v[j].end_ns;

		if (e > s && diag_intervals__push(out, s, e))
			return PROF_E_NOMEM;
		if (a->v[i].end_ns < b->v[j].end_ns)
			i++;
		else
			j++;
	}
	return 0;
}

void diag_intervals__exit(struct diag_intervals *u)
{
	free(u->v);
	u->v = NULL;
	u->n = u->cap = 0;
}

static int by_start(const void *pa, const void *pb)
{
	const struct diag_interval *a = pa, *b = pb;

	return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

void diag_intervals__unite(struct diag_intervals *l)
{
	int n = 0;

	if (l->n > 1)
		qsort(l->v, (size_t)l->n, sizeof *l->v, by_start);
	for (int i = 0; i < l->n; i++)
		if (n == 0 || !extends(&l->v[n - 1], l->v[i].start_ns, l->v[i].end_ns))
			l->v[n++] = l->v[i];
	l->n = n;
}

int64_t diag_intervals__union_ns(struct diag_intervals *l, int64_t lo, int64_t hi)
{
	struct diag_interval cur = { 0, 0 };
	bool open = false;
	int64_t sum = 0;

	if (l->n > 1)
		qsort(l->v, (size_t)l->n, sizeof *l->v, by_start);
	/* clipping keeps the order: a later start never clips to an earlier one */
	for (int i = 0; i < l->n; i++) {
		int64_t s = l->v[i].start_ns > lo ? l->v[i].start_ns : lo;
		int64_t e = l->v[i].end_ns < hi ? l->v[i].end_ns : hi;

		if (e <= s || (open && extends(&cur, s, e)))
			continue;
		if (open)
			sum = prof_add_saturated(sum, prof_span_saturated(cur.start_ns, cur.end_ns));
		cur.start_ns = s;
		cur.end_ns = e;
		open = true;
	}
	return open ? sum + cur.end_ns - cur.start_ns : sum;
}

void diag_union_length__add(struct diag_union_length *u, int64_t start, int64_t end)
{
	if (end <= start)
		return;
	if (u->have && extends(&u->last, start, end))
		return;
	if (u->have)
		u->done_ns = prof_add_saturated(u->done_ns, prof_span_saturated(u->last.start_ns, u->last.end_ns));
	u->last = (struct diag_interval){ .start_ns = start, .end_ns = end };
	u->have = true;
}

int64_t diag_union_length__ns(const struct diag_union_length *u)
{
	return u->have ? prof_add_saturated(u->done_ns, prof_span_saturated(u->last.start_ns, u->last.end_ns))
		       : u->done_ns;
}
