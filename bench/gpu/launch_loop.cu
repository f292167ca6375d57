// launch_loop.cu - the launch-bound and kernel-heavy loops that
// bench/gpu_overhead.sh times untraced, under a counting-only CUPTI consumer
// and under `perfkit run`.
//
//   launch_loop empty N   N launches of an empty kernel, one sync at the end
//   launch_loop heavy N   N launches of a kernel doing ~50 us of arithmetic
//   launch_loop window N  N empty launches, then 100 more inside an NVTX
//                         range "window" and a cudaProfilerStart/Stop pair,
//                         then N again: prints "before_us" and "after_us",
//                         what a launch costs before and after a capture
//                         window (perfkit run --capture-range=nvtx:window
//                         or cudaProfilerApi)
// Prints "per_launch_us <value>": the loop runs in 10 blocks of N/10
// launches, each ended by a sync; the figure is the median block's wall
// time over its launches (a machine's hiccup spoils one block, not the
// figure), after half a second of warm-up; then "end_ns <T>", the
// realtime clock when its work ended (bench/gpu_overhead.sh times the
// capture's finish from it).
#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>
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

/* N launches in BLOCKS blocks, each ended by a sync: the median block's
 * time a launch (a machine's hiccup spoils one block, not the figure). */
static double median_block_us(int n, int heavy, float *out)
{
	double block_us[BLOCKS];
	int per = n / BLOCKS > 0 ? n / BLOCKS : 1;

	for (int b = 0; b < BLOCKS; b++) {
		double t0 = now_us();

		for (int i = 0; i < per; i++) {
			if (heavy)
				heavy_kernel<<<132, 256>>>(out, 20000);
			else
				empty_kernel<<<1, 1>>>();
		}
		cudaDeviceSynchronize();
		block_us[b] = (now_us() - t0) / per;
	}
	qsort(block_us, BLOCKS, sizeof(block_us[0]), by_value);
	return (block_us[BLOCKS / 2 - 1] + block_us[BLOCKS / 2]) / 2;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 20000;
	int heavy = argc > 1 && !strcmp(argv[1], "heavy");
	int window = argc > 1 && !strcmp(argv[1], "window");
	float *out;
	double t0;

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
	if (window) {
		printf("before_us %.3f\n", median_block_us(n, 0, out));
		nvtxRangePushA("window");
		cudaProfilerStart();
		for (int i = 0; i < 100; i++)
			empty_kernel<<<1, 1>>>();
		cudaDeviceSynchronize();
		cudaProfilerStop();
		nvtxRangePop();
		/* where perfkit detaches CUPTI after a window: before the timing */
		cudaDeviceSynchronize();
		printf("after_us %.3f\n", median_block_us(n, 0, out));
	} else {
		printf("per_launch_us %.3f\n", median_block_us(n, heavy, out));
	}
	{
		struct timespec rt;

		/* when the program's work ended, to time its capture's finish */
		clock_gettime(CLOCK_REALTIME, &rt);
		printf("end_ns %lld\n", (long long)rt.tv_sec * 1000000000LL + rt.tv_nsec);
	}
	cudaFree(out);
	return 0;
}
