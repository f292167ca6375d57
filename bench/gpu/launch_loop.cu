// launch_loop.cu - the launch-bound and kernel-heavy loops that
// bench/gpu_overhead.sh times untraced, under a counting-only CUPTI consumer
// and under `perfkit run`.
//
//   launch_loop empty N   N launches of an empty kernel, one sync at the end
//   launch_loop heavy N   N launches of a kernel doing ~50 us of arithmetic
// Prints "per_launch_us <value>" (wall time of the loop and the final sync
// divided by N, after a warm-up that initialises the context and module).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__global__ void empty_kernel(void) {}

__global__ void heavy_kernel(float *out, int iters)
{
	float x = threadIdx.x * 1e-3f, y = blockIdx.x * 1e-3f;

	for (int i = 0; i < iters; i++)
		x = fmaf(x, 1.0000001f, y);
	out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 20000;
	int heavy = argc > 1 && !strcmp(argv[1], "heavy");
	float *out;
	double t0, t1;

	if (cudaMalloc(&out, 132 * 256 * sizeof(float)) != cudaSuccess)
		return 90;
	for (int i = 0; i < 100; i++) {
		empty_kernel<<<1, 1>>>();
		heavy_kernel<<<132, 256>>>(out, 10);
	}
	cudaDeviceSynchronize();
	t0 = now_us();
	for (int i = 0; i < n; i++) {
		if (heavy)
			heavy_kernel<<<132, 256>>>(out, 20000);
		else
			empty_kernel<<<1, 1>>>();
	}
	cudaDeviceSynchronize();
	t1 = now_us();
	printf("per_launch_us %.3f\n", (t1 - t0) / n);
	cudaFree(out);
	return 0;
}
