/* pid_rows.h - each process's lowest and highest rowid in a table, and of
 * a table of timed rows the first start and last end of its real rows,
 * from one walk in the table's order (pid_rows.c): what `--rank`'s views
 * bound their rows by (rank_filter.c). The calls' census walks the tables
 * of calls for more and gives theirs to the file's connections, where a
 * rank's views walked every call again (21 ms of a two-rank DDP
 * capture's page, on the thread that starts the ranks' diagnoses). */
#ifndef REPORT_MODEL_PID_ROWS_H
#define REPORT_MODEL_PID_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/store.h"

/* A process's lowest and highest rowid, and the first start and last end
 * of its real rows (as the capture's extent counts them: a start after 0,
 * an end not before it; INT64_MAX and INT64_MIN where none). */
struct pid_rows {
	int64_t pid, lo, hi;
	int64_t first, last;
};

/* A walk of a table's rows of a process (rows of none are left out), a
 * row at a time: its processes' rows sorted by pid. */
struct pid_rows_walk {
	struct pid_rows *v;
	size_t n, cap;
	struct pid_rows run; /* the run of one process's rows being read */
	int64_t without;     /* rows of no process (pid_rows_walk__without) */
	bool in_run;
	bool timing; /* the rows' times are noted (begun with timed, no value of another type since) */
	bool failed; /* out of memory: nothing to tell */
};
void pid_rows_walk__begin(struct pid_rows_walk *w, bool timed);
/* Row rowid of process pid; of a timed walk, its start and end (each
 * kind's value: a value of another type than integer or NULL ends the
 * timing, whose comparisons SQL makes its own way). */
void pid_rows_walk__add(struct pid_rows_walk *w, int64_t rowid, int64_t pid, enum prof_value_kind ks,
			int64_t start, enum prof_value_kind ke, int64_t end);
/* A row of no process (a NULL thread), which no run holds. */
void pid_rows_walk__without(struct pid_rows_walk *w);
/* Whether a row of the walk is not pid's: one of another process or of
 * none. */
bool pid_rows_walk__other_than(const struct pid_rows_walk *w, int64_t pid);
/* The walk's last run folded in: false where memory ran out. */
bool pid_rows_walk__end(struct pid_rows_walk *w);
void pid_rows_walk__exit(struct pid_rows_walk *w);

/* The rows of every row of table of a process, walked whole by the calls'
 * census, to the file's connections; freed where another gave them first
 * or nothing is shared. */
void pid_rows_walk__give(struct prof_store *s, const char *table, struct pid_rows_walk *w);
/* table's rows as the census gave them: true and *out (the file's, read
 * only), false where it did not walk them. */
bool sum_pid_rows__take(struct prof_store *s, const char *table, const struct pid_rows_walk **out);

#endif
