/* test_symbol_shorten.c - text tables shorten templated kernel names to the
 * function's name and its short first-level template arguments. */
#include <check.h>
#include <string.h>

#include "sink/symbol.h"
#include "testutil.h"

static char out[512];

static const char *shorten(const char *name)
{
	rpt_symbol__shorten(name, out, sizeof out);
	return out;
}

START_TEST(symbol_plain_function_loses_its_parameters)
{
	ck_assert_str_eq(shorten("smem_blur(float const*, float*, unsigned long)"), "smem_blur");
	ck_assert_str_eq(shorten("gather_strided"), "gather_strided");
}
END_TEST

START_TEST(symbol_pytorch_lambda_arguments_are_elided)
{
	const char *name =
		"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
		"launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
		"at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::"
		"operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::"
		"(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, "
		"c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::"
		"{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)";
	ck_assert_str_eq(shorten(name), "vectorized_elementwise_kernel<4, ...>");
}
END_TEST

START_TEST(symbol_anonymous_namespace_is_not_a_parameter_list)
{
	ck_assert_str_eq(shorten("void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d"
				 "<float, float, long>(float*, float*, float const*, long const*, bool)"),
			 "nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>");
}
END_TEST

START_TEST(symbol_long_argument_lists_are_cut_after_a_budget)
{
	ck_assert_str_eq(shorten("void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, "
				 "false, float, float, float, true, true, false, false>(cublasLt::"
				 "cublasSplitKParams<float>, float const*)"),
			 "splitKreduce_kernel<32, 16, int, float, float, float, float, false, ...>");
}
END_TEST

START_TEST(symbol_first_argument_names_the_instance)
{
	ck_assert_str_eq(shorten("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align1>"
				 "(cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align1::Params)"),
			 "Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align1>");
}
END_TEST

START_TEST(symbol_not_a_declaration_is_kept)
{
	ck_assert_str_eq(shorten("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_cublas"),
			 "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_cublas");
	ck_assert_str_eq(shorten("[CUDA memcpy Host-to-Device]"), "[CUDA memcpy Host-to-Device]");
	ck_assert_str_eq(shorten(""), "");
	ck_assert_str_eq(shorten(NULL), "");
}
END_TEST

START_TEST(symbol_output_is_cut_to_the_buffer)
{
	char small[8];
	ck_assert_uint_eq(rpt_symbol__shorten("a_rather_long_kernel_name(int)", small, sizeof small), 7);
	ck_assert_str_eq(small, "a_rathe");
}
END_TEST

START_TEST(symbol_unbalanced_brackets_do_not_read_past_the_end)
{
	ck_assert_str_eq(shorten("void k<4, std::array<int"), "k<4, ...");
	ck_assert_str_eq(shorten("void k>>>(int"), "k>>>");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("symbol_shorten");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, symbol_plain_function_loses_its_parameters);
	tcase_add_test(tc, symbol_pytorch_lambda_arguments_are_elided);
	tcase_add_test(tc, symbol_anonymous_namespace_is_not_a_parameter_list);
	tcase_add_test(tc, symbol_long_argument_lists_are_cut_after_a_budget);
	tcase_add_test(tc, symbol_first_argument_names_the_instance);
	tcase_add_test(tc, symbol_not_a_declaration_is_kept);
	tcase_add_test(tc, symbol_output_is_cut_to_the_buffer);
	tcase_add_test(tc, symbol_unbalanced_brackets_do_not_read_past_the_end);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
