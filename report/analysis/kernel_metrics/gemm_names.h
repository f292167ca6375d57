/* gemm_names.h - what a kernel's name says of GEMMs: a GEMM, a helper a
 * library launches with one (cuBLAS's split-K reduction), or neither; and
 * whether a GEMM comes from a vendor library (cuBLAS, cuBLASLt, CUTLASS,
 * cuDNN), whose tiles, staging through shared memory and so its global
 * access pattern the library chooses, not the program; and whether a name
 * says its data is not FP32. Pure functions of the name, tested with names
 * from real captures. */
#ifndef REPORT_GEMM_NAMES_H
#define REPORT_GEMM_NAMES_H

#include <stdbool.h>
#include <stddef.h>

enum gemm_role {
	GEMM_ROLE_OTHER,
	GEMM_ROLE_GEMM,
	GEMM_ROLE_HELPER, /* launched after the GEMM it finishes: part of that GEMM */
};

enum gemm_role gemm_name__role(const char *name);
bool gemm_name__from_library(const char *name);
/* 16-bit, 8-bit or double types in a kernel's name, as CUDA, PyTorch,
 * cuBLAS and CUTLASS spell them: the kernel is not an FP32 one. */
bool kernel_name__other_than_fp32(const char *name);
/* Whether the name, in lower case, contains one of n words (lower case). */
bool kernel_name__has_any(const char *name, const char *const *words, size_t n);

#endif
