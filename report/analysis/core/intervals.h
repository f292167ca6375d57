/* intervals.h - time intervals (intervals.c): a list in any order, or, built
 * with diag_intervals__merge, a union kept sorted and disjoint, in which
 * work that runs at once (on several streams or threads) counts once.
 * Pure: no store, tested with values. */
#ifndef REPORT_INTERVALS_H
#define REPORT_INTERVALS_H

#include <stdbool.h>
#include <stdint.h>

struct diag_interval {
	int64_t start_ns, end_ns;
};

struct diag_intervals {
	struct diag_interval *v;
	int n, cap;
};
/* Appends [start, end) as it is; an empty interval is dropped. PROF_E_NOMEM. */
int diag_intervals__push(struct diag_intervals *l, int64_t start, int64_t end);
/* Adds [start, end) to a union built in start order: it merges into the last
 * interval where the two overlap or touch. PROF_E_NOMEM. */
int diag_intervals__merge(struct diag_intervals *u, int64_t start, int64_t end);
/* Of a union: its length, the length of [a, b) it covers, and the index of
 * its first interval ending after t (n when none does). */
int64_t diag_intervals__length(const struct diag_intervals *u);
int diag_intervals__first_ending_after(const struct diag_intervals *u, int64_t t);
int64_t diag_intervals__covered(const struct diag_intervals *u, int64_t a, int64_t b);
/* The length of the union of a list's intervals inside [lo, hi); sorts the
 * list by start. */
int64_t diag_intervals__union_ns(struct diag_intervals *l, int64_t lo, int64_t hi);
/* A list made a union in place: sorted by start, overlapping and touching
 * intervals merged. */
void diag_intervals__unite(struct diag_intervals *l);
/* The time two unions cover at once (both sorted and disjoint). */
int64_t diag_intervals__overlap_ns(const struct diag_intervals *a, const struct diag_intervals *b);
/* The time two unions cover at once, as intervals appended to out (sorted
 * and disjoint): what overlap_ns sums, kept for a later overlap with a
 * third. PROF_E_NOMEM. */
int diag_intervals__intersect(const struct diag_intervals *a, const struct diag_intervals *b,
			      struct diag_intervals *out);
void diag_intervals__exit(struct diag_intervals *l);

/* The length alone of a union fed in start order, in constant memory:
 * what diag_intervals__merge, then diag_intervals__length give, for a
 * reader that keeps nothing else of it (a million kernels' union is 16
 * MB a list). Zeroed to start. */
struct diag_union_length {
	struct diag_interval last;
	bool have;
	int64_t done_ns; /* of the intervals before last */
};
void diag_union_length__add(struct diag_union_length *u, int64_t start, int64_t end);
int64_t diag_union_length__ns(const struct diag_union_length *u);

#endif
