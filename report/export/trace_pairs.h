/* trace_pairs.h - each GPU row of a timeline export paired with the API
 * call that launched it while the merge hands both out, where a join in
 * SQL needed a temporary index of every call: a copy and a sort of 22
 * million calls for 10 million kernels, 20 s of a 66 s Chrome trace.
 *
 * A call starts before the work it launches, so in start order the merge
 * hands the call out first: it is kept (thread, start, end) until the last
 * GPU row of its (process, correlation id) has come. Two passes before the
 * merge say which calls to keep and for how long: the export's GPU rows,
 * counted by (process, correlation id), and the calls holding those ids,
 * as bit sets (id_bits.h) for the GPU rows and for each API table. So
 * what is kept at any time is the calls whose work is still queued,
 * whatever the capture's length, beside three bits per correlation id.
 *
 * A GPU row whose call was not kept (a call that starts after its work on
 * a skewed clock, or one the export leaves out) is for the caller to ask
 * of SQL. The pairs are not made, and the caller joins in SQL, where an
 * API table holds one (process, id) twice among the calls that launched
 * work (a join then repeats the GPU row), where a value the pairing
 * reads is no integer, or where the ids spread thinner than the bit
 * sets' blocks allow. */
#ifndef REPORT_TRACE_PAIRS_H
#define REPORT_TRACE_PAIRS_H

#include <stdbool.h>
#include <stdint.h>

#include "trace_tracks.h"
#include "prof/error.h"
#include "prof/store.h"

/* The call that launched a GPU row, as the timeline writers draw its flow:
 * its thread, and its start where it lies in the export (no flow else). */
struct tm_launch {
	bool has_start;
	int64_t tid, start;
};

#define TP_API_TABLES 2 /* runtime, driver: the order of the join's coalesce */

struct tm_pairs;

/* What the passes read: every row of the GPU tables and of the API tables
 * (NULL ones left out); the GPU rows of a possible span must lie inside
 * [from, to] (an unbounded export's), or no pairs are made.
 * on_call, where not NULL, is told each call whose id a GPU row holds and
 * whose start is known, in the tables' row order (the NVTX projection's
 * launches). */
struct tm_pairs_input {
	const char *gpu_tables[4];
	const char *api_tables[TP_API_TABLES];
	int64_t from, to;
	int (*on_call)(void *ctx, int64_t tid, int64_t start, int64_t process, int64_t corr);
	void *ctx;
	/* where not NULL, told every row read (trace_tracks.h); of use only
	 * where the pairs are made, every row then read */
	struct tm_tracks *tracks;
};

/* The pairs of s's rows: *out NULL (and 0) where they cannot be made (see
 * above); < 0 on a failed read or when out of memory. */
int tm_pairs__make(struct prof_store *s, const struct tm_pairs_input *in, struct tm_pairs **out,
		   struct prof_error *err);
/* A call of table api handed out by the merge, whose thread and id are
 * known (its start and end are, being in the export). < 0: out of memory. */
int tm_pairs__call(struct tm_pairs *p, int api, int64_t tid, int64_t corr, int64_t start,
		   int64_t end);
/* The launch of a GPU row of (process, corr) handed out by the merge: 1
 * with *l set, 0 where the caller must ask SQL (the call was not kept). */
int tm_pairs__gpu(struct tm_pairs *p, int64_t process, int64_t corr, struct tm_launch *l);
/* Whether a call of table api holds (process, corr), for an id that a GPU
 * row of the export holds. */
bool tm_pairs__has_call(const struct tm_pairs *p, int api, int64_t process, int64_t corr);
/* The rows of an impossible span in the tables the passes read, which
 * the export leaves out (sum_bad_spans__count's for those tables). */
int64_t tm_pairs__bad_rows(const struct tm_pairs *p);
void tm_pairs__free(struct tm_pairs *p);

#endif
