/* gpu_metrics_judge.c - the sampled metrics' verdicts on a kernel name or a
 * sample period (gpu_metrics_judge.h). */
#include "gpu_metrics_judge.h"

#include <math.h>

#include "analysis/kernel_metrics/gemm_names.h"

bool gmj__judged(double coverage, const struct gmj_limits *l)
{
	return isfinite(coverage) && coverage >= l->min_coverage;
}

enum gmj_sms gmj__few_sms(double sm_active, double coverage, int64_t max_blocks, int sm_count,
			  const struct gmj_limits *l)
{
	if (!isfinite(sm_active) || !gmj__judged(coverage, l) || sm_active >= 100 * l->max_sm_active)
		return GMJ_SMS_NOT_LOW;
	if (max_blocks <= 0 || sm_count <= 0)
		return GMJ_SMS_LOW;
	return max_blocks < sm_count ? GMJ_SMS_SMALL_GRID : GMJ_SMS_UNDERFILLED;
}

/* Compute types that are not FP32 SIMT work, in GEMM names of any case:
 * TF32 and integer tensor-core GEMMs, FP64 ones. */
static bool not_fp32_gemm(const char *name)
{
	static const char *const words[] = { "tf32", "dgemm", "zgemm", "f64", "int8", "imma", "hmma" };

	return kernel_name__has_any(name, words, sizeof words / sizeof words[0]) || kernel_name__other_than_fp32(name);
}

bool gmj__tensor_idle(const char *name, double tensor_active, double coverage, const struct gmj_limits *l)
{
	return name && gemm_name__role(name) == GEMM_ROLE_GEMM && isfinite(tensor_active) &&
	       gmj__judged(coverage, l) && tensor_active <= 100 * l->max_tensor && !not_fp32_gemm(name);
}

bool gmj__at_dram_roof(double read, double write, const struct gmj_limits *l)
{
	if (!isfinite(read) && !isfinite(write))
		return false;
	return (isfinite(read) ? read : 0) + (isfinite(write) ? write : 0) >= 100 * l->dram_roof;
}

double gmj__link_throughput(double rx, double tx)
{
	if (!isfinite(rx))
		return isfinite(tx) ? tx : NAN;
	return !isfinite(tx) || rx >= tx ? rx : tx;
}

bool gmj__link_saturated(double throughput, const struct gmj_limits *l)
{
	return isfinite(throughput) && throughput >= 100 * l->link_roof;
}
