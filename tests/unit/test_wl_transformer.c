/* test_wl_transformer.c - the transformer workload's CPU reference: gradients
 * against finite differences, the loss on known inputs, training on the
 * synthetic task, the parameter layout and the generated batches. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "testutil.h"
#include "transformer_ref.h"

static const struct tf_config tiny = {
	.layers = 2, .dmodel = 8, .heads = 2, .seq = 5, .batch = 2, .vocab = 7
};

START_TEST(transformer_ref_grad_matches_finite_differences)
{
	size_t n = tf_param_count(&tiny);
	double *p = malloc(n * sizeof(double)), *g = malloc(n * sizeof(double));
	int tokens[10], targets[10];
	const double eps = 1e-5;

	tf_init_params(&tiny, 3, p);
	tf_make_batch(&tiny, 3, 0, tokens, targets);
	tf_ref_loss(&tiny, p, tokens, targets, g);
	/* Every element of the small tensors, and a spread of the others. */
	for (int t = 0; t < TF_NTENSORS; t++)
		for (int l = 0; l < tiny.layers; l++) {
			size_t off = tf_offset(&tiny, t, l), cnt = tf_tensor_count(&tiny, t);
			size_t stride = cnt > 64 ? cnt / 37 : 1;

			for (size_t i = 0; i < cnt; i += stride) {
				double save = p[off + i], lp, lm, fd;

				p[off + i] = save + eps;
				lp = tf_ref_loss(&tiny, p, tokens, targets, NULL);
				p[off + i] = save - eps;
				lm = tf_ref_loss(&tiny, p, tokens, targets, NULL);
				p[off + i] = save;
				fd = (lp - lm) / (2 * eps);
				ck_assert_msg(fabs(fd - g[off + i]) <= 1e-7 + 1e-5 * fabs(fd),
					      "%s[%zu] layer %d: analytic %.10g, finite difference %.10g",
					      tf_tensor_name(t), i, l, g[off + i], fd);
			}
		}
	free(p);
	free(g);
}
END_TEST

START_TEST(transformer_ref_zero_output_weights_give_log_vocab_loss)
{
	size_t n = tf_param_count(&tiny);
	double *p = malloc(n * sizeof(double));
	int tokens[10], targets[10];

	tf_init_params(&tiny, 5, p);
	for (size_t i = 0; i < tf_tensor_count(&tiny, TF_WOUT); i++)
		p[tf_offset(&tiny, TF_WOUT, 0) + i] = 0.0;
	tf_make_batch(&tiny, 5, 0, tokens, targets);
	/* All logits zero: every token has probability 1/vocab. */
	ck_assert_double_eq_tol(tf_ref_loss(&tiny, p, tokens, targets, NULL), log(7.0), 1e-12);
	free(p);
}
END_TEST

START_TEST(transformer_ref_loss_falls_on_synthetic_task)
{
	const struct tf_config c = {
		.layers = 1, .dmodel = 16, .heads = 2, .seq = 8, .batch = 4, .vocab = 11
	};
	size_t n = tf_param_count(&c);
	double *p = malloc(n * sizeof(double)), *g = malloc(n * sizeof(double));
	int tokens[32], targets[32];
	double first = 0.0, last = 0.0;

	tf_init_params(&c, 9, p);
	for (int s = 0; s < 300; s++) {
		double loss;

		tf_make_batch(&c, 9, s, tokens, targets);
		loss = tf_ref_loss(&c, p, tokens, targets, g);
		tf_sgd(p, g, n, 0.1);
		if (s < 10)
			first += loss / 10;
		if (s >= 290)
			last += loss / 10;
	}
	ck_assert_msg(last < 0.5 * first, "loss %.4f -> %.4f", first, last);
	free(p);
	free(g);
}
END_TEST

START_TEST(transformer_layout_tiles_parameter_vector)
{
	size_t D = tiny.dmodel, expect = 0;

	ck_assert_uint_eq(tf_offset(&tiny, TF_TOK_EMB, 0), 0);
	ck_assert_uint_eq(tf_offset(&tiny, TF_POS_EMB, 0), (size_t)tiny.vocab * D);
	for (int l = 0; l < tiny.layers; l++) {
		ck_assert_uint_eq(tf_offset(&tiny, TF_WO, l),
				  tf_offset(&tiny, TF_WQKV, l) + 3 * D * D);
		ck_assert_uint_eq(tf_offset(&tiny, TF_W2, l), tf_offset(&tiny, TF_W1, l) + 4 * D * D);
	}
	ck_assert_uint_eq(tf_offset(&tiny, TF_WQKV, 1), tf_offset(&tiny, TF_W2, 0) + 4 * D * D);
	/* embeddings + 12 D^2 per layer + output projection */
	expect = (size_t)tiny.vocab * D + tiny.seq * D + tiny.layers * 12 * D * D + D * tiny.vocab;
	ck_assert_uint_eq(tf_param_count(&tiny), expect);
}
END_TEST

START_TEST(transformer_batch_targets_follow_the_rule)
{
	int tokens[10], targets[10], again[10], again_t[10], other[10], other_t[10];
	int differs = 0;

	tf_make_batch(&tiny, 11, 4, tokens, targets);
	tf_make_batch(&tiny, 11, 4, again, again_t);
	tf_make_batch(&tiny, 11, 5, other, other_t);
	for (int i = 0; i < 10; i++) {
		ck_assert_int_ge(tokens[i], 0);
		ck_assert_int_lt(tokens[i], tiny.vocab);
		ck_assert_int_eq(targets[i], (5 * tokens[i] + 3) % tiny.vocab);
		if (i % tiny.seq != tiny.seq - 1)
			ck_assert_int_eq(tokens[i + 1], targets[i]);
		ck_assert_int_eq(tokens[i], again[i]);
		differs |= tokens[i] != other[i];
	}
	(void)other_t;
	(void)again_t;
	ck_assert_msg(differs, "batches 4 and 5 are identical");
}
END_TEST

START_TEST(transformer_config_rejects_heads_not_dividing_dmodel)
{
	struct tf_config c = tiny;
	char msg[128];

	ck_assert_int_eq(tf_config_check(&c, msg, sizeof(msg)), 0);
	c.heads = 3;
	ck_assert_int_eq(tf_config_check(&c, msg, sizeof(msg)), -1);
	c = tiny;
	c.vocab = 1;
	ck_assert_int_eq(tf_config_check(&c, msg, sizeof(msg)), -1);
}
END_TEST

START_TEST(transformer_gelu_grad_matches_finite_differences)
{
	for (double u = -4.0; u <= 4.0; u += 0.37) {
		double fd = (tf_gelu(u + 1e-6) - tf_gelu(u - 1e-6)) / 2e-6;

		ck_assert_double_eq_tol(tf_gelu_grad(u), fd, 1e-8);
	}
	/* GELU(u) - GELU(-u) = u for the tanh form too (tanh is odd). */
	ck_assert_double_eq_tol(tf_gelu(1.3) - tf_gelu(-1.3), 1.3, 1e-15);
	ck_assert_double_eq(tf_gelu(0.0), 0.0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("wl_transformer");
	TCase *tc = tcase_create("ref");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, transformer_ref_grad_matches_finite_differences);
	tcase_add_test(tc, transformer_ref_zero_output_weights_give_log_vocab_loss);
	tcase_add_test(tc, transformer_ref_loss_falls_on_synthetic_task);
	tcase_add_test(tc, transformer_layout_tiles_parameter_vector);
	tcase_add_test(tc, transformer_batch_targets_follow_the_rule);
	tcase_add_test(tc, transformer_config_rejects_heads_not_dividing_dmodel);
	tcase_add_test(tc, transformer_gelu_grad_matches_finite_differences);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
