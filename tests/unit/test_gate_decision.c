/* test_gate_decision.c - the gate's decision on stores with known kernel
 * times: a regression beyond budget and noise fails and is named, jitter
 * inside the baseline's spread passes, per-key budgets win over the global
 * one, tiny keys never fail, identity mismatches are refused, and the JUnit
 * output carries one testcase per key; loops of other lengths compare per
 * iteration and per launch, and a format-1 baseline as totals. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/baseline.h"
#include "compare/gate.h"
#include "diff_fixture.h"
#include "testutil.h"

#define MS 1000000LL
#define US 1000LL

/* One capture: each named kernel launched once for its time. */
struct kspec {
	const char *name;
	int64_t ns;
};

static int nfiles;

static void write_capture(struct diff_profile *p, const char *gpu, const struct kspec *k)
{
	struct prof_error err = { 0 };
	char name[32], path[512];
	struct fx f;

	snprintf(name, sizeof name, "g%d.sqlite", nfiles++);
	snprintf(path, sizeof path, "%s", testutil_tmp_path(name));
	fx_open(&f, path, "./train --steps=3", gpu);
	for (; k->name; k++)
		fx_kernels(&f, k->name, 80, 256, 1, k->ns);
	fx_close(&f, 200 * MS);
	ck_assert_msg(diff_profile__load_path(p, path, &err) == 0, "%s", err.msg);
}

static void build_baseline(struct baseline *b, struct diff_profile *p, size_t n)
{
	struct prof_error err = { 0 };

	ck_assert_msg(baseline__build(b, p, n, &err) == 0, "%s", err.msg);
	for (size_t i = 0; i < n; i++)
		diff_profile__exit(&p[i]);
}

static void run_gate(struct gate_result *r, const struct baseline *b, struct diff_profile *p,
		     size_t n, const struct gate_options *o)
{
	struct prof_error err = { 0 };

	ck_assert_msg(gate__run(r, b, p, n, o, &err) == 0, "%s", err.msg);
	for (size_t i = 0; i < n; i++)
		diff_profile__exit(&p[i]);
}

static const struct gate_case *find_case(const struct gate_result *r, const char *key)
{
	for (size_t i = 0; i < r->ncases; i++)
		if (strcmp(r->cases[i].key, key) == 0)
			return &r->cases[i];
	ck_abort_msg("no case %s", key);
	return NULL;
}

/* Baseline: three identical captures of gemm 10 ms + softmax 5 ms. */
static void steady_baseline(struct baseline *b)
{
	const struct kspec k[] = { { "gemm", 10 * MS }, { "softmax", 5 * MS }, { NULL, 0 } };
	struct diff_profile p[3];

	for (int i = 0; i < 3; i++)
		write_capture(&p[i], "NVIDIA H100", k);
	build_baseline(b, p, 3);
}

START_TEST(gate_fails_a_kernel_that_regressed_beyond_budget_and_names_it)
{
	const struct kspec k[] = { { "gemm", 12 * MS }, { "softmax", 5 * MS }, { NULL, 0 } };
	struct baseline b;
	struct diff_profile p[1];
	struct gate_result r;
	struct gate_options o;
	const struct gate_case *c;

	gate_options__init(&o);
	steady_baseline(&b);
	write_capture(&p[0], "NVIDIA H100", k);
	run_gate(&r, &b, p, 1, &o);
	c = find_case(&r, "kernel:gemm");
	ck_assert_int_eq(c->verdict, GATE_FAIL);
	ck_assert_int_eq(c->base, 10 * MS);
	ck_assert_int_eq(c->new, 12 * MS);
	ck_assert_ptr_nonnull(strstr(c->message, "kernel:gemm"));
	ck_assert_int_eq(find_case(&r, "kernel:softmax")->verdict, GATE_PASS);
	/* 17 ms against 15 ms is +13 %: the total fails too and says why. */
	c = find_case(&r, "gpu_time");
	ck_assert_int_eq(c->verdict, GATE_FAIL);
	ck_assert_ptr_nonnull(strstr(c->message, "grew most: gemm +2 ms"));
	ck_assert_uint_eq(r.nfailed, 2);
	/* Failures come first. */
	ck_assert_int_eq(r.cases[0].verdict, GATE_FAIL);
	ck_assert_int_eq(r.cases[1].verdict, GATE_FAIL);
	gate__exit(&r);
	baseline__exit(&b);
}
END_TEST

START_TEST(gate_passes_repeated_captures_with_jitter_inside_the_spread)
{
	const int64_t base_ms[] = { 100, 106, 98 }, new_ms[] = { 104, 101, 107 };
	struct diff_profile p[3];
	struct baseline b;
	struct gate_result r;
	struct gate_options o;

	gate_options__init(&o);
	/* Without the noise allowance a 5 % budget would not cover 104 vs 100. */
	o.max_regression_pct = 0;
	for (int i = 0; i < 3; i++) {
		const struct kspec k[] = { { "gemm", base_ms[i] * MS }, { NULL, 0 } };

		write_capture(&p[i], "NVIDIA H100", k);
	}
	build_baseline(&b, p, 3);
	for (int i = 0; i < 3; i++) {
		const struct kspec k[] = { { "gemm", new_ms[i] * MS }, { NULL, 0 } };

		write_capture(&p[i], "NVIDIA H100", k);
	}
	run_gate(&r, &b, p, 3, &o);
	ck_assert_int_eq(find_case(&r, "kernel:gemm")->new, 104 * MS);
	/* Spread: max - median = 6 ms; 3 x 1.4826 x MAD (2 ms) = 8.9 ms. */
	ck_assert_int_eq(find_case(&r, "kernel:gemm")->noise, 8895600);
	ck_assert_uint_eq(r.nfailed, 0);
	gate__exit(&r);
	baseline__exit(&b);
}
END_TEST

START_TEST(gate_fails_a_slowdown_beyond_the_measured_spread)
{
	const int64_t base_ms[] = { 100, 106, 98 };
	const struct kspec slow[] = { { "gemm", 115 * MS }, { NULL, 0 } };
	struct diff_profile p[3];
	struct baseline b;
	struct gate_result r;
	struct gate_options o;

	gate_options__init(&o);
	o.max_regression_pct = 0;
	for (int i = 0; i < 3; i++) {
		const struct kspec k[] = { { "gemm", base_ms[i] * MS }, { NULL, 0 } };

		write_capture(&p[i], "NVIDIA H100", k);
	}
	build_baseline(&b, p, 3);
	write_capture(&p[0], "NVIDIA H100", slow);
	run_gate(&r, &b, p, 1, &o);
	ck_assert_int_eq(find_case(&r, "kernel:gemm")->verdict, GATE_FAIL);
	gate__exit(&r);
	baseline__exit(&b);
}
END_TEST

/* gemm 10 -> 12 ms (+20 %) inside a run dominated by a steady 100 ms kernel. */
static void gemm_plus_20(struct baseline *b, struct gate_result *r, double gemm_budget)
{
	const struct kspec before[] = { { "gemm", 10 * MS }, { "big", 100 * MS }, { NULL, 0 } };
	const struct kspec after[] = { { "gemm", 12 * MS }, { "big", 100 * MS }, { NULL, 0 } };
	struct diff_profile p[1];
	struct gate_options o;

	gate_options__init(&o);
	write_capture(&p[0], "NVIDIA H100", before);
	build_baseline(b, p, 1);
	for (size_t i = 0; i < b->nkeys; i++)
		if (strcmp(b->keys[i].name, "kernel:gemm") == 0)
			b->keys[i].budget_pct = gemm_budget;
	write_capture(&p[0], "NVIDIA H100", after);
	run_gate(r, b, p, 1, &o);
}

START_TEST(gate_per_key_budget_above_the_global_one_lets_the_key_pass)
{
	struct baseline b;
	struct gate_result r;

	gemm_plus_20(&b, &r, 30);
	ck_assert_int_eq(find_case(&r, "kernel:gemm")->verdict, GATE_PASS);
	ck_assert_double_eq(find_case(&r, "kernel:gemm")->budget_pct, 30);
	ck_assert_uint_eq(r.nfailed, 0);
	gate__exit(&r);
	baseline__exit(&b);
}
END_TEST

START_TEST(gate_global_budget_fails_the_same_change_without_a_per_key_budget)
{
	struct baseline b;
	struct gate_result r;

	gemm_plus_20(&b, &r, -1);
	ck_assert_int_eq(find_case(&r, "kernel:gemm")->verdict, GATE_FAIL);
	ck_assert_double_eq(find_case(&r, "kernel:gemm")->budget_pct, 5);
	gate__exit(&r);
	baseline__exit(&b);
}
END_TEST

START_TEST(gate_ignores_a_tiny_kernel_below_the_significance_floor)
{
	const struct kspec before[] = { { "tiny", 10 * US }, { "big", 100 * MS }, { NULL, 0 } };
	const struct kspec after[] = { { "tiny", 30 * US }, { "big", 100 * MS }, { NULL, 0 } };
	struct diff_profile p[1];
	struct baseline b;
	struct gate_result r;
	struct gate_options o;
	const struct gate_case *c;

	gate_options__init(&o);
	write_capture(&p[0], "NVIDIA H100", before);
	build_baseline(&b, p, 1);
	write_capture(&p[0], "NVIDIA H100", after);
	run_gate(&r, &b, p, 1, &o);
	c = find_case(&r, "kernel:tiny");
	/* +200 %, but 20 us is under 1 % of 100 ms of GPU time. */
	ck_assert_int_eq(c->verdict, GATE_PASS);
	ck_assert_int_eq(c->floor, 1 * MS + 100);
	gate__exit(&r);
	baseline__exit(&b);
}
END_TEST

START_TEST(gate_total_failure_names_the_added_kernels_responsible)
{
	const struct kspec opt[] = { { "fused_lookup", 10 * MS }, { NULL, 0 } };
	const struct kspec naive[] = { { "gather", 30 * MS }, { "scatter", 8 * MS }, { NULL, 0 } };
	struct diff_profile p[1];
	struct baseline b;
	struct gate_result r;
	struct gate_options o;
	const struct gate_case *c;

	gate_options__init(&o);
	write_capture(&p[0], "NVIDIA H100", opt);
	build_baseline(&b, p, 1);
	write_capture(&p[0], "NVIDIA H100", naive);
	run_gate(&r, &b, p, 1, &o);
	c = find_case(&r, "gpu_time");
	ck_assert_int_eq(c->verdict, GATE_FAIL);
	ck_assert_ptr_nonnull(strstr(c->message, "gather +30 ms (added), scatter +8 ms (added)"));
	ck_assert_int_eq(find_case(&r, "kernel:gather")->verdict, GATE_ADDED);
	ck_assert_int_eq(find_case(&r, "kernel:fused_lookup")->verdict, GATE_REMOVED);
	gate__exit(&r);
	baseline__exit(&b);
}
END_TEST

START_TEST(gate_reverse_of_a_speedup_passes_with_removed_kernels_reported)
{
	const struct kspec naive[] = { { "gather", 30 * MS }, { "scatter", 8 * MS }, { NULL, 0 } };
	const struct kspec opt[] = { { "fused_lookup", 10 * MS }, { NULL, 0 } };
	struct diff_profile p[1];
	struct baseline b;
	struct gate_result r;
	struct gate_options o;

	gate_options__init(&o);
	write_capture(&p[0], "NVIDIA H100", naive);
	build_baseline(&b, p, 1);
	write_capture(&p[0], "NVIDIA H100", opt);
	run_gate(&r, &b, p, 1, &o);
	ck_assert_uint_eq(r.nfailed, 0);
	ck_assert_int_eq(find_case(&r, "kernel:gather")->verdict, GATE_REMOVED);
	ck_assert_int_eq(find_case(&r, "kernel:fused_lookup")->verdict, GATE_ADDED);
	gate__exit(&r);
	baseline__exit(&b);
}
END_TEST

START_TEST(gate_refuses_captures_from_another_gpu)
{
	const struct kspec k[] = { { "gemm", 10 * MS }, { NULL, 0 } };
	struct diff_profile p[1];
	struct baseline b;
	struct gate_result r;
	struct gate_options o;
	struct prof_error err = { 0 };

	gate_options__init(&o);
	write_capture(&p[0], "NVIDIA H100", k);
	build_baseline(&b, p, 1);
	write_capture(&p[0], "NVIDIA A100", k);
	ck_assert_int_eq(gate__run(&r, &b, p, 1, &o, &err), PROF_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "'NVIDIA A100'"));
	ck_assert_ptr_nonnull(strstr(err.msg, "'NVIDIA H100'"));
	diff_profile__exit(&p[0]);
	baseline__exit(&b);
}
END_TEST

START_TEST(gate_junit_has_one_testcase_per_key_and_escapes_names)
{
	const struct kspec before[] = { { "k<T>&\"x\"", 10 * MS }, { NULL, 0 } };
	const struct kspec after[] = { { "k<T>&\"x\"", 20 * MS }, { NULL, 0 } };
	struct diff_profile p[1];
	struct baseline b;
	struct gate_result r;
	struct gate_options o;
	char *buf = NULL;
	size_t len = 0, ncases = 0, nfail = 0;
	FILE *f;

	gate_options__init(&o);
	/* the key in full: what this test checks is its escaping */
	o.full_names = true;
	write_capture(&p[0], "NVIDIA H100", before);
	build_baseline(&b, p, 1);
	write_capture(&p[0], "NVIDIA H100", after);
	run_gate(&r, &b, p, 1, &o);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(gate__write_junit(&r, f), 0);
	fclose(f);
	for (const char *s = buf; (s = strstr(s, "<testcase ")); s++)
		ncases++;
	for (const char *s = buf; (s = strstr(s, "<failure ")); s++)
		nfail++;
	ck_assert_uint_eq(ncases, r.ncases);
	ck_assert_uint_eq(nfail, r.nfailed);
	ck_assert_ptr_nonnull(strstr(buf, "name=\"kernel:k&lt;T&gt;&amp;&quot;x&quot;\""));
	ck_assert_ptr_null(strstr(buf, "k<T>"));
	free(buf);
	gate__exit(&r);
	baseline__exit(&b);
}
END_TEST

/* The loop of a training job: three kernels a step. */
static const struct fx_step job_step[] = {
	{ "forward", 100 * US }, { "allreduce", 200 * US }, { "update", 50 * US }, { NULL, 0 },
};
static const struct fx_step job_step_slow_allreduce[] = {
	{ "forward", 100 * US }, { "allreduce", 228 * US }, { "update", 50 * US }, { NULL, 0 },
};

static void write_job(struct diff_profile *p, int steps, const struct fx_step *k)
{
	struct prof_error err = { 0 };
	char name[32], path[512];
	struct fx f;

	snprintf(name, sizeof name, "job%d.sqlite", nfiles++);
	snprintf(path, sizeof path, "%s", testutil_tmp_path(name));
	fx_open(&f, path, "./train", "NVIDIA H100");
	fx_steps(&f, steps, k);
	fx_close(&f, 200 * MS);
	ck_assert_msg(diff_profile__load_path(p, path, &err) == 0, "%s", err.msg);
}

static void job_baseline(struct baseline *b)
{
	struct diff_profile p[3];

	for (int i = 0; i < 3; i++)
		write_job(&p[i], 50, job_step);
	build_baseline(b, p, 3);
}

START_TEST(gate_passes_captures_with_other_numbers_of_steps_and_the_same_launches)
{
	const int steps[] = { 44, 60 };
	struct baseline b;
	struct gate_options o;

	gate_options__init(&o);
	job_baseline(&b);
	for (int i = 0; i < 2; i++) {
		struct diff_profile p[1];
		struct gate_result r;

		write_job(&p[0], steps[i], job_step);
		run_gate(&r, &b, p, 1, &o);
		ck_assert(r.per_iteration);
		ck_assert_ptr_nonnull(strstr(r.basis, "per iteration of kernel \"forward\""));
		ck_assert_int_eq(find_case(&r, "gpu_time")->per, GATE_PER_ITERATION);
		ck_assert_double_eq(find_case(&r, "gpu_time")->new, 350 * US);
		ck_assert_int_eq(find_case(&r, "kernel:allreduce")->per, GATE_PER_LAUNCH);
		/* 60 steps hold 20 % more GPU time in total than the baseline's 50. */
		ck_assert_uint_eq(r.nfailed, 0);
		gate__exit(&r);
	}
	baseline__exit(&b);
}
END_TEST

START_TEST(gate_fails_a_kernel_slower_per_launch_in_a_shorter_capture)
{
	struct diff_profile p[1];
	struct baseline b;
	struct gate_result r;
	struct gate_options o;
	const struct gate_case *c;

	gate_options__init(&o);
	job_baseline(&b);
	write_job(&p[0], 44, job_step_slow_allreduce);
	run_gate(&r, &b, p, 1, &o);
	c = find_case(&r, "kernel:allreduce");
	ck_assert_int_eq(c->verdict, GATE_FAIL);
	ck_assert_double_eq(c->base, 200 * US);
	ck_assert_double_eq(c->new, 228 * US);
	ck_assert_int_eq(find_case(&r, "kernel:forward")->verdict, GATE_PASS);
	/* 350 us -> 378 us per iteration, though 44 steps hold less in total. */
	c = find_case(&r, "gpu_time");
	ck_assert_int_eq(c->verdict, GATE_FAIL);
	ck_assert_double_eq(c->new, 378 * US);
	ck_assert_ptr_nonnull(strstr(c->message, "/iter"));
	ck_assert_ptr_nonnull(strstr(c->message, "grew most: allreduce +28 us/iter"));
	gate__exit(&r);
	baseline__exit(&b);
}
END_TEST

START_TEST(gate_with_a_format_1_baseline_compares_totals_and_says_so)
{
	const struct kspec k[] = { { "gemm", 10 * MS }, { NULL, 0 } };
	static const char v1[] =
		"{\"perfkit_baseline\": 1, \"program\": \"train\", \"gpu\": \"NVIDIA H100\","
		" \"captures\": [\"old.sqlite\"], \"keys\": {"
		" \"gpu_time\": {\"unit\": \"ns\", \"median\": 10000000, \"min\": 10000000,"
		" \"max\": 10000000, \"mad\": 0},"
		" \"kernel:gemm\": {\"unit\": \"ns\", \"median\": 10000000, \"min\": 10000000,"
		" \"max\": 10000000, \"mad\": 0}}}";
	struct prof_error err = { 0 };
	struct diff_profile p[1];
	struct baseline b;
	struct gate_result r;
	struct gate_options o;
	char path[512];
	FILE *f;

	gate_options__init(&o);
	snprintf(path, sizeof path, "%s", testutil_tmp_path("v1.json"));
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(v1, f);
	fclose(f);
	ck_assert_msg(baseline__load(&b, path, &err) == 0, "%s", err.msg);
	write_capture(&p[0], "NVIDIA H100", k);
	run_gate(&r, &b, p, 1, &o);
	ck_assert(!r.per_iteration);
	ck_assert_ptr_nonnull(strstr(r.basis, "format 1"));
	ck_assert_int_eq(find_case(&r, "kernel:gemm")->per, GATE_PER_CAPTURE);
	ck_assert_int_eq(find_case(&r, "kernel:gemm")->verdict, GATE_PASS);
	gate__exit(&r);
	baseline__exit(&b);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("gate_decision");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, gate_fails_a_kernel_that_regressed_beyond_budget_and_names_it);
	tcase_add_test(tc, gate_passes_repeated_captures_with_jitter_inside_the_spread);
	tcase_add_test(tc, gate_fails_a_slowdown_beyond_the_measured_spread);
	tcase_add_test(tc, gate_per_key_budget_above_the_global_one_lets_the_key_pass);
	tcase_add_test(tc, gate_global_budget_fails_the_same_change_without_a_per_key_budget);
	tcase_add_test(tc, gate_ignores_a_tiny_kernel_below_the_significance_floor);
	tcase_add_test(tc, gate_total_failure_names_the_added_kernels_responsible);
	tcase_add_test(tc, gate_reverse_of_a_speedup_passes_with_removed_kernels_reported);
	tcase_add_test(tc, gate_refuses_captures_from_another_gpu);
	tcase_add_test(tc, gate_junit_has_one_testcase_per_key_and_escapes_names);
	tcase_add_test(tc, gate_passes_captures_with_other_numbers_of_steps_and_the_same_launches);
	tcase_add_test(tc, gate_fails_a_kernel_slower_per_launch_in_a_shorter_capture);
	tcase_add_test(tc, gate_with_a_format_1_baseline_compares_totals_and_says_so);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
