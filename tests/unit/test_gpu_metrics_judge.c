/* test_gpu_metrics_judge.c - what the sampled GPU metrics say of a kernel or
 * a sample period (report/analysis/gpu_metrics_judge.c), on values: few SMs
 * busy and why (the grid against the SM count), idle tensor cores in FP32
 * GEMMs by name, the DRAM roof and saturated links; an average from samples
 * a kernel barely fills judges nothing. */
#include <check.h>
#include <math.h>

#include "analysis/gpu_metrics/gpu_metrics_judge.h"
#include "testutil.h"

/* diagnose's defaults */
static const struct gmj_limits lim = {
	.min_coverage = 0.5, .max_sm_active = 0.5, .max_tensor = 0.02, .dram_roof = 0.75, .link_roof = 0.8,
};

START_TEST(judge_few_sms_tells_small_grids_from_tails)
{
	/* 16 blocks on 132 SMs, 12% of the SMs busy */
	ck_assert_int_eq(gmj__few_sms(12, 0.9, 16, 132, &lim), GMJ_SMS_SMALL_GRID);
	/* 264 blocks (two waves) yet 30%: SMs idle as the blocks finish unevenly */
	ck_assert_int_eq(gmj__few_sms(30, 0.9, 264, 132, &lim), GMJ_SMS_UNDERFILLED);
	/* a capture without grid sizes or SM count */
	ck_assert_int_eq(gmj__few_sms(30, 0.9, 0, 132, &lim), GMJ_SMS_LOW);
	ck_assert_int_eq(gmj__few_sms(30, 0.9, 16, 0, &lim), GMJ_SMS_LOW);
}
END_TEST

START_TEST(judge_few_sms_needs_a_low_average_from_samples_the_kernel_fills)
{
	/* at the threshold and above: busy enough */
	ck_assert_int_eq(gmj__few_sms(50, 0.9, 16, 132, &lim), GMJ_SMS_NOT_LOW);
	ck_assert_int_eq(gmj__few_sms(95, 0.9, 16, 132, &lim), GMJ_SMS_NOT_LOW);
	/* a 5 us kernel in a 100 us period: its 12% is mostly the gap around it */
	ck_assert_int_eq(gmj__few_sms(12, 0.05, 16, 132, &lim), GMJ_SMS_NOT_LOW);
	ck_assert_int_eq(gmj__few_sms(12, NAN, 16, 132, &lim), GMJ_SMS_NOT_LOW);
	/* no SMs Active value at all */
	ck_assert_int_eq(gmj__few_sms(NAN, 0.9, 16, 132, &lim), GMJ_SMS_NOT_LOW);
}
END_TEST

START_TEST(judge_tensor_idle_flags_fp32_gemms_only)
{
	/* cuBLAS's and CUTLASS's FP32 SIMT GEMMs, from the transformer capture */
	ck_assert(gmj__tensor_idle("sm80_xmma_gemm_f32f32_f32f32_f32_nt_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_"
				   "aligna4_alignc4_execute_kernel__5x_cublas", 0.3, 0.9, &lim));
	ck_assert(gmj__tensor_idle("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_tn_align1>("
				   "cutlass_80_simt_sgemm_128x128_8x4_tn_align1::Params)", 0, 0.9, &lim));
	/* busy tensor cores */
	ck_assert(!gmj__tensor_idle("ampere_sgemm_128x64_nn", 35, 0.9, &lim));
	/* types that are not FP32 SIMT work, whatever the tensor pipe did */
	ck_assert(!gmj__tensor_idle("sm80_xmma_gemm_tf32f32_tf32f32_f32_nn_n_tilesize128x128x16", 0.1, 0.9, &lim));
	ck_assert(!gmj__tensor_idle("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_nn", 0.1, 0.9, &lim));
	ck_assert(!gmj__tensor_idle("volta_dgemm_128x64_nn", 0.1, 0.9, &lim));
	/* not a GEMM; a split-K reduction is part of one, not one */
	ck_assert(!gmj__tensor_idle("void at::native::vectorized_elementwise_kernel<4, float>", 0, 0.9, &lim));
	ck_assert(!gmj__tensor_idle("void cublasLt::splitKreduce_kernel<32, 16, int, float, float>", 0, 0.9, &lim));
	/* too short for the samples, or no Tensor Active */
	ck_assert(!gmj__tensor_idle("ampere_sgemm_128x64_nn", 0, 0.1, &lim));
	ck_assert(!gmj__tensor_idle("ampere_sgemm_128x64_nn", NAN, 0.9, &lim));
	ck_assert(!gmj__tensor_idle(NULL, 0, 0.9, &lim));
}
END_TEST

START_TEST(judge_dram_roof_adds_read_and_write)
{
	/* the H100's triad: read 54% + write 27% of peak */
	ck_assert(gmj__at_dram_roof(54.2, 27.1, &lim));
	ck_assert(gmj__at_dram_roof(80, NAN, &lim));
	ck_assert(!gmj__at_dram_roof(50, 20, &lim));
	ck_assert(!gmj__at_dram_roof(NAN, NAN, &lim));
}
END_TEST

START_TEST(judge_links_take_the_busier_direction)
{
	ck_assert_double_eq(gmj__link_throughput(30, 85), 85);
	ck_assert_double_eq(gmj__link_throughput(90, NAN), 90);
	ck_assert_double_eq(gmj__link_throughput(NAN, 10), 10);
	ck_assert(isnan(gmj__link_throughput(NAN, NAN)));
	ck_assert(gmj__link_saturated(gmj__link_throughput(30, 85), &lim));
	ck_assert(!gmj__link_saturated(gmj__link_throughput(30, 79), &lim));
	/* a GPU without that link: never saturated */
	ck_assert(!gmj__link_saturated(gmj__link_throughput(NAN, NAN), &lim));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("gpu_metrics_judge");
	TCase *tc = tcase_create("judge");

	tcase_add_test(tc, judge_few_sms_tells_small_grids_from_tails);
	tcase_add_test(tc, judge_few_sms_needs_a_low_average_from_samples_the_kernel_fills);
	tcase_add_test(tc, judge_tensor_idle_flags_fp32_gemms_only);
	tcase_add_test(tc, judge_dram_roof_adds_read_and_write);
	tcase_add_test(tc, judge_links_take_the_busier_direction);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
