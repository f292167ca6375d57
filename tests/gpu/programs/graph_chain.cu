/* graph_chain.cu - 64 small dependent kernels a step: x = x * a_k + b_k on
 * 64K floats, k = 0..63, one after another on one stream. Launched one by
 * one (the corpus' graph_eager), or captured once into a CUDA graph and
 * replayed (--graph: graph_replay). 20 warm-up steps, then 500 timed; each
 * step is an NVTX range "step". Sampled elements are checked against the
 * CPU at the end.
 *
 *   graph_chain [--graph]
 *
 * Prints mode, steps, warmup, kernels_per_step, step_ms. */
#include <cmath>
#include <cstring>

#include "corpus.h"

static const int N = 64 * 1024;
static const int CHAIN = 64;
static const int WARMUP = 20;
static const int STEPS = 500;

__global__ void axpb(float *x, int n, float a, float b)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * a + b;
}

static float coef_a(int k) { return 0.90f + 0.001f * (float)(k % 16); }
static float coef_b(int k) { return 0.01f * (float)(k % 5); }
static float initial(int i) { return (float)(i % 1000) * 1e-3f; }

static void launch_chain(float *x, cudaStream_t stream)
{
	for (int k = 0; k < CHAIN; k++) {
		axpb<<<(N + 255) / 256, 256, 0, stream>>>(x, N, coef_a(k), coef_b(k));
		CHECK(cudaGetLastError());
	}
}

int main(int argc, char **argv)
{
	bool graph = argc > 1 && strcmp(argv[1], "--graph") == 0;
	if (argc > 2 || (argc == 2 && !graph)) {
		fprintf(stderr, "usage: graph_chain [--graph]\n");
		return 2;
	}

	cudaStream_t stream;
	CHECK(cudaStreamCreate(&stream));
	std::vector<float> host(N);
	for (int i = 0; i < N; i++)
		host[i] = initial(i);
	float *x;
	CHECK(cudaMalloc(&x, N * sizeof *x));
	CHECK(cudaMemcpy(x, host.data(), N * sizeof *x, cudaMemcpyHostToDevice));

	cudaGraphExec_t exec = nullptr;
	if (graph) {
		cudaGraph_t g;
		CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
		launch_chain(x, stream);
		CHECK(cudaStreamEndCapture(stream, &g));
		CHECK(cudaGraphInstantiate(&exec, g, 0));
		CHECK(cudaGraphDestroy(g));
	}

	auto step = [&](int) {
		nvtxRangePushA("step");
		if (graph)
			CHECK(cudaGraphLaunch(exec, stream));
		else
			launch_chain(x, stream);
		nvtxRangePop();
	};
	auto sync = [&] { CHECK(cudaStreamSynchronize(stream)); };
	for (int s = 0; s < WARMUP; s++)
		step(s);
	sync();
	double step_ms = time_steps(WARMUP, STEPS, 10, step, sync);

	CHECK(cudaMemcpy(host.data(), x, N * sizeof *x, cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < N; i += 997) {
		float v = initial(i);
		for (int s = 0; s < WARMUP + STEPS; s++)
			for (int k = 0; k < CHAIN; k++)
				v = fmaf(v, coef_a(k), coef_b(k));
		if (!std::isfinite(host[i]) || !close_to(host[i], v, 1e-5))
			bad++;
	}
	if (bad) {
		fprintf(stderr, "graph_chain: %d sampled elements differ from the CPU\n", bad);
		return 1;
	}

	if (exec)
		CHECK(cudaGraphExecDestroy(exec));
	CHECK(cudaFree(x));
	CHECK(cudaStreamDestroy(stream));
	printf("mode %s\nsteps %d\nwarmup %d\nkernels_per_step %d\nstep_ms %.4f\n",
	       graph ? "graph" : "eager", STEPS, WARMUP, CHAIN, step_ms);
	return 0;
}
