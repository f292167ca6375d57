/* test_wl_forces.c - inputs and CPU reference of the batched forces workload:
 * structure generation, the pair potential, and forces = -dE/dx. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forces_ref.h"
#include "testutil.h"

static struct fo_params params;
static struct fo_set set;

static void setup(void)
{
	fo_params__init(&params, 3);
	ck_assert_int_eq(fo_set__new(&set, 8, 21, 0), 0);
}

static void teardown(void)
{
	fo_set__delete(&set);
}

static int atoms_of(const struct fo_set *s, int i)
{
	return s->offset[i + 1] - s->offset[i];
}

static const double *pos_of(const struct fo_set *s, int i)
{
	return s->pos + 3 * s->offset[i];
}

START_TEST(fo_set_structures_hold_12_to_64_atoms_at_least_min_dist_apart)
{
	for (int s = 0; s < set.structures; s++) {
		int n = atoms_of(&set, s);
		const double *x = pos_of(&set, s);

		ck_assert_int_ge(n, FO_MIN_ATOMS);
		ck_assert_int_le(n, FO_MAX_ATOMS);
		for (int i = 0; i < n; i++)
			for (int j = i + 1; j < n; j++) {
				double dx = x[3 * i] - x[3 * j], dy = x[3 * i + 1] - x[3 * j + 1],
				       dz = x[3 * i + 2] - x[3 * j + 2];

				ck_assert(sqrt(dx * dx + dy * dy + dz * dz) >= FO_MIN_DIST);
			}
	}
	ck_assert_int_eq(set.atoms, set.offset[set.structures]);
}
END_TEST

START_TEST(fo_set_structure_depends_only_on_seed_and_index)
{
	struct fo_set big, tail;

	ck_assert_int_eq(fo_set__new(&big, 12, 21, 0), 0);
	ck_assert_int_eq(fo_set__new(&tail, 4, 21, 8), 0);
	/* The first 8 of a set of 12 are the set of 8; structures 8..11 are
	 * the set that starts at 8. */
	ck_assert_mem_eq(big.offset, set.offset, 9 * sizeof(int));
	ck_assert_mem_eq(big.pos, set.pos, (size_t)set.atoms * 3 * sizeof(double));
	for (int s = 0; s < 4; s++) {
		ck_assert_int_eq(atoms_of(&tail, s), atoms_of(&big, 8 + s));
		ck_assert_mem_eq(pos_of(&tail, s), pos_of(&big, 8 + s),
				 (size_t)atoms_of(&tail, s) * 3 * sizeof(double));
	}
	fo_set__delete(&big);
	fo_set__delete(&tail);
}
END_TEST

START_TEST(fo_set_other_seed_gives_other_structures)
{
	struct fo_set other;

	ck_assert_int_eq(fo_set__new(&other, 8, 22, 0), 0);
	ck_assert(other.atoms != set.atoms ||
		  memcmp(other.pos, set.pos, (size_t)set.atoms * 3 * sizeof(double)) != 0);
	fo_set__delete(&other);
}
END_TEST

START_TEST(fo_set__new_rejects_zero_structures)
{
	struct fo_set s;

	ck_assert_int_lt(fo_set__new(&s, 0, 1, 0), 0);
}
END_TEST

START_TEST(fo_phi_follows_the_formula)
{
	/* Written out from the formula in forces_ref.h. */
	for (double r = 0.3; r < 6.0; r += 0.37) {
		double want = 0.0, got, d;

		if (r < params.cutoff) {
			for (int k = 0; k < FO_BASIS; k++)
				want += params.w[k] * exp(-params.gamma * (r - params.mu[k]) * (r - params.mu[k]));
			want *= 0.5 * (cos(M_PI * r / params.cutoff) + 1.0);
		}
		got = fo_phi(&params, r, &d);
		ck_assert_double_eq_tol(got, want, 1e-12);
	}
}
END_TEST

START_TEST(fo_phi_derivative_matches_central_difference)
{
	const double h = 1e-6;

	for (double r = 0.4; r < FO_CUTOFF - 0.01; r += 0.23) {
		double d, dp, dm;
		double fd = (fo_phi(&params, r + h, &dp) - fo_phi(&params, r - h, &dm)) / (2 * h);

		fo_phi(&params, r, &d);
		ck_assert_double_eq_tol(d, fd, 1e-6);
	}
}
END_TEST

START_TEST(fo_phi_and_derivative_vanish_smoothly_at_the_cutoff)
{
	double d;

	ck_assert_double_eq(fo_phi(&params, FO_CUTOFF, &d), 0.0);
	ck_assert_double_eq(d, 0.0);
	ck_assert_double_eq(fo_phi(&params, FO_CUTOFF + 1.0, &d), 0.0);
	/* Just inside: both go to zero with the cutoff function. */
	ck_assert(fabs(fo_phi(&params, FO_CUTOFF - 1e-4, &d)) < 1e-7);
	ck_assert(fabs(d) < 1e-3);
}
END_TEST

START_TEST(fo_energy_of_two_atoms_is_phi_of_their_distance)
{
	double pos[6] = { 0.1, 0.2, 0.3, 1.3, 2.2, -0.5 };
	double r = sqrt(1.2 * 1.2 + 2.0 * 2.0 + 0.8 * 0.8), d;

	ck_assert_double_eq_tol(fo_energy(&params, pos, 2), fo_phi(&params, r, &d), 1e-14);
}
END_TEST

START_TEST(fo_forces_equal_minus_gradient_by_finite_differences)
{
	for (int s = 0; s < 3; s++) {
		int n = atoms_of(&set, s);
		double *fa = malloc((size_t)n * 3 * sizeof(double));
		double *fd = malloc((size_t)n * 3 * sizeof(double));
		double num = 0.0, den = 0.0;

		fo_energy_forces(&params, pos_of(&set, s), n, fa);
		fo_fd_forces(&params, pos_of(&set, s), n, 1e-5, fd);
		for (int i = 0; i < 3 * n; i++) {
			num += (fa[i] - fd[i]) * (fa[i] - fd[i]);
			den += fd[i] * fd[i];
		}
		ck_assert(den > 0.0);
		ck_assert(sqrt(num / den) < 1e-7);
		free(fa);
		free(fd);
	}
}
END_TEST

START_TEST(fo_energy_forces_returns_the_energy_of_fo_energy)
{
	for (int s = 0; s < set.structures; s++) {
		int n = atoms_of(&set, s);
		double *f = malloc((size_t)n * 3 * sizeof(double));

		ck_assert_double_eq_tol(fo_energy_forces(&params, pos_of(&set, s), n, f),
					fo_energy(&params, pos_of(&set, s), n), 1e-10);
		free(f);
	}
}
END_TEST

START_TEST(fo_forces_sum_to_zero)
{
	for (int s = 0; s < set.structures; s++) {
		int n = atoms_of(&set, s);
		double *f = malloc((size_t)n * 3 * sizeof(double)), sum[3] = { 0 }, scale = 0.0;

		fo_energy_forces(&params, pos_of(&set, s), n, f);
		for (int i = 0; i < n; i++)
			for (int c = 0; c < 3; c++) {
				sum[c] += f[3 * i + c];
				scale += fabs(f[3 * i + c]);
			}
		for (int c = 0; c < 3; c++)
			ck_assert(fabs(sum[c]) <= 1e-12 * scale);
		free(f);
	}
}
END_TEST

START_TEST(fo_energy_is_invariant_under_rotation_and_translation)
{
	int n = atoms_of(&set, 0);
	const double *x = pos_of(&set, 0);
	double *y = malloc((size_t)n * 3 * sizeof(double));
	double c = cos(0.7), s = sin(0.7), e0 = fo_energy(&params, x, n);

	for (int i = 0; i < n; i++) {
		y[3 * i] = c * x[3 * i] - s * x[3 * i + 1] + 3.0;
		y[3 * i + 1] = s * x[3 * i] + c * x[3 * i + 1] - 1.5;
		y[3 * i + 2] = x[3 * i + 2] + 0.25;
	}
	ck_assert(e0 != 0.0);
	ck_assert_double_eq_tol(fo_energy(&params, y, n), e0, 1e-10 * fabs(e0));
	free(y);
}
END_TEST

START_TEST(fo_params_centres_span_half_to_cutoff)
{
	ck_assert_double_eq_tol(params.mu[0], 0.5, 1e-15);
	ck_assert_double_eq_tol(params.mu[FO_BASIS - 1], FO_CUTOFF, 1e-12);
	for (int k = 1; k < FO_BASIS; k++)
		ck_assert(params.mu[k] > params.mu[k - 1]);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("wl_forces");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, fo_set_structures_hold_12_to_64_atoms_at_least_min_dist_apart);
	tcase_add_test(tc, fo_set_structure_depends_only_on_seed_and_index);
	tcase_add_test(tc, fo_set_other_seed_gives_other_structures);
	tcase_add_test(tc, fo_set__new_rejects_zero_structures);
	tcase_add_test(tc, fo_phi_follows_the_formula);
	tcase_add_test(tc, fo_phi_derivative_matches_central_difference);
	tcase_add_test(tc, fo_phi_and_derivative_vanish_smoothly_at_the_cutoff);
	tcase_add_test(tc, fo_energy_of_two_atoms_is_phi_of_their_distance);
	tcase_add_test(tc, fo_forces_equal_minus_gradient_by_finite_differences);
	tcase_add_test(tc, fo_energy_forces_returns_the_energy_of_fo_energy);
	tcase_add_test(tc, fo_forces_sum_to_zero);
	tcase_add_test(tc, fo_energy_is_invariant_under_rotation_and_translation);
	tcase_add_test(tc, fo_params_centres_span_half_to_cutoff);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
