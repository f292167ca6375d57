/* call_runs.h - a table of CUDA calls counted by (name id, duration), in
 * the calls' census walk (call_census.c), for the API summary
 * (cuda_api_sum), which read and joined every call again for its groups:
 * 39 ms of the HTML page's 180 on a two-rank DDP capture of 69k calls.
 * Counted only where a reader asked before the census walked
 * (sum_call_census__want): the other readers, the traces among them,
 * would pay for a count they never read. */
#ifndef REPORT_MODEL_CALL_RUNS_H
#define REPORT_MODEL_CALL_RUNS_H

#include <stdbool.h>

#include "model/group_runs.h"
#include "prof/store.h"

/* table's calls, as the census walked every row of them: 1 and *out (the
 * file's, read only: each group a name id, none for a call without one,
 * each run a duration of a call of a real span; the calls of a bad span
 * left out), where the walk counted them for the file's connections that
 * show every row; 0 where it did not (not wanted, too many distinct
 * pairs, a value of another type, no census yet, a view narrows the
 * rows). */
int sum_call_runs__take(struct prof_store *s, const char *table, const struct group_runs **out);

/* The walk's side, a row at a time (call_census.c). */
struct call_runs_walk {
	struct group_runs *r; /* NULL: not wanted, or given up */
};
/* wanted: a reader asked for the runs of a finished capture's calls; a
 * walk not wanted counts nothing. */
void call_runs_walk__begin(struct call_runs_walk *w, bool wanted);
/* c's row: its columns name_col (the name id), start_col and end_col. 0,
 * or PROF_E_NOMEM. */
int call_runs_walk__add(struct call_runs_walk *w, struct prof_cursor *c, int name_col, int start_col, int end_col);
/* The runs of every row of table, walked whole, to the file's connections;
 * freed where another gave them first or nothing is shared. */
void call_runs_walk__give(struct prof_store *s, const char *table, struct call_runs_walk *w);
/* A walk not given: its runs freed. */
void call_runs_walk__exit(struct call_runs_walk *w);

#endif
