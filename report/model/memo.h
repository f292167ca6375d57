/* memo.h - the answers about every row of a capture that a connection
 * keeps in its temporary database once it has taken them (the rows of a
 * finished capture do not change under a reader, and an analysis rank by
 * rank asks them again and again), and their hand-over to a second
 * connection to the same file (prof_store__reopen), which would otherwise
 * take each again with a pass over its tables. */
#ifndef REPORT_MODEL_MEMO_H
#define REPORT_MODEL_MEMO_H

#include <stdbool.h>

#include "prof/error.h"
#include "prof/store.h"

/* Each table's lowest and highest rowid of each process, and which tables
 * have such bounds (rank_filter.c) */
#define MEMO_RANK_ROWS "perfkit_rank_rows"
#define MEMO_RANK_ROWS_NOTED "perfkit_rank_rows_noted"
/* The extent of every row, whatever --rank shows (capture_time.c) */
#define MEMO_ALL_EXTENT "perfkit_all_extent"
/* Whether a thread of each API table holds two calls under one correlation
 * id (api_calls.c) */
#define MEMO_REPEATED_CALLS "perfkit_repeated_calls"
/* Each API name's place in name order (summary/summary_api.c) */
#define MEMO_API_NAME_PLACES "perfkit_api_name_places"
/* Whether each GPU-metrics sampler's rows are in time order by rowid
 * (analysis/gpu_metrics/gpu_metrics.c) */
#define MEMO_GPU_METRICS_ORDER "perfkit_gpu_metrics_order"

/* Whether the connection's temporary database holds a table or view name
 * (a memo table, --rank's and --window's tables). */
int sum_temp__exists(struct prof_store *s, const char *name, bool *yes, struct prof_error *err);

/* An answer of n numbers about every row of a finished capture, whatever
 * its views show, shared by the connections to the file
 * (prof_store__shared_take) under key and tag: the HTML page asks several
 * of them on two connections at once, where the memo tables are handed
 * over only when a connection is opened. 1: v holds the answer, found on
 * any of them; 0: the caller finds it and passes it to sum_shared__give;
 * -1: not shared (a capture still being written, or no memory), the
 * caller finds its own. */
int sum_shared__take(struct prof_store *s, const void *key, const char *tag, int64_t *v, size_t n);
/* The answer the caller of a take that said 0 found (found false: none,
 * another connection asking finds its own). */
void sum_shared__give(struct prof_store *s, const void *key, const char *tag, const int64_t *v, size_t n,
		      bool found);
/* The same for any value copied whole (size bytes, no pointer to memory
 * of the connection's own). */
int sum_shared__take_value(struct prof_store *s, const void *key, const char *tag, void *v, size_t size);
void sum_shared__give_value(struct prof_store *s, const void *key, const char *tag, const void *v, size_t size,
			    bool found);
/* value, made by a walk of every row of a finished capture, given to the
 * file's connections under key and tag where none was given before: true
 * where it was (done frees it with the last connection), false where
 * another was first or nothing is shared (the caller keeps value). */
bool sum_shared__offer(struct prof_store *s, const void *key, const char *tag, void *value,
		       void (*done)(void *value));
/* What such a walk gave under key and tag, without waiting for one: true
 * and *value (not NULL, read only) where it was given, on a finished
 * capture; false where none was, or none yet, or the walk could keep
 * nothing (a NULL value). */
bool sum_shared__given(struct prof_store *s, const void *key, const char *tag, const void **value);
/* A value of the whole file (size bytes, copied whole) made once for its
 * connections: taken as another made it, else made by make(s, v, err) and
 * given to the rest; where s shows not every row (--rank, a rank's
 * scope), made for s alone. make's result. */
int sum_shared__value(struct prof_store *s, const void *key, void *v, size_t size,
		      int (*make)(struct prof_store *s, void *v, struct prof_error *err), struct prof_error *err);

/* The memo tables from holds and to does not, copied into to's temporary
 * database, as from made them. Neither connection may be in use on another
 * thread meanwhile. What fails to copy is left for to to take itself. */
int sum_memo__share(struct prof_store *from, struct prof_store *to, struct prof_error *err);

#endif
