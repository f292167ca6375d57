// window_steps.cu - steps that say which step they are, for the capture
// window checks (tests/gpu/windows.sh): step i (from 1) launches i_kernel
// on a grid of i blocks, so the grids in a capture name the steps it holds.
//
//   window_steps nvtx STEPS           each step an NVTX range "step"
//   window_steps domain STEPS         the same in domain "app", the name a
//                                     registered string
//   window_steps profiler STEPS A B [C D]
//                                     cudaProfilerStart before step A,
//                                     cudaProfilerStop after step B (and C, D)
//   window_steps run SECONDS          steps every 10 ms for SECONDS
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK(x)                                                                   \
	do {                                                                        \
		cudaError_t e_ = (x);                                               \
		if (e_ != cudaSuccess) {                                            \
			fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));    \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

__global__ void step_kernel(float *data, int step)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	data[i] = data[i] * 0.5f + (float)step;
}

static float *dev;
static cudaStream_t stream;

// Step i: two launches of i blocks, a copy and a synchronisation.
static void step(int i)
{
	step_kernel<<<i, 128, 0, stream>>>(dev, i);
	step_kernel<<<i, 128, 0, stream>>>(dev, i);
	CHECK(cudaGetLastError());
	CHECK(cudaMemsetAsync(dev, 0, 4096, stream));
	CHECK(cudaStreamSynchronize(stream));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int steps = argc >= 3 ? atoi(argv[2]) : 0;

	if (argc < 3) {
		fprintf(stderr, "usage: window_steps nvtx|domain STEPS | profiler STEPS A B [C D] | "
				"run SECONDS\n");
		return 2;
	}
	CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&dev, 128 * 4096 * sizeof(float)));
	if (!strcmp(argv[1], "nvtx")) {
		for (int i = 1; i <= steps; i++) {
			nvtxRangePushA("step");
			step(i);
			nvtxRangePop();
		}
	} else if (!strcmp(argv[1], "domain")) {
		nvtxDomainHandle_t d = nvtxDomainCreateA("app");
		nvtxStringHandle_t name = nvtxDomainRegisterStringA(d, "step");
		nvtxEventAttributes_t a;

		memset(&a, 0, sizeof a);
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
		a.message.registered = name;
		for (int i = 1; i <= steps; i++) {
			// the default domain's "step" must not count
			nvtxRangePushA("step");
			nvtxDomainRangePushEx(d, &a);
			step(i);
			nvtxDomainRangePop(d);
			nvtxRangePop();
		}
	} else if (!strcmp(argv[1], "profiler")) {
		int marks[4] = { 0, 0, 0, 0 };

		for (int k = 0; k < 4 && k + 3 < argc; k++)
			marks[k] = atoi(argv[k + 3]);
		for (int i = 1; i <= steps; i++) {
			if (i == marks[0] || i == marks[2])
				CHECK(cudaProfilerStart());
			step(i);
			if (i == marks[1] || i == marks[3])
				CHECK(cudaProfilerStop());
		}
	} else if (!strcmp(argv[1], "run")) {
		double end = now_s() + atof(argv[2]);

		for (int i = 1; now_s() < end; i++) {
			step(i % 1000 + 1);
			usleep(10000);
		}
	} else {
		fprintf(stderr, "window_steps: unknown mode %s\n", argv[1]);
		return 2;
	}
	CHECK(cudaFree(dev));
	return 0;
}
