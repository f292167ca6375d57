/* window_calls.h - what the idle attribution's walk of the window's CUDA
 * calls (in start order, beside the GPU work) makes of them for two rules
 * that each walked them again (window_calls.c): the calls counted by name
 * (rules/api_groups.h) and the time their union covers while the GPU is
 * idle (rules_host.c's cpu_bound). At 22M calls the two walks took 3.4 s
 * and 2.1 s on the diagnosis's thread after the attribution's own; the
 * attribution reads every call of the window once more to make them. */
#ifndef REPORT_WINDOW_CALLS_H
#define REPORT_WINDOW_CALLS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/id_groups.h"
#include "analysis/core/intervals.h"
#include "model/window.h"
#include "prof/store.h"

struct window_calls {
	/* every call of the window [start_ns, end_ns) was read (the walk
	 * reached its end) */
	bool known;
	int64_t start_ns, end_ns;
	/* the calls that start in [start_ns, to) (to: the window's host side's
	 * end) by name id, counted and their spans summed as api_groups__make
	 * counts them; groups_known: the walk held all of them (its rows are
	 * integers, the host side ends inside the window) */
	int64_t to;
	bool groups_known;
	struct id_groups by_name;
	/* the time the union of the calls (merged where they overlap or touch,
	 * as cpu_bound merges them) covers in the gaps of busy, the GPU's busy
	 * union of the scope, over the window */
	const struct diag_interval *busy;
	int nbusy;
	int64_t in_calls_idle_ns;
	/* the walk: the union's interval at hand, the first gap it may meet */
	struct diag_interval open;
	bool have_open;
	int gap;
};

/* Begins a walk of w's calls (end >= w's start, start < its end, in start
 * order) beside busy (the scope's busy union, nbusy intervals, sorted). */
void window_calls__begin(struct window_calls *c, const struct sum_window *w, const struct diag_interval *busy,
			 int nbusy);
/* The next call: row's columns 0 (start), 1 (end) and name_col (its name
 * id). 0, or PROF_E_NOMEM. */
int window_calls__add(struct window_calls *c, struct prof_cursor *row, int name_col);
/* Every call read: known from now on. */
void window_calls__end(struct window_calls *c);
void window_calls__exit(struct window_calls *c);

#endif
