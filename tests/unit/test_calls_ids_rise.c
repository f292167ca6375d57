/* test_calls_ids_rise.c - a thread whose correlation ids rise in the rows'
 * order holds no call twice: where sum_calls__ids_rise says they rise, the
 * GROUP BY that the repeated-call test would otherwise run finds no
 * repeat, on real captures of every kind (perfkit's own, multi-threaded,
 * DDP, Python, CUDA graphs, nsys exports). It says so of perfkit's own
 * captures, which take the one pass, and not of the nsys export whose
 * backtrace rows repeat 38 calls, which is left to the sort. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/sql.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "testutil.h"

static const char *const captures[] = {
	"torch_train.sqlite",		     "transformer_naive.sqlite",
	"gpu_work.sqlite",		     "ddp/ddp2_rank0.sqlite",
	"ddp/ddp2_straggler.sqlite",	     "threads/named_threads.sqlite",
	"threads/torch_dataloader_backward.sqlite", "python/py_hf_gpt2_train.sqlite",
	"graph/graph_replay_whole.sqlite",   "corpus/jax_jit_mlp.sqlite",
	"corpus/triton_softmax.sqlite",	     "corpus/timm_resnet_dataloader.sqlite",
	"nsys/cloverleaf-cuda.sqlite",	     "nsys/saxpy-mpi-cuda-rank0.sqlite",
};

/* 1 when a thread of table holds one correlation id twice, as SQL counts */
static int repeats(struct prof_store *s, const char *table)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c = NULL;
	char sql[256];
	int yes;

	snprintf(sql, sizeof sql, "SELECT EXISTS (SELECT 1 FROM %s WHERE correlationId <> 0 "
		 "GROUP BY globalTid, correlationId HAVING count(*) > 1)", table);
	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	yes = (int)prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return yes;
}

/* whether table's ids rise in capture */
static bool rise_of(const char *capture, const char *table, int *repeated)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	bool rise = false;

	ck_assert_msg(prof_store__open(testutil_data_path(capture), &s, &err) == 0, "%s", err.msg);
	*repeated = -1;
	if (prof_store__has_table(s, table)) {
		ck_assert_msg(sum_calls__ids_rise(s, table, &rise, &err) == 0, "%s: %s", capture, err.msg);
		*repeated = repeats(s, table);
	}
	prof_store__close(s);
	return rise;
}

START_TEST(rising_ids_hold_no_call_twice)
{
	static const char *const tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	int rising = 0, tables_seen = 0;

	for (size_t i = 0; i < sizeof captures / sizeof *captures; i++) {
		for (size_t t = 0; t < 2; t++) {
			int repeated;
			bool rise = rise_of(captures[i], tables[t], &repeated);

			if (repeated < 0)
				continue;
			tables_seen++;
			rising += rise;
			ck_assert_msg(!rise || !repeated, "%s %s: ids rise, yet a call is there twice",
				      captures[i], tables[t]);
		}
	}
	/* the one pass answers for most tables, not for none */
	ck_assert_int_ge(tables_seen, 20);
	ck_assert_int_ge(rising, tables_seen - 1);
}
END_TEST

START_TEST(perfkit_capture_ids_rise)
{
	int repeated;

	ck_assert(rise_of("torch_train.sqlite", PROF_T_RUNTIME, &repeated));
	ck_assert_int_eq(repeated, 0);
	ck_assert(rise_of("threads/torch_dataloader_backward.sqlite", PROF_T_RUNTIME, &repeated));
	ck_assert_int_eq(repeated, 0);
}
END_TEST

START_TEST(repeated_calls_left_to_the_sort)
{
	int repeated;

	/* nsys's backtrace rows: a "cudaMemcpy" row around the runtime's own */
	ck_assert(!rise_of("nsys/saxpy-mpi-cuda-rank0.sqlite", PROF_T_RUNTIME, &repeated));
	ck_assert_int_eq(repeated, 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("calls_ids_rise");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, rising_ids_hold_no_call_twice);
	tcase_add_test(tc, perfkit_capture_ids_rise);
	tcase_add_test(tc, repeated_calls_left_to_the_sort);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
