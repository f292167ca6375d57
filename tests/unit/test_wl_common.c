/* test_wl_common.c - the workloads' shared options, random numbers, error
 * measure, speedup rule and --json line. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "wl_common.h"

static struct wl_common defaults(void)
{
	struct wl_common c = { .variant = WL_BOTH, .iters = 7, .check = false, .json = false, .seed = 1 };
	return c;
}

static int parse(struct wl_common *c, const struct wl_option *extra, int nextra, int argc,
		 char **argv)
{
	/* Usage text on the error path goes to stderr; keep the test log clean. */
	FILE *saved = stderr;
	int rc;

	stderr = fopen("/dev/null", "w");
	rc = wl_parse_args("prog", argc, argv, c, extra, nextra);
	fclose(stderr);
	stderr = saved;
	return rc;
}

START_TEST(wl_parse_args_sets_common_options)
{
	struct wl_common c = defaults();
	char *argv[] = { "prog", "--variant=naive", "--iters=12", "--check", "--json", "--seed=42" };

	ck_assert_int_eq(parse(&c, NULL, 0, 6, argv), 0);
	ck_assert_int_eq(c.variant, WL_NAIVE);
	ck_assert_int_eq(c.iters, 12);
	ck_assert(c.check);
	ck_assert(c.json);
	ck_assert_uint_eq(c.seed, 42);
}
END_TEST

START_TEST(wl_parse_args_keeps_defaults_without_options)
{
	struct wl_common c = defaults();
	char *argv[] = { "prog" };

	ck_assert_int_eq(parse(&c, NULL, 0, 1, argv), 0);
	ck_assert_int_eq(c.variant, WL_BOTH);
	ck_assert_int_eq(c.iters, 7);
	ck_assert(!c.check);
	ck_assert_uint_eq(c.seed, 1);
}
END_TEST

START_TEST(wl_parse_args_rejects_unknown_option)
{
	struct wl_common c = defaults();
	char *argv[] = { "prog", "--frobnicate=3" };

	ck_assert_int_eq(parse(&c, NULL, 0, 2, argv), -1);
}
END_TEST

START_TEST(wl_parse_args_rejects_bad_variant)
{
	struct wl_common c = defaults();
	char *argv[] = { "prog", "--variant=fast" };

	ck_assert_int_eq(parse(&c, NULL, 0, 2, argv), -1);
}
END_TEST

START_TEST(wl_parse_args_rejects_non_positive_iters)
{
	struct wl_common c = defaults();
	char *argv[] = { "prog", "--iters=0" };

	ck_assert_int_eq(parse(&c, NULL, 0, 2, argv), -1);
	ck_assert_int_eq(c.iters, 7);
}
END_TEST

START_TEST(wl_parse_args_returns_one_on_help)
{
	struct wl_common c = defaults();
	char *argv[] = { "prog", "--help" };
	FILE *saved = stdout;
	int rc;

	stdout = fopen("/dev/null", "w");
	rc = wl_parse_args("prog", 2, argv, &c, NULL, 0);
	fclose(stdout);
	stdout = saved;
	ck_assert_int_eq(rc, 1);
}
END_TEST

START_TEST(wl_parse_args_routes_extra_options_to_their_parsers)
{
	struct wl_common c = defaults();
	int rows = 0;
	bool table = false;
	const char *kernel = NULL;
	struct wl_int_list batch = { 0 };
	struct wl_option extra[] = {
		{ "rows", "rows", wl_parse_count, &rows },
		{ "cpu-table", "table", wl_parse_flag, &table },
		{ "kernel", "kernel", wl_parse_string, &kernel },
		{ "batch", "batches", wl_parse_int_list, &batch },
	};
	char *argv[] = { "prog", "--rows=100K", "--cpu-table", "--kernel=shared", "--batch=1,4,16" };

	ck_assert_int_eq(parse(&c, extra, 4, 5, argv), 0);
	ck_assert_int_eq(rows, 100000);
	ck_assert(table);
	ck_assert_str_eq(kernel, "shared");
	ck_assert_int_eq(batch.n, 3);
	ck_assert_int_eq(batch.v[0], 1);
	ck_assert_int_eq(batch.v[1], 4);
	ck_assert_int_eq(batch.v[2], 16);
}
END_TEST

START_TEST(wl_parse_args_rejects_value_option_without_value)
{
	struct wl_common c = defaults();
	int rows = 5;
	struct wl_option extra[] = { { "rows", "rows", wl_parse_count, &rows } };
	char *argv[] = { "prog", "--rows" };

	ck_assert_int_eq(parse(&c, extra, 1, 2, argv), -1);
	ck_assert_int_eq(rows, 5);
}
END_TEST

START_TEST(wl_parse_count_applies_k_and_m_suffixes)
{
	int v = 0;

	ck_assert_int_eq(wl_parse_count("10K", &v), 0);
	ck_assert_int_eq(v, 10000);
	ck_assert_int_eq(wl_parse_count("1M", &v), 0);
	ck_assert_int_eq(v, 1000000);
	ck_assert_int_eq(wl_parse_count("123", &v), 0);
	ck_assert_int_eq(v, 123);
}
END_TEST

START_TEST(wl_parse_count_rejects_garbage_and_overflow)
{
	int v = 9;

	ck_assert_int_eq(wl_parse_count("1G", &v), -1);
	ck_assert_int_eq(wl_parse_count("K", &v), -1);
	ck_assert_int_eq(wl_parse_count("-3", &v), -1);
	ck_assert_int_eq(wl_parse_count("5000M", &v), -1);
	ck_assert_int_eq(v, 9);
}
END_TEST

START_TEST(wl_parse_int_list_rejects_empty_elements_and_overlong_lists)
{
	struct wl_int_list l = { 0 };

	ck_assert_int_eq(wl_parse_int_list("1,,2", &l), -1);
	ck_assert_int_eq(wl_parse_int_list("1,2,", &l), -1);
	ck_assert_int_eq(wl_parse_int_list("1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", &l), -1);
	ck_assert_int_eq(l.n, 0);
}
END_TEST

/* Expected words from an independent implementation of the published
 * splitmix64 and xoshiro256** algorithms (Python, arbitrary precision integers
 * masked to 64 bits); 0xe220a8397b1dcdaf is splitmix64's published first
 * output for seed 0. */
START_TEST(wl_rng_matches_published_xoshiro256starstar_for_seed_zero)
{
	struct wl_rng r;

	wl_rng_seed(&r, 0);
	ck_assert_uint_eq(r.s[0], 0xe220a8397b1dcdafull);
	ck_assert_uint_eq(wl_rng_u64(&r), 0x99ec5f36cb75f2b4ull);
	ck_assert_uint_eq(wl_rng_u64(&r), 0xbf6e1f784956452aull);
	ck_assert_uint_eq(wl_rng_u64(&r), 0x1a5f849d4933e6e0ull);
}
END_TEST

START_TEST(wl_rng_same_seed_gives_same_sequence_and_other_seed_differs)
{
	struct wl_rng a, b, c;
	int differ = 0;

	wl_rng_seed(&a, 77);
	wl_rng_seed(&b, 77);
	wl_rng_seed(&c, 78);
	for (int i = 0; i < 100; i++) {
		uint64_t x = wl_rng_u64(&a);

		ck_assert_uint_eq(x, wl_rng_u64(&b));
		differ += x != wl_rng_u64(&c);
	}
	ck_assert_int_eq(differ, 100);
}
END_TEST

START_TEST(wl_rng_uniform_stays_in_unit_interval_with_mean_half)
{
	struct wl_rng r;
	double sum = 0.0;
	const int n = 200000;

	wl_rng_seed(&r, 3);
	for (int i = 0; i < n; i++) {
		double u = wl_rng_uniform(&r);

		ck_assert(u >= 0.0 && u < 1.0);
		sum += u;
	}
	/* Standard error of the mean is sqrt(1/12/n) ~ 6.5e-4: 5 sigma. */
	ck_assert_double_eq_tol(sum / n, 0.5, 3.3e-3);
}
END_TEST

START_TEST(wl_rng_normal_has_zero_mean_and_unit_variance)
{
	struct wl_rng r;
	double sum = 0.0, sq = 0.0;
	const int n = 200000;

	wl_rng_seed(&r, 4);
	for (int i = 0; i < n; i++) {
		double x = wl_rng_normal(&r);

		ck_assert(isfinite(x));
		sum += x;
		sq += x * x;
	}
	/* Standard errors: mean 1/sqrt(n) ~ 2.2e-3, variance sqrt(2/n) ~ 3.2e-3. */
	ck_assert_double_eq_tol(sum / n, 0.0, 0.012);
	ck_assert_double_eq_tol(sq / n - (sum / n) * (sum / n), 1.0, 0.016);
}
END_TEST

START_TEST(wl_rel_l2_measures_relative_error)
{
	double b[] = { 3.0, 4.0 };         /* norm 5 */
	double a[] = { 3.0, 4.0 + 0.05 };  /* diff norm 0.05 */
	double z[] = { 0.0, 0.0 };

	ck_assert_double_eq_tol(wl_rel_l2(a, b, 2), 0.01, 1e-12);
	ck_assert_double_eq(wl_rel_l2(b, b, 2), 0.0);
	/* An all-zero reference: the absolute error (norm 5). */
	ck_assert_double_eq_tol(wl_rel_l2(b, z, 2), 5.0, 1e-12);
}
END_TEST

START_TEST(wl_rel_l2_propagates_nan)
{
	double b[] = { 1.0, 2.0 };
	double a[] = { 1.0, NAN };

	ck_assert(isnan(wl_rel_l2(a, b, 2)));
}
END_TEST

START_TEST(wl_speedup_compares_optimized_with_naive_of_same_size)
{
	struct wl_result rows[] = {
		{ .workload = "w", .variant = "naive", .size = "n=1", .throughput = 100, .step_ms = 10 },
		{ .workload = "w", .variant = "naive", .size = "n=2", .throughput = 50, .step_ms = 40 },
		{ .workload = "w", .variant = "optimized", .size = "n=2", .throughput = 400, .step_ms = 5 },
	};

	ck_assert_double_eq_tol(wl_speedup(rows, 3, 2), 8.0, 1e-12);
	ck_assert_double_eq(wl_speedup(rows, 3, 0), 0.0);
}
END_TEST

START_TEST(wl_speedup_falls_back_to_first_row_of_workload)
{
	struct wl_result rows[] = {
		{ .workload = "other", .variant = "x", .size = "s", .throughput = 1 },
		{ .workload = "roll", .variant = "fp32", .size = "s", .throughput = 200 },
		{ .workload = "roll", .variant = "fp16", .size = "s", .throughput = 300 },
	};

	ck_assert_double_eq_tol(wl_speedup(rows, 3, 2), 1.5, 1e-12);
	ck_assert_double_eq(wl_speedup(rows, 3, 1), 0.0);
}
END_TEST

START_TEST(wl_speedup_uses_step_time_without_throughput)
{
	struct wl_result rows[] = {
		{ .workload = "w", .variant = "naive", .size = "s", .step_ms = 9 },
		{ .workload = "w", .variant = "optimized", .size = "s", .step_ms = 3 },
	};

	ck_assert_double_eq_tol(wl_speedup(rows, 2, 1), 3.0, 1e-12);
}
END_TEST

static char *capture(void (*fn)(FILE *, const struct wl_result *, int),
		     const struct wl_result *r, int n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, r, n);
	fclose(f);
	return buf;
}

static void json_one(FILE *f, const struct wl_result *r, int n)
{
	(void)n;
	wl_print_json(f, r);
}

START_TEST(wl_print_json_writes_one_parseable_object)
{
	struct wl_result r = { .workload = "hash_embedding", .variant = "optimized",
			       .size = "rows=\"1M\"", .step_ms = 0.25, .throughput = 4e6,
			       .unit = "rows/s", .checked = true, .check_ok = true,
			       .check_error = 1.5e-7 };
	char *s = capture(json_one, &r, 1);
	cJSON *j;

	/* One line: the only newline ends the output. */
	ck_assert_ptr_eq(strchr(s, '\n'), s + strlen(s) - 1);
	j = cJSON_Parse(s);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(cJSON_GetObjectItem(j, "workload")->valuestring, "hash_embedding");
	ck_assert_str_eq(cJSON_GetObjectItem(j, "size")->valuestring, "rows=\"1M\"");
	ck_assert_double_eq_tol(cJSON_GetObjectItem(j, "step_ms")->valuedouble, 0.25, 1e-12);
	ck_assert_double_eq_tol(cJSON_GetObjectItem(j, "throughput")->valuedouble, 4e6, 1e-3);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "check_ok")));
	ck_assert_double_eq_tol(cJSON_GetObjectItem(j, "check_error")->valuedouble, 1.5e-7, 1e-15);
	cJSON_Delete(j);
	free(s);
}
END_TEST

START_TEST(wl_print_json_writes_null_for_nan_error)
{
	struct wl_result r = { .workload = "w", .variant = "naive", .size = "s", .unit = "u",
			       .checked = true, .check_ok = false, .check_error = NAN };
	char *s = capture(json_one, &r, 1);
	cJSON *j = cJSON_Parse(s);

	ck_assert_ptr_nonnull(j);
	ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "check_error")));
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(j, "check_ok")));
	cJSON_Delete(j);
	free(s);
}
END_TEST

START_TEST(wl_print_table_shows_speedup_and_failed_check)
{
	struct wl_result rows[] = {
		{ .workload = "w", .variant = "naive", .size = "s", .throughput = 100, .unit = "u",
		  .checked = true, .check_ok = true, .check_error = 1e-9 },
		{ .workload = "w", .variant = "optimized", .size = "s", .throughput = 350, .unit = "u",
		  .checked = true, .check_ok = false, .check_error = 0.5 },
	};
	char *s = capture(wl_print_table, rows, 2);

	ck_assert_ptr_nonnull(strstr(s, "3.50x"));
	ck_assert_ptr_nonnull(strstr(s, "FAIL"));
	free(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("wl_common");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, wl_parse_args_sets_common_options);
	tcase_add_test(tc, wl_parse_args_keeps_defaults_without_options);
	tcase_add_test(tc, wl_parse_args_rejects_unknown_option);
	tcase_add_test(tc, wl_parse_args_rejects_bad_variant);
	tcase_add_test(tc, wl_parse_args_rejects_non_positive_iters);
	tcase_add_test(tc, wl_parse_args_returns_one_on_help);
	tcase_add_test(tc, wl_parse_args_routes_extra_options_to_their_parsers);
	tcase_add_test(tc, wl_parse_args_rejects_value_option_without_value);
	tcase_add_test(tc, wl_parse_count_applies_k_and_m_suffixes);
	tcase_add_test(tc, wl_parse_count_rejects_garbage_and_overflow);
	tcase_add_test(tc, wl_parse_int_list_rejects_empty_elements_and_overlong_lists);
	tcase_add_test(tc, wl_rng_matches_published_xoshiro256starstar_for_seed_zero);
	tcase_add_test(tc, wl_rng_same_seed_gives_same_sequence_and_other_seed_differs);
	tcase_add_test(tc, wl_rng_uniform_stays_in_unit_interval_with_mean_half);
	tcase_add_test(tc, wl_rng_normal_has_zero_mean_and_unit_variance);
	tcase_add_test(tc, wl_rel_l2_measures_relative_error);
	tcase_add_test(tc, wl_rel_l2_propagates_nan);
	tcase_add_test(tc, wl_speedup_compares_optimized_with_naive_of_same_size);
	tcase_add_test(tc, wl_speedup_falls_back_to_first_row_of_workload);
	tcase_add_test(tc, wl_speedup_uses_step_time_without_throughput);
	tcase_add_test(tc, wl_print_json_writes_one_parseable_object);
	tcase_add_test(tc, wl_print_json_writes_null_for_nan_error);
	tcase_add_test(tc, wl_print_table_shows_speedup_and_failed_check);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
