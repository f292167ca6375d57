/* trace_tracks.h - what a whole timeline export's track lists and time
 * base need of the GPU work and the API calls, gathered by the pairs'
 * passes (trace_pairs.h), which read every row of those tables anyway:
 * the distinct threads of the calls, the distinct (process, device,
 * stream) of the GPU work, the distinct (thread, name id) of each API
 * table's calls (which kinds of call a thread without a name made), and
 * the first start and last end of the tables the capture's extent counts
 * (model/window.h's sum_capture__time). Each was a pass of its own over
 * 10 million kernels and 22 million calls before the first event, on the
 * caller's thread: 16 s of the Chrome trace's CPU at 10M kernels.
 *
 * What is gathered says exactly what the SQL over the same rows says:
 * a value the lists read that is neither an integer nor NULL (a text
 * device id in a foreign export) makes the whole of it unusable
 * (tm_tracks__usable false), and the caller asks SQL as before. */
#ifndef REPORT_TRACE_TRACKS_H
#define REPORT_TRACE_TRACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

/* The columns of a row of the pairs' passes: who (the GPU row's process,
 * the call's thread), correlation id, start, end, whether its span is
 * impossible (model/sql.h's SUM_BAD_SPAN); then a GPU row's device and
 * stream, or a call's name id. */
enum { TP_WHO, TP_CORR, TP_START, TP_END, TP_BAD, TP_DEVICE, TP_STREAM, TP_NAME = TP_DEVICE };

/* The columns after TP_BAD that a pass reads where tracks are gathered. */
#define TP_GPU_TRACK_COLS ", deviceId, streamId"
#define TP_CALL_TRACK_COLS ", nameId"
#define TP_COLS (TP_BAD + 1) /* without them */

/* A row of a pass, each column's kind and, for an integer, its value:
 * read once for the pairs and the tracks, as each column read through the
 * cursor is a call into SQLite (the tracks' own reads cost 4 s at 10M
 * kernels and 22M calls). */
struct tp_row {
	enum prof_value_kind kind[TP_STREAM + 1];
	int64_t v[TP_STREAM + 1];
};

struct tm_tracks;

struct tm_tracks *tm_tracks__new(void);
void tm_tracks__free(struct tm_tracks *t);

/* A pass over table begins: its rows count toward the extent where the
 * capture's extent reads that table. */
void tm_tracks__table(struct tm_tracks *t, const char *table);
/* Every row of the pass, before it is judged for the pairs: < 0 out of
 * memory. api: the API table's index in the call name lists (0 runtime,
 * 1 driver). */
int tm_tracks__gpu_row(struct tm_tracks *t, const struct tp_row *r);
int tm_tracks__call_row(struct tm_tracks *t, int api, const struct tp_row *r);

/* Whether every row was read and every value read is an integer or NULL. */
bool tm_tracks__usable(const struct tm_tracks *t);
/* The tables read that the extent counts (NULL-ended), and the first
 * start and last end of their real rows (INT64_MAX, INT64_MIN: none). */
const char *const *tm_tracks__extent_tables(const struct tm_tracks *t);
void tm_tracks__extent(const struct tm_tracks *t, int64_t *lo, int64_t *hi);

/* The distinct values into temporary tables of s: host_ids (g), gpu_ids
 * (gp, d, s) and call_names[api] (globalTid, nameId), which exist and are
 * empty; NULL kept as NULL. 0, or < 0 with err set. */
int tm_tracks__fill(const struct tm_tracks *t, struct prof_store *s, const char *host_ids,
		    const char *gpu_ids, const char *const call_names[2], struct prof_error *err);

#endif
