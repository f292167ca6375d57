/* trace_ranged.h - the launching calls that lie inside an NVTX range of
 * their thread, for the NVTX projection of a timeline export whose GPU
 * rows are paired with their calls in the merge (trace_pairs.h), which
 * makes no temporary index of every call to find them in.
 *
 * A call at t lies inside a range of its thread exactly when t is in the
 * union of the thread's ranges [start, end): each thread's union is held
 * as sorted disjoint intervals (nested ranges fold into the outermost),
 * where a temporary table of every range cost a seek a call. The calls
 * inside go to a temporary table (TM_RANGED_CALLS: correlation id c,
 * process p, thread g, start s) that the projection joins to the GPU
 * tables. */
#ifndef REPORT_TRACE_RANGED_H
#define REPORT_TRACE_RANGED_H

#include <stdbool.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

#define TM_RANGED_CALLS "perfkit_tm_ranged_calls"

struct tm_ranged;

/* The ranges of s by thread, and TM_RANGED_CALLS made empty. *out NULL
 * (and 0) where a range's thread or times are no integers, which only a
 * join in SQL compares as SQLite does. */
int tm_ranged__open(struct prof_store *s, struct tm_ranged **out, struct prof_error *err);
/* Whether the capture has a range to place a call in. */
bool tm_ranged__any(const struct tm_ranged *r);
/* A call (the ctx is the struct tm_ranged): into the table when inside
 * a range of its thread. For trace_pairs' on_call. */
int tm_ranged__call(void *ctx, int64_t tid, int64_t start, int64_t process, int64_t corr);
/* The table indexed for the projection's join, the ranges freed. */
int tm_ranged__close(struct tm_ranged *r);

#endif
