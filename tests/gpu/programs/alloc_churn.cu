/* alloc_churn.cu - a step that allocates its scratch buffers and frees
 * them again: four 32 MiB buffers made with cudaMalloc, eight kernels
 * (scale, add, scale, add... over 8M floats) through them, the buffers
 * freed with cudaFree (which waits for the device), one stream. Or, the
 * twin that makes the one change a finding asks for, the buffers made once
 * before the loop (--pool: the corpus' alloc_pool). 10 warm-up steps, then
 * 100 timed; each step is an NVTX range "step". The result is checked
 * against the CPU at the end.
 *
 *   alloc_churn [--pool]
 *
 * Prints mode, steps, warmup, step_ms. */
#include <cmath>
#include <cstring>

#include "corpus.h"

static const int N = 8 * 1024 * 1024;
static const int BUFFERS = 4;
static const int WARMUP = 10;
static const int STEPS = 100;

__global__ void scale_into(float *out, const float *in, int n, float a)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i] * a;
}

__global__ void add_into(float *out, const float *a, const float *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = a[i] + b[i];
}

static float initial(int i) { return (float)(i % 1000) * 1e-3f; }

/* x <- 0.5 * (x * 0.5 + x * 0.5) + ... : the step leaves x as it was,
 * scaled by 1, through four scratch buffers */
static void run_step(float *x, float *const *buf, cudaStream_t stream)
{
	int blocks = (N + 255) / 256;
	scale_into<<<blocks, 256, 0, stream>>>(buf[0], x, N, 0.5f);
	scale_into<<<blocks, 256, 0, stream>>>(buf[1], x, N, 0.5f);
	add_into<<<blocks, 256, 0, stream>>>(buf[2], buf[0], buf[1], N);
	scale_into<<<blocks, 256, 0, stream>>>(buf[3], buf[2], N, 0.5f);
	scale_into<<<blocks, 256, 0, stream>>>(buf[0], buf[2], N, 0.5f);
	add_into<<<blocks, 256, 0, stream>>>(buf[1], buf[3], buf[0], N);
	scale_into<<<blocks, 256, 0, stream>>>(buf[2], buf[1], N, 1.0f);
	scale_into<<<blocks, 256, 0, stream>>>(x, buf[2], N, 1.0f);
	CHECK(cudaGetLastError());
}

int main(int argc, char **argv)
{
	bool pool = argc > 1 && strcmp(argv[1], "--pool") == 0;
	if (argc > 2 || (argc == 2 && !pool)) {
		fprintf(stderr, "usage: alloc_churn [--pool]\n");
		return 2;
	}

	cudaStream_t stream;
	CHECK(cudaStreamCreate(&stream));
	std::vector<float> host(N);
	for (int i = 0; i < N; i++)
		host[i] = initial(i);
	float *x, *buf[BUFFERS] = {};
	CHECK(cudaMalloc(&x, N * sizeof *x));
	CHECK(cudaMemcpy(x, host.data(), N * sizeof *x, cudaMemcpyHostToDevice));
	if (pool)
		for (int b = 0; b < BUFFERS; b++)
			CHECK(cudaMalloc(&buf[b], N * sizeof(float)));

	auto step = [&](int) {
		nvtxRangePushA("step");
		if (!pool)
			for (int b = 0; b < BUFFERS; b++)
				CHECK(cudaMalloc(&buf[b], N * sizeof(float)));
		run_step(x, buf, stream);
		if (!pool)
			for (int b = 0; b < BUFFERS; b++)
				CHECK(cudaFree(buf[b]));
		nvtxRangePop();
	};
	auto sync = [&] { CHECK(cudaStreamSynchronize(stream)); };
	for (int s = 0; s < WARMUP; s++)
		step(s);
	sync();
	double step_ms = time_steps(WARMUP, STEPS, 10, step, sync);

	std::vector<float> got(N);
	CHECK(cudaMemcpy(got.data(), x, N * sizeof *x, cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < N; i += 9973)
		if (!std::isfinite(got[i]) || !close_to(got[i], host[i], 1e-5))
			bad++;
	if (bad) {
		fprintf(stderr, "alloc_churn: %d sampled elements differ from the CPU\n", bad);
		return 1;
	}

	if (pool)
		for (int b = 0; b < BUFFERS; b++)
			CHECK(cudaFree(buf[b]));
	CHECK(cudaFree(x));
	CHECK(cudaStreamDestroy(stream));
	printf("mode %s\nsteps %d\nwarmup %d\nstep_ms %.4f\n", pool ? "pool" : "churn", STEPS, WARMUP, step_ms);
	return 0;
}
