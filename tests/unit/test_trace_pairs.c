/* test_trace_pairs.c - the timeline merge with its GPU rows paired with
 * their launching calls as it hands them out (trace_pairs.h, taken for a
 * whole capture) gives the rows that the join in SQL gives (taken for a
 * window, here one that holds the whole capture): every row of every
 * kind in the same order, each GPU row's launching call, each call's
 * launched work and the NVTX ranges projected onto the GPU. On real
 * captures of every kind (PyTorch with ranges, a two-rank job, CUDA graphs
 * node by node and whole, JAX, managed memory, an nsys export), and on
 * copies shaped where the pairs cannot keep a call: calls that start after
 * their work (a skewed clock), calls of an impossible span or of no start
 * (which the export leaves out, and counts), ids that the runtime and the driver share
 * or only the driver holds. Where a table holds a launching id twice, or a
 * thread is no integer, the pairs are not made. With the rows, the track
 * lists and the time base: gathered by the pairs' passes (trace_tracks.h)
 * for a whole capture, read by SQL for a window, on connections of their
 * own (the capture's extent is kept by a connection once read); a copy
 * with NULL threads and streams and rows of no time gathers them too, one
 * with a device that is no integer leaves them to SQL. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/trace_merge.h"
#include "prof/error.h"
#include "prof/store.h"
#include "testutil.h"

static const char *const captures[] = {
	"transformer_naive.sqlite",       "ddp/ddp2_even.sqlite",
	"corpus/graph_replay.sqlite",     "graph/graph_replay_whole.sqlite",
	"corpus/jax_jit_mlp.sqlite",      "corpus/managed_memory.sqlite",
	"nsys/cloverleaf-cuda.sqlite",    "python/py_hf_gpt2_train.sqlite",
};
#define NCAPTURES (sizeof captures / sizeof captures[0])

/* How the merge ran: whether it paired the rows, and whether a row asked
 * SQL for its call (the calls' index made). */
struct run {
	bool paired, asked, gathered;
};

static int put_process(void *ctx, int64_t pid, const char *name)
{
	fprintf(ctx, "process %" PRId64 " %s\n", pid, name);
	return 0;
}

static int put_thread(void *ctx, int64_t tid, const char *name)
{
	fprintf(ctx, "thread %" PRId64 " %s\n", tid, name);
	return 0;
}

static int put_stream(void *ctx, struct tm_device *d, bool new_device, int64_t stream)
{
	fprintf(ctx, "stream %d %d %" PRId64 "\n", (int)d->id, (int)new_device, stream);
	return 0;
}

static int put_process_stream(void *ctx, int64_t pid, int64_t device, int64_t stream)
{
	fprintf(ctx, "process stream %" PRId64 " %" PRId64 " %" PRId64 "\n", pid, device, stream);
	return 0;
}

/* The track lists and the time base, as a writer reads them once the
 * merge is open. */
static void put_tracks(FILE *f, struct trace_merge *m)
{
	struct prof_error *err = m->err;

	fprintf(f, "base %" PRId64 " utc %" PRId64 " end %" PRId64 "\n", m->w.base_ns,
		m->w.base_utc_ns, m->w.end_ns);
	ck_assert_msg(trace_merge__each_process(m, put_process, f) == 0, "%s", err->msg);
	ck_assert_msg(trace_merge__each_thread(m, put_thread, f) == 0, "%s", err->msg);
	ck_assert_msg(trace_merge__each_stream(m, put_stream, f) == 0, "%s", err->msg);
	ck_assert_msg(trace_merge__each_process_stream(m, put_process_stream, f) == 0, "%s",
		      err->msg);
}

static void put_cursor(FILE *f, struct prof_cursor *c, enum tm_kind kind)
{
	for (int i = 0; i < prof_cursor__columns(c); i++) {
		/* GPU rows' calls are compared as the launch below */
		if (tm_kind__is_gpu(kind) && (i == TM_GPU_LAUNCH_TID || i == TM_GPU_LAUNCH_START))
			continue;
		switch (prof_cursor__kind(c, i)) {
		case PROF_VALUE_NULL: fputs(" null", f); break;
		case PROF_VALUE_INT: fprintf(f, " %" PRId64, prof_cursor__int64(c, i)); break;
		case PROF_VALUE_REAL: fprintf(f, " %.17g", prof_cursor__double(c, i)); break;
		default: fprintf(f, " '%s'", prof_cursor__text(c, i)); break;
		}
	}
}

/* Every row of s's merge over filter, a line each, into memory. */
static char *merge_text(struct prof_store *s, const struct export_filter *filter,
			bool launch_rows, struct run *run)
{
	struct prof_error err = { 0 };
	struct trace_merge m;
	struct tm_row r;
	size_t len = 0;
	char *text = NULL;
	FILE *f = open_memstream(&text, &len);
	int rc;

	ck_assert_ptr_nonnull(f);
	ck_assert_msg(trace_merge__init(&m, s, filter, launch_rows, &err) == 0, "%s", err.msg);
	ck_assert_msg(trace_merge__open(&m) == 0, "%s: %s", prof_store__path(s), err.msg);
	run->paired = m.pairs != NULL;
	run->gathered = tm_tracks__usable(m.tracks);
	put_tracks(f, &m);
	while ((rc = trace_merge__next(&m, &r)) > 0) {
		fprintf(f, "%d", (int)r.kind);
		if (r.span) {
			fprintf(f, " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
				" %s", r.span->start_ns, r.span->end_ns, r.span->row, r.span->process,
				r.span->device, r.span->stream, r.span_name);
		} else {
			put_cursor(f, r.cur, r.kind);
		}
		if (tm_kind__is_gpu(r.kind) && r.launch.has_start)
			fprintf(f, " launched by %" PRId64 " at %" PRId64, r.launch.tid, r.launch.start);
		if (launch_rows && (r.kind == TM_RUNTIME || r.kind == TM_DRIVER)) {
			uint64_t *ids;
			size_t n;

			ck_assert_msg(trace_merge__launched(&m, r.kind, r.cur, &ids, &n) == 0, "%s", err.msg);
			for (size_t i = 0; i < n; i++)
				fprintf(f, " -> %" PRIu64, ids[i]);
		}
		fputc('\n', f);
	}
	ck_assert_msg(rc == 0, "%s: %s", prof_store__path(s), err.msg);
	/* the rows of an impossible span, counted by the pairs' passes */
	fprintf(f, "left out %" PRId64 "\n", m.rows_left_out);
	run->asked = m.calls_indexed && run->paired;
	trace_merge__exit(&m);
	fclose(f);
	return text;
}

/* The first line where a and b differ, for the message. */
static const char *first_difference(const char *a, const char *b, int *line)
{
	*line = 1;
	for (; *a && *a == *b; a++, b++)
		if (*a == '\n')
			(*line)++;
	while (a > b && a[-1] != '\n')
		a--;
	return a;
}

/* The merge of path, paired and joined, with and without launch_rows:
 * the same rows; how the paired one ran. */
static struct run paired_as_joined(const char *path)
{
	/* a window holding every row, which the pairs leave to the join */
	struct export_filter whole = { 0 }, joined = { .has_from = true, .from_ns = -((int64_t)1 << 62),
						       .has_to = true, .to_ns = (int64_t)1 << 62 };
	struct prof_error err = { 0 };
	struct run paired = { 0 }, join = { 0 };

	for (int launch_rows = 0; launch_rows < 2; launch_rows++) {
		struct prof_store *s = NULL, *t = NULL;
		char *a, *b;
		int line;
		const char *at;

		ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
		ck_assert_msg(prof_store__open(path, &t, &err) == 0, "%s", err.msg);
		a = merge_text(s, &whole, launch_rows, &paired);
		b = merge_text(t, &joined, launch_rows, &join);
		at = first_difference(a, b, &line);
		ck_assert_msg(!join.paired && !join.gathered, "%s: a window was paired", path);
		ck_assert_msg(strlen(a) > 1000, "%s: %zu bytes of rows", path, strlen(a));
		ck_assert_msg(strcmp(a, b) == 0, "%s (launch rows %d): line %d differs: %.200s", path,
			      launch_rows, line, at);
		free(a);
		free(b);
		prof_store__close(s);
		prof_store__close(t);
	}
	return paired;
}

START_TEST(test_real_captures_paired_as_joined)
{
	for (size_t i = 0; i < NCAPTURES; i++) {
		struct run run = paired_as_joined(testutil_data_path(captures[i]));

		/* every GPU row of a real capture finds its call kept, and the
		 * passes gather the track lists */
		ck_assert_msg(run.paired && !run.asked && run.gathered,
			      "%s: paired %d, asked %d, gathered %d", captures[i], run.paired,
			      run.asked, run.gathered);
	}
}
END_TEST

/* A copy of a capture shaped by sql; the merge's run on it. */
static struct run shaped(const char *capture, const char *name, const char *sql)
{
	const char *path = testutil_tmp_path(name);

	testutil_copy_file(testutil_data_path(capture), path);
	testutil_sqlite3(path, sql);
	return paired_as_joined(path);
}

#define LAUNCHING "correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL)"

START_TEST(test_calls_not_kept_asked_of_sql)
{
	/* launching calls 20 ms late: after their kernels, on a skewed clock */
	struct run run = shaped("transformer_naive.sqlite", "late.sqlite",
				"UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = start + 20000000, "
				"end = end + 20000000 WHERE rowid % 7 = 0 AND " LAUNCHING);

	ck_assert(run.paired && run.asked);
	/* calls the export leaves out: an impossible span, no start; with
	 * kernels and ranges of an impossible span, which it leaves out too */
	run = shaped("transformer_naive.sqlite", "left_out.sqlite",
		     "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = start - 1 WHERE rowid % 11 = 0 AND "
		     LAUNCHING "; UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = NULL WHERE rowid % 13 = 0 "
		     "AND " LAUNCHING "; UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 5 WHERE "
		     "rowid % 17 = 0; UPDATE CUPTI_ACTIVITY_KIND_DRIVER SET end = NULL WHERE rowid % 19 = 0; "
		     "UPDATE NVTX_EVENTS SET end = start - 1 WHERE rowid % 5 = 0 AND eventType = 59");
	ck_assert(run.paired && run.asked);
	/* driver calls holding the runtime's launching ids (beside the
	 * runtime's call or alone, some late), where the capture's own driver
	 * calls launched the rest (cuBLAS's) */
	run = shaped("transformer_naive.sqlite", "driver.sqlite",
		     "CREATE TEMP TABLE k AS SELECT correlationId AS c, row_number() OVER (ORDER BY "
		     "correlationId) AS i FROM (SELECT DISTINCT correlationId FROM "
		     "CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId NOT IN (SELECT correlationId FROM "
		     "CUPTI_ACTIVITY_KIND_DRIVER)); "
		     "UPDATE CUPTI_ACTIVITY_KIND_DRIVER SET correlationId = (SELECT c FROM k WHERE "
		     "i = CUPTI_ACTIVITY_KIND_DRIVER.rowid * 3) WHERE rowid * 3 <= (SELECT max(i) FROM k); "
		     "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = NULL WHERE correlationId IN "
		     "(SELECT c FROM k WHERE i % 2 = 0 AND i % 3 = 0); "
		     "UPDATE CUPTI_ACTIVITY_KIND_DRIVER SET start = start + 50000000, end = end + 50000000 "
		     "WHERE rowid % 5 = 0");
	ck_assert(run.paired && run.asked);
}
END_TEST

/* The NVTX projection places a call at a range's start inside it, at its
 * end outside: new ranges that begin exactly at a launching call that no
 * range holds (and end 1 ns later), or end exactly there (begun 10 ns
 * before). */
#define OUTSIDE_RANGES "a.rowid % 5 = 0 AND a." LAUNCHING " AND NOT EXISTS (SELECT 1 FROM " \
	"NVTX_EVENTS m WHERE m.globalTid = a.globalTid AND m.eventType IN (59, 60) AND "     \
	"m.start <= a.start AND m.end > a.start)"
static const char *const on_edges[] = {
	"INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, text) SELECT a.start, "
	"a.start + 1, 59, a.globalTid, 'begins at a call' FROM CUPTI_ACTIVITY_KIND_RUNTIME a "
	"WHERE " OUTSIDE_RANGES,
	"INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, text) SELECT a.start - 10, "
	"a.start, 59, a.globalTid, 'ends at a call' FROM CUPTI_ACTIVITY_KIND_RUNTIME a "
	"WHERE " OUTSIDE_RANGES,
};

START_TEST(test_calls_on_the_edges_of_ranges)
{
	static const char *const names[] = { "on_start.sqlite", "on_end.sqlite" };

	for (int e = 0; e < 2; e++) {
		struct run run = shaped("gpu_work.sqlite", names[e], on_edges[e]);

		ck_assert(run.paired && !run.asked);
	}
}
END_TEST

START_TEST(test_track_lists_gathered_as_sql_reads_them)
{
	/* NULL threads and streams, which the lists hold as SQL does; calls
	 * of no name; the first call with no time, and the last kernel of
	 * an impossible span, which the extent leaves out */
	struct run run = shaped("transformer_naive.sqlite", "nulls.sqlite",
				"UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = NULL WHERE rowid % 23 = 0 "
				"AND NOT " LAUNCHING "; UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = NULL "
				"WHERE rowid % 29 = 0; UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = NULL "
				"WHERE rowid % 31 = 0; UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = 0 "
				"WHERE start = (SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME); "
				"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 1 WHERE end = "
				"(SELECT max(end) FROM CUPTI_ACTIVITY_KIND_KERNEL)");

	ck_assert(run.paired && run.gathered);
	/* a device that is no integer: the lists are SQL's */
	run = shaped("transformer_naive.sqlite", "text_device.sqlite",
		     "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 'gpu' || deviceId WHERE rowid = 9");
	ck_assert(run.paired && !run.gathered);
}
END_TEST

START_TEST(test_no_pairs_where_they_cannot_be_exact)
{
	/* a launching call held twice: the join repeats its GPU rows */
	struct run run = shaped("transformer_naive.sqlite", "twice.sqlite",
				"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT * FROM "
				"CUPTI_ACTIVITY_KIND_RUNTIME WHERE " LAUNCHING " LIMIT 3");

	ck_assert(!run.paired);
	/* a thread that is no integer compares as SQLite compares it */
	run = shaped("transformer_naive.sqlite", "text_thread.sqlite",
		     "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = 'thread ' || globalTid "
		     "WHERE rowid = 50");
	ck_assert(!run.paired);
	/* a call held twice that launched nothing is no hindrance */
	run = shaped("transformer_naive.sqlite", "idle_twice.sqlite",
		     "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT * FROM "
		     "CUPTI_ACTIVITY_KIND_RUNTIME WHERE NOT " LAUNCHING " LIMIT 3");
	ck_assert(run.paired && !run.asked);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("trace_pairs");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_real_captures_paired_as_joined);
	tcase_add_test(tc, test_calls_not_kept_asked_of_sql);
	tcase_add_test(tc, test_calls_on_the_edges_of_ranges);
	tcase_add_test(tc, test_track_lists_gathered_as_sql_reads_them);
	tcase_add_test(tc, test_no_pairs_where_they_cannot_be_exact);
	suite_add_tcase(suite, tc);
	return testutil_run(suite);
}
