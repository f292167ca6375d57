// copy_bandwidth.cu - device-to-device copy bandwidth (see copy_bandwidth.h).
#include "copy_bandwidth.h"

#include <algorithm>

#define TRY(x)                              \
	do {                                \
		if ((err = (x)) != cudaSuccess) \
			goto out;           \
	} while (0)

extern "C" cudaError_t copy_bandwidth_gbs(cudaStream_t stream, double *gbs)
{
	const size_t bytes = (size_t)256 << 20;
	const int reps = 10;
	void *a = NULL, *b = NULL;
	cudaEvent_t e0 = NULL, e1 = NULL;
	float ms[reps];
	cudaError_t err;

	TRY(cudaMalloc(&a, bytes));
	TRY(cudaMalloc(&b, bytes));
	TRY(cudaEventCreate(&e0));
	TRY(cudaEventCreate(&e1));
	TRY(cudaMemsetAsync(a, 1, bytes, stream));
	TRY(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream));
	for (int r = 0; r < reps; r++) {
		TRY(cudaEventRecord(e0, stream));
		TRY(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream));
		TRY(cudaEventRecord(e1, stream));
		TRY(cudaEventSynchronize(e1));
		TRY(cudaEventElapsedTime(&ms[r], e0, e1));
	}
	std::sort(ms, ms + reps);
	*gbs = 2.0 * (double)bytes / ((ms[reps / 2 - 1] + ms[reps / 2]) / 2.0 * 1e-3) / 1e9;
out:
	if (e0)
		cudaEventDestroy(e0);
	if (e1)
		cudaEventDestroy(e1);
	cudaFree(a);
	cudaFree(b);
	return err;
}
