/* sql.h - the SQL every reader of report/ shares, so that they attribute,
 * leave out and count exactly as the summary reports do: a union over the
 * tables a store has, the launch and open-range attribution, the test for a
 * row whose span is impossible, and the CUDA API calls each counted once
 * (api_calls.c, bad_spans.c, groups.c).
 *
 * model/ is report/'s read model, one header per thing it holds. What the
 * folder may use: sink/ (the row model) and libprof, nothing else in
 * report/. summary/, analysis/, the registry, compare/, export/ and job/
 * may use it; cli/ and tui/ reach it through summary/summary.h. */
#ifndef REPORT_MODEL_SQL_H
#define REPORT_MODEL_SQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"
#include "prof/tables.h"

/* The source SQL "SELECT ... FROM A UNION ALL SELECT ... FROM B" over those
 * of the given parts whose table exists; parts[i] is used when tables[i]
 * exists. Returns a malloc'd string, or NULL (with *rc = 0) when no table
 * exists. */
char *sum_union(struct prof_store *s, const char *const *tables, const char *const *parts,
		int nparts, int *rc, struct prof_error *err);
/* sum_union followed by tail (an ORDER BY, say): readers that walk the
 * union in an order need the whole statement in one string. */
char *sum_union_then(struct prof_store *s, const char *const *tables, const char *const *parts,
		     int nparts, const char *tail, int *rc, struct prof_error *err);

/* The attribution rules nvtx_kern_sum and the folded stacks share, as SQL
 * over a kernel (or copy) row K and an API call row A, both table aliases:
 * K was launched by A when they share a correlation id within one process
 * (ids are per process; some nsys exports leave a GPU row's globalPid NULL
 * or 0). A push/pop range N is open on A's thread when the call starts. */
#define SUM_LAUNCHED_BY(K, A)                                                  \
	K ".correlationId = " A ".correlationId AND (" K ".globalPid IS NULL OR " \
	K ".globalPid = 0 OR " K ".globalPid = " PROF_SQL_GLOBAL_PID_OF_TID(A ".globalTid") ")"
/* 1 when GPU row K was launched by some call of the API table TABLE, as
 * SUM_LAUNCHED_BY would join them, else 0 (a row without a correlation id
 * too), without a lookup per row: two sets built once (the API tables have
 * no correlationId index: libprof's schema.c). */
#define SUM_LAUNCHED_BY_SOME(K, TABLE)                                          \
	"coalesce((" K ".globalPid IS NULL OR " K ".globalPid = 0) AND " K ".correlationId " \
	"IN (SELECT correlationId FROM " TABLE " WHERE correlationId IS NOT NULL) " \
	"OR (" K ".globalPid, " K ".correlationId) IN (SELECT "                     \
	PROF_SQL_GLOBAL_PID_OF_TID("globalTid") ", "                                \
	"correlationId FROM " TABLE " WHERE globalTid IS NOT NULL AND correlationId IS NOT NULL), 0)"
#define SUM_NVTX_OPEN_AT_CALL(N, A)                                            \
	N ".eventType = " PROF_SQL_NVTX_PUSHPOP " AND " SUM_RANGE_OPEN_AT_CALL(N, A)
/* The same test for a range of any kind that a row N holds as globalTid,
 * start and end: open on A's thread when A starts (module_sum's ranges,
 * whose backward halves are start/end ranges of the thread they began on). */
#define SUM_RANGE_OPEN_AT_CALL(N, A)                                           \
	N ".globalTid = " A ".globalTid AND " N ".start <= " A ".start AND " N    \
	".end > " A ".start"

/* A row's span is bad when it is no duration: its end precedes its start
 * (or either is missing), or lies 2^63 ns or more after it, further than a
 * signed 64-bit count of ns reaches (a start of INT64_MIN with a real end).
 * No clock stamps either; only a damaged or hostile file holds them. SQL
 * true for such a row of table alias A ("" or "k."): SQLite's end - start
 * turns REAL past INT64_MAX, so the bound holds exactly where the integer
 * would have overflowed. Every reader that sums, draws or bins durations
 * leaves those rows out and says how many (SUM_BAD_SPAN_WORDS), rather
 * than drawing one 292 years wide; spans that fit, however long, stay and
 * their sums saturate (prof_add_saturated). */
#define SUM_BAD_SPAN(A)                                                        \
	"((" A "end >= " A "start AND " A "end - " A "start <= 9223372036854775807) IS NOT 1)"
/* Whether a row's span is bad (SUM_BAD_SPAN) by its start's and end's
 * kinds and values (integer or NULL), for a reader that walks the rows
 * (bad_spans.c): no start or end, an end before the start, or a span past
 * INT64_MAX (SQL's subtraction turns real past it, and compares as more). */
bool sum_call_span_bad(enum prof_value_kind kind_start, int64_t start, enum prof_value_kind kind_end, int64_t end);
/* PROF_SQL_GLOBAL_PID_OF_TID as SQLite computes it, for a reader that
 * walks the rows. */
static inline int64_t sum_global_pid_of_tid(int64_t tid)
{
	return (int64_t)((uint64_t)(tid >> 24) << 24);
}
/* How a note says what SUM_BAD_SPAN left out, after "N rows". */
#define SUM_BAD_SPAN_WORDS "with an impossible span (end before start, or 2^63 ns or more long)"
/* A copy or memset row is bad when its span is, or when it moves a negative
 * number of bytes (no copy does; a damaged file can say so). */
#define SUM_BAD_COPY(A) "(" SUM_BAD_SPAN(A) " OR (" A "bytes < 0) IS 1)"
/* The rows with a bad span in every table of spans the store has (GPU
 * work, API calls, NVTX ranges): what a reader of the whole capture (a
 * trace, the folded stacks, the HTML report) left out (bad_spans.c);
 * a finished capture's, read whole, is counted once for the connections
 * to the file. */
int sum_bad_spans__count(struct prof_store *s, int64_t *rows, struct prof_error *err);
/* The same but for the tables of counted (NULL-ended), which the caller
 * counted in a pass of its own (the timeline exports' pairs). */
int sum_bad_spans__count_but(struct prof_store *s, const char *const *counted, int64_t *rows,
			     struct prof_error *err);

/* The CUDA API calls of the runtime and driver tables as one SQL source
 * with the columns start, end, globalTid, correlationId (NULL where a table
 * has none) and nameId; NULL (*rc = 0) when neither table exists. Each call
 * counts once: where several rows of a table share a thread and a
 * correlation id, the innermost (the latest to start) stands for them.
 * Nsight Systems records a call twice when it collects CUDA backtraces
 * (a "cudaMemcpy" row of class CUDA backtrace around the runtime's
 * "cudaMemcpy_v3020"), which would otherwise count its time twice. */
char *sum_api_calls(struct prof_store *s, int *rc, struct prof_error *err);
/* sum_api_calls as it reads where no thread holds a call twice (perfkit's
 * captures, most nsys exports), made without asking: a reader that
 * starts on the calls before the question's answer (a pass over every
 * call) asks sum_api_calls__once after, and begins again with
 * sum_api_calls where it says no. */
char *sum_api_calls_assuming_once(struct prof_store *s, int *rc, struct prof_error *err);
/* Whether neither table holds a call twice: sum_api_calls is then what
 * sum_api_calls_assuming_once made. */
int sum_api_calls__once(struct prof_store *s, bool *once, struct prof_error *err);
/* Whether every thread's correlation ids rise strictly in the order of
 * table's rows (every row, whatever --rank shows): then no thread holds a
 * call twice, known without a sort. False leaves the question open. */
int sum_calls__ids_rise(struct prof_store *s, const char *table, bool *rise, struct prof_error *err);
/* The test sum_api_calls applies, for readers that walk an API table
 * themselves: SQL true when the row of alias (of table) stands for its
 * call ("1" when table holds no call twice, as perfkit's captures never
 * do). Written into buf (384 bytes suffice for perfkit's table names). */
int sum_call_once_sql(struct prof_store *s, char *buf, size_t cap, const char *alias,
		      const char *table, struct prof_error *err);
/* Whether some thread of table holds a call twice: the question
 * sum_call_once_sql asks, answered once for the file's connections, so
 * that one (the diagnosis's thread ahead) may take it for a table while
 * another asks it of the other. */
int sum_calls__repeated(struct prof_store *s, const char *table, bool *yes, struct prof_error *err);

/* ids as a JSON array ("[11,12]", "[]" for none), to bind as one
 * parameter of a statement that reads them from json_each (json_ids.c);
 * NULL out of memory. */
char *sum_json_ids(const int64_t *ids, size_t n);

#endif
