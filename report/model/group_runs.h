/* group_runs.h - a summary source's rows counted by (group, value) in one
 * pass, in the order the store reads them: the runs that the sorted
 * statements of groups.c would stream, without sorting every row
 * (group_runs.c). */
#ifndef REPORT_MODEL_GROUP_RUNS_H
#define REPORT_MODEL_GROUP_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

/* The distinct (group, value) pairs held at most (24 bytes each, in a
 * table at most half full: 48 MiB at the limit). Past it, or on a column
 * of a type SQL would order apart from the rest, the caller reads the
 * sorted statements instead. */
#define GROUP_RUNS_MAX (1u << 20)

/* count values of value: one run of a group's values (groups.h). */
struct sum_run {
	int64_t value, count;
};

struct group_runs;

/* The pairs held at most from now on (GROUP_RUNS_MAX unless changed): the
 * tests set 0 to read the sorted statements, which must agree. */
void group_runs__set_max(size_t max_pairs);

/* Count src's rows (columns l1, l2, k, v, bad as sum_groups__collect's) by
 * (l1, l2, k, v); rows with a bad span only add to the count left out.
 * 1: counted, *out set; 0: not counted (too many pairs, or a value of
 * another type), *out NULL; < 0: an error, in err. */
int group_runs__count(struct prof_store *s, const char *src, struct group_runs **out,
		      struct prof_error *err);

/* Counting without a statement, for a walk that reads the rows for more
 * (the calls' census, call_runs.h): groups of a key alone, no labels. */
struct group_runs *group_runs__new(void);
/* v into the group of k (k_null: the group of none): 1 counted, 0 more
 * pairs than the limit (r then holds part of the rows: good only to be
 * freed), < 0 out of memory. */
int group_runs__add(struct group_runs *r, bool k_null, int64_t k, int64_t v);
/* One row of a bad span: in no group, counted as left out. */
void group_runs__add_left_out(struct group_runs *r);
/* After the last row, before group_runs__walk: 0 or PROF_E_NOMEM. */
int group_runs__finish(struct group_runs *r);

/* The rows with a bad span. */
int64_t group_runs__left_out(const struct group_runs *r);

/* Each group in (l1, l2, k) order as SQL's ORDER BY puts it, with its
 * runs in ascending value order (a NULL value first, as 0). Stops at the
 * first negative return of fn and returns it. */
typedef int (*group_runs_fn)(void *ctx, const char *l1, const char *l2, bool key_is_null,
			     int64_t key, const struct sum_run *runs, size_t nruns);
int group_runs__walk(const struct group_runs *r, group_runs_fn fn, void *ctx);

void group_runs__free(struct group_runs *r);

#endif
