/* trace_ahead.h - a merge's rows read ahead on a thread of their own, for
 * a writer whose own work on a row outweighs the row's copy: Perfetto's
 * packets. The Chrome trace's lines do not: read ahead, its merge took the
 * same time and more CPU.
 *
 * After trace_merge__open the merge is one thread's work: stepping the
 * sources' statements, then the writer turning the row into its output.
 * Where the capture's GPU side had a connection of its own (a file read
 * whole: trace_merge__apart), a thread steps the merge, reads each row's
 * name and launched work (tm_in_place__*), and copies the row
 * (prof_cursor__copy_row) into batches the writer takes in turn while the
 * next one fills. Every statement of the merge then runs on that thread;
 * the writer's reads of a row touch no connection, and its devices
 * (occupancy, memory levels) stay its own. */
#ifndef REPORT_TRACE_AHEAD_H
#define REPORT_TRACE_AHEAD_H

#include "trace_merge.h"

/* Begin reading m's rows ahead (m opened, no row taken yet): m's
 * trace_merge__next, __name and __launched answer from the thread, and
 * trace_merge__exit stops it. Where the side was not apart, or the thread
 * cannot be made, m is read in place as before. m->err is the thread's
 * own while it runs; a failure it meets is m's caller's when told. */
void trace_ahead__start(struct trace_merge *m);

#endif
