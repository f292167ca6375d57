/* trace_ahead.h - the merge's rows read ahead on a thread of their own
 * (trace_merge.c's use; the writers see trace_merge.h alone).
 *
 * After trace_merge__open the merge is one thread's work: stepping the
 * sources' statements, which SQLite spends most of it on, then the writer
 * formatting the row. With the capture's GPU side on a connection of its
 * own (a file read whole), a thread steps the merge, reads each row's
 * name and launched work, and copies the row (prof_cursor__copy_row) into
 * batches the writer takes in order, while it formats the batch before.
 * Every statement of the merge then runs on that thread, and the writer's
 * reads of a row touch no connection; its devices (occupancy, memory
 * levels) are the writer's alone. */
#ifndef REPORT_TRACE_AHEAD_H
#define REPORT_TRACE_AHEAD_H
#include <stddef.h>
#include <stdint.h>

#include "trace_merge.h"

struct tm_ahead;

/* The thread begun on m's open merge: NULL where it cannot be (the merge
 * is then read in place). m->err is the thread's own while it runs. */
struct tm_ahead *tm_ahead__start(struct trace_merge *m);
/* trace_merge__next's answer, from the batches. */
int tm_ahead__next(struct tm_ahead *a, struct tm_row *row);
/* The name of the row handed out last, when cur is its copy: trace_merge__name. */
const char *tm_ahead__name(const struct tm_ahead *a, const struct prof_cursor *cur);
/* The launched work of the row handed out last: trace_merge__launched. */
void tm_ahead__launched(const struct tm_ahead *a, uint64_t **flow_ids, size_t *n);
/* Stop the thread, join it, give m its error back, free a. */
void tm_ahead__stop(struct tm_ahead *a);

/* What the thread does, in trace_merge.c: the merge read in place. */
int tm_in_place__next(struct trace_merge *m, struct tm_row *row);
const char *tm_in_place__name(struct trace_merge *m, struct prof_cursor *cur, int col);
int tm_in_place__launched(struct trace_merge *m, enum tm_kind api, struct prof_cursor *cur,
			  uint64_t **flow_ids, size_t *n);

#endif
