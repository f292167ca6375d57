/* ids_rise.h - whether every thread's correlation ids rise strictly in the
 * order of a table of calls' rows (ids_rise.c), told row by row: then no
 * thread holds one id twice, known from one pass in the file's order.
 * CUPTI numbers the calls as they are made, so a capture's calls mostly
 * come so (of the fixtures, all but an nsys export whose backtrace rows
 * repeat calls). The repeated-call test's own walk and the calls' census
 * (call_census.h), which a reader asks first anyway, both tell it. */
#ifndef REPORT_MODEL_IDS_RISE_H
#define REPORT_MODEL_IDS_RISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/store.h"

struct ids_rise_walk {
	struct ids_rise_last *last; /* each thread's last id, ascending by thread */
	size_t n, cap, at;          /* at: the thread of the row before */
	bool rise;                  /* so far; false stays false */
};

/* Begins a walk: rising until a row says otherwise. */
void ids_rise_walk__init(struct ids_rise_walk *w);
/* The next row by rowid: c's columns tid_col (the thread) and corr_col
 * (the correlation id). The rows SQL's "correlationId <> 0" leaves out
 * (no id, an integer 0) are passed over; an id or a thread of another
 * type than integer (a thread may be NULL) ends the rise, leaving the
 * question to SQL. 0, or PROF_E_NOMEM. */
int ids_rise_walk__add(struct ids_rise_walk *w, struct prof_cursor *c, int tid_col, int corr_col);
void ids_rise_walk__exit(struct ids_rise_walk *w);

#endif
