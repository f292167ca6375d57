/* input_gaps.h - the host's time before each host-to-device copy of a
 * window: from the previous CUDA call of the copy's thread to the call that
 * made it (input_gaps.c). */
#ifndef REPORT_ANALYSIS_CORE_INPUT_GAPS_H
#define REPORT_ANALYSIS_CORE_INPUT_GAPS_H

#include <stdint.h>

#include "model/window.h"
#include "prof/error.h"
#include "prof/store.h"

/* The sum, over the calls of calls (a table or view of API calls: start,
 * end, globalTid, correlationId) in [w->start_ns, w->end_ns) that made a
 * host-to-device copy there, of the time since the end of the call before
 * it on its thread (by start; none before it: not counted). */
int input_gaps__total(struct prof_store *s, const struct sum_window *w, const char *calls,
		      int64_t *out, struct prof_error *err);

/* How many calls back from a copy's call its thread's call before it is
 * looked for in the scope's own table of calls, past which every call of
 * the window is walked; the limit it replaces. 0: always walked. */
int64_t input_gaps__set_scan_limit(int64_t calls);

#endif
