/* test_gpu_metrics_reader.c - one sampler's periods read from a real
 * capture (torch_gemm_bf16_fp32: one sampler, 12 metrics, 13,217 samples)
 * over windows that start before its first sample, on a sample, between
 * two, on its last and after it, four ways: from the rows kept in memory
 * for the connection and from the file (a view narrowed to every row), each of the capture as written
 * (in time order: read from the sampler's first sample on, the periods
 * before the window passed over) and of a copy with its samples written
 * again in reverse (sorted from the last sample before the window). All
 * four give the same periods, and the first of them starts at the last
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
#include "prof/tables.h"

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

/* A connection whose readers read the file: its samples' view narrowed to
 * every row, as --window narrows it to some (nothing is kept for a
 * narrowed view). */
static struct prof_store *open_read_from_file(const char *path)
{
	struct prof_store *s = open_capture(path);
	struct prof_error err = { 0 };

	ck_assert_msg(prof_store__restrict(s, PROF_T_GPU_METRICS, "1", &err) == 0, "%s", err.msg);
	ck_assert(prof_store__restricted(s));
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

/* The periods of c's one sampler over [from, to) read from s are want's. */
static void same_periods(const struct period *want, int nwant, struct prof_store *s, const struct gm_catalog *c,
			 int64_t from, int64_t to, const char *how, size_t w)
{
	int n;
	struct period *p = periods(s, c, from, to, &n);

	ck_assert_msg(n == nwant, "window %zu: %d periods from %s, %d from the file", w, n, how, nwant);
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(p[i].from, want[i].from);
		ck_assert_int_eq(p[i].to, want[i].to);
		for (int m = 0; m < c->nmetrics; m++)
			ck_assert_msg(same_value(p[i].values[m], want[i].values[m]),
				      "window %zu, period %d, metric %d: %g from %s, %g from the file", w, i, m,
				      p[i].values[m], how, want[i].values[m]);
	}
	free(p);
}

static int64_t count_rows(struct prof_store *s)
{
	struct prof_cursor *c = NULL;
	struct prof_error err = { 0 };
	int64_t n;

	ck_assert_int_eq(prof_cursor__open(s, "SELECT count(*) FROM GPU_METRICS WHERE timestamp IS NOT NULL", &c, &err),
			 0);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	n = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return n;
}

START_TEST(gpu_metrics_periods_the_same_read_in_order_or_sorted_from_any_window_start)
{
	char *in_order_path = strdup(testutil_tmp_path("in_order.sqlite"));
	char *reversed_path = strdup(testutil_tmp_path("reversed.sqlite"));
	struct prof_store *in_order, *reversed, *in_order_file, *reversed_file;
	struct gm_catalog ci, cr, ki, kr;
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
	in_order_file = open_read_from_file(in_order_path);
	reversed_file = open_read_from_file(reversed_path);
	ck_assert_msg(gm_catalog__load(in_order_file, &ci, &err) == 0, "%s", err.msg);
	ck_assert_msg(gm_catalog__load(reversed_file, &cr, &err) == 0, "%s", err.msg);
	ck_assert_msg(gm_catalog__load(in_order, &ki, &err) == 0, "%s", err.msg);
	ck_assert_msg(gm_catalog__load(reversed, &kr, &err) == 0, "%s", err.msg);
	/* one sampler, read without sorting in one copy and sorted in the
	 * other, from the file and from the rows kept in memory */
	ck_assert_int_eq(ci.nsamplers, 1);
	ck_assert_int_eq(cr.nsamplers, 1);
	ck_assert_int_eq(ki.nsamplers, 1);
	ck_assert_int_eq(kr.nsamplers, 1);
	ck_assert(ci.samplers[0].in_order && ki.samplers[0].in_order);
	ck_assert(!cr.samplers[0].in_order && !kr.samplers[0].in_order);
	ck_assert_ptr_null(ci.samplers[0].rows);
	ck_assert_ptr_null(cr.samplers[0].rows);
	ck_assert_ptr_nonnull(ki.samplers[0].rows);
	ck_assert_ptr_nonnull(kr.samplers[0].rows);
	/* every row of the sampler, once */
	ck_assert_int_eq((int64_t)ki.samplers[0].rows->n, count_rows(in_order));
	ck_assert_int_eq((int64_t)kr.samplers[0].rows->n, count_rows(in_order));
	/* a second catalogue of the connection reads the rows kept */
	{
		struct gm_catalog again;

		ck_assert_msg(gm_catalog__load(reversed, &again, &err) == 0, "%s", err.msg);
		ck_assert_ptr_eq(again.samplers[0].rows, kr.samplers[0].rows);
		gm_catalog__exit(&again);
	}
	/* the answer kept for the connection (model/memo.h) says the same */
	{
		struct gm_catalog again;
		bool kept = false;

		ck_assert_int_eq(sum_temp__exists(reversed, MEMO_GPU_METRICS_ORDER, &kept, &err), 0);
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
				int na, first = 1, expect = 0;
				struct period *a = periods(in_order_file, &ci, from, to, &na);

				/* the first period ends at the first sample after from */
				while (first < nts && ts[first] <= from)
					first++;
				for (int i = first; i < nts && ts[i - 1] < to; i++)
					expect++;
				ck_assert_msg(na == expect, "window %zu (%s): %d periods from the file, expected %d",
					      w, whole ? "to the end" : "narrow", na, expect);
				if (expect > 0) {
					ck_assert_int_eq(a[0].from, ts[first - 1]);
					ck_assert_int_eq(a[0].to, ts[first]);
				}
				same_periods(a, na, reversed_file, &cr, from, to, "the reversed copy's file", w);
				same_periods(a, na, in_order, &ki, from, to, "the rows kept", w);
				same_periods(a, na, reversed, &kr, from, to, "the reversed copy's rows kept", w);
				free(a);
			}
		}
	}
	free(ts);
	gm_catalog__exit(&ci);
	gm_catalog__exit(&cr);
	gm_catalog__exit(&ki);
	gm_catalog__exit(&kr);
	prof_store__close(in_order);
	prof_store__close(reversed);
	prof_store__close(in_order_file);
	prof_store__close(reversed_file);
	free(in_order_path);
	free(reversed_path);
}
END_TEST

/* Periods of sampler over [from, to) (its catalogue's nmetrics values). */
static struct period *periods_of(struct prof_store *s, const struct gm_catalog *c, int sampler, int64_t from,
				 int64_t to, int *n)
{
	struct gm_catalog one = *c;

	/* periods() reads the catalogue's first sampler */
	one.samplers = &c->samplers[sampler];
	one.nsamplers = 1;
	return periods(s, &one, from, to, n);
}

/* Two samplers whose rows lie interleaved in the file: the capture's
 * samples, and the same samples again as a second device's (typeId + 1,
 * each value + 1000), the table written again in time order. Each
 * sampler's rows kept in memory give its own periods, those read from the
 * file. */
START_TEST(gpu_metrics_two_samplers_interleaved_read_apart)
{
	char *path = strdup(testutil_tmp_path("two_samplers.sqlite"));
	struct prof_store *s, *from_file;
	struct gm_catalog file, kept;
	struct prof_error err = { 0 };
	int64_t *ts;
	int nts;

	testutil_copy_file(testutil_data_path(CAPTURE), path);
	testutil_sqlite3(path, "INSERT INTO TARGET_INFO_GPU_METRICS SELECT * FROM TARGET_INFO_GPU_METRICS;"
			       "UPDATE TARGET_INFO_GPU_METRICS SET typeId = typeId + 1"
			       " WHERE rowid > (SELECT count(*) / 2 FROM TARGET_INFO_GPU_METRICS);"
			       "CREATE TABLE again AS SELECT * FROM GPU_METRICS;"
			       "INSERT INTO again (timestamp, typeId, metricId, value)"
			       " SELECT timestamp, typeId + 1, metricId, value + 1000 FROM GPU_METRICS;"
			       "DELETE FROM GPU_METRICS;"
			       "INSERT INTO GPU_METRICS SELECT * FROM again ORDER BY timestamp, rowid;"
			       "DROP TABLE again;");
	s = open_capture(path);
	from_file = open_read_from_file(path);
	ck_assert_msg(gm_catalog__load(from_file, &file, &err) == 0, "%s", err.msg);
	ck_assert_msg(gm_catalog__load(s, &kept, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(kept.nsamplers, 2);
	ck_assert(kept.samplers[0].in_order && kept.samplers[1].in_order);
	ck_assert_ptr_nonnull(kept.samplers[0].rows);
	ck_assert_ptr_nonnull(kept.samplers[1].rows);
	ck_assert_int_eq((int64_t)(kept.samplers[0].rows->n + kept.samplers[1].rows->n), count_rows(s));
	ts = sample_times(s, &nts);
	ck_assert_int_gt(nts, 100);
	{
		const int64_t windows[][2] = { { INT64_MIN, INT64_MAX }, { ts[nts / 3], ts[nts / 3 + 50] },
					       { (ts[nts / 2] + ts[nts / 2 + 1]) / 2, INT64_MAX } };

		for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++) {
			int n0, n1, nf;
			struct period *p0 = periods_of(s, &kept, 0, windows[w][0], windows[w][1], &n0);
			struct period *p1 = periods_of(s, &kept, 1, windows[w][0], windows[w][1], &n1);

			for (int smp = 0; smp < 2; smp++) {
				struct period *f = periods_of(from_file, &file, smp, windows[w][0], windows[w][1], &nf);
				struct gm_catalog one = kept;

				one.samplers = &kept.samplers[smp];
				one.nsamplers = 1;
				same_periods(f, nf, s, &one, windows[w][0], windows[w][1],
					     smp ? "the second sampler's rows kept" : "the first sampler's rows kept", w);
				free(f);
			}
			/* the second sampler's values are the first's, each + 1000 */
			ck_assert_int_eq(n0, n1);
			ck_assert_int_gt(n0, 0);
			for (int i = 0; i < n0; i++)
				for (int m = 0; m < kept.nmetrics; m++)
					ck_assert_msg(same_value(p1[i].values[m], p0[i].values[m] + 1000),
						      "window %zu, period %d, metric %d: %g against %g + 1000", w, i, m,
						      p1[i].values[m], p0[i].values[m]);
			free(p0);
			free(p1);
		}
	}
	free(ts);
	gm_catalog__exit(&file);
	gm_catalog__exit(&kept);
	prof_store__close(s);
	prof_store__close(from_file);
	free(path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("gpu_metrics_reader");
	TCase *tc = tcase_create("reader");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, gpu_metrics_periods_the_same_read_in_order_or_sorted_from_any_window_start);
	tcase_add_test(tc, gpu_metrics_two_samplers_interleaved_read_apart);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
