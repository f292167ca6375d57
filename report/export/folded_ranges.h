/* folded_ranges.h - the NVTX ranges open on a thread when each of its API
 * calls starts, for calls streamed in (thread, start) order.
 *
 * A cursor walks the ranges in the same (thread, start) order beside the
 * calls: before a call is handled, every range of its thread that started
 * by the call's start joins the open list and every range that ended by
 * then leaves it, so the list is exactly SUM_NVTX_OPEN_AT_CALL's ranges
 * (start <= call start < end, on the call's thread). The folded stacks fold
 * the list into each call's stack; the Chrome trace projects each range onto
 * the GPU streams its calls launched work on, and hears when a range leaves
 * the list, after which no later call can fall inside it.
 *
 * Memory holds the ranges open on one thread. Held (range_walk__hold),
 * every thread's ranges are in memory instead (model/thread_ranges.h), and
 * the calls need only come in start order within each thread, their
 * threads interleaved as an API table's rows are. */
#ifndef REPORT_FOLDED_RANGES_H
#define REPORT_FOLDED_RANGES_H

#include <stdbool.h>
#include <stdint.h>

#include "export_window.h"
#include "model/thread_ranges.h"
#include "prof/error.h"
#include "prof/store.h"

struct open_range {
	int64_t start_ns, end_ns;
	int64_t row;  /* NVTX_EVENTS rowid */
	char *name;   /* made by range_walk.make_name from the range's name */
};

struct range_walk {
	/* Set before range_walk__open. make_name returns a malloc'd name (NULL:
	 * out of memory); on_close, when set, sees each range leave the list. */
	char *(*make_name)(const char *text);
	int (*on_close)(void *ctx, const struct open_range *r);
	void *ctx;

	struct prof_cursor *cur;   /* NULL: the store has no NVTX ranges */
	bool has_row;              /* cur holds a row not yet taken */
	int64_t thread;            /* globalTid the open list belongs to; -1: none */
	struct open_range *open;   /* outermost first */
	size_t nopen, cap;
	struct prof_error *err;
	/* held: every thread's ranges, each with its open_range (its name
	 * made once, the held ranges' own); open then lends their names */
	bool is_held;
	struct thread_ranges held;
};

/* Start the walk over push/pop ranges, with start_end also start/end ranges
 * (counted on the thread that started them). With in_range, only ranges that
 * start inside an instance of the window's --range are walked. */
int range_walk__open(struct range_walk *rw, struct prof_store *s, const struct export_window *w,
		     bool start_end, bool in_range, struct prof_error *err);
/* The same ranges, every thread's held in memory (without on_close): 1
 * held; 0 not (too many: range_walk__open walks them), rw as before; < 0
 * an error. */
int range_walk__hold(struct range_walk *rw, struct prof_store *s, const struct export_window *w,
		     bool start_end, bool in_range, struct prof_error *err);
/* Make the open list the ranges of thread open at t. Successive calls must
 * not go back in (thread, t) order; held, not in t on one thread
 * (THREAD_RANGES_BACK where a call does). */
int range_walk__at(struct range_walk *rw, int64_t thread, int64_t t);
/* Held: every thread back to its first range, for another walk of calls. */
void range_walk__rewind(struct range_walk *rw);
/* Take every range off the open list (through on_close). */
int range_walk__close_all(struct range_walk *rw);
/* Free the walk without calling on_close. */
void range_walk__exit(struct range_walk *rw);

#endif
