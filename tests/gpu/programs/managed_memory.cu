/* managed_memory.cu - 256 MiB of managed memory (cudaMallocManaged). Each
 * step the host writes the first quarter, then a kernel reads and writes
 * all of it. Without flags (the corpus' managed_memory) the pages move on
 * demand: to the GPU when the kernel faults on them, back to the host when
 * the host faults on them. --prefetch (managed_prefetch) moves them ahead
 * of use with cudaMemPrefetchAsync: the host's quarter to the host before
 * it writes, then to the device before the kernel. One warm-up step (the
 * first migration of the whole buffer) and 20 timed; each step is an NVTX
 * range "step" and ends in a stream synchronisation (the host touches the
 * buffer next). Sampled elements are checked against the CPU at the end.
 *
 *   managed_memory [--prefetch]
 *
 * Prints mode, managed_mib, host_part_mib, concurrent_managed_access,
 * steps, warmup, step_ms. */
#include <cmath>
#include <cstring>

#include "corpus.h"

static const size_t N = (size_t)64 << 20; /* floats: 256 MiB */
static const size_t HOST_PART = N / 4;    /* what the host writes each step */
static const int WARMUP = 1;
static const int STEPS = 20;

__global__ void update(float *x, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 0.5f + 1.0f;
}

static float initial(size_t i) { return (float)(i & 1023) * 1e-3f; }
static float written(int step, size_t i) { return (float)step + (float)(i & 1023) * 1e-3f; }

int main(int argc, char **argv)
{
	bool prefetch = argc > 1 && strcmp(argv[1], "--prefetch") == 0;
	if (argc > 2 || (argc == 2 && !prefetch)) {
		fprintf(stderr, "usage: managed_memory [--prefetch]\n");
		return 2;
	}
	int dev, concurrent;
	CHECK(cudaGetDevice(&dev));
	CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, dev));
	if (prefetch && !concurrent) {
		fprintf(stderr, "managed_memory: this GPU cannot prefetch managed memory "
				"(no concurrent managed access)\n");
		return 1;
	}
	cudaMemLocation on_device = {}, on_host = {};
	on_device.type = cudaMemLocationTypeDevice;
	on_device.id = dev;
	on_host.type = cudaMemLocationTypeHost;

	cudaStream_t stream;
	CHECK(cudaStreamCreate(&stream));
	float *x;
	CHECK(cudaMallocManaged(&x, N * sizeof *x));
	for (size_t i = 0; i < N; i++)
		x[i] = initial(i);
	if (prefetch)
		CHECK(cudaMemPrefetchAsync(x, N * sizeof *x, on_device, 0, stream));

	auto step = [&](int s) {
		nvtxRangePushA("step");
		if (prefetch) {
			CHECK(cudaMemPrefetchAsync(x, HOST_PART * sizeof *x, on_host, 0, stream));
			CHECK(cudaStreamSynchronize(stream));
		}
		for (size_t i = 0; i < HOST_PART; i++)
			x[i] = written(s, i);
		if (prefetch)
			CHECK(cudaMemPrefetchAsync(x, HOST_PART * sizeof *x, on_device, 0, stream));
		update<<<(unsigned)((N + 255) / 256), 256, 0, stream>>>(x, N);
		CHECK(cudaGetLastError());
		CHECK(cudaStreamSynchronize(stream));
		nvtxRangePop();
	};
	auto sync = [&] { CHECK(cudaStreamSynchronize(stream)); };
	for (int s = 0; s < WARMUP; s++)
		step(s);
	double step_ms = time_steps(WARMUP, STEPS, 10, step, sync);

	/* the host's quarter holds the last write, updated once; the rest has
	 * been updated once a step since the start */
	int bad = 0;
	for (size_t i = 0; i < N; i += N / 1024 + 1) {
		float want;
		if (i < HOST_PART) {
			want = fmaf(written(WARMUP + STEPS - 1, i), 0.5f, 1.0f);
		} else {
			want = initial(i);
			for (int s = 0; s < WARMUP + STEPS; s++)
				want = fmaf(want, 0.5f, 1.0f);
		}
		if (!std::isfinite(x[i]) || !close_to(x[i], want, 1e-6))
			bad++;
	}
	if (bad) {
		fprintf(stderr, "managed_memory: %d sampled elements differ from the CPU\n", bad);
		return 1;
	}
	CHECK(cudaFree(x));
	CHECK(cudaStreamDestroy(stream));
	printf("mode %s\nmanaged_mib %zu\nhost_part_mib %zu\nconcurrent_managed_access %d\n"
	       "steps %d\nwarmup %d\nstep_ms %.4f\n",
	       prefetch ? "prefetch" : "on_demand", (N * sizeof(float)) >> 20,
	       (HOST_PART * sizeof(float)) >> 20, concurrent, STEPS, WARMUP, step_ms);
	return 0;
}
