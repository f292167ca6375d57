/* gemm_names.c - GEMMs and their library told by kernel name (see
 * gemm_names.h). */
#include "gemm_names.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>

bool kernel_name__has_any(const char *name, const char *const *words, size_t n)
{
	char low[512];
	size_t i;

	if (!name)
		return false;
	for (i = 0; name[i] && i + 1 < sizeof low; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[i] = 0;
	for (size_t w = 0; w < n; w++)
		if (strstr(low, words[w]))
			return true;
	return false;
}

#define HAS(name, words) kernel_name__has_any(name, words, sizeof words / sizeof words[0])

enum gemm_role gemm_name__role(const char *name)
{
	/* "nvjet": cuBLAS's GEMM kernels on Hopper carry no "gemm" */
	static const char *const gemm_words[] = { "gemm", "cutlass", "matmul", "cublas", "nvjet" };
	/* cuBLAS's split-K reductions (cublasLt::splitKreduce_kernel, the xmma
	 * family's ..._execute_split_k_kernel__5x_cublas beside the
	 * ..._execute_kernel__5x_cublas GEMM it reduces) and CUTLASS's
	 * (cutlass::reduction::kernel::ReduceSplitK) */
	static const char *const helper_words[] = { "splitkreduce", "splitk_reduce", "split_k_kernel",
						    "reducesplitk" };

	if (HAS(name, helper_words))
		return GEMM_ROLE_HELPER;
	if (HAS(name, gemm_words))
		return GEMM_ROLE_GEMM;
	return GEMM_ROLE_OTHER;
}

bool gemm_name__from_library(const char *name)
{
	/* cuBLAS (its xmma and nvjet families, the older ampere_sgemm_... and
	 * volta_h884gemm_... names), CUTLASS and cuDNN */
	static const char *const library_words[] = { "cublas", "cutlass", "cudnn", "xmma", "nvjet",
						     "maxwell_", "volta_", "turing_", "ampere_", "hopper_" };
	enum gemm_role role = gemm_name__role(name);

	return role == GEMM_ROLE_HELPER || (role == GEMM_ROLE_GEMM && HAS(name, library_words));
}

bool kernel_name__other_than_fp32(const char *name)
{
	static const char *const words[] = { "half", "Half", "bfloat16", "BFloat16", "bf16", "fp16", "f16",
					     "fp8", "e4m3", "e5m2", "double" };

	for (size_t i = 0; name && i < sizeof words / sizeof words[0]; i++)
		if (strstr(name, words[i]))
			return true;
	return false;
}
