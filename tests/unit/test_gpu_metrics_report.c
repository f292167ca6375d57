/* test_gpu_metrics_report.c - gpu_metrics_sum on small stores written with
 * known samples, kernels and ranges: per device over the whole capture, per
 * kernel name and per NVTX range name, each sample weighed by the time its
 * period shares with them; metrics a sampler does not give are N/A, and
 * samplers are matched to kernels by device and process. */
#include <check.h>
#include <math.h>

#include "report_capture.h"
#include "sink/sink.h"
#include "report_store.h"
#include "registry/registry.h"
#include "summary/summary.h"
#include "testutil.h"

#define PID 100
#define T0 1000000000LL
#define PERIOD 1000

enum { SM_ACTIVE = 1, TENSOR = 2, DRAM_READ = 3 };

static void add_type(struct prof_writer *w, int64_t type_id, int64_t metric_id, const char *name, uint32_t pid)
{
	struct prof_gpu_metric_type t = {
		.type_id = type_id, .source_id = 0, .type_name = "GPU sampler", .metric_id = metric_id,
		.metric_name = name, .global_pid = prof_global_pid(pid),
	};

	ck_assert_int_eq(prof_writer__gpu_metric_type(w, &t), 0);
}

static void add_sample(struct prof_writer *w, int64_t ts, int64_t type_id, int64_t metric_id, double v)
{
	struct prof_gpu_metric m = { .timestamp_ns = ts, .type_id = type_id, .metric_id = metric_id, .value = v };

	ck_assert_int_eq(prof_writer__gpu_metric(w, &m), 0);
}

/* SM Active of sample i (its period ends at T0 + i * PERIOD). */
static double sm_of(int i) { return (double)(i * 7 % 100); }
static double tensor_of(int i) { return (double)(i % 3 * 10); }

/* Device 0 of process PID sampled every PERIOD ns from T0 to T0 + 20 PERIOD
 * (SM Active and Tensor Active; no DRAM metric on this sampler). */
static struct prof_writer *sampled_store(const char *name)
{
	struct prof_writer *w = store_new(name);

	prof_writer__process(w, PID, "prog");
	add_type(w, 0, SM_ACTIVE, "SMs Active [Throughput %]", PID);
	add_type(w, 0, TENSOR, "Tensor Active [Throughput %]", PID);
	for (int i = 0; i <= 20; i++) {
		add_sample(w, T0 + i * PERIOD, 0, SM_ACTIVE, sm_of(i));
		add_sample(w, T0 + i * PERIOD, 0, TENSOR, tensor_of(i));
	}
	return w;
}

/* The mean of f over [a, b) from the samples, one period at a time. */
static double expect_mean(double (*f)(int), int64_t a, int64_t b)
{
	double sum = 0;
	int64_t weight = 0;

	for (int i = 1; i <= 20; i++) {
		int64_t from = T0 + (i - 1) * PERIOD, to = T0 + i * PERIOD;
		int64_t lo = a > from ? a : from, hi = b < to ? b : to;

		if (hi > lo) {
			sum += f(i) * (double)(hi - lo);
			weight += hi - lo;
		}
	}
	return sum / (double)weight;
}

static struct cap_sink *run(struct prof_store *s)
{
	struct cap_sink *c = cap_sink__new();
	struct prof_error err = { 0 };

	ck_assert_msg(registry__run("gpu_metrics_sum", s, &c->sink, &err) == 0, "%s", err.msg);
	return c;
}

static const struct rpt_cell *cell(const struct cap_report *r, int row, const char *col)
{
	const struct rpt_cell *c = cap_cell(r, row, col);

	ck_assert_msg(c != NULL, "no column %s or row %d in %s", col, row, r->name);
	return c;
}

static double dval(const struct cap_report *r, int row, const char *col)
{
	const struct rpt_cell *c = cell(r, row, col);

	ck_assert_msg(!c->is_null, "%s row %d: %s is null", r->name, row, col);
	return c->d;
}

/* The row of name in r, -1 when none. */
static int row_named(const struct cap_report *r, const char *col, const char *name)
{
	for (int i = 0; i < r->nrows; i++)
		if (cell(r, i, col)->s && !strcmp(cell(r, i, col)->s, name))
			return i;
	return -1;
}

START_TEST(gpu_metrics_device_row_is_the_time_weighted_mean_of_every_period)
{
	struct prof_writer *w = sampled_store("device.sqlite");
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = run(s);
	struct cap_report *d = cap_report(c, "gpu_metrics_devices");

	ck_assert_int_eq(d->nrows, 1);
	ck_assert_int_eq(cell(d, 0, "Device")->i, 0);
	ck_assert_int_eq(cell(d, 0, "PID")->i, PID);
	ck_assert_int_eq(cell(d, 0, "Samples")->i, 20);
	ck_assert_int_eq(cell(d, 0, "Sampled (ns)")->i, 20 * PERIOD);
	ck_assert_int_eq(cell(d, 0, "Period (ns)")->i, PERIOD);
	ck_assert_double_eq_tol(dval(d, 0, "SM Active (%)"), expect_mean(sm_of, T0, T0 + 20 * PERIOD), 1e-9);
	ck_assert_double_eq_tol(dval(d, 0, "Tensor Active (%)"), expect_mean(tensor_of, T0, T0 + 20 * PERIOD), 1e-9);
	/* no other metric columns: the capture has none */
	ck_assert_int_eq(cap_col(d, "DRAM Read (%)"), -1);
	ck_assert_int_eq(cap_note_count(d, "no_gpu_metrics"), -1);
	c->sink.destroy(&c->sink);
	prof_store__close(s);
}
END_TEST

START_TEST(gpu_metrics_kernel_rows_average_over_the_time_their_launches_ran)
{
	struct prof_writer *w = sampled_store("kernels.sqlite");
	struct prof_store *s;
	struct cap_sink *c;
	struct cap_report *k;
	int gemm, tiny;

	/* gemm: two launches, 2.5..6.0 and 5.0..8.25 periods (overlapping, on
	 * two streams: their union counts once); tiny: 100 ns in period 11 */
	add_kernel(w, "gemm", T0 + 2500, T0 + 6000, 1, PID);
	add_kernel(w, "gemm", T0 + 5000, T0 + 8250, 2, PID);
	add_kernel(w, "tiny", T0 + 10100, T0 + 10200, 3, PID);
	s = store_finish(w);
	c = run(s);
	k = cap_report(c, "gpu_metrics_sum");
	ck_assert_int_eq(k->nrows, 2);
	gemm = row_named(k, "Name", "gemm");
	tiny = row_named(k, "Name", "tiny");
	ck_assert_int_eq(gemm, 0); /* the longer first */
	ck_assert_int_eq(cell(k, gemm, "Instances")->i, 2);
	ck_assert_int_eq(cell(k, gemm, "Time (ns)")->i, 5750);
	ck_assert_double_eq_tol(dval(k, gemm, "SM Active (%)"), expect_mean(sm_of, T0 + 2500, T0 + 8250), 1e-9);
	ck_assert_double_eq_tol(dval(k, gemm, "Sampled (%)"), 100, 1e-9);
	/* 5750 ns of the periods 3..9 (7000 ns) */
	ck_assert_double_eq_tol(dval(k, gemm, "Coverage (%)"), 100.0 * 5750 / 7000, 1e-9);
	ck_assert_double_eq_tol(dval(k, tiny, "SM Active (%)"), sm_of(11), 1e-9);
	ck_assert_double_eq_tol(dval(k, tiny, "Coverage (%)"), 10, 1e-9);
	/* tiny fills a tenth of its period: one estimated row */
	ck_assert_int_eq(cap_note_count(k, "estimated_rows"), 1);
	c->sink.destroy(&c->sink);
	prof_store__close(s);
}
END_TEST

START_TEST(gpu_metrics_a_metric_the_sampler_lacks_is_na_not_zero)
{
	struct prof_writer *w = sampled_store("na.sqlite");
	struct prof_store *s;
	struct cap_sink *c;
	struct cap_report *d, *k;
	const struct rpt_cell *x;

	/* a second sampler (device 1) gives DRAM Read only */
	add_type(w, 1, DRAM_READ, "DRAM Read Bandwidth [Throughput %]", PID);
	for (int i = 0; i <= 4; i++)
		add_sample(w, T0 + i * PERIOD, 1, DRAM_READ, 40);
	add_kernel(w, "before_sampling", T0 - 5000, T0 - 4000, 1, PID);
	s = store_finish(w);
	c = run(s);
	d = cap_report(c, "gpu_metrics_devices");
	ck_assert_int_eq(d->nrows, 2);
	x = cell(d, 0, "DRAM Read (%)");
	ck_assert(x->is_null);
	ck_assert_str_eq(x->s, "N/A");
	x = cell(d, 1, "SM Active (%)");
	ck_assert(x->is_null);
	ck_assert_double_eq_tol(dval(d, 1, "DRAM Read (%)"), 40, 1e-9);
	/* a kernel that ran before the first sample has no values */
	k = cap_report(c, "gpu_metrics_sum");
	ck_assert_int_eq(k->nrows, 1);
	ck_assert_double_eq_tol(dval(k, 0, "Sampled (%)"), 0, 1e-9);
	ck_assert(cell(k, 0, "SM Active (%)")->is_null);
	ck_assert(cell(k, 0, "Coverage (%)")->is_null);
	c->sink.destroy(&c->sink);
	prof_store__close(s);
}
END_TEST

START_TEST(gpu_metrics_kernels_count_against_their_own_processes_sampler)
{
	struct prof_writer *w = sampled_store("procs.sqlite");
	struct prof_store *s;
	struct cap_sink *c;
	struct cap_report *k;

	/* process 200's device 0 is another sampler, at 90% throughout */
	prof_writer__process(w, 200, "other");
	add_type(w, 256, SM_ACTIVE, "SMs Active [Throughput %]", 200);
	for (int i = 0; i <= 20; i++)
		add_sample(w, T0 + i * PERIOD, 256, SM_ACTIVE, 90);
	add_kernel(w, "mine", T0 + 1000, T0 + 3000, 1, PID);
	add_kernel(w, "theirs", T0 + 1000, T0 + 3000, 1, 200);
	add_kernel(w, "nobodys", T0 + 1000, T0 + 3000, 2, 300);
	s = store_finish(w);
	c = run(s);
	k = cap_report(c, "gpu_metrics_sum");
	ck_assert_int_eq(k->nrows, 2);
	ck_assert_double_eq_tol(dval(k, row_named(k, "Name", "mine"), "SM Active (%)"),
				expect_mean(sm_of, T0 + 1000, T0 + 3000), 1e-9);
	ck_assert_double_eq_tol(dval(k, row_named(k, "Name", "theirs"), "SM Active (%)"), 90, 1e-9);
	ck_assert_int_eq(cell(k, row_named(k, "Name", "theirs"), "PID")->i, 200);
	ck_assert_int_eq(cap_note_count(k, "unsampled_kernels"), 1);
	c->sink.destroy(&c->sink);
	prof_store__close(s);
}
END_TEST

START_TEST(gpu_metrics_without_a_sampling_process_every_process_counts)
{
	struct prof_writer *w = sampled_store("nsys.sqlite");
	struct prof_store *s;
	struct cap_sink *c;
	struct cap_report *k;

	add_kernel(w, "elsewhere", T0 + 1000, T0 + 3000, 1, 300);
	prof_store__close(store_finish(w));
	/* as in an nsys export: no process says whose samples they are */
	testutil_sqlite3(store_path, "UPDATE TARGET_INFO_GPU_METRICS SET globalPid = NULL;");
	{
		struct prof_error err = { 0 };

		ck_assert_int_eq(prof_store__open(store_path, &s, &err), 0);
	}
	c = run(s);
	k = cap_report(c, "gpu_metrics_sum");
	ck_assert_int_eq(k->nrows, 1);
	ck_assert(cell(k, 0, "PID")->is_null);
	ck_assert_double_eq_tol(dval(k, 0, "SM Active (%)"), expect_mean(sm_of, T0 + 1000, T0 + 3000), 1e-9);
	c->sink.destroy(&c->sink);
	prof_store__close(s);
}
END_TEST

START_TEST(gpu_metrics_nvtx_rows_count_nested_instances_once)
{
	struct prof_writer *w = sampled_store("nvtx.sqlite");
	struct prof_store *s;
	struct cap_sink *c;
	struct cap_report *r;
	int step;

	/* "step" nested in itself (recursion) and on a second thread at once */
	add_range(w, PROF_NVTX_PUSHPOP, "step", T0 + 1000, T0 + 9000, prof_global_tid(PID, 1));
	add_range(w, PROF_NVTX_PUSHPOP, "step", T0 + 2000, T0 + 3000, prof_global_tid(PID, 1));
	add_range(w, PROF_NVTX_PUSHPOP, "step", T0 + 8000, T0 + 12000, prof_global_tid(PID, 2));
	add_range(w, PROF_NVTX_PUSHPOP, "load", T0 + 14000, T0 + 15000, prof_global_tid(PID, 1));
	s = store_finish(w);
	c = run(s);
	r = cap_report(c, "gpu_metrics_nvtx");
	ck_assert_int_eq(r->nrows, 2);
	step = row_named(r, "Range", "step");
	ck_assert_int_eq(cell(r, step, "Instances")->i, 3);
	ck_assert_int_eq(cell(r, step, "Time (ns)")->i, 11000);
	ck_assert_double_eq_tol(dval(r, step, "SM Active (%)"), expect_mean(sm_of, T0 + 1000, T0 + 12000), 1e-9);
	ck_assert_double_eq_tol(dval(r, step, "Coverage (%)"), 100, 1e-9);
	c->sink.destroy(&c->sink);
	prof_store__close(s);
}
END_TEST

START_TEST(gpu_metrics_a_capture_without_samples_says_how_to_collect_them)
{
	struct prof_writer *w = store_new("none.sqlite");
	struct prof_store *s;
	struct cap_sink *c;

	add_kernel(w, "k", T0, T0 + 1000, 1, PID);
	s = store_finish(w);
	c = run(s);
	ck_assert_int_eq(cap_report(c, "gpu_metrics_devices")->nrows, 0);
	ck_assert_int_eq(cap_note_count(cap_report(c, "gpu_metrics_devices"), "no_gpu_metrics"), 1);
	ck_assert_int_eq(cap_report(c, "gpu_metrics_sum")->nrows, 0);
	ck_assert_int_eq(cap_report(c, "gpu_metrics_nvtx")->nrows, 0);
	c->sink.destroy(&c->sink);
	prof_store__close(s);
}
END_TEST

START_TEST(gpu_metrics_a_metric_perfkit_does_not_know_is_a_column_under_its_own_escaped_name)
{
	struct prof_writer *w = sampled_store("other.sqlite");
	struct prof_error err = { 0 };
	struct prof_store *s;
	struct rpt_sink *sink;
	struct cap_sink *c;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	add_type(w, 0, 9, "L2 Hit \x1b[31mRate [%]", PID);
	for (int i = 0; i <= 20; i++)
		add_sample(w, T0 + i * PERIOD, 0, 9, 50);
	s = store_finish(w);
	c = run(s);
	/* after the known ones, under the capture's name */
	ck_assert_int_eq(cap_col(cap_report(c, "gpu_metrics_devices"), "L2 Hit \x1b[31mRate [%]"), 7);
	ck_assert_double_eq_tol(dval(cap_report(c, "gpu_metrics_devices"), 0, "L2 Hit \x1b[31mRate [%]"), 50, 1e-9);
	c->sink.destroy(&c->sink);
	/* the text table's header reaches the terminal without the escape */
	f = open_memstream(&text, &len);
	sink = rpt_sink__new(RPT_FORMAT_TEXT, f);
	ck_assert_int_eq(registry__run("gpu_metrics_sum", s, sink, &err), 0);
	rpt_sink__delete(sink);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "L2 Hit"));
	ck_assert_ptr_null(strchr(text, '\x1b'));
	free(text);
	prof_store__close(s);
}
END_TEST

START_TEST(gpu_metrics_samples_written_out_of_time_order_read_the_same)
{
	struct prof_writer *w = store_new("reversed.sqlite");
	struct prof_store *s;
	struct cap_sink *c;
	struct cap_report *d, *k;

	prof_writer__process(w, PID, "prog");
	add_type(w, 0, SM_ACTIVE, "SMs Active [Throughput %]", PID);
	for (int i = 20; i >= 0; i--)
		add_sample(w, T0 + i * PERIOD, 0, SM_ACTIVE, sm_of(i));
	add_kernel(w, "gemm", T0 + 2500, T0 + 8250, 1, PID);
	s = store_finish(w);
	c = run(s);
	d = cap_report(c, "gpu_metrics_devices");
	k = cap_report(c, "gpu_metrics_sum");
	ck_assert_int_eq(cell(d, 0, "Samples")->i, 20);
	ck_assert_double_eq_tol(dval(d, 0, "SM Active (%)"), expect_mean(sm_of, T0, T0 + 20 * PERIOD), 1e-9);
	ck_assert_double_eq_tol(dval(k, 0, "SM Active (%)"), expect_mean(sm_of, T0 + 2500, T0 + 8250), 1e-9);
	c->sink.destroy(&c->sink);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("gpu_metrics_report");
	TCase *tc = tcase_create("report");

	tcase_add_test(tc, gpu_metrics_device_row_is_the_time_weighted_mean_of_every_period);
	tcase_add_test(tc, gpu_metrics_kernel_rows_average_over_the_time_their_launches_ran);
	tcase_add_test(tc, gpu_metrics_a_metric_the_sampler_lacks_is_na_not_zero);
	tcase_add_test(tc, gpu_metrics_kernels_count_against_their_own_processes_sampler);
	tcase_add_test(tc, gpu_metrics_without_a_sampling_process_every_process_counts);
	tcase_add_test(tc, gpu_metrics_nvtx_rows_count_nested_instances_once);
	tcase_add_test(tc, gpu_metrics_a_capture_without_samples_says_how_to_collect_them);
	tcase_add_test(tc, gpu_metrics_samples_written_out_of_time_order_read_the_same);
	tcase_add_test(tc, gpu_metrics_a_metric_perfkit_does_not_know_is_a_column_under_its_own_escaped_name);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
