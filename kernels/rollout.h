/* rollout.h - device code of the rollout workload (seed 001), callable from C.
 *
 * State layout on the GPU: realizations x 128 x 128 x C, channels innermost
 * (the same as workloads/rollout_ref.h). Weights [tap][ci][co].
 *
 * Naive stages are FP32, one kernel per stage, each writing its intermediate.
 * Fused stages run in FP32, FP16 or BF16 storage: conv + instance-norm
 * statistics in one kernel (tensor cores with FP32 accumulation for the
 * 16-bit types), then normalise + GELU + noise in one kernel. Every launcher
 * returns the launch's cudaError_t. */
#ifndef KERNELS_ROLLOUT_H
#define KERNELS_ROLLOUT_H

#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ROLLOUT_GPU_GRID 128 /* the kernels are written for a 128 x 128 grid */

enum rollout_precision { ROLLOUT_FP32 = 0, ROLLOUT_FP16 = 1, ROLLOUT_BF16 = 2 };

/* Bytes of one stored element. */
size_t rollout_precision_bytes(enum rollout_precision p);
/* The fused kernels handle 16 or 32 channels (the tile fits shared memory). */
int rollout_fused_supports(int channels);

/* Naive FP32 stages. partial: realizations*128*C float2; stats: realizations*C float2
 * (mean, 1/std). */
cudaError_t rollout_naive_conv(const float *x, const float *w, float *y, int realizations,
			       int channels, cudaStream_t s);
cudaError_t rollout_naive_stats(const float *y, float *partial, float *stats, int realizations,
				int channels, cudaStream_t s);
cudaError_t rollout_naive_normalize(const float *y, const float *stats, float *z,
				    int realizations, int channels, cudaStream_t s);
cudaError_t rollout_naive_gelu(const float *z, float *g, size_t n, cudaStream_t s);
cudaError_t rollout_naive_noise(const float *g, float *x, size_t n, uint64_t key, float sigma,
				cudaStream_t s);

/* Fused stages in precision p; x, w, y point to elements of that type.
 * counters: realizations unsigned ints, zero before the first call (the
 * kernel leaves them zero). */
cudaError_t rollout_fused_conv_stats(enum rollout_precision p, const void *x, const void *w,
				     void *y, float *partial, float *stats, unsigned *counters,
				     int realizations, int channels, cudaStream_t s);
cudaError_t rollout_fused_norm_gelu_noise(enum rollout_precision p, const void *y,
					  const float *stats, void *x, int realizations,
					  int channels, uint64_t key, float sigma, cudaStream_t s);

/* Conversions between FP32 and precision p (n elements). */
cudaError_t rollout_from_float(enum rollout_precision p, const float *src, void *dst, size_t n,
			       cudaStream_t s);
cudaError_t rollout_to_float(enum rollout_precision p, const void *src, float *dst, size_t n,
			     cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
