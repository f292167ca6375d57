/* test_program_streams.c - the program model's count of the window's
 * kernels, of those run as graph nodes, and of the streams with kernels or
 * copies (one pass over the kernels, the pairs kept in C) is what the two
 * statements it replaced say: a DISTINCT over kernels and copies, and a
 * count over the kernels. On real captures with one stream, several (DDP's
 * NCCL stream, copies pipelined beside compute), graph nodes and an nsys
 * export; over the whole capture, its middle half and a window of no
 * kernel; and on copies whose device or stream is NULL, which DISTINCT
 * counts as a value of its own. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/core/program.h"
#include "model/window.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "testutil.h"

static const char *const captures[] = {
	"transformer_naive.sqlite",  "ddp/ddp2_even.sqlite",	      "corpus/pinned_overlap.sqlite",
	"corpus/graph_replay.sqlite", "nsys/cloverleaf-cuda.sqlite", "corpus/hf_gpt2_train.sqlite",
};

/* What the statements say over [from, to). */
struct said {
	int64_t streams, kernels, graph_kernels;
};

static int64_t ask(struct prof_store *s, const char *sql, int col, int64_t from, int64_t to)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	int64_t v;

	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s", err.msg);
	prof_cursor__bind_int64(c, 1, from);
	prof_cursor__bind_int64(c, 2, to);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	v = prof_cursor__int64(c, col);
	prof_cursor__close(c);
	return v;
}

static struct said by_statements(struct prof_store *s, int64_t from, int64_t to)
{
	static const char streams[] =
		"SELECT count(*) FROM (SELECT DISTINCT deviceId, streamId FROM " PROF_T_KERNEL
		" WHERE start >= ?1 AND start < ?2 UNION SELECT DISTINCT deviceId, streamId FROM " PROF_T_MEMCPY
		" WHERE start >= ?1 AND start < ?2)";
	static const char kernels[] = "SELECT count(*), count(CASE WHEN graphNodeId > 0 THEN 1 END) FROM "
				      PROF_T_KERNEL " WHERE start >= ?1 AND start < ?2";

	return (struct said){ ask(s, streams, 0, from, to), ask(s, kernels, 0, from, to),
			      ask(s, kernels, 1, from, to) };
}

/* The model over [from, to) against the statements: the streams counted. */
static int64_t check_window(struct prof_store *s, const char *name, int64_t from, int64_t to)
{
	struct sum_window w = { .start_ns = from, .end_ns = to, .host_end_ns = to };
	struct prof_error err = { 0 };
	struct prog_model m;
	struct said said = by_statements(s, from, to);

	ck_assert_msg(prog_model__read_gpu(s, &w, false, &m, &err) == 0, "%s: %s", name, err.msg);
	ck_assert_msg(m.streams == said.streams, "%s [%lld, %lld): %d streams, SQL %lld", name, (long long)from,
		      (long long)to, m.streams, (long long)said.streams);
	ck_assert_msg(m.kernels == said.kernels, "%s: %lld kernels, SQL %lld", name, (long long)m.kernels,
		      (long long)said.kernels);
	ck_assert_msg(m.graph_kernels == said.graph_kernels, "%s: %lld graph nodes, SQL %lld", name,
		      (long long)m.graph_kernels, (long long)said.graph_kernels);
	return said.streams;
}

/* Every window of check_window on the capture at path; the most streams
 * the statements counted in one. */
static int64_t check(const char *path, const char *name)
{
	struct prof_error err = { 0 };
	struct prof_store *s;
	int64_t lo, hi, most;

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	/* the kernels' first and last start (the bounds are the statement's
	 * own, unused) */
	lo = ask(s, "SELECT min(start) FROM " PROF_T_KERNEL " WHERE ?1 <= ?2", 0, 0, 0);
	hi = ask(s, "SELECT max(start) FROM " PROF_T_KERNEL " WHERE ?1 <= ?2", 0, 0, 0);
	most = check_window(s, name, INT64_MIN, INT64_MAX);
	check_window(s, name, lo + (hi - lo) / 4, lo + (hi - lo) / 4 * 3);
	ck_assert_int_eq(check_window(s, name, hi + 1, hi + 2), 0);
	prof_store__close(s);
	return most;
}

START_TEST(streams_as_the_statements_count_them)
{
	int several = 0, graphs = 0;

	for (size_t k = 0; k < sizeof captures / sizeof *captures; k++) {
		struct prof_error err = { 0 };
		struct prof_store *s;

		several += check(testutil_data_path(captures[k]), captures[k]) > 1;
		ck_assert_msg(prof_store__open(testutil_data_path(captures[k]), &s, &err) == 0, "%s", err.msg);
		graphs += by_statements(s, INT64_MIN, INT64_MAX).graph_kernels > 0;
		prof_store__close(s);
	}
	/* captures of several streams and of graph nodes were there to count */
	ck_assert_int_ge(several, 2);
	ck_assert_int_ge(graphs, 1);
}
END_TEST

/* Kernels and copies of no device or no stream: DISTINCT counts NULL as
 * one value, apart from every number. */
START_TEST(a_null_device_or_stream_counts_once)
{
	const char *path = testutil_changed_copy(
		"ddp/ddp2_even.sqlite", "streams_null.sqlite",
		"UPDATE " PROF_T_KERNEL " SET streamId = NULL WHERE rowid % 7 = 0;"
		" UPDATE " PROF_T_KERNEL " SET deviceId = NULL WHERE rowid % 11 = 0;"
		" UPDATE " PROF_T_MEMCPY " SET deviceId = NULL, streamId = NULL WHERE rowid % 5 = 0;");

	ck_assert_int_ge(check(path, "streams_null.sqlite"), 4);
}
END_TEST

/* Kernels on 23 streams, taken in turn row after row: each row's pair is
 * another than the row before's. */
START_TEST(streams_in_turn_count_once_each)
{
	const char *path = testutil_changed_copy("transformer_naive.sqlite", "streams_in_turn.sqlite",
						 "UPDATE " PROF_T_KERNEL " SET streamId = (rowid * 7) % 23");

	ck_assert_int_ge(check(path, "streams_in_turn.sqlite"), 23);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("program_streams");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, streams_as_the_statements_count_them);
	tcase_add_test(tc, a_null_device_or_stream_counts_once);
	tcase_add_test(tc, streams_in_turn_count_once_each);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
