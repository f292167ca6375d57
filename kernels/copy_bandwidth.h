/* copy_bandwidth.h - the device-to-device copy bandwidth of this GPU, the
 * ceiling the workloads hold their memory-bound kernels against. */
#ifndef KERNELS_COPY_BANDWIDTH_H
#define KERNELS_COPY_BANDWIDTH_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes read plus bytes written per second, in GB/s: the median of ten
 * event-timed 256 MiB copies on `stream`, after one warm-up copy. */
cudaError_t copy_bandwidth_gbs(cudaStream_t stream, double *gbs);

#ifdef __cplusplus
}
#endif

#endif
