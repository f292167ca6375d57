/* test_gpu_metrics_shared.c - a finished capture's GPU-metric samples are
 * read once for every connection to the file (gm_catalog__load shares
 * them through prof_store__shared_take): a connection reopened from
 * another reads the same rows in memory, not a copy, while one opened on
 * its own reads its own, the same samples; through a view that shows part
 * of the rows (--rank, --window) they are read from the file. On a real GPU-metrics capture. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gpu_metrics/gpu_metrics.h"
#include "prof/store.h"
#include "testutil.h"

#define CAPTURE "gpu_metrics/small_grid.sqlite"

static struct prof_store *open_capture(void)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;

	ck_assert_msg(prof_store__open(testutil_data_path(CAPTURE), &s, &err) == 0, "%s", err.msg);
	return s;
}

static void load(struct prof_store *s, struct gm_catalog *c)
{
	struct prof_error err = { 0 };

	ck_assert_msg(gm_catalog__load(s, c, &err) == 0, "%s", err.msg);
	ck_assert_int_gt(c->nsamplers, 0);
}

static void same_rows(const struct gm_rows *a, const struct gm_rows *b)
{
	ck_assert_uint_eq(a->n, b->n);
	ck_assert(a->n > 0);
	ck_assert(!memcmp(a->ts, b->ts, a->n * sizeof *a->ts));
	ck_assert(!memcmp(a->col, b->col, a->n * sizeof *a->col));
	for (size_t i = 0; i < a->n; i++)
		ck_assert(a->value[i] == b->value[i] || (a->value[i] != a->value[i] && b->value[i] != b->value[i]));
}

START_TEST(one_read_for_the_reopened)
{
	struct prof_error err = { 0 };
	struct prof_store *s = open_capture(), *r = NULL, *alone = open_capture();
	struct gm_catalog cs, cr, ca;

	ck_assert_msg(prof_store__reopen(s, &r, &err) == 0, "%s", err.msg);
	load(r, &cr);
	load(s, &cs);
	load(alone, &ca);
	ck_assert_int_eq(cs.nsamplers, cr.nsamplers);
	for (int i = 0; i < cs.nsamplers; i++) {
		ck_assert_ptr_nonnull(cs.samplers[i].rows);
		/* shared: the very rows the other connection read */
		ck_assert_ptr_eq(cs.samplers[i].rows, cr.samplers[i].rows);
		/* read apart: other memory, the same samples */
		ck_assert_ptr_ne(ca.samplers[i].rows, cs.samplers[i].rows);
		same_rows(ca.samplers[i].rows, cs.samplers[i].rows);
	}
	gm_catalog__exit(&cs);
	gm_catalog__exit(&cr);
	/* the rows outlive the connection that read them */
	prof_store__close(r);
	load(s, &cs);
	same_rows(cs.samplers[0].rows, ca.samplers[0].rows);
	gm_catalog__exit(&cs);
	gm_catalog__exit(&ca);
	prof_store__close(s);
	prof_store__close(alone);
}
END_TEST

START_TEST(narrowed_rows_read_from_the_file)
{
	struct prof_error err = { 0 };
	struct prof_store *s = open_capture();
	struct gm_catalog c;

	/* a view that shows part of the rows (--rank and --window make them) */
	ck_assert_int_eq(prof_store__restrict(s, "GPU_METRICS", "timestamp >= 0", &err), 0);
	ck_assert(prof_store__restricted(s));
	load(s, &c);
	for (int i = 0; i < c.nsamplers; i++)
		ck_assert_ptr_null(c.samplers[i].rows);
	gm_catalog__exit(&c);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("gpu_metrics_shared");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, one_read_for_the_reopened);
	tcase_add_test(tc, narrowed_rows_read_from_the_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
