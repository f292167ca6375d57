/* test_busy_tape.c - the HTML page's utilisation plot reads the overview's
 * busy walk from a tape (export/busy_tape.c) rather than walk again: on
 * real captures the tape gives back the intervals sum_busy__walk gives,
 * every one in the same order, and the overview read through the tap is
 * the overview read without it; a tape not sealed, or never made, is not
 * read, so the plot walks the rows itself. The page's diagnosis borrows the
 * tape for its busy union (analysis/core/scope.c): in every window tried,
 * whole, inside, at an interval's edges, past the work, one device's or
 * several, the union and devices it makes from the tape are those its own
 * walk of the rows makes. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/core/scope.h"
#include "export/busy_tape.h"
#include "model/overview.h"
#include "prof/tables.h"
#include "testutil.h"
#include "prof/error.h"
#include "prof/store.h"

static const char *const captures[] = {
	"transformer_naive.sqlite", "ddp/ddp2_even.sqlite", "corpus/hf_gpt2_train.sqlite",
	"nsys/cloverleaf-cuda.sqlite", "um_faults.sqlite",  "graph/graph_replay_whole.sqlite",
	"ddp/two_gpus/ddp2_even.sqlite",
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

/* The window's busy union and devices as the scope makes them, from the
 * source (NULL: its walk of the rows). */
static void scope_busy(struct prof_store *s, const struct sum_window *w, const struct diag_busy_source *source,
		       struct diag_scope *out)
{
	struct prof_error err = { 0 };

	*out = (struct diag_scope){
		.store = s,
		.w = w,
		.has_kernel = prof_store__has_table(s, PROF_T_KERNEL),
		.has_memcpy = prof_store__has_table(s, PROF_T_MEMCPY),
		.has_memset = prof_store__has_table(s, PROF_T_MEMSET),
		.has_graph_trace = prof_store__has_table(s, PROF_T_GRAPH_TRACE),
		.busy_source = source,
	};
	ck_assert_msg(diag_scope__load_busy(out, &err) == 0, "%s", err.msg);
}

static int unsealed(void *source, int (*interval)(void *, int64_t, int64_t, int64_t), void *ctx)
{
	(void)source, (void)interval, (void)ctx;
	return -1;
}

START_TEST(test_lent_tape_makes_the_diagnosis_busy_union)
{
	const char *name = captures[_i];
	char dir[] = "/tmp/test_busy_lent.XXXXXX";
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	struct intervals walked = { 0 };
	struct sum_busy_walk bw = { .interval = collect, .ctx = &walked };
	struct sum_overview o;
	struct busy_tape *t;
	struct sum_busy_tap tap;
	struct diag_busy_source tape, none = { unsealed, NULL };
	int64_t first, last, span, windows[9][2];
	size_t nwindows = 0, with_work = 0, several = 0, gap, idle = 0;

	ck_assert_msg(prof_store__open(testutil_data_path(name), &s, &err) == 0, "%s: %s", name, err.msg);
	ck_assert_int_eq(sum_busy__walk(s, NULL, &bw, &err), 0);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	t = busy_tape__open(dir);
	ck_assert_ptr_nonnull(t);
	rmdir(dir);
	tap = busy_tape__tap(t);
	ck_assert_int_eq(sum_overview__load_tapped(s, &o, &tap, &err), 0);
	busy_tape__seal(t);
	tape = (struct diag_busy_source){ busy_tape__replay_lent, t };
	first = walked.v[0][1];
	last = walked.v[0][2];
	for (size_t i = 1; i < walked.n; i++) {
		first = walked.v[i][1] < first ? walked.v[i][1] : first;
		last = walked.v[i][2] > last ? walked.v[i][2] : last;
	}
	span = last - first;
	/* whole, inside, from an interval's end, up to an interval's start,
	 * around one interval, past the work, a nanosecond */
	windows[nwindows][0] = first - 1000, windows[nwindows++][1] = last + 1000;
	windows[nwindows][0] = first + span / 10, windows[nwindows++][1] = first + span * 6 / 10;
	windows[nwindows][0] = walked.v[walked.n / 2][2], windows[nwindows++][1] = last;
	windows[nwindows][0] = first, windows[nwindows++][1] = walked.v[walked.n / 2][1];
	windows[nwindows][0] = walked.v[walked.n / 3][1] - 1, windows[nwindows++][1] = walked.v[walked.n / 3][2] + 1;
	windows[nwindows][0] = last + 10, windows[nwindows++][1] = last + 1000000;
	windows[nwindows][0] = walked.v[walked.n / 4][1], windows[nwindows++][1] = walked.v[walked.n / 4][1] + 1;
	/* exactly a gap between two intervals of one device: work that only
	 * touches the window is none of it */
	for (gap = walked.n / 2; gap + 1 < walked.n && walked.v[gap + 1][0] != walked.v[gap][0]; gap++)
		;
	ck_assert_uint_lt(gap + 1, walked.n);
	windows[nwindows][0] = walked.v[gap][2], windows[nwindows++][1] = walked.v[gap + 1][1];
	for (size_t k = 0; k < nwindows; k++) {
		struct sum_window w = { .start_ns = windows[k][0], .end_ns = windows[k][1] };
		struct diag_scope rows, lent, fallen;

		scope_busy(s, &w, NULL, &rows);
		scope_busy(s, &w, &tape, &lent);
		scope_busy(s, &w, &none, &fallen);
		ck_assert_msg(lent.nbusy == rows.nbusy && lent.busy_ns == rows.busy_ns &&
				      lent.ndevices == rows.ndevices && lent.devices_known,
			      "%s, window %zu: %d intervals, %lld ns, %d devices from the tape; %d, %lld, %d walked",
			      name, k, lent.nbusy, (long long)lent.busy_ns, lent.ndevices, rows.nbusy,
			      (long long)rows.busy_ns, rows.ndevices);
		ck_assert(rows.nbusy == 0 || memcmp(lent.busy, rows.busy, sizeof *rows.busy * (size_t)rows.nbusy) == 0);
		ck_assert(rows.ndevices == 0 ||
			  memcmp(lent.devices, rows.devices, sizeof *rows.devices * (size_t)rows.ndevices) == 0);
		ck_assert_int_eq(fallen.busy_ns, rows.busy_ns);
		ck_assert_int_eq(fallen.ndevices, rows.ndevices);
		with_work += rows.nbusy > 0;
		idle += rows.ndevices == 0;
		several += rows.ndevices > 1;
		diag_scope__exit(&rows);
		diag_scope__exit(&lent);
		diag_scope__exit(&fallen);
	}
	ck_assert_uint_ge(with_work, 5);
	ck_assert_uint_ge(idle, 1);
	if (strstr(name, "two_gpus"))
		ck_assert_uint_ge(several, 1);
	busy_tape__close(t);
	sum_overview__exit(&o);
	free(walked.v);
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
	tcase_add_loop_test(tc, test_lent_tape_makes_the_diagnosis_busy_union, 0, NCAPTURES);
	tcase_add_test(tc, test_no_tape_is_not_read);
	suite_add_tcase(suite, tc);
	return testutil_run(suite);
}
