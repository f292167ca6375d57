/* saturate.h - sums and spans of a capture's 64-bit values (times in ns,
 * byte counts) that hold at the limits instead of overflowing.
 *
 * Times and byte counts come from a file that may be damaged or written to
 * harm: two of them can add up past INT64_MAX, and an end far below its
 * start can subtract past INT64_MIN, where a signed int64_t overflows
 * (undefined behaviour; a negative total in practice). Every sum or span of
 * such values goes through these: a total that reads "9223372036854775807
 * ns" says the input is broken, a wrapped one lies. Here in libprof, below
 * every reader, so that report/ and perfkit top (tui/) use the same ones. */
#ifndef PROF_SATURATE_H
#define PROF_SATURATE_H

#include <stdbool.h>
#include <stdint.h>

static inline int64_t prof_add_saturated(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* end - start, held at the limit likewise. */
static inline int64_t prof_span_saturated(int64_t start, int64_t end)
{
	int64_t r;

	if (__builtin_sub_overflow(end, start, &r))
		return end > start ? INT64_MAX : INT64_MIN;
	return r;
}

/* A span that is no duration: its end precedes its start, or lies 2^63 ns
 * or more after it, further than an int64_t of ns reaches (a start of
 * INT64_MIN with a real end). No clock stamps either; a reader leaves such
 * a row out and says how many it left out, rather than draw it 292 years
 * wide (report/'s SQL twin is SUM_BAD_SPAN, model/sql.h). */
static inline bool prof_span_is_bad(int64_t start, int64_t end)
{
	int64_t r;

	return end < start || __builtin_sub_overflow(end, start, &r);
}

#endif
