/* test_gpu_metrics_reader.c - one sampler's periods read from a real
 * capture (torch_gemm_bf16_fp32: one sampler, 12 metrics, 13,217 samples)
 * over windows that start before its first sample, on a sample, between
 * two, on its last and after it. Rows written in time order are read from
 * the sampler's first sample on, the periods before the window passed
 * over; rows out of time order (the same capture with its samples written
 * again in reverse) are sorted from the last sample before the window.
 * Both give the same periods, and the first of them starts at the last
 * sample before the window. Each copy's order, kept for its connection,
 * reads back the same. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gpu_metrics/gpu_metrics.h"
#include "model/memo.h"
#include "testutil.h"
#include "prof/error.h"
#include "prof/store.h"

#define CAPTURE "gpu_metrics/torch_gemm_bf16_fp32.sqlite"

struct period {
	int64_t from, to;
	double values[GM_MAX_METRICS];
};

static struct prof_store *open_capture(const char *path)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };

	ck_assert_msg(prof_store__open_capture(path, &s, &err) == 0, "%s: %s", path, err.msg);
	return s;
}

/* The sampler's distinct sample times, in order. */
static int64_t *sample_times(struct prof_store *s, int *n)
{
	struct prof_cursor *c = NULL;
	struct prof_error err = { 0 };
	int64_t *ts = NULL;
	int cap = 0, rc;

	*n = 0;
	ck_assert_int_eq(prof_cursor__open(s, "SELECT DISTINCT timestamp FROM GPU_METRICS "
					      "WHERE timestamp IS NOT NULL ORDER BY timestamp", &c, &err), 0);
	while ((rc = prof_cursor__next(c, &err)) > 0) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 1024;
			ts = realloc(ts, (size_t)cap * sizeof *ts);
			ck_assert_ptr_nonnull(ts);
		}
		ts[(*n)++] = prof_cursor__int64(c, 0);
	}
	ck_assert_int_eq(rc, 0);
	prof_cursor__close(c);
	return ts;
}

/* Every period of the catalogue's one sampler over [from, to). */
static struct period *periods(struct prof_store *s, const struct gm_catalog *c, int64_t from, int64_t to,
			      int *n)
{
	struct gm_reader *r = NULL;
	struct prof_error err = { 0 };
	struct period *p = NULL;
	const double *values;
	int64_t a, b;
	int cap = 0, rc;

	*n = 0;
	ck_assert_msg(gm_reader__open(s, c, 0, from, to, &r, &err) == 0, "%s", err.msg);
	while ((rc = gm_reader__next(r, &a, &b, &values, &err)) > 0) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 1024;
			p = realloc(p, (size_t)cap * sizeof *p);
			ck_assert_ptr_nonnull(p);
		}
		p[*n].from = a;
		p[*n].to = b;
		memcpy(p[*n].values, values, (size_t)c->nmetrics * sizeof *values);
		(*n)++;
	}
	ck_assert_msg(rc == 0, "%s", err.msg);
	gm_reader__close(r);
	return p;
}

static bool same_value(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

START_TEST(gpu_metrics_periods_the_same_read_in_order_or_sorted_from_any_window_start)
{
	char *in_order_path = strdup(testutil_tmp_path("in_order.sqlite"));
	char *reversed_path = strdup(testutil_tmp_path("reversed.sqlite"));
	struct prof_store *in_order, *reversed;
	struct gm_catalog ci, cr;
	struct prof_error err = { 0 };
	int64_t *ts;
	int nts;

	testutil_copy_file(testutil_data_path(CAPTURE), in_order_path);
	testutil_copy_file(testutil_data_path(CAPTURE), reversed_path);
	testutil_sqlite3(reversed_path, "CREATE TABLE again AS SELECT * FROM GPU_METRICS ORDER BY rowid DESC;"
					"DELETE FROM GPU_METRICS;"
					"INSERT INTO GPU_METRICS SELECT * FROM again ORDER BY rowid;"
					"DROP TABLE again;");
	in_order = open_capture(in_order_path);
	reversed = open_capture(reversed_path);
	ck_assert_msg(gm_catalog__load(in_order, &ci, &err) == 0, "%s", err.msg);
	ck_assert_msg(gm_catalog__load(reversed, &cr, &err) == 0, "%s", err.msg);
	/* one sampler, read without sorting in one copy and sorted in the other */
	ck_assert_int_eq(ci.nsamplers, 1);
	ck_assert_int_eq(cr.nsamplers, 1);
	ck_assert(ci.samplers[0].in_order);
	ck_assert(!cr.samplers[0].in_order);
	/* the answer kept for the connection (model/memo.h) says the same */
	{
		struct gm_catalog again;
		bool kept = false;

		ck_assert_int_eq(sum_memo__has(reversed, MEMO_GPU_METRICS_ORDER, &kept, &err), 0);
		ck_assert(kept);
		ck_assert_msg(gm_catalog__load(reversed, &again, &err) == 0, "%s", err.msg);
		ck_assert(!again.samplers[0].in_order);
		gm_catalog__exit(&again);
		ck_assert_msg(gm_catalog__load(in_order, &again, &err) == 0, "%s", err.msg);
		ck_assert(again.samplers[0].in_order);
		gm_catalog__exit(&again);
	}
	ck_assert_int_eq(ci.nmetrics, cr.nmetrics);
	ts = sample_times(in_order, &nts);
	ck_assert_int_gt(nts, 100);

	{
		const int64_t mid = nts / 2, span = ts[mid + 40] - ts[mid];
		const int64_t starts[] = {
			INT64_MIN, ts[0] - 1, ts[0], ts[1], ts[mid], (ts[mid] + ts[mid + 1]) / 2,
			ts[nts - 2], ts[nts - 1], ts[nts - 1] + 1,
		};

		for (size_t w = 0; w < sizeof starts / sizeof starts[0]; w++) {
			for (int whole = 0; whole < 2; whole++) {
				int64_t from = starts[w];
				int64_t to = whole ? INT64_MAX : from == INT64_MIN ? ts[40] : from + span;
				int na, nb, first = 1, expect = 0;
				struct period *a = periods(in_order, &ci, from, to, &na);
				struct period *b = periods(reversed, &cr, from, to, &nb);

				/* the first period ends at the first sample after from */
				while (first < nts && ts[first] <= from)
					first++;
				for (int i = first; i < nts && ts[i - 1] < to; i++)
					expect++;
				ck_assert_msg(na == expect && nb == expect,
					      "window %zu (%s): %d and %d periods, expected %d", w,
					      whole ? "to the end" : "narrow", na, nb, expect);
				if (expect > 0) {
					ck_assert_int_eq(a[0].from, ts[first - 1]);
					ck_assert_int_eq(a[0].to, ts[first]);
				}
				for (int i = 0; i < na; i++) {
					ck_assert_int_eq(a[i].from, b[i].from);
					ck_assert_int_eq(a[i].to, b[i].to);
					for (int m = 0; m < ci.nmetrics; m++)
						ck_assert_msg(same_value(a[i].values[m], b[i].values[m]),
							      "window %zu, period %d, metric %d: %g against %g", w,
							      i, m, a[i].values[m], b[i].values[m]);
				}
				free(a);
				free(b);
			}
		}
	}
	free(ts);
	gm_catalog__exit(&ci);
	gm_catalog__exit(&cr);
	prof_store__close(in_order);
	prof_store__close(reversed);
	free(in_order_path);
	free(reversed_path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("gpu_metrics_reader");
	TCase *tc = tcase_create("reader");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, gpu_metrics_periods_the_same_read_in_order_or_sorted_from_any_window_start);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
