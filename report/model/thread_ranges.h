/* thread_ranges.h - every thread's NVTX ranges held in memory, for a walk
 * of API calls in their table's own row order rather than sorted by
 * (thread, start).
 *
 * The walks that attribute a call to the ranges open at its start
 * (nvtx_kern_sum, the folded stacks) read the calls joined to their kernels
 * and sorted by thread and start beside the ranges in the same order. The
 * sort was a third of each walk (0.4 of 1.25 s at 1M kernels). A table's
 * rows already hold each thread's calls in start order (CUPTI writes a
 * call when it returns, and a thread's calls do not overlap: so in every
 * capture and nsys export read so far); only the threads interleave. With
 * each thread's ranges in memory, and a position and an open list a
 * thread, the calls need no order across threads. A call that starts
 * before its thread's last one says so (THREAD_RANGES_BACK): the walk
 * then starts again sorted.
 *
 * The ranges come from the caller's query, each thread's together and in
 * the order they are opened (by start; of two that start together, the
 * outer first), as the sorted walks read them. */
#ifndef REPORT_MODEL_THREAD_RANGES_H
#define REPORT_MODEL_THREAD_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

/* Ranges held at most: beyond, the sorted walk's memory (one thread's open
 * ranges) is the one that stays flat. */
#define THREAD_RANGES_MAX ((size_t)1 << 20)

/* The ranges held at most from now on (THREAD_RANGES_MAX unless set), so
 * that the tests reach the sorted walks on small captures. */
void thread_ranges__set_max(size_t max);

/* thread_ranges__at: a call that starts before its thread's last one */
#define THREAD_RANGES_BACK 2

struct thread_ranges_span;
struct thread_ranges_thread;

struct thread_ranges {
	/* Set before loading: true drops every range that has ended from the
	 * open list (start/end ranges and broken captures need not nest),
	 * false only the ended ones on top, as a stack of push/pop ranges. */
	bool drop_any;
	/* Set before loading: the bytes of the caller's own kept with each
	 * range (thread_ranges__row), zeroed before keep fills them. */
	size_t row_size;

	struct thread_ranges_span *spans; /* the ranges as loaded, rows 0..n-1 */
	size_t n, cap;
	unsigned char *rows; /* row_size bytes a range */
	size_t rows_cap;
	struct thread_ranges_thread *threads; /* by thread id */
	size_t nthreads, threads_cap;
	size_t hit; /* the thread found last */
};

/* Whether table's rows may be held: its last rowid, which bounds its rows
 * whatever view --rank puts over it, known without a pass, is within the
 * limit. A table of more is walked sorted without a try: its query
 * sorts every row before the first comes (16M ranges). */
bool thread_ranges__may_hold(struct prof_store *s, const char *table);

/* Each row of c (columns 0 thread, 1 start, 2 end, integers), in the order
 * it comes; keep(ctx, c, row, text, err) keeps the row's other columns in
 * row (row_size bytes) and may set *text to a string of the range's own
 * (malloc'd: the ranges free it, row may point to it): 0, or < 0 for an
 * error. 1: held; 0: not held (more than THREAD_RANGES_MAX rows, a value
 * that is no integer, a thread's rows not together): the caller walks
 * sorted; < 0: an error (keep's, or out of memory). */
int thread_ranges__load(struct thread_ranges *tr, struct prof_cursor *c,
			int (*keep)(void *ctx, struct prof_cursor *c, void *row, char **text, struct prof_error *err),
			void *ctx, struct prof_error *err);

/* The caller's bytes of range i (a row number thread_ranges__at gives). */
void *thread_ranges__row(const struct thread_ranges *tr, size_t i);

/* The ranges open on thread tid when a call starts at t (start <= t < end),
 * as row numbers, outermost first, valid until the next call: 1 with *open
 * and *n set; 0: the thread has no ranges; THREAD_RANGES_BACK: t is before
 * the thread's previous call; < 0: out of memory. */
int thread_ranges__at(struct thread_ranges *tr, int64_t tid, int64_t t, const size_t **open, size_t *n,
		      struct prof_error *err);

/* " AND column IN (...)": the threads with ranges, a call of no other one
 * falls in none (" AND 0" when no thread has one); "" for more than 256
 * threads. malloc'd, NULL when out of memory. */
char *thread_ranges__sql_threads(const struct thread_ranges *tr, const char *column);

/* Every thread back to its first range, for another walk of calls. */
void thread_ranges__rewind(struct thread_ranges *tr);

void thread_ranges__exit(struct thread_ranges *tr);

#endif
