/* call_pairs.h - each (thread, name id) of a capture's CUDA calls once,
 * from one pass over the runtime's and the driver's tables
 * (call_pairs.c): what the threads' labels ask of the calls (which kinds
 * of call each thread made) and what the program's model asks (which
 * calls some thread made, and which threads made only pinning calls),
 * each a pass or a DISTINCT of its own before. */
#ifndef REPORT_MODEL_CALL_PAIRS_H
#define REPORT_MODEL_CALL_PAIRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

/* A thread (none: tid_null) and a name id some call of it had; good: one
 * of them had a real span (not SUM_BAD_SPAN). Calls of no name id are
 * left out: they join no string. */
struct call_pair {
	int64_t tid, name;
	bool tid_null, good, used;
};

struct call_pairs {
	int64_t *tids; /* the threads that made a call, ascending, each once */
	size_t ntids, tids_cap;
	struct call_pair *v; /* an open-addressed set: the used of cap slots */
	size_t n, cap;       /* cap 0 or a power of 2 */
};

/* The pairs of every call of the tables of tables (NULL: one the capture
 * lacks) that s's views show, read once for a finished capture's
 * connections that show every row: 1 and *out, the caller's
 * (sum_call_pairs__delete); 0 where a thread or a name id is of another
 * type than integer (SQL's DISTINCT and joins compare those their own
 * way: the caller asks SQL); < 0 an error. */
int sum_call_pairs__load(struct prof_store *s, const char *const tables[2], struct call_pairs **out,
			 struct prof_error *err);
void sum_call_pairs__delete(struct call_pairs *p);

/* One table's rows into pairs, a row at a time, as the pairs' own walk
 * reads them: for a reader that walks the table for more (the calls'
 * census, call_census.h), whose walk then stands for the pairs' own. */
struct call_pairs_walk {
	struct call_pairs *p; /* NULL: out of memory */
	bool odd;             /* a value of another type than integer or NULL: none */
	bool any, tid_null, named, good; /* the row before's pair */
	int64_t tid, name;
};
void call_pairs_walk__begin(struct call_pairs_walk *w);
/* c's row: its columns tid_col (the thread), name_col (the name id),
 * start_col and end_col. 0, or PROF_E_NOMEM. */
int call_pairs_walk__add(struct call_pairs_walk *w, struct prof_cursor *c, int tid_col, int name_col, int start_col,
			 int end_col);
/* The pairs of every row of table, walked whole, for the file's
 * connections that show every row (sum_call_pairs__load takes them);
 * freed where another gave them first or nothing is shared. */
void call_pairs_walk__give(struct prof_store *s, const char *table, struct call_pairs_walk *w);
/* A walk not given: its pairs freed. */
void call_pairs_walk__exit(struct call_pairs_walk *w);
/* The pairs of p in order (every one, or with good_only those of a real
 * span): *n of them; each(arg, k, value) for every string of the k-th's
 * name id (StringIds' rows of it, not NULL; a name id of none has none),
 * read by one statement. 0 or < 0 an error. */
int sum_call_pairs__each_string(struct prof_store *s, const struct call_pairs *p, bool good_only,
				void (*each)(void *arg, size_t k, const char *value), void *arg, size_t *n,
				struct prof_error *err);

#endif
