/* test_python_modules_shared.c - a finished capture's nn.Module ranges of a
 * span are read once for the connections to the file (py_modules__load
 * shares them through prof_store__shared_take): a connection reopened
 * from another takes the same ranges, times and names without reading
 * them (its temporary table of ranges is never made), while another span,
 * a connection opened on its own and one whose views show part of the
 * rows read their own. On a real capture of `perfkit run --pytorch=modules`. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "model/python_stacks.h"
#include "prof/store.h"
#include "testutil.h"

#define CAPTURE "python/py_timm_resnet_dataloader.sqlite"

static struct prof_store *open_capture(void)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;

	ck_assert_msg(prof_store__open(testutil_data_path(CAPTURE), &s, &err) == 0, "%s", err.msg);
	return s;
}

static void load(struct prof_store *s, int64_t from, int64_t to, struct py_modules *m)
{
	struct prof_error err = { 0 };

	ck_assert_msg(py_modules__load(s, from, to, m, &err) == 0, "%s", err.msg);
}

/* Whether the connection made the temporary table of ranges: it read them. */
static bool read_here(struct prof_store *s)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c = NULL;
	bool yes;

	ck_assert_msg(prof_cursor__open(s, "SELECT count(*) FROM sqlite_temp_master WHERE name = 'perfkit_py_modules'",
					&c, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	yes = prof_cursor__int64(c, 0) > 0;
	prof_cursor__close(c);
	return yes;
}

static void same_modules(const struct py_modules *a, const struct py_modules *b)
{
	ck_assert_uint_eq(a->n, b->n);
	ck_assert(!memcmp(a->v, b->v, a->n * sizeof *a->v));
	ck_assert_uint_eq(a->nnames, b->nnames);
	for (size_t i = 0; i < a->nnames; i++)
		ck_assert_str_eq(a->names[i], b->names[i]);
	ck_assert_int_eq(a->gpu_inside_ns, b->gpu_inside_ns);
	ck_assert_int_eq(a->rows_left_out, b->rows_left_out);
}

START_TEST(one_read_for_the_reopened)
{
	struct prof_error err = { 0 };
	struct prof_store *s = open_capture(), *r = NULL, *alone = open_capture();
	struct py_modules ms, mr, ma, half;
	int64_t from = 0, to = INT64_MAX;

	ck_assert_msg(prof_store__reopen(s, &r, &err) == 0, "%s", err.msg);
	load(r, from, to, &mr);
	ck_assert(read_here(r));
	ck_assert_uint_gt(mr.n, 100);
	ck_assert_int_gt(mr.gpu_inside_ns, 0);
	/* taken: the same ranges, in memory of its own */
	load(s, from, to, &ms);
	ck_assert(!read_here(s));
	ck_assert_ptr_ne(ms.v, mr.v);
	same_modules(&ms, &mr);
	/* read apart, the same */
	load(alone, from, to, &ma);
	ck_assert(read_here(alone));
	same_modules(&ma, &mr);
	/* the copy outlives the connection that read them */
	py_modules__exit(&mr);
	prof_store__close(r);
	same_modules(&ms, &ma);
	/* another span is read, and differs */
	load(s, ms.v[ms.n / 2].start_ns, to, &half);
	ck_assert(read_here(s));
	ck_assert_uint_lt(half.n, ms.n);
	ck_assert_uint_gt(half.n, 0);
	py_modules__exit(&half);
	py_modules__exit(&ms);
	py_modules__exit(&ma);
	prof_store__close(s);
	prof_store__close(alone);
}
END_TEST

START_TEST(narrowed_rows_read_their_own)
{
	struct prof_error err = { 0 };
	struct prof_store *s = open_capture(), *r = NULL;
	struct py_modules ms, mr;

	ck_assert_msg(prof_store__reopen(s, &r, &err) == 0, "%s", err.msg);
	load(s, 0, INT64_MAX, &ms);
	/* a view that shows part of the rows (--rank and --window make them) */
	ck_assert_int_eq(prof_store__restrict(r, "NVTX_EVENTS", "start >= 0", &err), 0);
	ck_assert(prof_store__restricted(r));
	load(r, 0, INT64_MAX, &mr);
	ck_assert(read_here(r));
	same_modules(&ms, &mr);
	py_modules__exit(&ms);
	py_modules__exit(&mr);
	prof_store__close(r);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("python_modules_shared");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, one_read_for_the_reopened);
	tcase_add_test(tc, narrowed_rows_read_their_own);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
