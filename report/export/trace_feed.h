/* trace_feed.h - the GPU side's sources stepped on a thread of their own
 * while the merge runs.
 *
 * Once the GPU side has opened its sources (the kernels, copies, memsets
 * and graphs, each sorted by start on the side's connection), the merge
 * takes their rows one by one beside the calls and ranges it steps
 * itself. Stepped in place, every GPU row's read (the sorter's merge, the
 * decoding of a wide kernel row) fell on the merge's thread while the
 * side's core sat idle. The feed steps them on a thread of its own and
 * copies each row (prof_cursor__copy_row) into batches the merge takes
 * in turn per source; the merge reads a copy as it read the cursor.
 *
 * The thread is the only user of the side's connection while it runs;
 * another statement there (the calls' point queries) runs between
 * batches, under tm_feed__lock. */
#ifndef REPORT_TRACE_FEED_H
#define REPORT_TRACE_FEED_H

#include "prof/error.h"
#include "trace_source.h"

struct tm_feed;

/* The next row of a source in place: its cursor stepped, has_row and
 * start_ns set. 0, or a negative PROF_E_* code told in the error that
 * tm_feed__start was given. */
typedef int (*tm_feed_step)(void *ctx, struct tm_source *s);

/* Take the n sources src over (each on its first row, its cursor on a
 * connection no other thread uses from now on) and begin stepping them on
 * a thread of its own, with step(ctx, ...) and its failures told in
 * *step_err; tm_feed__stop closes their cursors. *out NULL where the
 * thread cannot be made: the sources stay the caller's, to step in
 * place. */
void tm_feed__start(struct tm_feed **out, const struct tm_source *src, int n, tm_feed_step step,
		    void *ctx, const struct prof_error *step_err);
/* Source i's current row (i < n): cur a copy, valid until source i moves
 * on; has_row false past its last. The first call gives the row the
 * source stood on. 0, or a negative PROF_E_* code told in err. */
int tm_feed__next(struct tm_feed *f, int i, struct tm_source *s, struct prof_error *err);
/* The side's connection held between batches (unlock to give it back). */
void tm_feed__lock(struct tm_feed *f);
void tm_feed__unlock(struct tm_feed *f);
/* Stop the thread and free the copies (NULL: nothing). */
void tm_feed__stop(struct tm_feed *f);

#endif
