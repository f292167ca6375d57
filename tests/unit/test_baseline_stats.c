/* test_baseline_stats.c - baselines built from stores with known kernel
 * times: median and spread per key, per-launch and per-iteration figures,
 * identity checks, and the JSON file (round trip, per-key budgets, format 1
 * still read, refusal of malformed files). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/baseline.h"
#include "diff_fixture.h"
#include "prof/output.h"
#include "testutil.h"
#include "model/window.h"
#include "prof/error.h"

#define MS 1000000LL

static char paths[4][512];

/* Capture i: one gemm launch of gemm_ns[i], 5 softmax of 1 ms, 3 allocations. */
static void write_captures(const int64_t *gemm_ns, int n, const char *command, const char *gpu)
{
	for (int i = 0; i < n; i++) {
		struct fx f;
		char name[32];

		snprintf(name, sizeof name, "cap%d.sqlite", i);
		snprintf(paths[i], sizeof paths[i], "%s", testutil_tmp_path(name));
		fx_open(&f, paths[i], command, gpu);
		fx_kernels(&f, "gemm", 80, 256, 1, gemm_ns[i]);
		fx_kernels(&f, "softmax", 8, 128, 5, 1 * MS);
		fx_allocs(&f, 3);
		fx_close(&f, 50 * MS + i);
	}
}

static void build(struct baseline *b, int n)
{
	struct diff_profile p[4];
	struct prof_error err = { 0 };

	for (int i = 0; i < n; i++)
		ck_assert_msg(diff_profile__load_path(&p[i], paths[i], &err) == 0, "%s", err.msg);
	ck_assert_msg(baseline__build(b, p, (size_t)n, &err) == 0, "%s", err.msg);
	for (int i = 0; i < n; i++)
		diff_profile__exit(&p[i]);
}

START_TEST(baseline_holds_median_min_max_and_mad_over_captures)
{
	const int64_t gemm[] = { 13 * MS, 10 * MS, 11 * MS };
	struct baseline b;
	const struct baseline_key *k;

	write_captures(gemm, 3, "./train", "NVIDIA H100");
	build(&b, 3);
	k = baseline__find(&b, "kernel:gemm");
	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(k->st.median, 11 * MS);
	ck_assert_int_eq(k->st.min, 10 * MS);
	ck_assert_int_eq(k->st.max, 13 * MS);
	/* Deviations from 11 ms: 2, 1, 0 ms; their median is 1 ms. */
	ck_assert_int_eq(k->st.mad, 1 * MS);
	/* Samples keep capture order. */
	ck_assert_int_eq(k->samples[0], 13 * MS);
	k = baseline__find(&b, "gpu_time");
	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(k->st.median, 11 * MS + 5 * MS);
	ck_assert_int_eq(baseline__find(&b, "kernel_count")->st.median, 6);
	ck_assert_int_eq(baseline__find(&b, "alloc_count")->st.median, 3);
	ck_assert_int_eq(baseline__find(&b, "wall_time")->st.median, 50 * MS + 1);
	ck_assert_str_eq(b.program, "train");
	ck_assert_str_eq(b.gpu, "NVIDIA H100");
	baseline__exit(&b);
}
END_TEST

START_TEST(baseline_kernel_missing_from_a_capture_has_no_sample_there_while_run_keys_count_zero)
{
	const int64_t gemm[] = { 10 * MS, 10 * MS };
	struct baseline b;
	struct fx f;
	const struct baseline_key *k;

	write_captures(gemm, 2, "app", "gpu0");
	snprintf(paths[2], sizeof paths[2], "%s", testutil_tmp_path("extra.sqlite"));
	fx_open(&f, paths[2], "app", "gpu0");
	fx_kernels(&f, "warmup", 1, 1, 1, 4 * MS);
	fx_copies(&f, PROF_COPY_HTOD, PROF_MEM_PINNED, PROF_MEM_DEVICE, 1, 1000, 4096);
	fx_close(&f, -1);
	build(&b, 3);
	/* Per launch: the kernel did not run in the first two captures. */
	k = baseline__find(&b, "kernel:warmup");
	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(k->per, BASELINE_PER_LAUNCH);
	ck_assert(isnan(k->samples[0]));
	ck_assert_double_eq(k->samples[2], 4 * MS);
	ck_assert_double_eq(k->st.median, 4 * MS);
	/* Per run: nothing copied is 0 bytes. */
	k = baseline__find(&b, "copy_bytes:HtoD");
	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(k->per, BASELINE_PER_RUN);
	ck_assert_double_eq(k->samples[0], 0);
	ck_assert_double_eq(k->samples[2], 4096);
	ck_assert_double_eq(k->st.median, 0);
	baseline__exit(&b);
}
END_TEST

/* n captures of `steps` steps of gemm (gemm_ns) and softmax 0.5 ms. */
static void write_loops(int n, const int *steps, const int64_t *gemm_ns)
{
	for (int i = 0; i < n; i++) {
		const struct fx_step step[] = { { "gemm", gemm_ns[i] }, { "softmax", MS / 2 }, { NULL, 0 } };
		struct fx f;
		char name[32];

		snprintf(name, sizeof name, "loop%d.sqlite", i);
		snprintf(paths[i], sizeof paths[i], "%s", testutil_tmp_path(name));
		fx_open(&f, paths[i], "./train", "NVIDIA H100");
		fx_steps(&f, steps[i], step);
		fx_close(&f, 100 * MS);
	}
}

START_TEST(baseline_records_per_iteration_figures_of_the_loop_and_reads_them_back)
{
	const int steps[] = { 11, 21, 11 };
	const int64_t gemm[] = { 1 * MS, 1 * MS, 2 * MS };
	struct baseline b, r;
	struct prof_error err = { 0 };
	const struct baseline_key *k;
	char file[512];

	write_loops(3, steps, gemm);
	build(&b, 3);
	ck_assert_int_eq(b.loop.mark, SUM_LOOP_KERNEL);
	ck_assert_str_eq(b.loop.mark_name, "gemm");
	ck_assert_int_eq(b.iterations[1], 20);
	ck_assert_int_eq(b.loop.iterations, 10);
	/* Per iteration 1.5, 1.5 and 2.5 ms of GPU time, whatever the steps. */
	k = baseline__find(&b, "gpu_time");
	ck_assert(k->has_per_iteration);
	ck_assert_double_eq(k->per_iteration.median, 1.5 * MS);
	ck_assert_double_eq(k->per_iteration.max, 2.5 * MS);
	/* Totals: 16.5, 31.5 and 27.5 ms, the longest run the largest. */
	ck_assert_double_eq(k->st.max, 21 * 1.5 * MS);
	k = baseline__find(&b, "kernel:gemm");
	ck_assert_int_eq(k->per, BASELINE_PER_LAUNCH);
	ck_assert_double_eq(k->st.median, 1 * MS);
	ck_assert_double_eq(k->launches, 11);
	ck_assert_double_eq(baseline__find(&b, "kernel_count")->per_iteration.median, 2);
	snprintf(file, sizeof file, "%s", testutil_tmp_path("loop.json"));
	ck_assert_msg(baseline__save(&b, file, PROF_OUTPUT_REPLACE, &err) == 0, "%s", err.msg);
	ck_assert_msg(baseline__load(&r, file, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(r.version, BASELINE_FORMAT_VERSION);
	ck_assert_ptr_nonnull(baseline__loop(&r));
	ck_assert_str_eq(baseline__loop(&r)->mark_name, "gemm");
	ck_assert_int_eq(r.iterations[1], 20);
	for (size_t i = 0; i < b.nkeys; i++) {
		ck_assert_str_eq(r.keys[i].name, b.keys[i].name);
		ck_assert_int_eq(r.keys[i].per, b.keys[i].per);
		ck_assert(r.keys[i].has_per_iteration);
		ck_assert_double_eq(r.keys[i].per_iteration.median, b.keys[i].per_iteration.median);
		ck_assert_double_eq(r.keys[i].per_iteration.mad, b.keys[i].per_iteration.mad);
		ck_assert_double_eq(r.keys[i].largest_launch, b.keys[i].largest_launch);
	}
	baseline__exit(&b);
	baseline__exit(&r);
}
END_TEST

static void write_one(const char *file, const char *command, const char *gpu)
{
	struct fx f;

	fx_open(&f, file, command, gpu);
	fx_kernels(&f, "gemm", 80, 256, 1, 10 * MS);
	fx_close(&f, -1);
}

static int build_two(const char *cmd0, const char *gpu0, const char *cmd1, const char *gpu1,
		     struct prof_error *err)
{
	struct diff_profile p[2];
	struct baseline b;
	int rc;

	snprintf(paths[0], sizeof paths[0], "%s", testutil_tmp_path("first.sqlite"));
	write_one(paths[0], cmd0, gpu0);
	snprintf(paths[1], sizeof paths[1], "%s", testutil_tmp_path("second.sqlite"));
	write_one(paths[1], cmd1, gpu1);
	ck_assert_int_eq(diff_profile__load_path(&p[0], paths[0], err), 0);
	ck_assert_int_eq(diff_profile__load_path(&p[1], paths[1], err), 0);
	rc = baseline__build(&b, p, 2, err);
	if (rc == 0)
		baseline__exit(&b);
	diff_profile__exit(&p[0]);
	diff_profile__exit(&p[1]);
	return rc;
}

START_TEST(baseline_refuses_captures_of_different_programs)
{
	struct prof_error err = { 0 };

	ck_assert_int_eq(build_two("./train", "gpu0", "/opt/bin/infer -x", "gpu0", &err),
			 PROF_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "'train'"));
	ck_assert_ptr_nonnull(strstr(err.msg, "'infer'"));
}
END_TEST

START_TEST(baseline_refuses_captures_of_different_gpus)
{
	struct prof_error err = { 0 };

	ck_assert_int_eq(build_two("./train", "NVIDIA H100", "./train", "NVIDIA A100", &err),
			 PROF_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "'NVIDIA A100'"));
}
END_TEST

START_TEST(baseline_accepts_the_same_program_with_other_arguments)
{
	struct prof_error err = { 0 };

	ck_assert_msg(build_two("./train --variant=naive", "g", "/x/train --variant=optimized", "g",
				&err) == 0, "%s", err.msg);
}
END_TEST

START_TEST(baseline_round_trips_through_its_json_file)
{
	const int64_t gemm[] = { 13 * MS, 10 * MS, 11 * MS };
	struct baseline b, r;
	struct prof_error err = { 0 };
	struct fx f;
	char file[512];

	write_captures(gemm, 2, "app", "gpu \"0\"");
	/* A third capture with a kernel name that needs JSON escaping. */
	snprintf(paths[2], sizeof paths[2], "%s", testutil_tmp_path("odd.sqlite"));
	fx_open(&f, paths[2], "app", "gpu \"0\"");
	fx_kernels(&f, "gemm", 80, 256, 1, gemm[2]);
	fx_kernels(&f, "k<\"q\"\\n>", 1, 1, 2, 1000);
	fx_close(&f, -1);
	build(&b, 3);
	snprintf(file, sizeof file, "%s", testutil_tmp_path("baseline.json"));
	ck_assert_msg(baseline__save(&b, file, PROF_OUTPUT_REPLACE, &err) == 0, "%s", err.msg);
	ck_assert_msg(baseline__load(&r, file, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(r.nkeys, b.nkeys);
	ck_assert_uint_eq(r.ncaptures, 3);
	ck_assert_str_eq(r.gpu, "gpu \"0\"");
	for (size_t i = 0; i < b.nkeys; i++) {
		ck_assert_str_eq(r.keys[i].name, b.keys[i].name);
		ck_assert_int_eq(r.keys[i].unit, b.keys[i].unit);
		ck_assert_int_eq(r.keys[i].st.median, b.keys[i].st.median);
		ck_assert_int_eq(r.keys[i].st.mad, b.keys[i].st.mad);
		ck_assert_int_eq(r.keys[i].samples[2], b.keys[i].samples[2]);
	}
	ck_assert_ptr_nonnull(baseline__find(&r, "kernel:k<\"q\"\\n>"));
	baseline__exit(&b);
	baseline__exit(&r);
}
END_TEST

static int load_text(const char *text, struct baseline *b, struct prof_error *err)
{
	char file[512];
	FILE *f;

	snprintf(file, sizeof file, "%s", testutil_tmp_path("edited.json"));
	f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return baseline__load(b, file, err);
}

START_TEST(baseline_reads_a_per_key_budget)
{
	struct baseline b;
	struct prof_error err = { 0 };

	ck_assert_msg(load_text("{\"perfkit_baseline\": 1, \"program\": \"a\", \"gpu\": \"g\","
				" \"captures\": [\"x.sqlite\"], \"keys\": {"
				" \"kernel:gemm\": {\"unit\": \"ns\", \"median\": 5, \"min\": 5,"
				" \"max\": 5, \"mad\": 0, \"max_regression\": \"12.5%\"},"
				" \"gpu_time\": {\"unit\": \"ns\", \"median\": 9, \"min\": 9,"
				" \"max\": 9, \"mad\": 0}}}", &b, &err) == 0, "%s", err.msg);
	ck_assert_double_eq(baseline__find(&b, "kernel:gemm")->budget_pct, 12.5);
	ck_assert(baseline__find(&b, "gpu_time")->budget_pct < 0);
	baseline__exit(&b);
}
END_TEST

START_TEST(baseline_of_format_1_still_loads_as_totals)
{
	struct baseline b;
	struct prof_error err = { 0 };

	ck_assert_msg(load_text("{\"perfkit_baseline\": 1, \"program\": \"a\", \"gpu\": \"g\","
				" \"captures\": [\"x.sqlite\"], \"keys\": {"
				" \"kernel:gemm\": {\"unit\": \"ns\", \"median\": 5, \"min\": 5,"
				" \"max\": 5, \"mad\": 0, \"samples\": [5]}}}", &b, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(b.version, 1);
	ck_assert_ptr_null(baseline__loop(&b));
	ck_assert_int_eq(baseline__find(&b, "kernel:gemm")->per, BASELINE_PER_RUN);
	ck_assert(!baseline__find(&b, "kernel:gemm")->has_per_iteration);
	baseline__exit(&b);
}
END_TEST

START_TEST(baseline_load_refuses_a_newer_format_and_a_format_2_key_without_per)
{
	struct baseline b;
	struct prof_error err = { 0 };

	ck_assert_int_eq(load_text("{\"perfkit_baseline\": 3, \"program\": \"a\", \"gpu\": \"g\","
				   " \"captures\": [\"x\"], \"keys\": {}}", &b, &err), PROF_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "reads versions 1 to 2"));
	ck_assert_int_eq(load_text("{\"perfkit_baseline\": 2, \"program\": \"a\", \"gpu\": \"g\","
				   " \"captures\": [\"x\"], \"keys\": {\"gpu_time\": {\"unit\":"
				   " \"ns\", \"median\": 5, \"min\": 5, \"max\": 9, \"mad\": 0}}}",
				   &b, &err), PROF_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "\"per\" must be"));
}
END_TEST

START_TEST(baseline_load_refuses_malformed_json_with_its_line)
{
	struct baseline b;
	struct prof_error err = { 0 };

	ck_assert_int_eq(load_text("{\n\"perfkit_baseline\": 1,\n\"keys\": {,\n", &b, &err),
			 PROF_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "not valid JSON (line 3)"));
}
END_TEST

START_TEST(baseline_load_refuses_json_that_is_not_a_baseline)
{
	struct baseline b;
	struct prof_error err = { 0 };

	ck_assert_int_eq(load_text("{\"reports\": []}", &b, &err), PROF_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "not a perfkit baseline"));
}
END_TEST

START_TEST(baseline_load_refuses_a_key_with_min_above_median)
{
	struct baseline b;
	struct prof_error err = { 0 };

	ck_assert_int_eq(load_text("{\"perfkit_baseline\": 1, \"program\": \"a\", \"gpu\": \"g\","
				   " \"captures\": [\"x\"], \"keys\": {\"gpu_time\": {\"unit\":"
				   " \"ns\", \"median\": 5, \"min\": 6, \"max\": 9, \"mad\": 0}}}",
				   &b, &err), PROF_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "'gpu_time'"));
}
END_TEST

START_TEST(baseline_load_of_a_missing_file_is_an_io_error)
{
	struct baseline b;
	struct prof_error err = { 0 };

	ck_assert_int_eq(baseline__load(&b, testutil_tmp_path("absent.json"), &err), PROF_E_IO);
	ck_assert_ptr_nonnull(strstr(err.msg, "absent.json"));
}
END_TEST

START_TEST(baseline_percent_parser_accepts_numbers_with_optional_sign)
{
	double v = -1;

	ck_assert_int_eq(baseline__parse_percent("5%", &v), 0);
	ck_assert_double_eq(v, 5.0);
	ck_assert_int_eq(baseline__parse_percent("0.5", &v), 0);
	ck_assert_double_eq(v, 0.5);
	ck_assert_int_eq(baseline__parse_percent("-5%", &v), -1);
	ck_assert_int_eq(baseline__parse_percent("5%%", &v), -1);
	ck_assert_int_eq(baseline__parse_percent("five", &v), -1);
	ck_assert_int_eq(baseline__parse_percent("", &v), -1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("baseline_stats");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, baseline_holds_median_min_max_and_mad_over_captures);
	tcase_add_test(tc, baseline_kernel_missing_from_a_capture_has_no_sample_there_while_run_keys_count_zero);
	tcase_add_test(tc, baseline_records_per_iteration_figures_of_the_loop_and_reads_them_back);
	tcase_add_test(tc, baseline_refuses_captures_of_different_programs);
	tcase_add_test(tc, baseline_refuses_captures_of_different_gpus);
	tcase_add_test(tc, baseline_accepts_the_same_program_with_other_arguments);
	tcase_add_test(tc, baseline_round_trips_through_its_json_file);
	tcase_add_test(tc, baseline_reads_a_per_key_budget);
	tcase_add_test(tc, baseline_of_format_1_still_loads_as_totals);
	tcase_add_test(tc, baseline_load_refuses_a_newer_format_and_a_format_2_key_without_per);
	tcase_add_test(tc, baseline_load_refuses_malformed_json_with_its_line);
	tcase_add_test(tc, baseline_load_refuses_json_that_is_not_a_baseline);
	tcase_add_test(tc, baseline_load_refuses_a_key_with_min_above_median);
	tcase_add_test(tc, baseline_load_of_a_missing_file_is_an_io_error);
	tcase_add_test(tc, baseline_percent_parser_accepts_numbers_with_optional_sign);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
