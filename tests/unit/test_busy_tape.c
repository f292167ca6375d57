/* test_busy_tape.c - the HTML page's utilisation plot reads the overview's
 * busy walk from a tape (export/busy_tape.c) rather than walk again: on
 * real captures the tape gives back the intervals sum_busy__walk gives,
 * every one in the same order, and the overview read through the tap is
 * the overview read without it; a tape not sealed, or never made, is not
 * read, so the plot walks the rows itself. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/busy_tape.h"
#include "model/overview.h"
#include "testutil.h"
#include "prof/error.h"
#include "prof/store.h"

static const char *const captures[] = {
	"transformer_naive.sqlite", "ddp/ddp2_even.sqlite", "corpus/hf_gpt2_train.sqlite",
	"nsys/cloverleaf-cuda.sqlite", "um_faults.sqlite",  "graph/graph_replay_whole.sqlite",
};
#define NCAPTURES (sizeof captures / sizeof captures[0])

struct intervals {
	int64_t (*v)[3];
	size_t n, cap;
};

static int collect(void *ctx, int64_t device_id, int64_t start_ns, int64_t end_ns)
{
	struct intervals *s = ctx;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->v = realloc(s->v, s->cap * sizeof *s->v);
		ck_assert(s->v);
	}
	s->v[s->n][0] = device_id;
	s->v[s->n][1] = start_ns;
	s->v[s->n][2] = end_ns;
	s->n++;
	return 0;
}

START_TEST(test_tape_gives_back_the_walk)
{
	const char *name = captures[_i];
	char dir[] = "/tmp/test_busy_tape.XXXXXX";
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	struct intervals walked = { 0 }, replayed = { 0 };
	struct sum_busy_walk w = { .interval = collect, .ctx = &walked };
	struct sum_overview plain, tapped;
	struct busy_tape *t;
	struct sum_busy_tap tap;

	if (access(testutil_data_path(name), R_OK) != 0)
		ck_abort_msg("%s: missing", name);
	ck_assert_msg(prof_store__open(testutil_data_path(name), &s, &err) == 0, "%s: %s", name, err.msg);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(sum_busy__walk(s, NULL, &w, &err), 0);
	ck_assert_msg(walked.n > 0, "%s: no GPU work to walk", name);

	t = busy_tape__open(dir);
	ck_assert_ptr_nonnull(t);
	/* the file is unlinked at once: nothing is left in the folder */
	ck_assert_int_eq(rmdir(dir), 0);
	ck_assert_int_lt(busy_tape__replay(t, collect, &replayed), 0); /* not sealed */
	tap = busy_tape__tap(t);
	ck_assert_int_eq(sum_overview__load_tapped(s, &tapped, &tap, &err), 0);
	busy_tape__seal(t);
	ck_assert_int_eq(sum_overview__load(s, &plain, &err), 0);
	ck_assert_int_eq(tapped.nbusy, plain.nbusy);
	for (size_t i = 0; i < plain.nbusy; i++) {
		ck_assert_int_eq(tapped.busy[i].device_id, plain.busy[i].device_id);
		ck_assert_int_eq(tapped.busy[i].busy_ns, plain.busy[i].busy_ns);
	}
	ck_assert_int_eq(busy_tape__replay(t, collect, &replayed), 0);
	ck_assert_msg(replayed.n == walked.n, "%s: %zu intervals back, %zu walked", name, replayed.n,
		      walked.n);
	ck_assert_msg(memcmp(replayed.v, walked.v, walked.n * sizeof *walked.v) == 0,
		      "%s: the intervals differ", name);
	/* read again, it gives the same once more */
	replayed.n = 0;
	ck_assert_int_eq(busy_tape__replay(t, collect, &replayed), 0);
	ck_assert_uint_eq(replayed.n, walked.n);
	busy_tape__close(t);
	sum_overview__exit(&plain);
	sum_overview__exit(&tapped);
	free(walked.v);
	free(replayed.v);
	prof_store__close(s);
}
END_TEST

START_TEST(test_no_tape_is_not_read)
{
	struct intervals got = { 0 };

	ck_assert_ptr_null(busy_tape__open("/nonexistent/folder"));
	ck_assert_int_lt(busy_tape__replay(NULL, collect, &got), 0);
	ck_assert_uint_eq(got.n, 0);
	busy_tape__seal(NULL);
	busy_tape__close(NULL);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("busy_tape");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_tape_gives_back_the_walk, 0, NCAPTURES);
	tcase_add_test(tc, test_no_tape_is_not_read);
	suite_add_tcase(suite, tc);
	return testutil_run(suite);
}
