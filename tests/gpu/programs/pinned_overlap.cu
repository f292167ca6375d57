/* pinned_overlap.cu - the way copies should be done: pinned host buffers
 * (cudaMallocHost), four streams, and on each a 32 MiB chunk copied to the
 * device, transformed by a kernel and copied back, so that the copies in
 * both directions and the kernels of different streams overlap. Nothing
 * synchronises inside a step, so the next step's copies queue behind this
 * one's on each stream and the link stays busy. Three warm-up steps, then
 * 20 timed; each step is an NVTX range "step". Sampled elements are checked
 * against the CPU at the end.
 *
 * Prints streams, chunk_mib, htod_mib_per_step, dtoh_mib_per_step, steps,
 * warmup, step_ms and link_gb_s (bytes of one direction per step over the
 * step time: what the link carried each way). */
#include <cmath>

#include "corpus.h"

static const int STREAMS = 4;
static const size_t CHUNK = (size_t)8 << 20; /* floats: 32 MiB */
static const int ROUNDS = 256;               /* FMAs per element */
static const int WARMUP = 3;
static const int STEPS = 20;

__global__ void transform(float *x, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n) {
		float v = x[i];
		for (int r = 0; r < ROUNDS; r++)
			v = v * 0.999f + 0.001f;
		x[i] = v;
	}
}

static float initial(int s, size_t i) { return (float)s + (float)(i % 1000) * 1e-3f; }

int main()
{
	cudaStream_t stream[STREAMS];
	float *in[STREAMS], *out[STREAMS], *dev[STREAMS];
	for (int s = 0; s < STREAMS; s++) {
		CHECK(cudaStreamCreateWithFlags(&stream[s], cudaStreamNonBlocking));
		CHECK(cudaMallocHost(&in[s], CHUNK * sizeof(float)));
		CHECK(cudaMallocHost(&out[s], CHUNK * sizeof(float)));
		CHECK(cudaMalloc(&dev[s], CHUNK * sizeof(float)));
		for (size_t i = 0; i < CHUNK; i++)
			in[s][i] = initial(s, i);
	}

	auto step = [&](int) {
		nvtxRangePushA("step");
		for (int s = 0; s < STREAMS; s++) {
			CHECK(cudaMemcpyAsync(dev[s], in[s], CHUNK * sizeof(float),
					      cudaMemcpyHostToDevice, stream[s]));
			transform<<<(unsigned)((CHUNK + 255) / 256), 256, 0, stream[s]>>>(dev[s], CHUNK);
			CHECK(cudaGetLastError());
			CHECK(cudaMemcpyAsync(out[s], dev[s], CHUNK * sizeof(float),
					      cudaMemcpyDeviceToHost, stream[s]));
		}
		nvtxRangePop();
	};
	auto sync = [&] {
		for (int s = 0; s < STREAMS; s++)
			CHECK(cudaStreamSynchronize(stream[s]));
	};
	for (int s = 0; s < WARMUP; s++)
		step(s);
	sync();
	double step_ms = time_steps(WARMUP, STEPS, 10, step, sync);

	int bad = 0;
	for (int s = 0; s < STREAMS; s++)
		for (size_t i = 0; i < CHUNK; i += 65537) {
			float want = initial(s, i);
			for (int r = 0; r < ROUNDS; r++)
				want = fmaf(want, 0.999f, 0.001f);
			if (!std::isfinite(out[s][i]) || !close_to(out[s][i], want, 1e-5))
				bad++;
		}
	if (bad) {
		fprintf(stderr, "pinned_overlap: %d sampled elements differ from the CPU\n", bad);
		return 1;
	}
	for (int s = 0; s < STREAMS; s++) {
		CHECK(cudaFree(dev[s]));
		CHECK(cudaFreeHost(in[s]));
		CHECK(cudaFreeHost(out[s]));
		CHECK(cudaStreamDestroy(stream[s]));
	}
	size_t mib = STREAMS * CHUNK * sizeof(float) >> 20;
	printf("streams %d\nchunk_mib %zu\nhtod_mib_per_step %zu\ndtoh_mib_per_step %zu\n"
	       "steps %d\nwarmup %d\nstep_ms %.4f\nlink_gb_s %.1f\n",
	       STREAMS, CHUNK * sizeof(float) >> 20, mib, mib, STEPS, WARMUP, step_ms,
	       (double)(mib << 20) / (step_ms * 1e6));
	return 0;
}
