/* test_wl_rollout.c - the rollout workload's CPU reference: convolution,
 * instance normalisation, GELU and the counter-based noise against values
 * derived by hand, and the determinism of its inputs. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rollout_ref.h"
#include "testutil.h"

START_TEST(rollout_conv_center_identity_copies_input)
{
	struct rollout_config c = { .realizations = 2, .channels = 3, .height = 4, .width = 5 };
	size_t n = rollout_state_count(&c);
	double x[120], y[120], w[81] = { 0 };

	ck_assert_uint_eq(n, 120);
	for (size_t i = 0; i < n; i++)
		x[i] = (double)i - 7.5;
	for (int ch = 0; ch < 3; ch++)
		w[4 * 9 + ch * 3 + ch] = 1.0; /* tap 4 = (ky 1, kx 1), the centre */
	rollout_ref_conv(&c, x, w, y);
	for (size_t i = 0; i < n; i++)
		ck_assert_double_eq(y[i], x[i]);
}
END_TEST

START_TEST(rollout_conv_zero_pads_the_border)
{
	struct rollout_config c = { .realizations = 1, .channels = 1, .height = 3, .width = 4 };
	double x[12], y[12], w[9];
	/* A 3x3 box sum of ones counts the in-grid neighbours. */
	const double expect[12] = { 4, 6, 6, 4, 6, 9, 9, 6, 4, 6, 6, 4 };

	for (int i = 0; i < 12; i++)
		x[i] = 1.0;
	for (int i = 0; i < 9; i++)
		w[i] = 1.0;
	rollout_ref_conv(&c, x, w, y);
	for (int i = 0; i < 12; i++)
		ck_assert_double_eq(y[i], expect[i]);
}
END_TEST

START_TEST(rollout_conv_mixes_channels_through_weights)
{
	struct rollout_config c = { .realizations = 1, .channels = 2, .height = 1, .width = 1 };
	double x[2] = { 3.0, -2.0 }, y[2], w[36] = { 0 };

	/* centre tap, [ci][co]: co0 = 1*x0 + 10*x1, co1 = 100*x0 + 1000*x1 */
	w[4 * 4 + 0] = 1.0;
	w[4 * 4 + 2] = 10.0;
	w[4 * 4 + 1] = 100.0;
	w[4 * 4 + 3] = 1000.0;
	rollout_ref_conv(&c, x, w, y);
	ck_assert_double_eq(y[0], 3.0 - 20.0);
	ck_assert_double_eq(y[1], 300.0 - 2000.0);
}
END_TEST

START_TEST(rollout_instnorm_normalises_each_channel)
{
	struct rollout_config c = { .realizations = 1, .channels = 2, .height = 2, .width = 2 };
	/* channel 0: 1 2 3 4 (mean 2.5, var 1.25); channel 1: constant 7 */
	double y[8] = { 1, 7, 2, 7, 3, 7, 4, 7 };
	double r = 1.0 / sqrt(1.25 + ROLLOUT_NORM_EPS);

	rollout_ref_instnorm(&c, y);
	ck_assert_double_eq_tol(y[0], -1.5 * r, 1e-15);
	ck_assert_double_eq_tol(y[2], -0.5 * r, 1e-15);
	ck_assert_double_eq_tol(y[4], 0.5 * r, 1e-15);
	ck_assert_double_eq_tol(y[6], 1.5 * r, 1e-15);
	for (int i = 1; i < 8; i += 2)
		ck_assert_double_eq(y[i], 0.0);
}
END_TEST

START_TEST(rollout_gelu_matches_tanh_form)
{
	/* 0.5 * 1 * (1 + tanh(sqrt(2/pi) * 1.044715)) */
	double k = sqrt(2.0 / M_PI);

	ck_assert_double_eq(rollout_gelu(0.0), 0.0);
	ck_assert_double_eq_tol(rollout_gelu(1.0), 0.5 * (1.0 + tanh(k * 1.044715)), 1e-15);
	ck_assert_double_eq_tol(rollout_gelu(2.0) - rollout_gelu(-2.0), 2.0, 1e-15);
	ck_assert_double_eq_tol(rollout_gelu(10.0), 10.0, 1e-12);
}
END_TEST

START_TEST(rollout_noise_is_standard_normal)
{
	uint64_t key = rollout_noise_key(42, 3);
	const int n = 400000;
	double s = 0.0, ss = 0.0;

	for (int i = 0; i < n; i++) {
		double v = rollout_noise_normal(key, (uint64_t)i);

		s += v;
		ss += v * v;
	}
	/* standard errors: 1/sqrt(n) = 1.6e-3 for the mean, sqrt(2/n) for the variance */
	ck_assert_double_eq_tol(s / n, 0.0, 8e-3);
	ck_assert_double_eq_tol(ss / n, 1.0, 1.2e-2);
}
END_TEST

START_TEST(rollout_noise_pairs_share_one_radius)
{
	uint64_t key = rollout_noise_key(7, 0);

	for (uint64_t k = 0; k < 100; k++) {
		double a = rollout_noise_normal(key, 2 * k), b = rollout_noise_normal(key, 2 * k + 1);
		uint64_t bits = rollout_noise_bits(key, k);
		double u1 = (double)((bits >> 40) + 1) / 16777216.0;

		/* cos^2 + sin^2: the pair's squared norm is -2 ln u1 */
		ck_assert_double_eq_tol(a * a + b * b, -2.0 * log(u1), 1e-12);
	}
}
END_TEST

START_TEST(rollout_noise_depends_on_seed_step_and_index)
{
	uint64_t k0 = rollout_noise_key(1, 0);

	ck_assert_uint_eq(rollout_noise_bits(k0, 5), rollout_noise_bits(rollout_noise_key(1, 0), 5));
	ck_assert_uint_ne(rollout_noise_bits(k0, 5), rollout_noise_bits(k0, 6));
	ck_assert_uint_ne(k0, rollout_noise_key(1, 1));
	ck_assert_uint_ne(k0, rollout_noise_key(2, 0));
}
END_TEST

START_TEST(rollout_init_is_deterministic_per_seed)
{
	struct rollout_config c = { .realizations = 1, .channels = 2, .height = 3, .width = 3,
				    .seed = 5 };
	double x1[18], w1[36], x2[18], w2[36], x3[18], w3[36];

	rollout_init(&c, x1, w1);
	rollout_init(&c, x2, w2);
	c.seed = 6;
	rollout_init(&c, x3, w3);
	ck_assert_int_eq(memcmp(x1, x2, sizeof(x1)), 0);
	ck_assert_int_eq(memcmp(w1, w2, sizeof(w1)), 0);
	ck_assert_int_ne(memcmp(x1, x3, sizeof(x1)), 0);
}
END_TEST

START_TEST(rollout_run_composes_the_three_stages)
{
	struct rollout_config c = { .realizations = 1, .channels = 2, .height = 4, .width = 4,
				    .timesteps = 2, .seed = 3 };
	double x[32], w[36], y[32], tmp[32], manual[32];

	rollout_init(&c, x, w);
	memcpy(manual, x, sizeof(x));
	for (int s = 0; s < 2; s++) {
		rollout_ref_conv(&c, manual, w, y);
		rollout_ref_instnorm(&c, y);
		for (int i = 0; i < 32; i++)
			manual[i] = rollout_gelu(y[i]) +
				    ROLLOUT_NOISE_SIGMA *
					    rollout_noise_normal(rollout_noise_key(3, s), (uint64_t)i);
	}
	rollout_ref_run(&c, w, x, tmp);
	for (int i = 0; i < 32; i++)
		ck_assert_double_eq_tol(x[i], manual[i], 1e-14);
}
END_TEST

START_TEST(rollout_compare_reports_errors_and_nan)
{
	double ref[4] = { 1, 2, 3, 4 }, a[4] = { 1, 2.5, 3, 3 };
	struct rollout_error e;

	rollout_compare(a, ref, 4, &e);
	ck_assert_double_eq(e.max_abs, 1.0);
	ck_assert_double_eq(e.mean_abs, 1.5 / 4);
	ck_assert_double_eq_tol(e.rel_l2, sqrt(1.25 / 30.0), 1e-15);
	a[2] = NAN;
	rollout_compare(a, ref, 4, &e);
	ck_assert(isnan(e.max_abs));
	ck_assert(!(e.rel_l2 <= 1.0));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("wl_rollout");
	TCase *tc = tcase_create("ref");

	tcase_add_test(tc, rollout_conv_center_identity_copies_input);
	tcase_add_test(tc, rollout_conv_zero_pads_the_border);
	tcase_add_test(tc, rollout_conv_mixes_channels_through_weights);
	tcase_add_test(tc, rollout_instnorm_normalises_each_channel);
	tcase_add_test(tc, rollout_gelu_matches_tanh_form);
	tcase_add_test(tc, rollout_noise_is_standard_normal);
	tcase_add_test(tc, rollout_noise_pairs_share_one_radius);
	tcase_add_test(tc, rollout_noise_depends_on_seed_step_and_index);
	tcase_add_test(tc, rollout_init_is_deterministic_per_seed);
	tcase_add_test(tc, rollout_run_composes_the_three_stages);
	tcase_add_test(tc, rollout_compare_reports_errors_and_nan);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
