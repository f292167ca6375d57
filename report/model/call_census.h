/* call_census.h - one pass over every row of a table of CUDA calls
 * (runtime or driver) for what three readers each asked of it in a pass
 * of their own (call_census.c): the first start and last end of its real
 * rows (the capture's extent), its rows of a bad span (the count the
 * traces and the HTML page note), and its calls that returned an error
 * after which the context is unusable (the context's failure, looked for
 * further only where there is one); and, from the same walk, whether
 * each thread's correlation ids rise (the repeated-call test's first
 * question, sql.h). */
#ifndef REPORT_MODEL_CALL_CENSUS_H
#define REPORT_MODEL_CALL_CENSUS_H

#include <stdbool.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

struct call_census {
	int64_t first, last; /* INT64_MAX, INT64_MIN: no real row */
	int64_t bad;         /* rows of a bad span (SUM_BAD_SPAN) */
	int64_t sticky;      /* calls that returned a sticky error (SUM_STICKY_CODES) */
	/* rise_known: the walk told whether every thread's correlation ids
	 * rise in the rows' order (ids_rise.h), ids_rise; not known where
	 * SQL counted the census */
	bool rise_known, ids_rise;
};

/* What the census walk also counts, for a reader that asked for it
 * before the walk (every reader's first question starts it: the
 * capture's extent): the calls by name and duration (call_runs.h, the
 * API summary's), their correlation ids as sets (launch_ids.h, the
 * folded stacks'). Asked for by the readers that read them, not by all:
 * the rest would pay for a count they never read. */
enum call_census_extra { CALL_CENSUS_RUNS = 1, CALL_CENSUS_LAUNCH_IDS = 2 };
void sum_call_census__want(struct prof_store *s, unsigned extras);

/* table's census of every row, whatever the views show: 1 and *c, read
 * once for a finished capture's connections; 0 where table is no table of
 * calls or the capture is still being written (the caller reads its own
 * way); < 0 an error. */
int sum_call_census(struct prof_store *s, const char *table, struct call_census *c, struct prof_error *err);

#endif
