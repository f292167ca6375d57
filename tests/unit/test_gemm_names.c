/* test_gemm_names.c - GEMMs, their helpers and their library told by
 * kernel name, with names from the H100 captures in tests/data/: cuBLAS's
 * split-K reductions are part of the GEMM they finish, and only library
 * GEMMs (whose access pattern the library chooses) are from_library; a GEMM
 * the program wrote itself is a GEMM but its own. */
#include <check.h>

#include "analysis/kernel_metrics/gemm_names.h"
#include "testutil.h"

#define XMMA "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4"

START_TEST(gemm_names_cublas_split_k_pair_is_a_gemm_and_its_helper)
{
	/* case_gemm_chain: each cublasSgemm launches both, the second reducing
	 * the first's four K slices */
	ck_assert_int_eq(gemm_name__role(XMMA "_execute_kernel__5x_cublas"), GEMM_ROLE_GEMM);
	ck_assert_int_eq(gemm_name__role(XMMA "_execute_split_k_kernel__5x_cublas"), GEMM_ROLE_HELPER);
	ck_assert_int_eq(gemm_name__role("void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, "
					 "float, false, false, false>(cublasLt::cublasSplitKParams<float>, float const*, "
					 "float const*, float*, float const*, float const*, float const*)"),
			 GEMM_ROLE_HELPER);
}
END_TEST

START_TEST(gemm_names_library_gemms_are_from_the_library)
{
	ck_assert(gemm_name__from_library(XMMA "_execute_kernel__5x_cublas"));
	ck_assert(gemm_name__from_library(XMMA "_execute_split_k_kernel__5x_cublas"));
	ck_assert(gemm_name__from_library("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_tn_align1>"
					  "(cutlass_80_simt_sgemm_128x128_8x4_tn_align1::Params)"));
	ck_assert(gemm_name__from_library("ampere_sgemm_128x64_nn"));
}
END_TEST

START_TEST(gemm_names_the_programs_own_kernels_are_its_own)
{
	/* a GEMM the program wrote: a GEMM for the launch rules, but its access
	 * pattern is the program's to change */
	ck_assert_int_eq(gemm_name__role("void gemm_small_kernel<float>(int, int, float const*, float*)"),
			 GEMM_ROLE_GEMM);
	ck_assert(!gemm_name__from_library("void gemm_small_kernel<float>(int, int, float const*, float*)"));
	ck_assert_int_eq(gemm_name__role("gather_strided(float const*, float*, unsigned long)"), GEMM_ROLE_OTHER);
	ck_assert(!gemm_name__from_library("gather_strided(float const*, float*, unsigned long)"));
	ck_assert(!gemm_name__from_library("bias_relu(float*, float const*, int, int)"));
	ck_assert(!gemm_name__from_library(NULL));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("gemm_names");
	TCase *tc = tcase_create("names");

	tcase_add_test(tc, gemm_names_cublas_split_k_pair_is_a_gemm_and_its_helper);
	tcase_add_test(tc, gemm_names_library_gemms_are_from_the_library);
	tcase_add_test(tc, gemm_names_the_programs_own_kernels_are_its_own);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
