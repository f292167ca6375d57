// launch_loop.cu - the launch-bound and kernel-heavy loops that
// bench/gpu_overhead.sh times untraced, under a counting-only CUPTI consumer
// and under `perfkit run`.
//
//   launch_loop empty N   N launches of an empty kernel, one sync at the end
//   launch_loop heavy N   N launches of a kernel doing ~50 us of arithmetic
// Prints "per_launch_us <value>": the loop runs in 10 blocks of N/10
// launches, each ended by a sync; the figure is the median block's wall
// time over its launches (a machine's hiccup spoils one block, not the
// figure), after half a second of warm-up; then "end_ns <T>", the
// realtime clock when its work ended (bench/gpu_overhead.sh times the
// capture's finish from it).
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

#define BLOCKS 10

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
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
	double t0, t1, block_us[BLOCKS];

	if (cudaMalloc(&out, 132 * 256 * sizeof(float)) != cudaSuccess)
		return 90;
	/* Half a second of warm-up: the context and module, and clocks that
	 * have ramped up, on the host and on the GPU. */
	t0 = now_us();
	do {
		for (int i = 0; i < 100; i++) {
			empty_kernel<<<1, 1>>>();
			heavy_kernel<<<132, 256>>>(out, 10);
		}
		cudaDeviceSynchronize();
	} while (now_us() - t0 < 5e5);
	for (int b = 0; b < BLOCKS; b++) {
		int per = n / BLOCKS > 0 ? n / BLOCKS : 1;

		t0 = now_us();
		for (int i = 0; i < per; i++) {
			if (heavy)
				heavy_kernel<<<132, 256>>>(out, 20000);
			else
				empty_kernel<<<1, 1>>>();
		}
		cudaDeviceSynchronize();
		t1 = now_us();
		block_us[b] = (t1 - t0) / per;
	}
	qsort(block_us, BLOCKS, sizeof(block_us[0]), by_value);
	printf("per_launch_us %.3f\n", (block_us[BLOCKS / 2 - 1] + block_us[BLOCKS / 2]) / 2);
	{
		struct timespec rt;

		/* when the program's work ended, to time its capture's finish */
		clock_gettime(CLOCK_REALTIME, &rt);
		printf("end_ns %lld\n", (long long)rt.tv_sec * 1000000000LL + rt.tv_nsec);
	}
	cudaFree(out);
	return 0;
}
