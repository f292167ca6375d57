/* launch_ids.h - the correlation ids of a capture's CUDA calls as sets in
 * memory, one a process, one of every call and one of the runtime's, to
 * ask whether a GPU row was launched by some call (SUM_LAUNCHED_BY_SOME's
 * test) or a driver call by the runtime without a join per row
 * (launch_ids.c). */
#ifndef REPORT_MODEL_LAUNCH_IDS_H
#define REPORT_MODEL_LAUNCH_IDS_H

#include <stdbool.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

struct launch_ids;

/* The ids of the calls of the runtime and driver tables the store has.
 * 1: read, *out set; 0: more blocks of ids than launch_ids holds (ids
 * spread too thin; the caller asks SQL), *out NULL; < 0: an error. */
int launch_ids__load(struct prof_store *s, struct launch_ids **out, struct prof_error *err);
/* The blocks held at most from now on (the tests set 0 to take SQL's way). */
void launch_ids__set_max_blocks(size_t blocks);

/* Whether a GPU row of process global_pid (pid_known false: NULL) with
 * correlation id corr (corr_known false: NULL) was launched by a call: one
 * of its process, or for a row of no process (NULL or 0), any call. */
bool launch_ids__launched(const struct launch_ids *ids, bool pid_known, int64_t global_pid,
			  bool corr_known, int64_t corr);

/* Whether a driver call of thread global_tid (tid_known false: NULL)
 * with correlation id corr is left to the runtime's call of its process
 * under the same id (a kernel launched through the runtime has both when
 * both are traced): folded.c's walk of the driver's calls. A call of no
 * thread is, wherever the runtime has calls of a thread. */
bool launch_ids__runtime_has(const struct launch_ids *ids, bool tid_known, int64_t global_tid, int64_t corr);

void launch_ids__free(struct launch_ids *ids);

/* One table's ids, a row at a time, in the calls' census walk
 * (call_census.c) where a reader asked for them before it
 * (sum_call_census__want): launch_ids__load then reads none of a
 * finished capture's calls for a connection that shows every row. The
 * read they stand in for is 3.1 s of the HTML page at 22M calls. */
struct launch_ids_walk {
	struct launch_ids *ids; /* NULL: not wanted, or given up */
	bool runtime;
};
/* The ids as the census walked them for a finished capture's connection
 * that shows every row: 1 and *out (the caller's); 0 where a table's were
 * not walked or did not fit (launch_ids__load reads them then); < 0
 * (PROF_E_NOMEM) out of memory. */
int launch_ids__of_census(struct prof_store *s, struct launch_ids **out);
void launch_ids_walk__begin(struct launch_ids_walk *w, const char *table, bool wanted);
/* c's row: its columns tid_col (the thread) and corr_col (the correlation
 * id). 0, or PROF_E_NOMEM. */
int launch_ids_walk__add(struct launch_ids_walk *w, struct prof_cursor *c, int tid_col, int corr_col);
/* The ids of every row of table, walked whole, to the file's connections;
 * freed where another gave them first or nothing is shared. */
void launch_ids_walk__give(struct prof_store *s, const char *table, struct launch_ids_walk *w);
void launch_ids_walk__exit(struct launch_ids_walk *w);

#endif
