/* test_wl_hash_embedding.c - inputs and CPU reference of the hash embedding
 * workload: batch generation, hashing, lookups, the collated layout and the
 * auto kernel rule. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hash_embedding_ref.h"
#include "testutil.h"

#define ROWS 5000

static struct he_batch batch;

static void setup(void)
{
	ck_assert_int_eq(he_batch__new(&batch, ROWS, 11), 0);
}

static void teardown(void)
{
	he_batch__delete(&batch);
}

/* The tables' layout, written out from the header's constants. */
static int row0(int t)
{
	return t < HE_TOP_K ? t * HE_GENUS_VOCAB : HE_TOP_K * HE_GENUS_VOCAB + (t - HE_TOP_K) * HE_FAMILY_VOCAB;
}

START_TEST(he_batch_plots_are_contiguous_runs_of_8_to_24_rows)
{
	int run = 1;

	ck_assert_uint_eq(batch.plot[0], 0);
	for (int i = 1; i < ROWS; i++) {
		ck_assert(batch.plot[i] == batch.plot[i - 1] || batch.plot[i] == batch.plot[i - 1] + 1);
		if (batch.plot[i] == batch.plot[i - 1]) {
			run++;
		} else {
			ck_assert_int_ge(run, HE_MIN_PLOT_ROWS);
			ck_assert_int_le(run, HE_MAX_PLOT_ROWS);
			run = 1;
		}
	}
	ck_assert_int_le(run, HE_MAX_PLOT_ROWS);
	ck_assert_int_eq((int)batch.plot[ROWS - 1] + 1, batch.plots);
}
END_TEST

START_TEST(he_batch_same_seed_same_batch_other_seed_differs)
{
	struct he_batch a, b;

	ck_assert_int_eq(he_batch__new(&a, ROWS, 11), 0);
	ck_assert_int_eq(he_batch__new(&b, ROWS, 12), 0);
	ck_assert_int_eq(a.plots, batch.plots);
	ck_assert_mem_eq(a.keys, batch.keys, ROWS * sizeof(uint32_t));
	ck_assert_mem_eq(a.weights, batch.weights, ROWS * sizeof(float));
	ck_assert_mem_eq(a.ids, batch.ids, (size_t)HE_TABLES * a.plots * sizeof(uint32_t));
	ck_assert(memcmp(b.keys, batch.keys, ROWS * sizeof(uint32_t)) != 0);
	he_batch__delete(&a);
	he_batch__delete(&b);
}
END_TEST

START_TEST(he_batch_ids_stay_inside_their_vocabulary_and_weights_positive)
{
	for (int t = 0; t < HE_TABLES; t++)
		for (int p = 0; p < batch.plots; p++)
			ck_assert_uint_lt(batch.ids[(size_t)t * batch.plots + p],
					  t < HE_TOP_K ? HE_GENUS_VOCAB : HE_FAMILY_VOCAB);
	for (int i = 0; i < ROWS; i++)
		ck_assert(batch.weights[i] > 0.0f && batch.weights[i] <= 1.0f);
}
END_TEST

START_TEST(he_batch__new_rejects_zero_rows)
{
	struct he_batch b;

	ck_assert_int_lt(he_batch__new(&b, 0, 1), 0);
}
END_TEST

START_TEST(he_bucket_counts_sum_to_rows)
{
	uint64_t counts[HE_HASH_DIM], sum = 0;

	he_bucket_counts(&batch, counts);
	for (int k = 0; k < HE_HASH_DIM; k++)
		sum += counts[k];
	ck_assert_uint_eq(sum, ROWS);
}
END_TEST

START_TEST(he_hash_bucket_spreads_keys_evenly)
{
	int counts[HE_HASH_DIM] = { 0 };
	const int n = 64000;

	for (uint32_t key = 0; key < (uint32_t)n; key++) {
		uint32_t b = he_hash_bucket(key);

		ck_assert_uint_lt(b, HE_HASH_DIM);
		counts[b]++;
	}
	/* 1000 expected per bucket, standard deviation about 31: 6 sigma. */
	for (int k = 0; k < HE_HASH_DIM; k++)
		ck_assert_int_lt(abs(counts[k] - n / HE_HASH_DIM), 190);
}
END_TEST

START_TEST(he_hash_ref_equals_per_bucket_recomputation)
{
	double *h = malloc((size_t)batch.plots * HE_HASH_DIM * sizeof(double));

	he_hash_ref(&batch, h);
	/* Each (plot, bucket) recomputed by scanning that plot's rows. */
	for (int p = 0; p < batch.plots; p += 7)
		for (int k = 0; k < HE_HASH_DIM; k++) {
			double want = 0.0;

			for (int i = 0; i < ROWS; i++)
				if ((int)batch.plot[i] == p && (int)he_hash_bucket(batch.keys[i]) == k)
					want += batch.weights[i];
			ck_assert_double_eq_tol(h[(size_t)p * HE_HASH_DIM + k], want, 1e-12);
		}
	free(h);
}
END_TEST

START_TEST(he_hash_ref_plot_totals_equal_plot_weights)
{
	double *h = malloc((size_t)batch.plots * HE_HASH_DIM * sizeof(double));
	double *w = calloc((size_t)batch.plots, sizeof(double));

	he_hash_ref(&batch, h);
	for (int i = 0; i < ROWS; i++)
		w[batch.plot[i]] += batch.weights[i];
	for (int p = 0; p < batch.plots; p++) {
		double sum = 0.0;

		for (int k = 0; k < HE_HASH_DIM; k++)
			sum += h[(size_t)p * HE_HASH_DIM + k];
		ck_assert_double_eq_tol(sum, w[p], 1e-9);
	}
	free(h);
	free(w);
}
END_TEST

START_TEST(he_hash_cpu_agrees_with_double_reference)
{
	size_t n = (size_t)batch.plots * HE_HASH_DIM;
	double *h = malloc(n * sizeof(double));
	float *f = malloc(n * sizeof(float));

	he_hash_ref(&batch, h);
	he_hash_cpu(&batch, f);
	/* At most 24 float additions of values <= 1 per bucket. */
	for (size_t i = 0; i < n; i++)
		ck_assert_double_eq_tol(f[i], h[i], 1e-5);
	free(h);
	free(f);
}
END_TEST

START_TEST(he_lookup_ref_copies_the_indexed_table_rows)
{
	int rows = he_total_vocab();
	float *tables = malloc((size_t)rows * HE_EMB_DIM * sizeof(float));
	double *out = malloc((size_t)batch.plots * HE_TABLES * HE_EMB_DIM * sizeof(double));

	ck_assert_int_eq(rows, HE_TOP_K * (HE_GENUS_VOCAB + HE_FAMILY_VOCAB));
	/* Each table element holds its own coordinates, so a wrong row, table
	 * or column shows as a wrong value. */
	for (int r = 0; r < rows; r++)
		for (int e = 0; e < HE_EMB_DIM; e++)
			tables[(size_t)r * HE_EMB_DIM + e] = (float)(r * 100 + e);
	he_lookup_ref(&batch, tables, out);
	for (int p = 0; p < batch.plots; p++)
		for (int t = 0; t < HE_TABLES; t++)
			for (int e = 0; e < HE_EMB_DIM; e++) {
				int r = row0(t) + (int)batch.ids[(size_t)t * batch.plots + p];

				ck_assert_double_eq(out[((size_t)p * HE_TABLES + t) * HE_EMB_DIM + e],
						    (double)(r * 100 + e));
			}
	free(tables);
	free(out);
}
END_TEST

START_TEST(he_table_row0_follows_genus_then_family_tables)
{
	for (int t = 0; t <= HE_TABLES; t++)
		ck_assert_int_eq(he_table_row0(t), row0(t));
}
END_TEST

START_TEST(he_tables_init_is_deterministic_and_not_zero)
{
	size_t n = (size_t)he_total_vocab() * HE_EMB_DIM;
	float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
	size_t zeros = 0;

	he_tables_init(a, 5);
	he_tables_init(b, 5);
	ck_assert_mem_eq(a, b, n * sizeof(float));
	for (size_t i = 0; i < n; i++)
		zeros += a[i] == 0.0f;
	ck_assert_uint_eq(zeros, 0);
	free(a);
	free(b);
}
END_TEST

START_TEST(he_batch__collate_places_each_field_at_its_aligned_offset)
{
	struct he_layout l;
	char *buf;

	he_layout__init(&l, batch.rows, batch.plots);
	ck_assert_uint_eq(l.weights % 256, 0);
	ck_assert_uint_eq(l.plot % 256, 0);
	ck_assert_uint_eq(l.ids % 256, 0);
	ck_assert_uint_ge(l.weights, l.keys + ROWS * 4);
	ck_assert_uint_ge(l.plot, l.weights + ROWS * 4);
	ck_assert_uint_ge(l.ids, l.plot + ROWS * 4);
	ck_assert_uint_ge(l.total_bytes, l.ids + (size_t)HE_TABLES * batch.plots * 4);
	buf = malloc(l.total_bytes);
	he_batch__collate(&batch, &l, buf);
	ck_assert_mem_eq(buf + l.keys, batch.keys, ROWS * 4);
	ck_assert_mem_eq(buf + l.weights, batch.weights, ROWS * 4);
	ck_assert_mem_eq(buf + l.plot, batch.plot, ROWS * 4);
	ck_assert_mem_eq(buf + l.ids, batch.ids, (size_t)HE_TABLES * batch.plots * 4);
	free(buf);
}
END_TEST

START_TEST(he_auto_kernel_picks_shared_only_for_small_inputs)
{
	ck_assert_str_eq(he_auto_kernel(10000), "shared");
	ck_assert_str_eq(he_auto_kernel(HE_SHARED_MAX_ROWS), "shared");
	ck_assert_str_eq(he_auto_kernel(HE_SHARED_MAX_ROWS + 1), "basic");
	ck_assert_str_eq(he_auto_kernel(1000000), "basic");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("wl_hash_embedding");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, he_batch_plots_are_contiguous_runs_of_8_to_24_rows);
	tcase_add_test(tc, he_batch_same_seed_same_batch_other_seed_differs);
	tcase_add_test(tc, he_batch_ids_stay_inside_their_vocabulary_and_weights_positive);
	tcase_add_test(tc, he_batch__new_rejects_zero_rows);
	tcase_add_test(tc, he_bucket_counts_sum_to_rows);
	tcase_add_test(tc, he_hash_bucket_spreads_keys_evenly);
	tcase_add_test(tc, he_hash_ref_equals_per_bucket_recomputation);
	tcase_add_test(tc, he_hash_ref_plot_totals_equal_plot_weights);
	tcase_add_test(tc, he_hash_cpu_agrees_with_double_reference);
	tcase_add_test(tc, he_lookup_ref_copies_the_indexed_table_rows);
	tcase_add_test(tc, he_table_row0_follows_genus_then_family_tables);
	tcase_add_test(tc, he_tables_init_is_deterministic_and_not_zero);
	tcase_add_test(tc, he_batch__collate_places_each_field_at_its_aligned_offset);
	tcase_add_test(tc, he_auto_kernel_picks_shared_only_for_small_inputs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
