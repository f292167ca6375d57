/* sums.h - adding up a capture's numbers without overflow: the saturating
 * SQL sum, a fraction of a span, and the array growth and search readers
 * share. */
#ifndef REPORT_MODEL_SUMS_H
#define REPORT_MODEL_SUMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "prof/error.h"
#include "prof/saturate.h"

/* Every sum and span of a capture's times or byte counts goes through
 * prof_add_saturated and prof_span_saturated (prof/saturate.h); a row's
 * span is tested in C by prof_span_is_bad. */

/* The sum of SQL expression X (durations, byte counts) as an INTEGER held
 * at the limits, for queries that add up a capture's values themselves:
 * SQLite's sum() fails the whole query with "integer overflow" past
 * INT64_MAX, so a capture of long kernels could not be diagnosed at all.
 * total() adds in double, exact while the sum stays below 2^53 (104 days
 * of ns); CAST of a REAL past the int64 range gives the nearest limit
 * (SQLite documents it). 0, not NULL, when there are no rows. */
#define SUM_TOTAL_SATURATED(X) "CAST(total(" X ") AS INTEGER)"

/* v * num / den for 0 <= num <= den (a point num/den of the way along a
 * span v), divided before it is multiplied so that a long span cannot
 * overflow. */
static inline int64_t sum_fraction_of(int64_t v, int64_t num, int64_t den)
{
	return v / den * num + v % den * num / den;
}

/* Make room in the array *(T **)pptr of *cap elements of size bytes for
 * element n (doubling; 8 at first): 0, or PROF_E_NOMEM with the array as
 * it was. */
static inline int sum_array__grow(void *pptr, size_t *cap, size_t n, size_t size)
{
	void **p = (void **)pptr, *g;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 8;
	while (c <= n)
		c *= 2;
	g = realloc(*p, c * size);
	if (!g)
		return PROF_E_NOMEM;
	*p = g;
	*cap = c;
	return 0;
}

/* Where key goes among n records of size bytes at base, sorted ascending
 * by the int64_t at key_offset in each: how many have a key before it, or
 * (or_at) at or before it. */
static inline size_t sum_sorted__count_before(const void *base, size_t n, size_t size,
					      size_t key_offset, int64_t key, bool or_at)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t k = *(const int64_t *)(const void *)((const char *)base + mid * size + key_offset);

		if (k < key || (or_at && k == key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
